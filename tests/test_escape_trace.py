"""The step-by-step trace of the backward walk (lesson 10's replay slider)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ssa_course.analysis.escape import analyze_program
from ssa_course.analysis.escape_trace import step_dot, step_text, trace_function
from ssa_course.compilation import compile_source
from ssa_course.lessons.l04_julia import ircode_of

EXAMPLES = sorted((Path(__file__).parent / "escape_golden").glob("*.tiny"))


def analysed(source: str):
    return analyze_program(ircode_of(compile_source(source).quads))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_the_last_step_is_the_analysis_result(path):
    result = analysed(path.read_text())
    for name, fe in result.functions.items():
        steps = trace_function(result, name)
        assert len(steps) == len(fe.ir.stmts) + 2  # start, one per statement, worklist
        assert [s.pc for s in steps[1:-1]] == list(range(len(fe.ir.stmts), 0, -1))
        assert steps[-1].escapes.infos == fe.infos


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_states_only_grow_along_the_walk(path):
    result = analysed(path.read_text())
    for name in result.functions:
        steps = trace_function(result, name)
        for before, after in zip(steps, steps[1:], strict=False):
            for v, info in before.escapes.infos.items():
                old = info.escape_only()
                assert old.leq(after.escapes.infos[v].escape_only()), (name, after.what, v)


SOURCE = """struct Box { n: int; }
fn make(c: bool) -> Box {
    var a = new Box { n: 1 };
    var b = new Box { n: 2 };
    var x = a;
    if (c) { x = b; }
    return x;
}
fn main() { print(make(true).n); }
"""


def test_a_phi_makes_both_allocations_escape_when_it_is_visited():
    result = analysed(SOURCE)
    steps = trace_function(result, "make")
    phi = next(s for s in steps if "φ" in s.what)
    ret = steps[steps.index(phi) - 1]
    assert ret.what.startswith("visit") and "return" in ret.what
    assert ret.changed and all(v.startswith("%") for v in ret.changed)
    allocs = [f"%{pc}" for pc, _ in result["make"].allocations()]
    assert set(allocs) <= set(phi.changed)
    assert step_text(phi).count("▶") == 1
    assert "↑" in step_text(steps[-1]) and "digraph" in step_dot(result, phi)
    assert "✓" not in step_text(steps[-1]).split("\n", 1)[1]  # nothing left NoEscape
