"""Scalar replacement (lesson 10's first use of escape analysis): what it removes, what
it must keep, and that programs mean the same (the corpus runs through the ``sroa``
representation in the differential test; here: counts and the ``opt`` pass)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ssa_course import stages
from ssa_course.analysis.sroa import scalar_replace
from ssa_course.compilation import compile_source, load_file
from ssa_course.passes import run_pipeline

HERE = Path(__file__).parent
P = "struct P { x: int; y: int; }\nstruct H { p: P; }\n"


def removed(source: str) -> dict[str, int]:
    return scalar_replace(compile_source(source).quads)[1].removed


def test_counts_on_the_corpus_example():
    """Loop, branch and try-region points go; the one passed to a function and the one
    stored into an array stay."""
    comp = load_file(str(HERE / "programs" / "sroa_points.tiny"))
    program, report = scalar_replace(comp.quads)
    assert report.removed == {"norm1": 0, "main": 4}
    assert report.kept == {"norm1": 0, "main": 2}
    assert sum(i.op == "newstruct" for i in program.functions["main"].instrs()) == 2


@pytest.mark.parametrize("body, count", [
    ("var p = new P { x: 1, y: 2 }; p.x = p.y; print(p.x);", 1),
    ("var p = new P { x: 1, y: 2 }; var h = new H { p: p }; print(h.p.x);", 2),  # nested
    ("var p = new P { x: 1, y: 2 }; var q = p; q.x = 5; print(p.x);", 1),  # one web
    ("var p = new P { x: 1, y: 2 }; var q = new P { x: 1, y: 2 }; print(p == q);", 2),
    ("var p = new P { x: 1, y: 2 }; var q = p; print(p == q);", 1),
    # two objects of one web alive at once: one set of field variables cannot hold both
    ("var p = new P { x: 1, y: 2 }; var q = p; p = new P { x: 3, y: 4 }; print(q.x, p.x);",
     0),
    ("var a = new P[1]; a[0] = new P { x: 1, y: 2 }; print(a[0].x);", 0),  # in an array
])
def test_what_is_replaced(body, count):
    assert removed(P + "fn main() { " + body + " }")["main"] == count


def test_escaping_structs_stay():
    src = P + ("fn make(n: int) -> P { var p = new P { x: n, y: n }; return p; }\n"
               "fn keep(h: H, n: int) { var p = new P { x: n, y: 0 }; h.p = p; }\n"
               "fn main() { var h = new H { p: make(1) }; keep(h, 2); print(h.p.x); }")
    assert removed(src) == {"make": 0, "keep": 0, "main": 0}


def test_the_pass_in_a_pipeline_keeps_output_and_drops_the_allocation():
    src = (P + "fn main(n: int) { var s = 0; var i = 0; while (i < n) { "
           "var p = new P { x: i, y: 2 * i }; s = s + p.x * p.y; i = i + 1; } print(s); }")
    comp = compile_source(src)
    state = run_pipeline(comp, ["sroa", "ssa", "out-of-ssa", "dce"])
    assert not any(i.op == "newstruct" for f in state.quads.functions.values()
                   for i in f.instrs())
    plain = stages.run(comp, ["5"], via="quads")
    from ssa_course.passes import result

    after = stages.run(result(state), ["5"], via="quads")
    assert plain.stdout == after.stdout == "60\n"
