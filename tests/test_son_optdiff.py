"""son-opt against son (son/optdiff.py): what the explorer's optimistic switch shows."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ssa_course.compilation import compile_source
from ssa_course.lessons.l05_control import son_program
from ssa_course.lessons.l07_optimistic import compare_modes, optimistic_program
from ssa_course.son import optdiff
from ssa_course.son.control import Phi
from ssa_course.viz.options import DrawOptions
from ssa_course.viz.palette import CHANGED_FILL, NEW_FILL, REMOVED_FILL

LOOP = ("fn main(n: int) { var x = 1; var i = 0; while (i < n) { x = 2 - x;"
        " if (x != 1) { print(99); } i = i + 1; } print(x); }")
# the parser keeps the named sums; son-opt reassociates them: (arg * 2) + 3, new nodes
SUM = "fn main(arg: int) { var x = arg + 1; var y = x + arg; var z = y + 2; print(z); }"


def _both(source: str):
    comp = compile_source(source)
    return comp, son_program(comp), optimistic_program(comp)


def test_the_loop_loses_x_and_the_dead_print():
    _, son, opt = _both(LOOP)
    d = optdiff.diff(son, opt)["main"]
    removed = {(n.label, getattr(n, "var_name", None)) for n in d.removed}
    assert ("Phi", "x") in removed and ("Print", None) in removed and ("99", None) in removed
    assert not d.new
    line = optdiff.diff_summary(son, opt)
    assert "nodes 28 → 19, phis 4 → 3, loads 0 → 0, calls 0 → 0" in line
    assert "9 removed, 0 new" in line and "1 branch cut, 1 path cut" in line


def test_reassociation_shows_as_new_nodes():
    _, son, opt = _both(SUM)
    d = optdiff.diff(son, opt)["main"]
    made = {opt.functions["main"].graph.nodes[i].label for i in d.new}
    assert {"*", "3"} <= made
    text = optdiff.diff_text(son, opt)
    assert any(line.endswith(" new") and "= *" in line for line in text.splitlines())
    assert "// removed from son" in text
    dot = optdiff.diff_dot(son, opt)
    assert f'"{NEW_FILL}"' in dot and f'"{REMOVED_FILL}"' in dot


def test_a_retyped_node_is_marked():
    # j is 5 or 6: SCCP's type for its two phis, "any int" for the parser (the loop's
    # back edge was still to come); nothing is rewritten
    src = ("fn main(n: int) { var k = 0; var j = 5; while (k < n) { if (k > 100) { j = 6; }"
           " k = k + 1; } print(j + n + 1); }")
    _, son, opt = _both(src)
    d = optdiff.diff(son, opt)["main"]
    assert len(d.retyped) == 2 and not d.removed and not d.new
    for i in d.retyped:
        now, before = opt.functions["main"].graph.nodes[i], son.functions["main"].graph.nodes[i]
        assert not now.is_control and str(now.type) != str(before.type)
    assert f'"{CHANGED_FILL}"' in optdiff.diff_dot(son, opt)
    text = optdiff.diff_text(son, opt)
    assert sum(line.endswith(" *") for line in text.splitlines()) == len(d.retyped)


def test_many_removed_nodes_are_drawn_up_to_the_limit():
    prints = " ".join(f"if (flag) {{ print({k}); }}" for k in range(optdiff.GHOSTS + 4))
    src = f"fn main() {{ var flag = false; var i = 0; while (i < 3) {{ {prints} i = i + 1; }} }}"
    _, son, opt = _both(src)
    d = optdiff.diff(son, opt)["main"]
    assert len(d.removed) > optdiff.GHOSTS
    dot = optdiff.diff_dot(son, opt)
    assert dot.count(f'"{REMOVED_FILL}"') == optdiff.GHOSTS + 1  # and one "N more" box
    assert f"{len(d.removed) - optdiff.GHOSTS} more" in dot
    # a drawing of part of the graph (a node budget) draws no removed boxes
    part = optdiff.diff_dot(son, opt, options=DrawOptions(budget=8))
    assert f'"{REMOVED_FILL}"' not in part


def test_the_switch_is_cached_per_compilation():
    comp = compile_source(LOOP)
    first = compare_modes(comp, "optimistic", "text")
    assert compare_modes(comp, "optimistic", "text") == first
    assert comp.cached("son-opt-diff", lambda: None) is not None
    pess_text, pess_line = compare_modes(comp, "pessimistic", "text")
    assert pess_text != first[0] and "SCCP" in pess_line


def test_several_functions_are_listed_each():
    src = ("fn f(a: int) -> int { var z = 0; if (z != 0) { return 1; } return a + 0; }"
           " fn main(n: int) { print(f(n)); }")
    _, son, opt = _both(src)
    text = optdiff.diff_text(son, opt)
    assert "graph f(a: int) -> int" in text and "graph main(n: int)" in text
    dot = optdiff.diff_dot(son, opt)
    assert "cluster" in dot


_STATEMENTS = ["x = x + 1;", "x = 2 - x;", "if (x != 1) { print(99); }", "s = s + x;",
               "if (flag) { s = s + 1; }", "flag = false;", "a[0] = s;", "s = s + a[0];"]


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(_STATEMENTS), min_size=1, max_size=6), st.booleans())
def test_the_diff_accounts_for_every_node(body, loop):
    inner = " ".join(body)
    if loop:
        inner = f"var i = 0; while (i < n) {{ {inner} i = i + 1; }}"
    src = (f"fn main(n: int) {{ var x = 1; var s = 0; var flag = false; var a = new int[2];"
           f" {inner} print(x, s, flag); }}")
    _, son, opt = _both(src)
    d = optdiff.diff(son, opt)["main"]
    before, after = son.functions["main"].nodes(), opt.functions["main"].nodes()
    assert len(before) - len(d.removed) + len(d.new) == len(after)
    ids_after = {n.id for n in after}
    assert all(n.id not in ids_after for n in d.removed) and d.new <= ids_after
    assert not (d.retyped & d.new)
    text = optdiff.diff_text(son, opt)
    assert text.count(" new\n") == len(d.new)
    phis = sum(isinstance(n, Phi) for n in after)
    assert f"phis {sum(isinstance(n, Phi) for n in before)} → {phis}" in text


def test_an_inlined_call_shows_in_the_counts():
    src = ("struct S { i: int; } fn new_s(x: int) -> S { return new S { i: x }; }"
           " fn main() { print(new_s(1).i); }")
    _, son, opt = _both(src)
    line = optdiff.diff_summary(son, opt)
    assert "loads 1 → 0, calls 1 → 0" in line and "1 call inlined" in line
    d = optdiff.diff(son, opt)["main"]
    assert "Call new_s" in {n.label for n in d.removed}
    assert "LoadField" in {type(n).__name__ for n in d.removed}  # new_s(1).i is 1
