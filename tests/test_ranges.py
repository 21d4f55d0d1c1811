"""Lesson 09: integer ranges. The interval transfers are sound under 64-bit wrapping
(concrete values sampled from the input ranges land in the output range), widening and
narrowing keep the lattice's promises, and the analysis finds the ranges of loops."""

from __future__ import annotations

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ssa_course import opcodes
from ssa_course.compilation import compile_source
from ssa_course.lessons.faces import fresh_graphs
from ssa_course.runtime import MAX_ARRAY_LENGTH
from ssa_course.son import intervals
from ssa_course.son.control import Phi, Start
from ssa_course.son.data import Add, Compare, Div, Mul, Neg, Rem, Sub, compare_ranges
from ssa_course.son.graph import Graph, Node
from ssa_course.son.memory import InBounds
from ssa_course.son.range_facts import analyse
from ssa_course.son.sccp import apply_to_program
from ssa_course.son.types import FALSE, INT_BOTTOM, INT_MAX, INT_MIN, INT_TOP, TRUE, IntType

# Values near the places where arithmetic wraps, and small ones.
EDGES = [INT_MIN, INT_MIN + 1, INT_MIN + 2, -(1 << 62), -(1 << 32), -3, -2, -1, 0, 1, 2, 3,
         1 << 32, 1 << 62, INT_MAX - 2, INT_MAX - 1, INT_MAX]
VALUES = st.one_of(st.sampled_from(EDGES), st.integers(-20, 20),
                   st.integers(INT_MIN, INT_MAX))
SAMPLES = settings(max_examples=400, deadline=None)


@st.composite
def ranges(draw):
    a, b = sorted((draw(VALUES), draw(VALUES)))
    if draw(st.integers(0, 4)) == 0:
        b = a  # a constant
    return IntType("int", a, b)


@st.composite
def range_and_member(draw):
    r = draw(ranges())
    pick = draw(st.integers(0, 3))
    x = r.lo if pick == 0 else r.hi if pick == 1 else draw(st.integers(r.lo, r.hi))
    return r, x


def member(t, x: int) -> bool:
    return isinstance(t, IntType) and t.lo <= x <= t.hi


BINARY = [("add", intervals.add), ("sub", intervals.sub), ("mul", intervals.mul),
          ("div", intervals.div), ("rem", intervals.rem)]


@SAMPLES
@given(st.sampled_from(BINARY), range_and_member(), range_and_member())
def test_binary_transfer_is_sound(op, left, right):
    name, fn = op
    (a, x), (b, y) = left, right
    row = opcodes.get(name)
    if row.divisor is not None:
        assume(y != 0)  # the zero test guards the node: it never sees a zero divisor
    value = row.evaluate(x, y)
    out = fn(a, b)
    assert member(out, value), f"{a} {name} {b} = {out}, but {x} {name} {y} = {value}"


@SAMPLES
@given(range_and_member())
def test_neg_transfer_is_sound(arg):
    a, x = arg
    value = opcodes.get("neg").evaluate(x)
    assert member(intervals.neg(a), value)


@SAMPLES
@given(st.sampled_from(["<", "<=", ">", ">=", "==", "!="]), range_and_member(),
       range_and_member())
def test_compare_by_ranges_is_sound(op, left, right):
    (a, x), (b, y) = left, right
    decided = compare_ranges(op, a, b)
    actual = opcodes.get(opcodes.tiny_operator(op, 2).name).evaluate(x, y)
    if decided in (TRUE, FALSE):
        assert (decided == TRUE) == actual


def test_overflow_gives_the_full_range_never_a_wrapped_one():
    assert intervals.add(IntType("int", 0, INT_MAX), intervals.interval(1, 1)) == INT_BOTTOM
    assert intervals.sub(IntType("int", INT_MIN, 0), intervals.interval(1, 1)) == INT_BOTTOM
    assert intervals.mul(IntType("int", 2, 1 << 62), intervals.interval(2, 2)) == INT_BOTTOM
    assert intervals.neg(IntType("int", INT_MIN, 0)) == INT_BOTTOM
    assert intervals.div(IntType("int", INT_MIN, 0), IntType("int", -1, -1)) == INT_BOTTOM
    # without a wrap, the exact bounds
    assert intervals.add(IntType("int", 0, 10), IntType("int", 1, 2)) == IntType("int", 1, 12)
    assert intervals.mul(IntType("int", -3, 2), IntType("int", -4, 5)) == \
        IntType("int", -15, 12)
    assert intervals.rem(IntType("int", -100, 100), IntType("int", 1, 7)) == \
        IntType("int", -6, 6)
    assert intervals.div(IntType("int", 10, 20), IntType("int", -5, 5)) == \
        IntType("int", -20, 20)


def test_empty_in_empty_out():
    one = intervals.interval(1, 1)
    for fn in (intervals.add, intervals.sub, intervals.mul, intervals.div, intervals.rem):
        assert fn(INT_TOP, one) == INT_TOP and fn(one, INT_TOP) == INT_TOP
    assert intervals.div(one, intervals.interval(0, 0)) == INT_TOP  # always traps


# -- the nodes use these transfers ---------------------------------------------------------


class Leaf(Node):
    """A value of a given type (a stand-in for whatever computes it)."""

    __slots__ = ("given",)

    def __init__(self, graph: Graph, t):
        super().__init__(graph)
        self.given = t
        self.type = t

    def compute(self):
        return self.given


NODES = [(Add, "add"), (Sub, "sub"), (Mul, "mul"), (Div, "div"), (Rem, "rem")]


@SAMPLES
@given(st.sampled_from(NODES), range_and_member(), range_and_member())
def test_node_compute_is_sound(node, left, right):
    cls, name = node
    (a, x), (b, y) = left, right
    row = opcodes.get(name)
    if row.divisor is not None:
        assume(y != 0)
    g = Graph()
    Start(g, [])
    n = cls(g, None, Leaf(g, a), Leaf(g, b))
    assert member(n.compute(), row.evaluate(x, y))
    neg = Neg(g, None, Leaf(g, a))
    assert member(neg.compute(), opcodes.get("neg").evaluate(x))


@SAMPLES
@given(range_and_member(), st.integers(0, MAX_ARRAY_LENGTH))
def test_inbounds_and_compare_nodes_are_sound(index, length):
    a, i = index
    g = Graph()
    Start(g, [])
    check = InBounds(g, None, Leaf(g, a), Leaf(g, intervals.LENGTH))
    t = check.compute()
    if t in (TRUE, FALSE):
        assert (t == TRUE) == (0 <= i < length)
    less = Compare(g, "<", Leaf(g, a), Leaf(g, intervals.LENGTH)).compute()
    if less in (TRUE, FALSE):
        assert (less == TRUE) == (i < length)


# -- widening and narrowing ------------------------------------------------------------------


@SAMPLES
@given(ranges(), ranges())
def test_widen_covers_both_and_moves_only_to_the_ends(old, new):
    w = intervals.widen(old, new)
    assert w.isa(old) and w.isa(new)  # below both in the lattice: covers every value
    assert w.lo in (old.lo, INT_MIN) and w.hi in (old.hi, INT_MAX)
    # a second widening with anything inside changes nothing: chains are short
    assert intervals.widen(w, w.meet(old)) == w


@SAMPLES
@given(ranges(), ranges())
def test_narrow_stays_within_old_and_keeps_the_common_values(old, new):
    n = intervals.narrow(old, new)
    assert old.lo <= n.lo <= n.hi <= old.hi
    common = old.join(new)
    if isinstance(common, IntType) and common.lo <= common.hi:
        assert n == common


@SAMPLES
@given(ranges(), ranges(), ranges())
def test_meet_and_join_with_widening_are_lattice_operations(a, b, c):
    assert a.meet(b) == b.meet(a) and a.join(b) == b.join(a)
    assert a.meet(b).meet(c) == a.meet(b.meet(c))
    assert a.meet(a.join(b)) == a  # absorption
    w = intervals.widen(a, b)
    assert w.meet(a) == w and w.meet(b) == w  # the widened range is below both


# -- the analysis on whole loops -------------------------------------------------------------


def _ranges_of(source: str, fn: str = "main") -> dict[str, IntType]:
    program = fresh_graphs(compile_source(source, "r.tiny"), True)
    apply_to_program(program)
    ra = analyse(program.functions[fn])
    return {n.var_name: ra.ranges[n.id] for n in ra.nodes
            if isinstance(n, Phi) and n.var_name}


def test_counted_loop_gets_its_exact_range_after_narrowing():
    r = _ranges_of("fn main() { var i = 0; while (i < 10) { print(i); i = i + 1; } }")
    assert r["i"] == IntType("int", 0, 10)  # widened to INT_MAX, narrowed back


def test_loop_bounded_by_a_length_stays_below_the_largest_array():
    r = _ranges_of("fn main(n: int) { var a = new int[n]; var i = 0;"
                   " while (i < len(a)) { a[i] = 1; i = i + 1; } }")
    assert r["i"] == IntType("int", 0, MAX_ARRAY_LENGTH)


def test_counting_down_keeps_the_lower_bound():
    r = _ranges_of("fn main() { var i = 100; while (i > 0) { i = i - 3; print(i); } }")
    assert r["i"] == IntType("int", -2, 100)


def test_a_loop_that_wraps_gets_the_full_range():
    r = _ranges_of("fn main() { var i = 1; while (i > 0) { i = i + 1; } print(i); }")
    assert r["i"] == INT_BOTTOM  # i + 1 wraps at INT_MAX: no bound survives


def test_irreducible_bril_loop_converges():
    src = """@main {
  n: int = const 5;
  one: int = const 1;
  zero: int = const 0;
  i: int = const 0;
  c: bool = lt i n;
  br c .a .b;
.a:
  i: int = add i one;
  c: bool = lt i n;
  br c .b .end;
.b:
  i: int = add i one;
  c: bool = lt i n;
  br c .a .end;
.end:
  print i;
}
"""
    program = fresh_graphs(compile_source(src, "irr.bril"), True)
    apply_to_program(program)
    ra = analyse(program.functions["main"])
    assert ra.steps < 10_000  # widened even without a loop head


def test_work_grows_linearly_with_loops_over_one_array():
    """A thousand loops all compare with one ``len(a)``: each question looks at the
    nearest facts only (once, 158 s for 1000 statements: every fact about ``len(a)`` led
    to every other)."""
    def work(loops: int) -> int:
        body = "".join(f"var i{k} = 0; while (i{k} < len(a)) {{ a[i{k}] = a[i{k}] + {k};"
                       f" i{k} = i{k} + 1; }} " for k in range(loops))
        program = fresh_graphs(compile_source(
            f"fn main(n: int) {{ var a = new int[n % 50 + 10]; {body} print(a[0]); }}",
            "w.tiny"), True)
        apply_to_program(program)
        ra = analyse(program.functions["main"])
        for n in ra.nodes:
            ra.upper(n, ra.facts.block_of(program.functions["main"].stop.inputs[0]))
        return ra.questions + ra.steps

    small, big = work(40), work(80)
    assert big < 2.5 * small, (small, big)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**6))
def test_loop_heads_are_the_blocks_dominating_a_predecessor(seed):
    """``blocks_of`` skips the search for back edges when every edge goes forward in the
    blocks' order (#22); the heads are still exactly the blocks that dominate one of their
    predecessors -- generated programs, with their loops and without."""
    import sys
    from pathlib import Path

    from ssa_course.son.edge_facts import blocks_of

    sys.path.insert(0, str(Path(__file__).parent))
    from fuzzgen import generate

    loop = ("fn main(n: int) { var i = 0; while (i < n) { "
            "if (i == 3) { print(i); } i = i + 1; } if (n > 2) { print(n); } }")
    for source in (generate(seed), loop):
        program = fresh_graphs(compile_source(source, "g.tiny"), True)
        apply_to_program(program)
        for fg in program.functions.values():
            ef = blocks_of(fg)
            dom = ef.dom
            expected = {name for name, b in ef.cfg.blocks.items()
                        if any(p in dom.pre and name in dom.pre and dom.dominates(name, p)
                               for p in b.preds)}
            assert ef.loop_heads == expected
            if source is loop:
                assert len(expected) == 1  # the while loop's head (the check can fail)


class _KnowsAll(dict):
    """A ``by_base`` table that claims facts about every node: the analysis then asks
    ``in_block`` about every fact's other side, as it did before the shortcut."""

    def __contains__(self, key: object) -> bool:
        return True


def test_a_fact_against_a_constant_reads_its_range_without_a_question_table_entry():
    """``n != 7`` narrows ``n`` by the constant's own range: nothing is known of a constant
    in any block, so its answer is not looked up or kept per block (#22: an else-if chain
    of 10k tests kept 160k of them). The answers are what asking gives."""
    from ssa_course.son.bce import decide_compare
    from ssa_course.son.control import If
    from ssa_course.son.data import Constant
    from ssa_course.son.range_facts import DEPTH

    arms = "".join(f" else if (n == {k}) {{ print({k}); }}" for k in range(1, 40))
    source = ("fn main(n: int) { if (n < 1) { print(0); }" + arms
              + " else if (n < 45) { if (n > 39) { print(1); } else { print(2); } } }")

    def answers(shortcut: bool):
        program = fresh_graphs(compile_source(source, "e.tiny"), True)
        apply_to_program(program)
        fg = program.functions["main"]
        ra = analyse(fg)
        if not shortcut:
            ra.facts.by_base = _KnowsAll(ra.facts.by_base)
        out = []
        for iff in (n for n in fg.nodes() if isinstance(n, If)):
            block = ra.facts.block_of(iff)
            x = iff.operand(1).operand(1)
            out.append((iff.id, decide_compare(ra, iff), ra.in_block(x, block)))
        return ra, fg, out

    ra, fg, fast = answers(True)
    assert ra._answers is not None
    # (a question of depth DEPTH is the one a fact asks about its other side)
    assert not [k for k in ra._answers if k[2] == DEPTH
                and isinstance(fg.graph.nodes.get(k[0]), Constant)]
    slow_ra, _, slow = answers(False)
    assert [k for k in slow_ra._answers if k[2] == DEPTH]  # (the old way did ask)
    assert fast == slow
    assert {r for _, _, r in fast if r.lo != r.hi} != {INT_BOTTOM}  # facts narrowed n
