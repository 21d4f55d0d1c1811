"""Inlining on the sea of nodes (son/inline.py): what son-opt copies into its callers, what
it leaves a call, and that every inlined program prints what it printed before."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ssa_course.compilation import compile_source
from ssa_course.errors import UsageError
from ssa_course.lessons.faces import fresh_graphs
from ssa_course.lessons.l07_optimistic import optimistic_program
from ssa_course.passes import check_pipeline, run_pipeline
from ssa_course.son.control import Call, Phi, Region
from ssa_course.son.inline import chosen_callees, inline_program
from ssa_course.stages import run


def _calls(program, fn: str = "main") -> list[str]:
    return [n.fn for n in program.functions[fn].nodes() if isinstance(n, Call)]


def _same_everywhere(source: str, *args: str) -> str:
    comp = compile_source(source)
    want = run(comp, list(args), via="ast")
    for via in ("son", "son-opt"):
        got = run(compile_source(source), list(args), via=via)
        assert (got.stdout, got.status, got.error) == (want.stdout, want.status, want.error), via
    return want.stdout


def test_a_constant_flows_into_the_callee():
    src = "fn get(cnt: int) -> int { return cnt; } fn main() { print(get(2)); }"
    opt = optimistic_program(compile_source(src))
    assert _calls(opt) == [] and opt.sccp_counts["inlined"] == 1
    prints = [n for n in opt.functions["main"].nodes() if n.label == "Print"]
    assert [p.inputs[2].label for p in prints] == ["2"]
    assert _calls(fresh_graphs(compile_source(src))) == ["get"]  # son itself keeps the call
    assert _same_everywhere(src) == "2\n"


def test_several_returns_merge_in_a_region_and_fold():
    src = ("fn pick(c: bool, a: int) -> int { if (c) { return a + 1; } return a * 2; }"
           " fn main(n: int) { print(pick(true, n), pick(n > 3, n)); }")
    program = fresh_graphs(compile_source(src))
    assert inline_program(program, compile_source(src).quads) == 2
    program.verify()
    main = program.functions["main"]
    assert _calls(program) == []
    assert sum(isinstance(n, Region) for n in main.nodes()) >= 2
    assert any(isinstance(n, Phi) and n.type.kind == "mem" for n in main.nodes())
    opt = optimistic_program(compile_source(src))
    first = [n for n in opt.functions["main"].nodes() if n.label == "Print"][0].inputs[2]
    assert first.label == "+"  # pick(true, n) is n + 1: the other return is gone
    for n in ("0", "5"):
        _same_everywhere(src, n)


def test_a_runtime_error_in_the_callee_stops_the_caller_the_same_way():
    src = ("fn div(a: int, b: int) -> int { return a / b; }"
           " fn main(n: int) { print(1); print(div(7, n)); print(2); }")
    opt = optimistic_program(compile_source(src))
    assert _calls(opt) == []
    assert _same_everywhere(src, "0") == "1\n"
    assert _same_everywhere(src, "2") == "1\n3\n2\n"


def test_a_void_callee_keeps_its_prints_in_order():
    src = ("fn say(a: int) { print(a); print(a + 1); }"
           " fn main(n: int) { say(n); print(0); say(n * 2); }")
    assert _calls(optimistic_program(compile_source(src))) == []
    assert _same_everywhere(src, "3") == "3\n4\n0\n6\n7\n"


def test_what_stays_a_call():
    src = """
fn leaf(a: int) -> int { return a + 1; }
fn rec(n: int) -> int { if (n > 0) { return rec(n - 1) + leaf(n); } return 0; }
fn thrower(a: int) -> int { if (a > 5) { throw a; } return a; }
fn twice(a: int) -> int { return leaf(leaf(a)); }
fn main(n: int) {
    print(rec(n));
    print(twice(n));
    try { print(leaf(n)); } catch (e) { print(e); }
    try { print(thrower(n)); } catch (e) { print(e); }
}"""
    comp = compile_source(src)
    callees, deep = chosen_callees(comp.quads)
    assert "leaf" in callees and "rec" not in callees and "twice" not in callees
    assert "rec" in deep and "main" not in deep
    opt = optimistic_program(comp)
    # rec may run deep: its call of leaf stays (the call depth limit); a callee that calls
    # (twice) or throws stays; leaf called inside try stays (its exceptional edges)
    assert _calls(opt, "rec") == ["rec", "leaf"]
    assert _calls(opt, "twice") == []  # leaf was inlined into twice
    assert sorted(_calls(opt)) == ["leaf", "rec", "thrower", "twice"]
    for n in ("0", "3", "9"):
        _same_everywhere(src, n)


def test_a_big_callee_stays_unless_called_once():
    body = " ".join(f"s = s + a * {k};" for k in range(40))
    big = f"fn big(a: int) -> int {{ var s = 0; {body} return s; }}"
    once = f"{big} fn main(n: int) {{ print(big(n)); }}"
    twice = f"{big} fn main(n: int) {{ print(big(n), big(n + 1)); }}"
    assert _calls(optimistic_program(compile_source(once))) == []
    assert _calls(optimistic_program(compile_source(twice))) == ["big", "big"]
    _same_everywhere(once, "2")
    _same_everywhere(twice, "2")


def test_the_pass_in_an_opt_pipeline():
    src = "fn get(cnt: int) -> int { return cnt; } fn main() { print(get(2)); }"
    comp = compile_source(src)
    state = run_pipeline(comp, ["parse", "son-inline", "sccp"])
    assert _calls(state.graph_program()) == []
    state.graph_program().verify()


def test_the_pass_needs_a_graph():
    with pytest.raises(UsageError, match="son-inline"):
        check_pipeline(["son-inline"])  # no graph yet: parse first
    with pytest.raises(UsageError, match="unknown pass"):
        check_pipeline(["parse", "son-inlin"])


# -- property: generated callers and callees print the same through son-opt ----------------

_BODIES = ["return a + b;", "if (a > b) { return a; } return b;", "print(a); return a * 2;",
           "var s = 0; while (s < a) { s = s + b + 1; } return s;", "return a / b;",
           "if (a == 3) { return 1; } if (b == 3) { return 2; } return a - b;"]


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(_BODIES), min_size=1, max_size=3),
       st.lists(st.tuples(st.integers(0, 2), st.sampled_from(["n", "2", "n + 1", "0", "3"]),
                          st.sampled_from(["n", "1", "2", "3"])), min_size=1, max_size=4),
       st.integers(-2, 4))
def test_generated_calls_print_the_same(bodies, calls, n):
    fns = " ".join(f"fn f{k}(a: int, b: int) -> int {{ {body} }}" for k, body in
                   enumerate(bodies))
    prints = " ".join(f"print(f{k % len(bodies)}({x}, {y}));" for k, x, y in calls)
    src = f"{fns} fn main(n: int) {{ {prints} }}"
    opt = optimistic_program(compile_source(src))
    opt.verify()
    _same_everywhere(src, str(n))
