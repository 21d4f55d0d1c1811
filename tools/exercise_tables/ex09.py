"""Regenerates the setup and graded cells of solutions/09-*.ipynb (see build.py)."""
# ruff: noqa: E402, E501 - cell templates keep the notebooks' style; imports follow setup
from common import load, run, save, setsrc, table

NAME = "09-ranges.ipynb"
nb = load(NAME)

SETUP = r'''
import ssa_course
from ssa_course.grading import check_against
from ssa_course.grading.forbid import guard
from ssa_course.grading.ranges import NumberLine, bound, loop_back, pair_text, written

INT_MIN = -(2 ** 63)      # Tiny's ints are 64-bit two's complement
INT_MAX = 2 ** 63 - 1
MAX_ARRAY_LENGTH = 100_000_000  # len(a) is always in [0, MAX_ARRAY_LENGTH]

# Programs whose bounds checks task 3 looks at (the engine decided each one).
PROGRAMS = {
    "up": "fn main(n: int) { var a = new int[n]; var i = 0; while (i < len(a)) { a[i] = i; i = i + 1; } print(a[0]); }",
    "le": "fn main() { var a = new int[3]; var i = 0; while (i <= len(a)) { a[i] = i; i = i + 1; } }",
    "down": "fn main(n: int) { var a = new int[n]; for (var i = len(a) - 1; i >= 0; i = i - 1) { a[i] = i; } }",
    "pairs": ("fn main(n: int) { var a = new int[n]; var s = 0; "
              "for (var i = 0; i + 1 < len(a); i = i + 1) { s = s + a[i] * a[i + 1]; } print(s); }"),
    "argument": "fn get(a: [int], i: int) -> int { return a[i]; }\nfn main() { var a = new int[4]; print(get(a, 2)); }",
}

# The answers are plain Python on plain data: none of the course's code may run in them
# (printing with shown(), written() or a NumberLine while debugging is fine).
NO_ENGINE = dict(forbid=[ssa_course], allow=[NumberLine, bound, pair_text, written])

def shown(p):
    """A range as the messages write it: [0, INT_MAX - 1], or empty for None."""
    return pair_text(p)

def pair_src(p):
    return "None" if p is None else f"({bound(p[0])}, {bound(p[1])})"

def describe_add(case):
    return f"add_range({pair_src(case[0])}, {pair_src(case[1])})"

def describe_branch(case):
    x, op, y = case
    return f"branch_ranges({pair_src(x)}, {op!r}, {pair_src(y)})  -- if (x {op} y) with x in {shown(x)}, y in {shown(y)}"

def fact_text(fact):
    k, op = fact
    left = "i" if k == 0 else f"i + {bound(k)}" if k > 0 else f"i - {bound(-k)}"
    return f"{left} {op} len(a)"

def describe_check(case):
    index, length, facts = case
    known = ", ".join(fact_text(f) for f in facts) or "none"
    return (f"check_redundant({pair_src(index)}, {pair_src(length)}, {list(facts)!r})\n"
            f"  i in {shown(index)}, len(a) in {shown(length)}; facts in scope: {known}")

def describe_program_check(case):
    """case = (program, function, check id): the program and what task 3 is given."""
    program, function, check = case
    index, length, facts, _ = PROGRAM_CHECKS[case]
    return (f"program {program!r}: {PROGRAMS[program]}\n(in {function}, the check of If #{check})\n"
            + describe_check((index, length, facts)))

def describe_loop(case):
    """case = (entry, op, limit, step): the loop task 4 runs, and what back() computes."""
    entry, op, limit, step = case
    start = bound(entry[0]) if entry[0] == entry[1] else f"<a value in {shown(entry)}>"
    lim = bound(limit[0]) if limit[0] == limit[1] else f"n  (n in {shown(limit)})"
    return (f"loop_range({pair_src(entry)}, back) for  i = {start}; while (i {op} {lim}) "
            f"{{ i = i + {bound(step)}; }}\n  back(r) is the range of i + {bound(step)} where i is in r "
            f"and i {op} {shown(limit)}")

def draw_loop(case, answer):
    """The entry range and each range of the phi, one row per step."""
    line = NumberLine(title=describe_loop(case).splitlines()[0]).add("entry", case[0])
    steps = list(answer) if isinstance(answer, (list, tuple)) else [answer]
    for k, r in enumerate(steps[:20], start=1):
        line.add(f"step {k}", r)
    return line

def _rows(line, rows):
    for label, value in rows:
        line.add(label, value)
    return line

def draw_add(case, answer):
    """The operands and a sum, on one number line."""
    return _rows(NumberLine(title=describe_add(case)), [("a", case[0]), ("b", case[1]), ("a + b", answer)])

def draw_branch(case, answer):
    """x and y before the branch, and x on each side of it."""
    x, op, y = case
    sides = answer if isinstance(answer, (tuple, list)) and len(answer) == 2 else (answer, answer)
    return _rows(NumberLine(title=f"if (x {op} y)"),
                 [("x", x), ("y", y), (f"x where x {op} y", sides[0]), ("x on the false side", sides[1])])

def draw_check(case):
    """The index and the length at the check, the facts in the title."""
    index, length, facts = case
    title = "facts: " + (", ".join(fact_text(f) for f in facts) or "none")
    return _rows(NumberLine(title=title), [("i", index), ("len(a)", length), ("0 <= i < len(a)?", (0, length[1] - 1))])
'''

T1 = r'''
# Checks add_range() on the pairs of operand ranges below, with the expected sums.
_add_range = guard(add_range, **NO_ENGINE)
# (a, b) -> the range of a + b
%s
check_against(lambda c: _add_range(*c), EXPECTED_ADD.__getitem__, list(EXPECTED_ADD),
              describe=describe_add, draw_answer=draw_add, what="range of the sum", show=written)
### BEGIN HIDDEN TESTS
def _hidden():
    import random
    from ssa_course.grading.ranges import engine_add
    rng = random.Random(9)
    edges = [INT_MIN, INT_MIN + 1, -1, 0, 1, INT_MAX - 1, INT_MAX]

    def number():
        roll = rng.random()
        if roll < 0.35:
            return rng.choice(edges)
        if roll < 0.6:
            return rng.randint(-20, 20)
        if roll < 0.8:
            return max(INT_MIN, min(INT_MAX, rng.choice(edges) + rng.randint(-9, 9)))
        return rng.randint(INT_MIN, INT_MAX)

    def pair():
        return tuple(sorted((number(), number())))

    cases = [(pair(), pair()) for _ in range(400)]
    cases += [(None, pair()), (pair(), None), (None, None)]
    cases += [((INT_MAX, INT_MAX), (0, 0)), ((INT_MIN, INT_MIN), (0, 0)),
              ((INT_MAX - 5, INT_MAX - 5), (5, 5)), ((INT_MIN + 5, INT_MIN + 5), (-5, -5)),
              ((INT_MIN, INT_MAX), (0, 0)), ((0, INT_MAX), (INT_MIN, 0))]
    check_against(lambda c: _add_range(*c), lambda c: engine_add(*c), cases,
                  describe=describe_add, draw_answer=draw_add, what="range of the sum", show=written)

_hidden()
### END HIDDEN TESTS
'''

T2 = r'''
# Checks branch_ranges() on the comparisons below, with the expected (true side, false side).
_branch_ranges = guard(branch_ranges, **NO_ENGINE)
# (x, op, y) -> (x's range on the true side, on the false side)
%s

def _pair_or_none(p):
    return None if p is None else tuple(p)

def _sides(answer):
    true_side, false_side = answer
    return (_pair_or_none(true_side), _pair_or_none(false_side))

check_against(lambda c: _branch_ranges(*c), EXPECTED_BRANCH.__getitem__, list(EXPECTED_BRANCH),
              describe=describe_branch, draw_answer=draw_branch, normalise=_sides,
              what="ranges on the two sides", show=written)
### BEGIN HIDDEN TESTS
def _hidden():
    import random
    from ssa_course.grading.ranges import engine_branch
    rng = random.Random(12)
    edges = [INT_MIN, INT_MIN + 1, -1, 0, 1, 2, 10, INT_MAX - 1, INT_MAX]

    def number():
        roll = rng.random()
        if roll < 0.3:
            return rng.choice(edges)
        if roll < 0.8:
            return rng.randint(-12, 12)
        return rng.randint(INT_MIN, INT_MAX)

    def pair():
        return tuple(sorted((number(), number())))

    cases = []
    for _ in range(500):
        x, y = pair(), pair()
        if rng.random() < 0.35:
            c = rng.choice([x[0], x[1], number()])
            y = (c, c)  # a constant, often an end of x
        cases.append((x, rng.choice(["<", "<=", ">", ">=", "==", "!="]), y))
    check_against(lambda c: _branch_ranges(*c), lambda c: engine_branch(*c), cases,
                  describe=describe_branch, draw_answer=draw_branch, normalise=_sides,
                  what="ranges on the two sides", show=written)

_hidden()
### END HIDDEN TESTS
'''

REF3 = r'''
    def reference(index, length, facts):
        if index[0] < 0:
            return False  # the lower half of the check may fail
        if index[1] < length[0]:
            return True  # every index is below every length
        for k, op in facts:
            if index[0] + k < INT_MIN or index[1] + k > INT_MAX:
                continue  # i + k may wrap: the fact says nothing simple about i
            d = {"<": -1 - k, "<=": -k, "==": -k}.get(op)  # i <= len(a) + d
            if d is not None and d <= -1:
                return True
        return False
'''

T3 = r'''
# Checks check_redundant() on the situations below; the expected verdicts follow each case.
_check_redundant = guard(check_redundant, **NO_ENGINE)
# (range of i, range of len(a), facts (k, op) for i + k op len(a), is the check redundant?)
%s
check_against(lambda c: _check_redundant(c[0], c[1], list(c[2])), lambda c: EXPECTED_CHECK[c],
              list(EXPECTED_CHECK), describe=describe_check, draw=draw_check,
              what="verdict on the check", show=written)

# The checks of PROGRAMS as the engine saw them: (program, function, If id) ->
# (range of i, range of len(a), facts, did the engine remove the check?)
%s
check_against(lambda c: _check_redundant(*[list(v) if k == 2 else v
                                           for k, v in enumerate(PROGRAM_CHECKS[c][:3])]),
              lambda c: PROGRAM_CHECKS[c][3], list(PROGRAM_CHECKS),
              describe=describe_program_check, draw=lambda c: draw_check(PROGRAM_CHECKS[c][:3]),
              size=lambda c: len(PROGRAMS[c[0]]), what="verdict on the check", show=written)
### BEGIN HIDDEN TESTS
def _hidden():
    import random
%s
    rng = random.Random(21)
    edges = [INT_MIN, INT_MIN + 1, -2, -1, 0, 1, 2, 9, 10, INT_MAX - 1, INT_MAX]

    def number():
        return rng.choice(edges) if rng.random() < 0.5 else rng.randint(-3, 12)

    cases = []
    for _ in range(500):
        index = tuple(sorted((number(), number())))
        lo = rng.choice([0, 0, 1, 5, 10, 11])
        length = (lo, rng.choice([lo, 10, 12, MAX_ARRAY_LENGTH]) if lo <= 10 else MAX_ARRAY_LENGTH)
        facts = tuple((rng.choice([-1, 0, 0, 1, 2, INT_MAX, INT_MIN]),
                       rng.choice(["<", "<=", "==", "!=", ">", ">="]))
                      for _ in range(rng.randint(0, 3)))
        cases.append((index, length, facts))
    check_against(lambda c: _check_redundant(c[0], c[1], list(c[2])),
                  lambda c: reference(c[0], c[1], list(c[2])), cases,
                  describe=describe_check, draw=draw_check, what="verdict on the check",
                  show=written)
    # and checks of other programs, decided by the engine while grading
    from ssa_course.grading.ranges import check_situations
    sources = [
        "fn main(n: int) { var a = new int[n]; var k = len(a); while (k > 0) { k = k - 1; a[k] = 1; } }",
        "fn main(n: int) { var a = new int[10]; if (n >= 0) { if (n < 10) { print(a[n]); } } print(a[9]); }",
        "fn main(n: int) { var a = new int[n]; if (len(a) > 3) { print(a[3]); } print(a[n - 1]); }",
        "fn main(n: int) { var a = new int[n]; for (var i = 1; i < len(a); i = i + 2) { a[i - 1] = a[i]; } }",
        "fn main(n: int) { var a = new int[n]; var i = 0; while (i < len(a)) { a[i] = 1; i = i + 4611686018427387904; } }",
    ]
    situations = [(src, s) for src in sources for s in check_situations(src)]
    check_against(lambda c: _check_redundant(c[1].index, c[1].length, list(c[1].facts)),
                  lambda c: c[1].removed, situations,
                  describe=lambda c: c[0] + "\n" + describe_check((c[1].index, c[1].length, c[1].facts)),
                  draw=lambda c: draw_check((c[1].index, c[1].length, c[1].facts)),
                  size=lambda c: len(c[0]), what="verdict on the check", show=written)

_hidden()
### END HIDDEN TESTS
'''


T4 = r'''
# Checks loop_range() on the loops below: the expected ranges of the loop phi, step by step.
import ssa_course.grading.ranges
import ssa_course.son.intervals
import ssa_course.son.range_facts
import ssa_course.son.types
# back() runs the engine's own narrowing and +; widening and narrowing are yours to write
_loop_range = guard(loop_range, forbid=[ssa_course, ssa_course.son.intervals.widen,
                                        ssa_course.son.intervals.narrow],
                    allow=[ssa_course.grading.ranges, ssa_course.son.intervals,
                           ssa_course.son.types, ssa_course.son.range_facts.RangeAnalysis._apply,
                           ssa_course.son.range_facts._clip, ssa_course.son.range_facts.fits])
# (entry, op, limit, step) for  i = entry; while (i op limit) { i = i + step; }  ->  the trace
%s
check_against(lambda c: _loop_range(c[0], loop_back(*c[1:])), EXPECTED_LOOP.__getitem__,
              list(EXPECTED_LOOP), describe=describe_loop, draw_answer=draw_loop,
              normalise=list, what="ranges of the loop phi", show=written)
### BEGIN HIDDEN TESTS
def _hidden():
    import random
    from ssa_course.grading.ranges import engine_narrowing, engine_widen
%s
    rng = random.Random(33)
    cases = []
    for _ in range(250):
        start = rng.choice([0, 0, 1, -5, 10, 100, INT_MIN, INT_MAX, rng.randint(-50, 50)])
        width = rng.choice([0, 0, 0, 3])
        entry = (start, start + width) if start + width <= INT_MAX else (start, start)
        lo = rng.choice([0, 5, 10, 64, -10, INT_MIN, INT_MAX - 2, rng.randint(-100, 100)])
        limit = (lo, lo) if rng.random() < 0.7 else (lo, min(INT_MAX, lo + rng.randint(1, 50)))
        step = rng.choice([1, 1, 2, 3, 7, -1, -2, 0, INT_MAX, rng.randint(-9, 9)])
        cases.append((entry, rng.choice(["<", "<=", ">", ">=", "==", "!="]), limit, step))
    check_against(lambda c: _loop_range(c[0], loop_back(*c[1:])),
                  lambda c: reference(c[0], loop_back(*c[1:])), cases,
                  describe=describe_loop, draw_answer=draw_loop, normalise=list,
                  what="ranges of the loop phi", show=written)

_hidden()
### END HIDDEN TESTS
'''

REF4 = r'''
    def hull(*ranges):
        known = [r for r in ranges if r is not None]
        return (min(r[0] for r in known), max(r[1] for r in known)) if known else None

    def reference(entry, back):
        trace, current, growths = [], None, 0
        while True:
            new = hull(current, entry, back(current))
            if new == current:
                break
            growths += 1
            if growths > 3:
                new = engine_widen(current, new)
            current = new
            trace.append(current)
        for _ in range(8):
            new = engine_narrowing(current, hull(entry, back(current)))
            if new == current:
                break
            current = new
            trace.append(current)
        return trace
'''

ns = {}
run(ns, SETUP)
from ssa_course.grading.ranges import bound, engine_add, engine_branch

INT_MIN, INT_MAX, MAX_LEN = ns["INT_MIN"], ns["INT_MAX"], ns["MAX_ARRAY_LENGTH"]


def num(v):
    """An int as the notebooks write it: INT_MAX - 1 rather than 9223372036854775806."""
    text = bound(v)
    if text.startswith("INT_"):
        return text
    d = v - MAX_LEN
    if abs(d) <= 2:
        return "MAX_ARRAY_LENGTH" + (f" {'+' if d > 0 else '-'} {abs(d)}" if d else "")
    return repr(v)


def psrc(p):
    return "None" if p is None else f"({num(p[0])}, {num(p[1])})"


ADD = [((0, 10), (1, 2)), ((-5, 5), (-5, 5)), ((3, 3), (4, 4)), ((0, 0), (0, 0)),
       ((-10, -1), (1, 10)), ((0, INT_MAX - 1), (1, 1)), ((0, INT_MAX), (1, 1)),
       ((INT_MAX, INT_MAX), (1, 1)), ((INT_MIN, INT_MIN), (-1, -1)),
       ((INT_MIN + 1, 0), (-1, 0)), ((INT_MIN, 0), (-1, 0)), ((INT_MIN, INT_MAX), (0, 0)),
       ((INT_MIN, INT_MAX), (0, 1)), ((0, MAX_LEN), (-1, -1)), ((1, 1), (INT_MAX - 1, INT_MAX - 1)),
       ((INT_MIN, -1), (0, INT_MAX)), ((INT_MIN, 0), (INT_MIN, 0)), ((0, INT_MAX), (0, INT_MAX)),
       (None, (1, 2)), ((1, 2), None)]
t1 = table("EXPECTED_ADD", [((a, b), engine_add(a, b)) for a, b in ADD],
           key=lambda k: f"({psrc(k[0])}, {psrc(k[1])})", val=psrc)

BRANCH = [((0, 100), "<", (10, 10)), ((0, 100), "<", (10, 20)), ((0, 100), "<=", (10, 20)),
          ((0, 100), ">", (10, 20)), ((0, 100), ">=", (10, 20)), ((0, 100), "==", (50, 200)),
          ((0, 100), "!=", (0, 0)), ((0, 100), "!=", (100, 100)), ((0, 100), "!=", (50, 50)),
          ((0, 100), "!=", (0, 5)), ((7, 7), "!=", (7, 7)), ((7, 7), "==", (7, 7)),
          ((0, 9), "<", (10, 20)), ((0, 9), ">=", (10, 20)), ((5, 5), "<", (0, 5)),
          ((INT_MIN, INT_MAX), "<", (0, MAX_LEN)), ((INT_MIN, INT_MAX), ">=", (0, 0)),
          ((INT_MIN, INT_MAX), "<", (INT_MIN, INT_MIN)), ((INT_MIN, INT_MAX), ">", (INT_MAX, INT_MAX)),
          ((INT_MIN, INT_MAX), "<=", (INT_MIN, 0)), ((0, INT_MAX), "<", (INT_MIN, INT_MAX)),
          ((-3, 3), "==", (5, 8)), ((-3, 3), "!=", (-3, -3)), ((-3, 3), ">", (-10, -2))]
t2 = table("EXPECTED_BRANCH", [(c, engine_branch(*c)) for c in BRANCH],
           key=lambda k: f"({psrc(k[0])}, {k[1]!r}, {psrc(k[2])})",
           val=lambda v: f"({psrc(v[0])}, {psrc(v[1])})")

ref_ns = dict(ns)
run(ref_ns, "def _make():\n" + REF3 + "    return reference\nreference = _make()\n")
reference = ref_ns["reference"]
L = (0, MAX_LEN)
CHECK = [((0, 9), (10, 10), ()), ((0, 9), (5, MAX_LEN), ()), ((0, 10), (10, 10), ()),
         ((-1, 5), (10, 10), ()), ((0, 99_999_999), L, ((0, "<"),)),
         ((0, 99_999_999), L, ()), ((0, 100_000_000), L, ((0, "<="),)),
         ((0, 99_999_999), L, ((1, "<="),)), ((0, 99_999_999), L, ((1, "<"),)),
         ((0, 99_999_999), L, ((-1, "<"),)), ((0, 99_999_999), L, ((1, "=="),)),
         ((0, 99_999_999), L, ((0, "=="),)), ((-5, 99_999_999), L, ((0, "<"),)),
         ((INT_MIN, 99_999_999), L, ((0, "<"),)), ((0, 99_999_999), L, ((0, "!="), (0, ">="))),
         ((0, INT_MAX), L, ((1, "<"),)), ((0, INT_MAX - 1), L, ((1, "<"),)),
         ((0, 99_999_999), L, ((-1, "<="), (0, "<"))), ((3, 3), (4, 4), ()),
         ((0, 4), (0, 5), ((2, "<"),)), ((0, 99_999_998), L, ((2, "=="),))]
t3 = table("EXPECTED_CHECK", [(c, reference(c[0], c[1], list(c[2]))) for c in CHECK],
           key=lambda c: f"({psrc(c[0])}, {psrc(c[1])}, ({''.join(f'({num(k)}, {op!r}), ' for k, op in c[2])}))")

setsrc(nb, "setup", SETUP)
setsrc(nb, "test_add_range", T1 % t1)
setsrc(nb, "test_branch_ranges", T2 % t2)
from ssa_course.grading.ranges import check_situations

rows = []
for program, src in ns["PROGRAMS"].items():
    for sit in check_situations(src):
        case = (sit.index, sit.length, sit.facts)
        assert reference(*case[:2], list(case[2])) == sit.removed, (program, sit)
        rows.append(((program, sit.function, sit.check), (*case, sit.removed)))
t3b = table("PROGRAM_CHECKS", rows,
            val=lambda v: f"({psrc(v[0])}, {psrc(v[1])}, ({''.join(f'({num(k)}, {op!r}), ' for k, op in v[2])}), {v[3]!r})")
setsrc(nb, "test_check_redundant", T3 % (t3, t3b, REF3.rstrip("\n")))

from ssa_course.grading.ranges import engine_narrowing, engine_widen, loop_back

ref4_ns = dict(ns, engine_widen=engine_widen, engine_narrowing=engine_narrowing)
run(ref4_ns, "def _make():\n" + REF4 + "    return reference\nreference = _make()\n")
LOOPS = [((0, 0), "<", (10, 10), 1), ((0, 0), "<", (10, 10), 3), ((0, 0), "<=", (10, 10), 1),
         ((10, 10), ">", (0, 0), -1), ((0, 0), "<", (0, MAX_LEN), 1), ((0, 0), "<", (INT_MIN, INT_MAX), 1),
         ((0, 0), "!=", (10, 10), 1), ((-5, -5), "<", (5, 5), 2), ((0, 0), "<", (1_000_000, 1_000_000), 7),
         ((0, 0), "<", (10, 10), 0), ((0, 0), "<", (10, 10), -1), ((0, 3), "<", (2, 2), 1),
         ((INT_MAX - 1, INT_MAX - 1), "<", (INT_MAX, INT_MAX), 1)]
t4 = table("EXPECTED_LOOP", [(c, ref4_ns["reference"](c[0], loop_back(*c[1:]))) for c in LOOPS],
           key=lambda c: f"({psrc(c[0])}, {c[1]!r}, {psrc(c[2])}, {num(c[3])})",
           val=lambda v: "[" + ", ".join(psrc(r) for r in v) + "]")
setsrc(nb, "test_loop_range", T4 % (t4, REF4.rstrip("\n")))
save(nb, NAME)
print("written", NAME)
