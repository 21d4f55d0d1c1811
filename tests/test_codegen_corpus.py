"""Differential test of the back end: every corpus program compiled to x86-64 and run.

Each Tiny program of ``tests/programs`` and Bril program of ``tests/bril`` goes through the
scheduled SSA quads, instruction selection, register allocation (graph colouring, and the
spill-everything baseline) and the generated runtime; the executable, run natively and
under the unicorn emulator, must print the expected output and end with the expected
status and error message, exactly like every interpreter stage. Each executor is skipped,
with the toolchain's one-line reason, where it cannot run.
"""

from __future__ import annotations

import pytest
from codegen_native import run_native, skip_reason
from corpus import load_bril_corpus, load_corpus

from ssa_course.codegen.toolchain import emulator_missing
from ssa_course.errors import SsaCourseError

CASES = [*load_corpus(), *load_bril_corpus()]


def _check(case, **how) -> None:
    try:
        got = run_native(case.source, case.args, filename=case.path.name, **how)
    except SsaCourseError as e:  # a compile error: nothing runs
        assert case.exit == e.exit_status, f"{case.name}: {e}"
        return
    assert got.stdout == case.stdout, f"{case.name}: stdout differs"
    assert got.status == case.exit, f"{case.name}: status {got.status}: {got.stderr}"
    if case.stderr or case.path.suffix == ".tiny":
        assert got.stderr == case.stderr, f"{case.name}: stderr differs"


@pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")
@pytest.mark.parametrize("allocator", ["color", "spill-all"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_corpus_program_natively(case, allocator):
    _check(case, allocator=allocator)


@pytest.mark.skipif(emulator_missing() is not None, reason=emulator_missing() or "")
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_corpus_program_emulated(case):
    _check(case, emulated=True)


# That GNU as, keystone and our own assembler give the same bytes for every corpus program
# is tests/test_codegen_own_asm.py (ours against each of the others).
