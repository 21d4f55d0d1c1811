"""The sea-of-nodes stages stay linear on long functions: structural checks, not timings.

Each test pins down one cause of quadratic time found on large single-function programs
(benchmarks/shapes.py): a loop head making a phi for every variable in scope, the
verifier counting a node's users once per edge, the sweep searching long user lists once
per dead node, and leaving a block rebuilding the whole symbol table.
"""

from __future__ import annotations

from ssa_course.compilation import compile_source
from ssa_course.lessons.l05_control import son_program
from ssa_course.son.control import Loop, Phi
from ssa_course.son.data import Constant
from ssa_course.son.emit import sweep
from ssa_course.son.loopvars import mentioned_vars
from ssa_course.son.scope import Scope
from ssa_course.son.types import INT_BOTTOM, int_const
from ssa_course.son.verify import verify_graph
from ssa_course.stages import run


class CountingList(list):
    """A user list that counts how often it is scanned (iterated, searched, indexed)."""

    scans = 0

    def __iter__(self):
        CountingList.scans += 1
        return super().__iter__()

    def count(self, x):
        CountingList.scans += 1
        return super().count(x)

    def index(self, *args):
        CountingList.scans += 1
        return super().index(*args)

    def __getitem__(self, i):
        CountingList.scans += 1
        return super().__getitem__(i)

    def __contains__(self, x):
        CountingList.scans += 1
        return super().__contains__(x)


def many_variables(count: int) -> str:
    """``count`` variables in scope, then a loop that names only ``i``, ``n`` and ``s``."""
    decls = "".join(f"var u{k} = n + {k}; " for k in range(count))
    uses = " + ".join(f"u{k}" for k in range(count))
    return (f"fn main(n: int) {{ {decls}var s = 0; var i = 0; "
            f"while (i < n) {{ s = s + i; i = i + 1; }} print(s + {uses}); }}")


def main_graph(source: str, optimize: bool):
    return son_program(compile_source(source), optimize).functions["main"]


def test_raw_loop_head_has_phis_only_for_what_the_loop_names():
    fg = main_graph(many_variables(40), optimize=False)
    loop = next(n for n in fg.nodes() if isinstance(n, Loop))
    assert sorted(p.var_name for p in loop.phis()) == ["$mem", "i", "n", "s"]


def test_raw_graph_grows_by_the_declarations_only():
    """Twice the variables in scope: the graph grows by their declarations (a constant,
    an add, a use each), not by a phi per variable at the loop."""
    small = len(main_graph(many_variables(50), False).nodes())
    big = len(main_graph(many_variables(100), False).nodes())
    assert big - small <= 50 * 3 + 5  # a constant, an add, an add of the use


def test_fewer_phis_same_answers():
    comp = compile_source(many_variables(12))
    outs = {via: run(comp, ["5"], via=via) for via in
            ("quads", "son-raw", "son", "son-opt", "scheduled", "optimized")}
    assert {(r.status, r.stdout) for r in outs.values()} == {(0, outs["quads"].stdout)}
    assert outs["quads"].stdout.strip()
    # the pessimistic graph keeps phis only where values change: i and s at the loop
    fg = main_graph(many_variables(12), True)
    loop = next(n for n in fg.nodes() if isinstance(n, Loop))
    assert sorted(p.var_name for p in loop.phis()) == ["i", "s"]


def test_nested_loops_get_phis_for_outer_variables_they_name():
    src = ("fn main(n: int) { var a = 1; var b = 2; var i = 0; while (i < n) { var j = 0; "
           "while (j < i) { a = a + j; j = j + 1; } i = i + 1; } print(a, b); }")
    fg = main_graph(src, False)
    loops = sorted((n for n in fg.nodes() if isinstance(n, Loop)), key=lambda n: n.id)
    assert [sorted(p.var_name for p in lp.phis()) for lp in loops] == [
        ["$mem", "a", "i", "n"], ["$mem", "a", "i", "j"]]


def test_mentioned_vars_walks_every_construct_without_recursion():
    src = ("struct P { x: int; } fn f(x: int) -> int { return x; } "
           "fn main(n: int) { var a = new int[3]; var p = new P { x: 1 }; var q = 0; "
           "var r = 0; var s = 0; var t = 0; var u = 0; var w = 0; "
           "for (var i = 0; i < n; i = i + q) { a[r] = p.x + f(s) + len(a); "
           "if (t > 0) { var z = new P { x: -u }; w = z.x; } } print(w); }")
    comp = compile_source(src)
    main = comp.ast.functions["main"]
    loop = main.body.stmts[-2]
    found = {v.name for v in mentioned_vars(loop.cond, loop.body, loop.step)}
    assert found == {"a", "i", "n", "p", "q", "r", "s", "t", "u", "w", "z"}
    deep = " + ".join(["n"] * 30000)
    main = compile_source(f"fn main(n: int) {{ print({deep}); }}").ast.functions["main"]
    assert {v.name for v in mentioned_vars(main.body)} == {"n"}


def test_verifier_scans_each_user_list_a_fixed_number_of_times():
    """Start has a user per constant in the raw graph: the mirror check must not scan
    its user list once per user."""
    body = "".join(f"print({k});" for k in range(300))
    fg = main_graph(f"fn main() {{ {body} }}", False)
    start = fg.start
    assert len(start.outputs) > 300
    start.outputs = CountingList(start.outputs)
    CountingList.scans = 0
    verify_graph(fg)
    assert CountingList.scans <= 4


def test_sweep_filters_each_user_list_once():
    fg = main_graph("fn main(n: int) { print(n + 1); }", True)
    start = fg.start
    for k in range(300):  # dead constants hanging off Start
        c = Constant(fg.graph, start, int_const(1000 + k))
        c.type = int_const(1000 + k)
    start.outputs = CountingList(start.outputs)
    CountingList.scans = 0
    sweep(fg.graph)
    assert CountingList.scans <= 2
    assert not any(isinstance(n, Constant) and n.type.lo >= 1000 for n in start.outputs)
    verify_graph(fg)


class CountingDict(dict):
    scans = 0

    def items(self):
        CountingDict.scans += 1
        return super().items()

    def __iter__(self):
        CountingDict.scans += 1
        return super().__iter__()

    def keys(self):
        CountingDict.scans += 1
        return super().keys()


def test_leaving_a_block_costs_its_own_size():
    fg = main_graph("fn main(n: int) { print(n); }", False)
    scope = Scope(fg.graph, fg.start, fg.start)
    for k in range(500):
        scope.define(("v", k), fg.start, f"v{k}", INT_BOTTOM)
    scope.slots = CountingDict(scope.slots)
    CountingDict.scans = 0
    scope.truncate(scope.size() - 3)
    assert CountingDict.scans == 0
    assert len(scope.slots) == 497 and ("v", 497) not in scope.slots
    assert scope.lookup(("v", 496 - 1 - 2)) is fg.start


def test_loop_phis_keep_their_places_in_the_id_order():
    """Phis are made only for what the loop names, but each keeps the id it had when
    every variable got one: the printed graphs of the lessons do not move."""
    src = "fn main(n: int) { var a = 1; var b = 2; var i = 0; while (i < n) { i = i + b; } " \
          "print(a, i); }"
    fg = main_graph(src, False)
    loop = next(n for n in fg.nodes() if isinstance(n, Loop))
    phis = {p.var_name: p.id for p in loop.phis()}
    # slots: 1 memory, 2 n, 3 a, 4 b, 5 i -> ids loop+1 .. loop+5; a gets none
    assert phis == {"$mem": loop.id + 1, "n": loop.id + 2, "b": loop.id + 4,
                    "i": loop.id + 5}
    assert all(isinstance(fg.graph.nodes.get(loop.id + k), Phi) for k in (1, 2, 4, 5))


def _unused_by_sweeps(writer) -> set[int]:
    """The old definition: sweep until nothing changes (a chain of k nodes took k sweeps)."""
    from ssa_course.son.data import Add, Mul, Sub
    from ssa_course.son.to_quads import Compare, InBounds, IsSet, Len, Logic, Neg, Not

    pure = (Constant, Add, Sub, Mul, Neg, Compare, Not, Logic, InBounds, Len, IsSet)
    probed = {x.id for a, b, _ in writer.probes.values() for x in (a, b)}
    nodes = [n for b in writer.s.order() for n in b.nodes
             if isinstance(n, pure) and n.id not in probed]
    unused: set[int] = set()
    changed = True
    while changed:
        changed = False
        for n in nodes:
            if n.id not in unused and all(u.id in writer.implied or u.id in unused
                                           for u in n.outputs):
                unused.add(n.id)
                changed = True
    return unused


def test_checks_left_implicit_drop_the_same_nodes_as_repeated_sweeps():
    import sys
    from pathlib import Path

    from ssa_course.lessons.l07_optimistic import optimistic_program
    from ssa_course.son.control import If
    from ssa_course.son.gcm import schedule
    from ssa_course.son.memory import IsSet
    from ssa_course.son.to_quads import _Writer

    sys.path.insert(0, str(Path(__file__).parent.parent / "benchmarks"))
    from shapes import array_loops, diamonds

    for src in (array_loops(120), diamonds(150),
                "fn main(n: int) { var a = new int[n]; print(a[n - 1] / (n - 3)); }"):
        program = optimistic_program(compile_source(src))
        for fg in program.functions.values():
            w = _Writer(schedule(fg), {})
            w.implied = {b.end.id for b in w.s.order() if isinstance(b.end, If) and (
                isinstance(b.end.inputs[1], IsSet) or w.check_is_implied(b.end))}
            assert w._only_for_implied_checks() == _unused_by_sweeps(w)


def test_removing_a_user_far_from_the_end_does_not_walk_the_list_in_python():
    from ssa_course.son.graph import _remove_last

    fg = main_graph("fn main(n: int) { print(n); }", False)
    a, b, c = fg.start, fg.stop, fg.graph.nodes[1]
    users = CountingList([a, c, *([b] * 2000), a, *([b] * 2000)])
    CountingList.scans = 0
    _remove_last(users, a)  # the last occurrence goes, the order of the rest stays
    assert CountingList.scans <= 10
    assert list.__getitem__(users, slice(0, 3)) == [a, c, b] and len(users) == 4002
    assert a not in list.__getitem__(users, slice(2, None))


def test_replacing_a_node_with_many_users_does_not_rescan_its_user_list():
    """replace_with removes every user of the old node; each removal searches the old
    node's user list from the end, so it must find its user there (oldest-first removal
    from a list searched from the end was quadratic: a Bril phi with hundreds of users)."""
    from ssa_course.son import graph as graph_mod
    from ssa_course.son.data import Add

    src = "fn main(n: int) { var x = n + 1; print(x); }"
    import ssa_course

    program = ssa_course.sea_of_nodes(src, optimize=False)
    g = program.functions["main"].graph
    x = next(node for node in g.live_nodes() if isinstance(node, Add))
    param = x.inputs[1]
    users = [Add(g, None, x, param) for _ in range(400)]
    steps = 0
    real = graph_mod._remove_last

    def counting(lst, node):
        nonlocal steps
        steps += len(lst) - max(i for i, u in enumerate(lst) if u is node)
        return real(lst, node)

    graph_mod._remove_last = counting
    try:
        x.replace_with(param)
    finally:
        graph_mod._remove_last = real
    assert all(u.inputs[1] is param for u in users)
    assert steps < 4 * len(users)  # searching past every newer user: about 400 * 400 / 2


class _SpanList(list):
    """A user list that counts the places its searches look at (``index`` from its start,
    or within the window it is given) and the elements its slices copy."""

    looked = 0

    def __getitem__(self, i):
        got = super().__getitem__(i)
        if isinstance(i, slice):
            _SpanList.looked += len(got)
        return got

    def index(self, x, lo=0, hi=None):
        found = super().index(x, lo, len(self) if hi is None else hi)
        _SpanList.looked += found - lo + 1
        return found


def test_removing_a_run_of_users_far_from_the_end_looks_near_the_last_place():
    """GVN merging each inlined copy's twin constants removes a run of users from one place
    N deep in Start's user list of 4N (issue #39): each search starts at the place the last
    one found its user (the list's finger), so the run costs about its length, not N each.
    The order of the users left is unchanged."""
    fg = main_graph("fn main(n: int) { print(n); }", False)
    g, start = fg.graph, fg.start
    made = [Constant(g, start, int_const(k)) for k in range(4000)]
    start.outputs = _SpanList(start.outputs)
    kept = [u for u in start.outputs if u not in made[1000:3000:2]]
    _SpanList.looked = 0
    for c in made[1000:3000:2]:  # oldest first, every other one: GVN's order
        c.kill()
    assert list(start.outputs) == kept
    assert _SpanList.looked < 100 * 1000  # from the end, a reversed copy: 3.5 million
