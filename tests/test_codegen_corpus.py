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


def _check(case, **how) -> None:  # noqa: ANN001, ANN003
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


def _both_assemblers() -> str | None:
    from ssa_course.codegen.toolchain import gnu_missing, keystone_missing

    return gnu_missing() or keystone_missing()


@pytest.mark.skipif(_both_assemblers() is not None, reason=_both_assemblers() or "")
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_gnu_and_keystone_assemble_the_same_bytes(case):
    from ssa_course.codegen.assemble import assemble
    from ssa_course.codegen.compile import compile_program
    from ssa_course.compilation import compile_source
    from ssa_course.registry import build

    comp = compile_source(case.source, case.path.name)
    try:
        ssa = build(comp, "scheduled").ssa
    except SsaCourseError:
        return  # a compile error: no code
    _, text = compile_program(ssa, None, case.source.splitlines(), step_limit=1000)
    gnu, ks = assemble(text, "gnu"), assemble(text, "keystone")
    assert gnu.text == ks.text and gnu.data == ks.data, case.name
    assert gnu.symbols == ks.symbols, case.name
