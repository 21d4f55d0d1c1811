"""The Bril benchmarks lesson 12 runs (``examples/bril/``, copied from Bril's suite): the
quads interpreter prints Bril's stored ``.out`` and counts its ``.prof``'s
``total_dyn_inst``, and every interpreter stage after it prints the same."""

from __future__ import annotations

from pathlib import Path

import pytest

import ssa_course

EXAMPLES = sorted((Path(__file__).resolve().parent.parent / "examples" / "bril").glob("*.bril"))
STAGES = ["ssa-pruned", "julia", "son-opt", "optimized"]


def test_the_lesson_examples_are_there():
    assert [p.stem for p in EXAMPLES] == ["bubblesort", "newton"]


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs_as_brili_runs_it(path):
    prog = ssa_course.load_file(str(path))
    args = prog.default_args() or []
    expected = path.with_suffix(".out").read_text()
    prof = path.with_suffix(".prof").read_text().split()
    result = ssa_course.run(prog, *args)
    assert (result.status, result.stdout) == (0, expected)
    assert prof[0] == "total_dyn_inst:" and result.steps == int(prof[1])
    for stage in STAGES:
        assert ssa_course.run(prog, *args, via=stage).stdout == expected, stage
