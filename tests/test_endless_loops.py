"""Loops that become endless after parsing (SCCP or the ranges prove their test always
true) keep their prints: they get a Never exit (:mod:`ssa_course.son.endless`), and a
merge whose only path is its own back edge is not folded into a cycle with no merge
(fuzz seeds 51819 and 51877)."""

from __future__ import annotations

import pytest

from ssa_course import passes, registry, stages
from ssa_course.compilation import compile_source
from ssa_course.runtime import Limits
from ssa_course.son.control import Never

# SCCP proves ``k < 4`` always true: the loop never exits, and prints on every trip
PRINTS_IN_LOOP = """fn main(n: int) {
    var k = 1;
    while (k < 4) { k = 1; print(n); }
    print(7);
}
"""

# the same loop written as Bril: its head is a plain Region (not a Loop)
PRINTS_IN_LOOP_BRIL = """@main(n: int) {
  k: int = const 1;
  four: int = const 4;
.head:
  c: bool = lt k four;
  br c .body .done;
.body:
  k: int = const 1;
  print n;
  jmp .head;
.done:
  seven: int = const 7;
  print seven;
}
"""

# the loop prints nothing, but the print before it must stay: the effect's only reader was
# on the dead side (before the fix it was deleted while the peepholes ran)
PRINT_BEFORE = """fn main(n: int) {
    print(n);
    var k = 1;
    while (k < 4) { k = 1; }
    print(7);
}
"""

# the same, found by the range analysis (the ``ranges`` pass of ``opt``)
PRINT_BEFORE_RANGES = """fn main(n: int) {
    print(n);
    for (var i = 0; i < 4; i = 0 + 1) { }
    print(7);
}
"""

# fuzz seed 51819, shrunk: after inlining, the range analysis proves the ``for`` endless;
# the ``while`` behind it lost its entry and folded into a cycle of control with no merge,
# on which the bounds-check pass then walked forever
SEED_51819 = """struct P { v: int; ok: bool; xs: [int]; }
fn f2(n: int, p1: int, p2: P) -> int {
    return (0 / 2);
    var r12 = f2(n - 1, 0, p2);
}
fn f5(i: int) -> int {
    return i * 1 + 7;
}
fn main(n: int, flag: bool) {
    var a = 1;
    var arr = new int[5];
    var ps = new P[5];
    try {
        for (var i16 = 0; i16 < 4; i16 = 0 + 1) {
            var c = f5(0);
        }
        try {
            throw 0;
        } catch (e22) {
            a = f2(0, 0, new P { v: 2, ok: e22 == 0, xs: arr });
        }
        while (0 < 3) {
            var v24 = -f2(0, 0, ps[0]);
        }
    } catch (e27) {
    }
    print(a);
}
"""


def _first_lines(source: str, via: str, kind: str | None = None, lines: int = 3) -> list[str]:
    comp = compile_source(source, "endless.bril" if kind else "endless.tiny", kind)
    got = stages.run(comp, ["3"], via=via, limits=Limits(steps=400))
    assert "step limit exceeded" in got.error, (via, got)
    return got.stdout.splitlines()[:lines]


@pytest.mark.parametrize("via", ["son-opt", "scheduled", "optimized"])
def test_a_loop_sccp_makes_endless_keeps_its_prints(via):
    assert _first_lines(PRINTS_IN_LOOP, "quads") == ["3", "3", "3"]
    assert _first_lines(PRINTS_IN_LOOP, via) == ["3", "3", "3"]


@pytest.mark.parametrize("source", [PRINT_BEFORE, PRINT_BEFORE_RANGES])
@pytest.mark.parametrize("via", ["son-opt", "scheduled", "optimized"])
def test_what_was_printed_before_an_endless_loop_stays(source, via):
    assert _first_lines(source, "quads") == ["3"]
    assert _first_lines(source, via) == ["3"]


def test_the_ranges_pass_gives_the_loop_its_exit():
    comp = compile_source(PRINT_BEFORE_RANGES, "endless.tiny")
    state = passes.run_pipeline(comp, ["parse", "ranges"], verify_each=True)
    fg = state.graph_program().functions["main"]
    assert any(isinstance(n, Never) for n in fg.graph.stop.inputs)


@pytest.mark.parametrize("via", ["son-opt", "optimized"])
def test_a_bril_loop_sccp_makes_endless_keeps_its_prints(via):
    assert _first_lines(PRINTS_IN_LOOP_BRIL, via, "bril") == ["3", "3", "3"]


def test_the_endless_loop_gets_a_never_exit():
    comp = compile_source(PRINTS_IN_LOOP, "endless.tiny")
    fg = registry.build(comp, "son-opt").functions["main"]
    exits = [n for n in fg.graph.stop.inputs if isinstance(n, Never)]
    assert len(exits) == 1
    loop, memory = exits[0].operand(0), exits[0].operand(1)
    assert memory.inputs[0] is loop  # the memory of the loop's block: what the body prints


def test_seed_51819_default_pipeline_ends_and_verifies():
    comp = compile_source(SEED_51819, "s51819.tiny")
    passes.run_pipeline(comp, passes.DEFAULT_PIPELINE, verify_each=True)
    comp = compile_source(SEED_51819, "s51819.tiny")
    for via in ("optimized", "son-opt"):
        got = stages.run(comp, ["3", "true"], via=via, limits=Limits(steps=20_000))
        assert "step limit exceeded" in got.error and got.stdout == "", (via, got)


# fuzz seed 54124: a function with a return type whose only path loops forever (the test
# is not the literal ``true``); the ``return`` after the loop is dead
NEVER_RETURNS = """fn f1(p0: int, p1: bool) -> bool {
    while (0 < 4) { }
    return false;
}
fn main(n: int, flag: bool) {
    print(n);
    if (flag) { print(f1(n, flag)); }
}
"""


@pytest.mark.parametrize("via", [r.name for r in registry.executors()
                                 if r.unavailable() is None])
def test_a_function_that_never_returns_keeps_a_ret_in_every_stage(via):
    # Bril wants a ``ret`` in a function with a return type (bril_check keeps brilck's
    # rule): the sea of nodes drops the dead return and ``remove_unreachable`` the block
    # holding it, so both leave one in a block no jump reaches (ir.never_returns)
    comp = compile_source(NEVER_RETURNS, "never.tiny")
    got = stages.run(comp, ["3", "false"], via=via, limits=Limits(steps=20_000))
    assert (got.status, got.stdout) == (0, "3\n"), (via, got)


def test_a_function_that_never_returns_through_the_default_pipeline_reads_back():
    comp = compile_source(NEVER_RETURNS, "never.tiny")
    state = passes.run_pipeline(comp, passes.DEFAULT_PIPELINE, verify_each=True)
    text = passes.emit(state, "quads", "text")
    assert "throw never.v" in text
    back = compile_source(text, "never.bril", kind="bril")
    got = stages.run(back, ["3", "false"], via="quads", limits=Limits(steps=20_000))
    assert (got.status, got.stdout) == (0, "3\n")


def test_the_forward_walk_runs_only_when_some_control_is_lost(monkeypatch):
    """r62 (#22): when every live control node reaches Stop a scan of the node table says
    so, and the walk forward from Start (which looks at every user of every control node)
    is skipped; a loop SCCP made endless still takes the walk and gets its exit."""
    from ssa_course.son import endless

    walks = []
    forward = endless._forward

    def counted(start):
        walks.append(start)
        return forward(start)

    monkeypatch.setattr(endless, "_forward", counted)
    ends = "fn main(n: int) {\n var i = 0;\n while (i < n) { print(i); i = i + 1; }\n}\n"
    registry.build(compile_source(ends, "ends.tiny"), "son-opt")
    assert walks == []
    fg = registry.build(compile_source(PRINTS_IN_LOOP, "endless.tiny"), "son-opt") \
        .functions["main"]
    assert walks
    assert any(isinstance(n, Never) for n in fg.graph.stop.inputs)
