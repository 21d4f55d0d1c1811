"""The iterative peepholes after SCCP (issue #10, section 4): what SCCP proves unlocks
further rewrites, which run to a fixed point; output is unchanged through every stage."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ssa_course.compilation import compile_source
from ssa_course.lessons.l05_control import son_program
from ssa_course.lessons.l07_optimistic import optimistic_program
from ssa_course.son.build import build_graphs
from ssa_course.son.control import If, Loop, Phi, Region
from ssa_course.son.data import Add, Compare, Mul
from ssa_course.son.emit import BuildOptions
from ssa_course.son.iterate import iterate
from ssa_course.son.memory import Print
from ssa_course.son.peephole import RewriteError
from ssa_course.son.printer import format_graphs
from ssa_course.son.verify import verify_graphs
from ssa_course.stages import run

sys.path.insert(0, str(Path(__file__).parent))

# ``x`` is 1 on every iteration, but only SCCP can tell (the parser must assume the back
# edge brings anything): every program below hides a 0 or a 1 behind it.
ONE = "var x = 1; var i = 0; while (i < n) { x = 2 - x; i = i + 1; } "

PROGRAMS = {
    "add_zero": "fn main(n: int) { " + ONE + "print(n + (x - 1)); }",
    "mul_one": "fn main(n: int) { " + ONE + "print(n * x); }",
    "compare_equal": "fn main(n: int) { " + ONE
                     + "if (n + (x - 1) == n) { print(1); } else { print(2); } }",
    "phi_equal": "fn main(n: int) { " + ONE + "var y = n; if (n > 0) { y = n * x; } print(y); }",
    "dead_loop": "fn main(n: int) { " + ONE + "var s = 0; if (n * x != n) { "
                 "while (s < 100) { s = s + 1; print(s); } } print(s + i); }",
}

# The whole graph after SCCP and the iterative peepholes: the loop that computes ``x``
# and ``i`` stays (it may not terminate), everything ``x`` fed folded away.
LOOP = """\
  %0 = Start                                    : [ctrl, mem, int]
  %1 = Proj ctrl         %0                     : ctrl
  %2 = Proj mem          %0                     : mem
  %3 = Parm n            %0                     : int
  %5 = 1                 %0                     : 1
  %6 = 0                 %0                     : 0
  %7 = Loop              _ %1 %15               : ctrl
  %11 = Phi              %7 %6 %21              : int  ; i
  %13 = <                _ %11 %3               : bool
  %14 = If               %7 %13                 : [ctrl, ctrl]
  %15 = Proj True        %14                    : ctrl
  %16 = Proj False       %14                    : ctrl
  %21 = +                _ %11 %5               : int
"""


def _graph_text(program) -> str:
    text = format_graphs(program)
    return text[text.index("graph main"):]


def test_add_zero_folds_once_sccp_finds_the_zero():
    program = optimistic_program(compile_source(PROGRAMS["add_zero"]))
    assert _graph_text(program) == "graph main(n: int)\n" + LOOP + """\
  %25 = Print            %16 %2 %3              : mem
  %26 = Return           %16 %25 _              : ctrl
  %27 = Stop             %26                    : ctrl
"""
    # the pessimistic graph still computes n + (x - 1)
    pess = son_program(compile_source(PROGRAMS["add_zero"])).functions["main"]
    assert any(isinstance(n, Add) and n.inputs[1].label == "n" for n in pess.nodes())


def test_mul_one_folds_once_sccp_finds_the_one():
    program = optimistic_program(compile_source(PROGRAMS["mul_one"]))
    fg = program.functions["main"]
    assert not any(isinstance(n, Mul) for n in fg.nodes())
    printed = next(n for n in fg.nodes() if isinstance(n, Print))
    assert printed.inputs[2].label == "n"
    assert "%23 = Print            %16 %2 %3" in _graph_text(program)


def test_a_compare_of_equal_values_decides_its_if():
    program = optimistic_program(compile_source(PROGRAMS["compare_equal"]))
    fg = program.functions["main"]
    assert not any(isinstance(n, Compare) and n.op == "==" for n in fg.nodes())
    assert [n for n in fg.nodes() if isinstance(n, If)] == [fg.graph.nodes[14]]  # the loop's
    assert not any(isinstance(n, Region) and not isinstance(n, Loop) for n in fg.nodes())
    printed = [n for n in fg.nodes() if isinstance(n, Print)]
    assert [p.inputs[2].label for p in printed] == ["1"]  # print(2) went with its branch
    assert program.sccp_counts["rewrites"] >= 3


def test_a_phi_whose_inputs_become_equal_goes_and_its_diamond_too():
    program = optimistic_program(compile_source(PROGRAMS["phi_equal"]))
    fg = program.functions["main"]
    assert [n.id for n in fg.nodes() if isinstance(n, Phi)] == [11]  # only the loop's i
    assert not any(isinstance(n, Region) and not isinstance(n, Loop) for n in fg.nodes())
    assert sum(isinstance(n, If) for n in fg.nodes()) == 1
    assert _graph_text(program).endswith("""\
  %31 = Print            %16 %2 %3              : mem
  %32 = Return           %16 %31 _              : ctrl
  %33 = Stop             %32                    : ctrl
""")


def test_a_loop_behind_a_decided_if_is_dead_code():
    program = optimistic_program(compile_source(PROGRAMS["dead_loop"]))
    fg = program.functions["main"]
    assert sum(isinstance(n, Loop) for n in fg.nodes()) == 1
    assert sum(isinstance(n, Print) for n in fg.nodes()) == 1
    assert _graph_text(program).startswith("graph main(n: int)\n" + LOOP)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_output_is_unchanged_through_every_stage(name):
    comp = compile_source(PROGRAMS[name])
    for args in (["0"], ["1"], ["4"], ["-3"]):
        want = run(comp, args, via="ast")
        for via in ("son", "son-opt", "scheduled", "optimized"):
            got = run(comp, args, via=via)
            assert (got.stdout, got.status) == (want.stdout, want.status), (name, via, args)


def test_a_second_run_finds_nothing_left_to_do():
    """The fixed point: every node that could still simplify was on the worklist (the
    invariant of Simple's IterPeeps), so running again changes nothing."""
    from corpus import load_corpus

    for case in load_corpus():
        program = optimistic_program(compile_source(case.source, case.name))
        for fg in program.functions.values():
            before = format_graphs(program)
            fg.graph.settled = None  # a real second run, not the skip of a settled graph
            stats = iterate(fg.graph)
            assert stats.visits > 0
            assert (stats.rewrites, stats.killed) == (0, 0), (case.name, fg.name, stats)
            assert format_graphs(program) == before
        verify_graphs(program)


class _Swap(Add):
    """A broken rule: ``a + b`` becomes ``b + a``, forever."""

    def idealize(self):
        return _Swap(self.graph, None, self.inputs[2], self.inputs[1])


def test_a_rule_that_keeps_rewriting_is_stopped_by_the_budget():
    comp = compile_source("fn main(a: int, b: int) { print(a + b); }")
    # built raw (no peepholes while parsing), so the broken rule first runs here
    program = build_graphs(comp.ast, False, BuildOptions(classes={"+": _Swap}))
    assert any(isinstance(n, _Swap) for n in program.functions["main"].nodes())
    with pytest.raises(RewriteError, match="keep making new work"):
        iterate(program.functions["main"].graph)


# -- cost (#22): the driver's work grows with the graph, not with its square ------------

def _sccp_stats(source: str, monkeypatch) -> tuple[object, list]:
    """son-opt's program for ``source`` and the iterative peepholes' statistics."""
    import ssa_course.son.sccp as sccp_module

    seen: list = []
    real = sccp_module.iterate

    def spy(graph, order=None):
        stats = real(graph, order)
        seen.append((stats, graph))
        return stats

    monkeypatch.setattr(sccp_module, "iterate", spy)
    return optimistic_program(compile_source(source)), seen


def _chained_dead_loops(k: int) -> str:
    """``k`` loops; each one counts, in a diamond, how often the last loop's count is
    small; only the last count is unused (so dead), and each one feeds the next."""
    lines = ["fn main(n: int) {", "    var a0 = n;"]
    for i in range(1, k + 1):
        lines += [f"    var a{i} = 0; var i{i} = 0;",
                  f"    while (i{i} < n) {{ if (a{i - 1} < {i}) {{ a{i} = a{i} + 1; }} "
                  f"i{i} = i{i} + 1; }}"]
    lines += ["    print(n);", "}"]
    return "\n".join(lines) + "\n"


def test_dead_cycles_that_feed_each_other_go_in_one_round(monkeypatch):
    # Each loop's count (phis and their ``+ 1``) is read only by the next loop's test:
    # once the last count is gone, that loop's diamond is empty and goes, so the count
    # before it is a cycle nobody reads -- which reference counts cannot see. The
    # driver deletes such a cycle where its last outside user went, so the whole chain
    # goes in one round; before, each sweep freed one more loop and every node was
    # looked at again after it (diamonds at 10k statements: 96 sweeps, 4.6 million looks).
    k = 25
    program, seen = _sccp_stats(_chained_dead_loops(k), monkeypatch)
    (stats, graph), = seen
    nodes = program.functions["main"].nodes()
    assert not [n for n in nodes if isinstance(n, (Phi, Compare)) and n.inputs[1] is not None
                and getattr(n, "var_name", "").startswith("a")]
    assert sum(isinstance(n, If) for n in nodes) == k  # the loops' own tests only
    assert stats.sweeps <= 1
    assert stats.visits <= 4 * (stats.killed + len(graph.nodes))  # (before: 4863)
    assert run(compile_source(_chained_dead_loops(k)), ["3"], via="son-opt").stdout == "3\n"


def _far_test(diamonds: int) -> str:
    body = "\n".join(f"        if (n == {i}) {{ y = y + {i}; }}" for i in range(diamonds))
    return ("fn main(n: int) {\n    var y = 0;\n    if (n > 5) {\n" + body +
            "\n        if (n > 5) { print(y); } else { print(0 - 1); }\n    }\n}\n")


def test_a_test_far_above_is_known_through_the_dominator_tree(monkeypatch):
    # 40 diamonds between the two tests: more control nodes than the parser's bounded
    # walk looks at (64), one step each for the tree the driver computes per round
    program, seen = _sccp_stats(_far_test(40), monkeypatch)
    prints = [n for n in program.functions["main"].nodes() if isinstance(n, Print)]
    assert len(prints) == 1 and not prints[0].inputs[2].type.is_constant()
    (stats, graph), = seen
    assert stats.trees >= 1 and graph.dom is None  # installed only while the driver runs
    for arg in ("3", "7", "30"):
        want = run(compile_source(_far_test(40)), [arg], via="quads").stdout
        assert run(compile_source(_far_test(40)), [arg], via="son-opt").stdout == want


def test_without_the_tree_the_bounded_walk_stops_short():
    # the parser's walk (no tree installed) gives up after 64 control nodes: the inner
    # test stays in the pessimistic graph, which the test above folds
    program = son_program(compile_source(_far_test(40)))
    prints = [n for n in program.functions["main"].nodes() if isinstance(n, Print)]
    assert len(prints) == 2


# -- a settled graph is not looked at again (#22) -------------------------------------


def _settled_program(source: str = PROGRAMS["dead_loop"]):
    program = optimistic_program(compile_source(source, "t.tiny"))
    fg = program.functions["main"]
    assert fg.graph.settled is not None and fg.graph.settled.holds(fg.graph)
    return program, fg


def test_a_graph_as_the_last_run_left_it_is_not_looked_at_again():
    program, fg = _settled_program()
    before = format_graphs(program)
    assert iterate(fg.graph).visits == 0
    assert format_graphs(program) == before


def test_an_edge_a_node_or_a_type_changed_since_makes_a_full_run():
    from ssa_course.son.types import IntType

    for change in ("edge", "node", "type", "drop"):
        program, fg = _settled_program()
        g = fg.graph
        add = next(n for n in g.nodes.values() if isinstance(n, Add))
        if change == "edge":
            add.set_input(2, add.inputs[1])  # i + i: a rule may fire, the run must look
        elif change == "node":
            Add(g, None, add, add)  # unused: the run deletes it
        elif change == "type":
            add.type = add.type.meet(add.type)  # an equal type: still settled
            assert g.settled is not None and g.settled.holds(g)
            add.type = IntType("int", 0, 5)  # narrower: a new fact the rules may use
        else:
            g.nodes.pop(add.id)  # (without any edge bookkeeping: the size tells)
            assert g.settled is not None and not g.settled.holds(g)
            continue
        assert g.settled is not None and not g.settled.holds(g), change
        assert iterate(g).visits > 0, change
        assert g.settled is not None and g.settled.holds(g)  # settled again
        verify_graphs(program)


def test_a_checking_run_is_skipped_only_after_a_checking_run():
    from ssa_course.son.worklist import peephole_order

    program, fg = _settled_program()
    g = fg.graph
    assert g.settled is not None and not g.settled.checked
    with peephole_order(check=True):
        assert iterate(g).visits > 0  # the progress check was never made: made now
        assert g.settled is not None and g.settled.checked
        assert iterate(g).visits == 0
    assert iterate(g).visits == 0  # an unchecked run after a checked one: skipped too


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10**6))
def test_skipping_settled_graphs_changes_no_output(seed):
    """On generated programs, the graph passes (``ranges`` after ``sccp`` is where the
    skip happens) print the same graphs and counters with the skip as with a full run
    every time."""
    from fuzzgen import generate

    from ssa_course import passes
    from ssa_course.son.iterate import Settled

    source = generate(seed)
    pipeline = ["parse", "sccp", "ranges", "bce", "sccp", "ranges"]

    def outputs() -> tuple[str, list[str]]:
        state = passes.run_pipeline(compile_source(source, "g.tiny"), pipeline)
        return format_graphs(state.graph_program()), state.stats_lines()

    skipped = outputs()
    holds = Settled.holds
    try:
        Settled.holds = lambda self, graph: False  # type: ignore[method-assign]
        full = outputs()
    finally:
        Settled.holds = holds  # type: ignore[method-assign]
    assert skipped == full


_NARROWING = """fn main(n: int) {
    var a = 5;
    var w = 0;
    while (w < 1) {
        w = w + 1;
        a = BODY;
    }
    print(a);
}
"""


@pytest.mark.parametrize("body", ["(a + 2) % (n / 10)", "(a - (1 - 3)) % (n / -10)",
                                  "(a + 1) % (n / 3)"])
def test_a_loop_that_narrows_its_own_range_settles(body):
    """Fuzz seed 7814: after SCCP, ``a``'s phi, its ``+ 2`` and the ``%`` narrowed each
    other's range by 2 a look (the divisor is about 10^18): the run gave up without
    settling (exit 3 from ``opt``). A phi narrows freely only ``FREE_NARROWINGS`` times;
    then its bounds narrow only from the ends of the integers."""
    from ssa_course import passes
    from ssa_course.son.iterate import FREE_NARROWINGS, progress_left

    source = _NARROWING.replace("BODY", body)
    comp = compile_source(source, "n.tiny")
    state = passes.run_pipeline(comp, ["parse", "sccp"])  # (raised RewriteError before)
    for fg in state.graph.functions.values():
        assert progress_left(fg.graph) is None  # a true fixed point, by the same rule
        assert max(fg.graph.narrowings.values(), default=0) <= FREE_NARROWINGS + 2
    for args in (["7"], ["100"], ["-30"]):
        want = run(compile_source(source, "n.tiny"), args, via="ast")
        got = run(compile_source(source, "n.tiny"), args, via="optimized")
        assert (got.stdout, got.status, got.error) == (want.stdout, want.status, want.error)


def test_a_merge_phi_still_narrows_as_its_inputs_fold():
    """The cap is for cycles: a phi that narrows a few times keeps the precise range (the
    son-opt text of the corpus is unchanged by it)."""
    from ssa_course.son.iterate import kept_type
    from ssa_course.son.types import IntType

    comp = compile_source("fn main(n: int) { var x = 0; if (n < 3) { x = 5; } print(x); }",
                          "m.tiny")
    phi = next(n for fg in son_program(comp).functions.values()
               for n in fg.graph.nodes.values() if isinstance(n, Phi))
    wide, narrow = IntType("int", 0, 100), IntType("int", 0, 5)
    assert kept_type(phi, wide, narrow, {}) == narrow
    assert kept_type(phi, wide, narrow, {phi.id: 99}) == wide  # capped: finite bounds stay
    assert kept_type(phi, IntType("int", 0), narrow, {phi.id: 99}) == IntType("int", 0, 5)
    assert kept_type(phi, wide, IntType("int", 4, 4), {phi.id: 99}) == IntType("int", 4, 4)


def _drained_driver(source: str):
    from ssa_course.son.iterate import IterativePeepholes

    graph = build_graphs(compile_source(source).ast, True).functions["main"].graph
    driver = IterativePeepholes(graph)
    while driver.work.pop() is not None:  # an empty worklist
        pass
    return graph, driver


def test_the_push_rule_wakes_what_the_fuzz_seeds_needed():
    """The push rule (``IterativePeepholes.unlock``), case by case, on the cases fuzzing
    found missing: each change puts back on the worklist the nodes it may unlock."""
    from ssa_course.son.iterate import CHANGED, DIES, LOST_USER, NEW_INPUT, NEW_TYPE, SWEPT

    graph, driver = _drained_driver("fn main(x: int, y: int) { print(x * y + 7); }")
    mul = next(n for n in graph.live_nodes() if isinstance(n, Mul))
    add = next(n for n in graph.live_nodes() if isinstance(n, Add))
    printer = next(n for n in graph.live_nodes() if isinstance(n, Print))
    assert add in mul.outputs and printer not in mul.outputs
    work = driver.work

    def woken(n, change, registered=None):
        """What ``unlock(n, change)`` puts on an empty list (``printer`` asks first to be
        told about ``registered``)."""
        if registered is not None:
            printer.dep_read(registered)
        driver.unlock(n, change)
        found = set()
        while (m := work.pop()) is not None:
            found.add(m.id)
        return found

    # a type change: the users, and a rule that read the node from afar
    assert woken(mul, NEW_TYPE, registered=mul) == {add.id, printer.id}
    # fuzz seed 50449, in place: a Region lost a path, so its phis lost an input; a rule
    # that read a phi's inputs from afar (registered on the user) looks again
    assert printer.id in woken(mul, CHANGED, registered=add)
    # fuzz seed 50449, replaced: a user has a new input; a rule that read the user's
    # inputs from afar looks again
    assert woken(add, NEW_INPUT, registered=add) == {add.id, printer.id}
    # fuzz seed 7089: the sweep deleted users of a survivor (it may be dead, its users and
    # the rules that read it look again), and a rule that read a dead node looks again
    assert woken(mul, SWEPT, registered=mul) == {mul.id, add.id, printer.id}
    assert mul.id in driver.lost
    assert woken(mul, DIES, registered=mul) == {printer.id}
    # a node that lost a user may be dead; a Constant's watchers are not woken (#22)
    seven = add.inputs[2]
    assert woken(seven, LOST_USER, registered=seven) == {seven.id}
    assert woken(mul, LOST_USER, registered=mul) == {mul.id, printer.id}


def test_a_chain_of_inlined_sums_gathers_its_constants_in_linear_rewrites(monkeypatch):
    # Issue #39 item 5: `t = t + f1(n + k)` with f1 = x * 2 + 1, inlined, is a chain of
    # `(x + c1) + (y + c2)`; one literal at a time, each `+ 1` climbed the rest of the chain
    # alone (quadratic; 300 statements ran out of the rewrite budget: exit 3).
    from ssa_course.lessons.l08_scheduling import scheduled
    from ssa_course.son import iterate as iterate_module

    runs: list[int] = []
    real = iterate_module.IterativePeepholes.run

    def counted(self):
        stats = real(self)
        runs.append(stats.rewrites)
        return stats

    monkeypatch.setattr(iterate_module.IterativePeepholes, "run", counted)
    calls = "".join(f"t = t + f1(n + {k}); " for k in range(1, 301))
    comp = compile_source("fn f1(x: int) -> int { return x * 2 + 1; } "
                          f"fn main(n: int) {{ var t = 0; {calls}print(t); }}")
    scheduled(comp)
    assert runs and max(runs) <= 4 * 300  # 3 a statement
    expected = sum(2 * (3 + k) + 1 for k in range(1, 301))
    assert run(comp, ["3"], via="scheduled").stdout == f"{expected}\n"


def test_stop_hears_when_an_exit_s_control_dies():
    # fuzz seed 20700: after son-inline, bce and ranges, SCCP's peepholes in a random order
    # left Stop with a dead exit to remove (it read the exit's control without asking to
    # be told of changes: "stopped with progress left: Stop() still has a rewrite")
    from ssa_course import passes
    from ssa_course.son.worklist import peephole_order

    source = """struct P { v: int; ok: bool; xs: [int]; }
fn f1(p0: P, p1: int) -> int {
    var v2 = new P { v: -1, ok: false || true, xs: new int[6] };
    return (0 - 0);
}
fn f3(p0: P) -> [int] {
    if (false) {
        throw f1(p0, 0);
    }
    return new int[7];
}
fn main(n: int, flag: bool) {
}
"""
    comp = compile_source(source, "seed20700.tiny")
    with peephole_order(20700, check=True):
        passes.run_pipeline(comp, ["parse-raw", "son-inline", "bce", "ranges", "sccp"])
