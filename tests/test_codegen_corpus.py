"""Differential test of the back end: every corpus program compiled to x86-64, run natively.

Each Tiny program of ``tests/programs`` and Bril program of ``tests/bril`` goes through the
scheduled SSA quads, instruction selection, register allocation (graph colouring, and the
spill-everything baseline) and the generated runtime; the executable must print the
expected output and end with the expected status and error message, exactly like every
interpreter stage. Skipped, with the toolchain's one-line reason, where x86-64 code cannot
run natively.
"""

from __future__ import annotations

import pytest
from codegen_native import run_native, skip_reason
from corpus import load_bril_corpus, load_corpus

from ssa_course.errors import SsaCourseError

CASES = [*load_corpus(), *load_bril_corpus()]

pytestmark = pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")


@pytest.mark.parametrize("allocator", ["color", "spill-all"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_corpus_program_natively(case, allocator):
    try:
        got = run_native(case.source, case.args, filename=case.path.name, allocator=allocator)
    except SsaCourseError as e:  # a compile error: nothing runs
        assert case.exit == e.exit_status, f"{case.name}: {e}"
        return
    assert got.stdout == case.stdout, f"{case.name}: stdout differs"
    assert got.status == case.exit, f"{case.name}: status {got.status}: {got.stderr}"
    if case.stderr or case.path.suffix == ".tiny":
        assert got.stderr == case.stderr, f"{case.name}: stderr differs"
