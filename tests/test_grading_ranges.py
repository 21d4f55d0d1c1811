"""Exercise 09's helpers (ssa_course.grading.ranges): the engine's answers as plain data,
the number line, and the bounds checks of real programs."""

from __future__ import annotations

import itertools
import random
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ssa_course.grading import Mismatch, check_against
from ssa_course.grading.ranges import (
    NEGATE,
    OPS,
    NumberLine,
    bound,
    check_situations,
    engine_add,
    engine_branch,
    engine_narrow,
    engine_narrowing,
    engine_widen,
    loop_back,
    written,
)
from ssa_course.son import intervals
from ssa_course.son.types import INT_MAX, INT_MIN, IntType

ROOT = Path(__file__).resolve().parent.parent
EDGES = [INT_MIN, INT_MIN + 1, -2, -1, 0, 1, 2, INT_MAX - 1, INT_MAX]


def _wrap(v: int) -> int:
    return (v - INT_MIN) % (1 << 64) + INT_MIN


def _pairs(rng: random.Random, n: int) -> list[tuple[int, int]]:
    out = []
    for _ in range(n):
        a = rng.choice(EDGES) + rng.randint(-3, 3) if rng.random() < 0.6 else rng.randint(-9, 9)
        w = rng.choice([0, 0, 1, 2, 5])
        lo = max(INT_MIN, min(INT_MAX - w, a))
        out.append((lo, lo + w))
    return out


def test_engine_add_is_the_engine_s_transfer_as_pairs():
    rng = random.Random(1)
    for a, b in zip(_pairs(rng, 300), _pairs(rng, 300), strict=True):
        r = intervals.add(IntType("int", *a), IntType("int", *b))
        assert engine_add(a, b) == (r.lo, r.hi)
    assert engine_add(None, (1, 2)) is None and engine_add((1, 2), None) is None
    assert engine_add((0, INT_MAX), (1, 1)) == (INT_MIN, INT_MAX)  # a wrap: everything
    assert engine_add((0, INT_MAX - 1), (1, 1)) == (1, INT_MAX)


def test_engine_add_covers_every_wrapped_sum_and_is_exact_without_a_wrap():
    rng = random.Random(2)
    for a, b in zip(_pairs(rng, 300), _pairs(rng, 300), strict=True):
        lo, hi = engine_add(a, b)
        sums = {_wrap(x + y) for x in range(a[0], a[1] + 1) for y in range(b[0], b[1] + 1)}
        assert all(lo <= s <= hi for s in sums)
        if a[0] + b[0] >= INT_MIN and a[1] + b[1] <= INT_MAX:
            assert (lo, hi) == (min(sums), max(sums))


@pytest.mark.parametrize("op", OPS)
def test_engine_narrow_is_the_hull_of_the_values_that_can_pass(op):
    """On small ranges: exactly the smallest range holding every x in ``x`` for which
    some y in ``y`` makes ``x op y`` true -- sound and as tight as a range can be."""
    holds = {"<": int.__lt__, "<=": int.__le__, ">": int.__gt__, ">=": int.__ge__,
             "==": int.__eq__, "!=": int.__ne__}[op]
    small = [(lo, hi) for lo, hi in itertools.product(range(-3, 4), repeat=2) if lo <= hi]
    for x, y in itertools.product(small, repeat=2):
        passing = [v for v in range(x[0], x[1] + 1)
                   if any(holds(v, w) for w in range(y[0], y[1] + 1))]
        expected = (min(passing), max(passing)) if passing else None
        assert engine_narrow(x, op, y) == expected, (x, op, y)


def test_engine_branch_gives_each_side_its_relation_and_handles_the_edges():
    assert engine_branch((0, 100), "<", (10, 20)) == ((0, 19), (10, 100))
    assert engine_branch((INT_MIN, INT_MAX), "<", (INT_MIN, INT_MIN)) == \
        (None, (INT_MIN, INT_MAX))
    assert engine_branch((INT_MIN, INT_MAX), ">", (INT_MAX, INT_MAX)) == \
        (None, (INT_MIN, INT_MAX))
    for op in OPS:
        true_side, false_side = engine_branch((-5, 5), op, (0, 0))
        assert true_side == engine_narrow((-5, 5), op, (0, 0))
        assert false_side == engine_narrow((-5, 5), NEGATE[op], (0, 0))
    with pytest.raises(ValueError):
        engine_narrow((0, 1), "<>", (0, 1))


def test_ends_are_written_by_name():
    assert bound(INT_MAX) == "INT_MAX" and bound(INT_MIN + 2) == "INT_MIN + 2"
    assert bound(INT_MAX - 1) == "INT_MAX - 1" and bound(7) == "7"
    assert written((0, INT_MAX)) == "(0, INT_MAX)"
    assert written([None, (INT_MIN, -1)]) == "[None, (INT_MIN, -1)]"
    assert written((5,)) == "(5,)" and written(True) == "True"


def test_number_line_draws_ranges_and_anything_else_as_text():
    line = NumberLine(title="if (x < y)").add("x", (0, INT_MAX)).add("y", (10, 20))
    line.add("empty", None).add("garbage", "oops").add("backwards", (5, 1))
    svg = ET.fromstring(line._repr_svg_())
    assert svg.tag.endswith("svg")
    texts = [t.text for t in svg.iter() if t.tag.endswith("text")]
    assert "INT_MAX" in texts and "empty" in texts and "'oops'" in texts
    assert line.ticks() == [0, 10, 20, INT_MAX]
    assert str(line).splitlines() == ["if (x < y)", "x          [0, INT_MAX]",
                                      "y          [10, 20]", "empty      empty",
                                      "garbage    'oops'", "backwards  [5, 1]"]


def test_check_against_writes_values_with_the_caller_s_writer():
    with pytest.raises(Mismatch) as info:
        check_against(lambda c: (1, INT_MAX + 1), lambda c: (INT_MIN, INT_MAX), [0],
                      show=written)
    text = str(info.value)
    assert "expected: (INT_MIN, INT_MAX)" in text and "got: (1, INT_MAX + 1)" in text
    assert "at index 0: expected INT_MIN, got 1" in text


def _rule(index, length, facts) -> bool:
    """Task 3's rule, written independently of the notebook."""
    if index[0] < 0:
        return False
    if index[1] < length[0]:
        return True
    return any(index[0] + k >= INT_MIN and index[1] + k <= INT_MAX
               and ((op == "<" and k >= 0) or (op in ("<=", "==") and k >= 1))
               for k, op in facts)


BCE_PROGRAMS = sorted((ROOT / "tests" / "programs").glob("bce_*.tiny")) + \
    [ROOT / "tests" / "golden" / "l09" / "ranges.tiny"]


@pytest.mark.parametrize("path", BCE_PROGRAMS, ids=[p.stem for p in BCE_PROGRAMS])
def test_the_plain_rule_decides_every_check_as_the_engine_does(path):
    """The data task 3 gets from a real program is enough to reach the engine's verdict:
    the rule removes exactly the checks the engine removes."""
    from ssa_course.compilation import compile_source
    from ssa_course.lessons.faces import fresh_graphs
    from ssa_course.son.bce import bounds_checks

    source = path.read_text()
    situations = check_situations(source)
    for s in situations:
        assert _rule(s.index, s.length, s.facts) == s.removed, s
    program = fresh_graphs(compile_source(source, path.name), True)
    checks = sum(len(bounds_checks(fg)) for fg in program.functions.values())
    assert len(situations) <= checks


def test_situations_of_a_counted_loop_and_of_an_argument():
    up = check_situations("fn main(n: int) { var a = new int[n]; var i = 0; "
                          "while (i < len(a)) { a[i] = i; i = i + 1; } }")
    assert [(s.index[0], s.facts, s.removed) for s in up] == [(0, ((0, "<"),), True)]
    arg = check_situations("fn get(a: [int], i: int) -> int { return a[i]; }\n"
                           "fn main() { var a = new int[4]; print(get(a, 2)); }")
    assert [(s.function, s.index, s.facts, s.removed) for s in arg] == \
        [("get", (INT_MIN, INT_MAX), (), False)]


def test_widening_narrowing_and_a_loop_s_back_edge():
    assert engine_widen(None, (0, 0)) == (0, 0)
    assert engine_widen((0, 2), (0, 3)) == (0, INT_MAX)
    assert engine_widen((0, 2), (-1, 2)) == (INT_MIN, 2)
    assert engine_narrowing((0, INT_MAX), (0, 10)) == (0, 10)
    assert engine_narrowing((0, 5), None) == (0, 5)
    assert engine_narrowing((0, 5), (7, 9)) == (0, 5)  # empty: keep what there was
    back = loop_back("<", (10, 10), 1)
    assert back(None) is None and back((0, 3)) == (1, 4) and back((0, INT_MAX)) == (1, 10)
    assert back((10, 20)) is None  # the test never holds: nothing comes back
    assert loop_back("<", (INT_MIN, INT_MAX), 1)((0, INT_MAX)) == (1, INT_MAX)  # no wrap
    assert loop_back("<=", (INT_MIN, INT_MAX), 1)((0, INT_MAX)) == (INT_MIN, INT_MAX)


def _loop_trace(entry, back):
    """Task 4's rule, written independently of the notebook: grow (widen from the 4th
    growth), then narrow at most 8 times."""
    def hull(*rs):
        rs = [r for r in rs if r is not None]
        return (min(r[0] for r in rs), max(r[1] for r in rs)) if rs else None

    trace, current = [], None
    for growth in itertools.count(1):
        new = hull(current, entry, back(current))
        if new == current:
            break
        current = engine_widen(current, new) if growth > 3 else new
        trace.append(current)
    for _ in range(8):
        new = engine_narrowing(current, hull(entry, back(current)))
        if new == current:
            break
        current = new
        trace.append(current)
    return trace


def test_the_loop_rule_ends_where_the_engine_s_analysis_ends():
    """Task 4 follows one phi alone; the engine solves the whole function with a worklist.
    On counted loops both end with the same range for the loop counter."""
    from ssa_course.compilation import compile_source
    from ssa_course.lessons.faces import fresh_graphs
    from ssa_course.son.control import Loop, Phi
    from ssa_course.son.range_facts import analyse
    from ssa_course.son.sccp import apply_to_program

    rng = random.Random(5)
    compared = 0
    for _ in range(60):
        start = rng.choice([0, 1, -5, 10, rng.randint(-50, 50), INT_MAX - 3, INT_MIN + 3])
        limit = rng.choice([0, 5, 10, 64, -10, rng.randint(-100, 100), INT_MAX - 2])
        step = rng.choice([1, 2, 3, 7, -1, -2, rng.randint(-9, 9)])
        op = rng.choice(OPS)
        src = (f"fn main() {{ var i = {start}; while (i {op} {limit}) {{ i = i + {step}; }} "
               "print(i); }")
        program = fresh_graphs(compile_source(src, "loop.tiny"), True)
        apply_to_program(program)
        fg = program.functions["main"]
        ra = analyse(fg)
        phis = [n for n in fg.nodes() if isinstance(n, Phi) and isinstance(n.inputs[0], Loop)]
        if not phis:  # the loop was never entered: folded away
            continue
        r = ra.ranges[phis[0].id]
        trace = _loop_trace((start, start), loop_back(op, (limit, limit), step))
        assert trace[-1] == (r.lo, r.hi), src
        compared += 1
    assert compared >= 20
