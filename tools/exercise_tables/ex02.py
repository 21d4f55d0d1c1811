"""Regenerates the setup and graded cells of solutions/02-*.ipynb (see build.py)."""
# ruff: noqa: E402, E501 - cell templates keep the notebooks' style; imports follow setup
from common import listing, load, run, save, setsrc, table

NAME = "02-peepholes.ipynb"
nb = load(NAME)

SETUP = r'''
import copy
import itertools
import ssa_course
import ssa_course.quads.bril
import ssa_course.quads.bril_write
import ssa_course.quads.ir
import ssa_course.tiny.types
from ssa_course.grading import check_against
from ssa_course.grading.forbid import guard
from ssa_course.quads.bril import format_instr, parse_bril_text
from ssa_course.quads.ir import Label

INT_MIN, INT_MAX = -2**63, 2**63 - 1
INTERESTING = [0, 1, -1, 2, -2, 7, -7, 3, INT_MAX, INT_MIN, INT_MAX - 1, 2**62, -(2**62)]

def show(v):
    """An int as the messages write it (INT_MIN and INT_MAX by name)."""
    return {INT_MIN: "INT_MIN", INT_MAX: "INT_MAX"}.get(v, repr(v))

def blocks_of(fns):
    """The straight-line runs (basic blocks) of some functions."""
    runs, run = [], []
    for fn in fns:
        for item in fn.body:
            if isinstance(item, Label):
                runs.append(run); run = []
                continue
            run.append(item)
            if item.is_terminator():
                runs.append(run); run = []
        runs.append(run); run = []
    return [r for r in runs if r]

def tiny_blocks(src):
    return blocks_of(ssa_course.compile(src).quads.functions.values())

def bril_blocks(text):
    return blocks_of(parse_bril_text(text).functions.values())

PROGRAMS = [
    "fn main(a: int, b: int) { var x = a * b + a * b; print(x, b * a); }",
    "fn main(a: int) { var y = 2 + 3; var w = y * 4; print(w, 2 + 3); }",
    "fn main(a: int, b: int) { print(a + b, b + a, a - b, b - a, a < b, b > a); }",
    "fn main(a: int) { var x = a; var y = x; print(y + 1, a + 1, x + 1); }",
    "fn main(a: int) { var i = 0; while (i < a) { i = i + 1; } print(i + 1, i + 1); }",
    "fn main(a: int, b: int) { var c = a + b; var d = b + a; var e = a * b; a = 1; var f = a + b; print(c, d, e, f, a * b); }",
]
# Blocks written in Bril, where a variable is assigned again.
BRIL = [
    "@main(a: int, b: int) { c: int = add a b; c: int = const 5; d: int = add a b; print c d; }",
    "@main(a: int, b: int) { c: int = add a b; a: int = const 1; d: int = add a b; print c d; }",
    "@main(a: int, b: int) { c: int = add a b; d: int = id c; c: int = const 0; e: int = add b a; print c d e; }",
    "@main(a: int) { x: int = mul a a; x: int = add x a; y: int = mul a a; z: int = add x a; print y z; }",
]
BLOCKS = [b for src in PROGRAMS for b in tiny_blocks(src)] + [b for t in BRIL for b in bril_blocks(t)]

def describe_block(block):
    return "\n".join("    " + format_instr(i) for i in block)
'''

REF_FOLD = r'''
    def reference(op, a, b):
        def wrap(x):
            return (x + 2**63) % 2**64 - 2**63
        if op in ("div", "rem") and b == 0:
            return None
        if op == "add":
            return wrap(a + b)
        if op == "sub":
            return wrap(a - b)
        if op == "mul":
            return wrap(a * b)
        q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
        return wrap(q) if op == "div" else a - q * b
'''

def numfmt(v):
    if v is None:
        return "None"
    return {-2**63: "INT_MIN", 2**63 - 1: "INT_MAX"}.get(v, repr(v))

T1 = r'''
# Checks fold_constant() on written-out answers (INT_MIN and INT_MAX are in the setup cell).
_fold = guard(fold_constant, forbid=[ssa_course])
# (op, a, b, expected)
%s
check_against(lambda c: _fold(c[0], c[1], c[2]), lambda c: c[3], FOLDED,
              describe=lambda c: f"fold_constant({c[0]!r}, {show(c[1])}, {show(c[2])})", size=lambda c: 0,
              what="folded value")
### BEGIN HIDDEN TESTS
def _hidden():
%s
    cases = [(op, a, b) for op in ("add", "sub", "mul", "div", "rem")
             for a, b in itertools.product(INTERESTING, INTERESTING)]
    check_against(lambda c: _fold(*c), lambda c: reference(*c), cases,
                  describe=lambda c: f"fold_constant({c[0]!r}, {show(c[1])}, {show(c[2])})",
                  size=lambda c: 0, what="folded value")

_hidden()
### END HIDDEN TESTS
'''

T2 = r'''
# Checks value_key(): which pairs of expressions must share a key, and that keys are hashable.
_key = guard(value_key, forbid=[ssa_course])

def _hashable_key(op, nums):
    key = _key(op, list(nums))
    try:
        hash(key)
    except TypeError:
        raise AssertionError(f"value_key({op!r}, {list(nums)}) returned {key!r}, which cannot "
                             "be a dict key: return a tuple") from None
    return key

# (expression, expression, same key?) -- an expression is (op, value numbers)
%s
def _same(e, f):
    return "the same key" if _hashable_key(*e) == _hashable_key(*f) else "different keys"

check_against(lambda c: _same(c[0], c[1]), lambda c: "the same key" if c[2] else "different keys",
              SAME_KEY,
              describe=lambda c: f"value_key{c[0][0], list(c[0][1])} vs value_key{c[1][0], list(c[1][1])}",
              size=lambda c: 0, what="keys")
### BEGIN HIDDEN TESTS
def _hidden():
    commutative = {"add", "mul", "eq", "and", "or"}
    ops = ["add", "sub", "mul", "div", "rem", "eq", "lt", "gt", "le", "ge", "and", "or"]
    exprs = [(op, (a, b)) for op in ops for a in range(1, 4) for b in range(1, 4)]
    exprs += [("not", (1,)), ("not", (2,)), ("const", (5,))]

    def same(e, f):
        def norm(op, nums):
            return (op, *sorted(nums)) if op in commutative else (op, *nums)
        return norm(*e) == norm(*f)

    pairs = [(e, f) for e in exprs for f in exprs]
    check_against(lambda c: _same(*c),
                  lambda c: "the same key" if same(*c) else "different keys", pairs,
                  describe=lambda c: f"value_key{c[0][0], list(c[0][1])} vs value_key{c[1][0], list(c[1][1])}",
                  size=lambda c: 0, what="keys")

_hidden()
### END HIDDEN TESTS
'''

REF_LVN = r'''
    pure = {"add", "sub", "mul", "eq", "lt", "gt", "le", "ge", "not", "and", "or"}
    commutative = {"add", "mul", "eq", "and", "or"}

    def reference(block):
        var_num, expr_num, home = {}, {}, {}
        fresh = itertools.count(1)

        def number(v):
            if v not in var_num:
                var_num[v] = next(fresh)
                home[var_num[v]] = v
            return var_num[v]

        count = 0
        for ins in block:
            ns = [number(a) for a in ins.args]
            if ins.dest is None:
                continue
            if ins.op == "id":
                n = ns[0]
            elif ins.op == "const" or ins.op in pure:
                key = (("const", type(ins.value).__name__, ins.value) if ins.op == "const"
                       else (ins.op, *sorted(ns)) if ins.op in commutative else (ins.op, *ns))
                found = expr_num.get(key)
                if found is not None and ins.op in pure and home.get(found) is not None:
                    count += 1
                if found is None:
                    found = expr_num[key] = next(fresh)
                n = found
            else:
                n = next(fresh)
            old = var_num.get(ins.dest)
            if old is not None and home.get(old) == ins.dest:
                home[old] = next((v for v, m in var_num.items() if m == old and v != ins.dest),
                                 None)
            var_num[ins.dest] = n
            if home.get(n) is None:
                home[n] = ins.dest
        return count
'''

T3 = r'''
# Checks count_redundant() on the blocks of PROGRAMS and BRIL (setup cell), answers below.
_count = guard(count_redundant, forbid=[ssa_course],
               allow=[ssa_course.quads.ir, ssa_course.quads.bril, ssa_course.quads.bril_write, ssa_course.tiny.types])
# block number in BLOCKS -> redundant computations
%s
check_against(lambda i: _count(copy.deepcopy(BLOCKS[i])), EXPECTED_REDUNDANT.__getitem__, list(EXPECTED_REDUNDANT),
              describe=lambda i: describe_block(BLOCKS[i]), size=lambda i: len(BLOCKS[i]),
              what="number of redundant computations")
### BEGIN HIDDEN TESTS
def _hidden():
%s
    more = tiny_blocks("fn main(a: int, b: int) { var c = a - b; var d = a - b; b = c; "
                       "var e = a - b; var f = b - a; print(c, d, e, f, c - a); }")
    more += bril_blocks("@main(a: int, b: int) { x: bool = lt a b; y: bool = lt a b; x: bool = const true; "
                        "z: bool = lt a b; w: bool = gt b a; print x y z w; }")
    more += bril_blocks("@main(a: int, b: int) { c: int = mul a b; d: int = id c; c: int = const 2; "
                        "d: int = const 3; e: int = mul b a; print c d e; }")
    check_against(_count, reference, more, describe=describe_block, size=len,
                  what="number of redundant computations")

_hidden()
### END HIDDEN TESTS
'''

import ssa_course.quads.ir  # noqa
ns = {}
run(ns, SETUP)
run(ns, "def _hidden_ref():\n" + REF_FOLD + "\n    return reference\nREF_FOLD = _hidden_ref()")
I = ns["INTERESTING"]
INT_MIN, INT_MAX = -2**63, 2**63 - 1
PAIRS = [(7, 3), (-7, 3), (7, -3), (-7, -3), (3, 0), (0, 5), (INT_MAX, 1), (INT_MIN, -1),
         (INT_MIN, 1), (INT_MAX, INT_MAX), (INT_MIN, INT_MIN), (INT_MIN, 2), (2**62, 4), (-1, INT_MIN)]
rows = [(op, a, b, ns["REF_FOLD"](op, a, b)) for op in ("add", "sub", "mul", "div", "rem") for a, b in PAIRS]
t1 = listing("FOLDED", rows, fmt=lambda r: f"({r[0]!r}, {numfmt(r[1])}, {numfmt(r[2])}, {numfmt(r[3])})")
COMM = {"add", "mul", "eq", "and", "or"}
same = []
for op in ["add", "sub", "mul", "div", "rem", "eq", "lt", "gt", "le", "ge", "and", "or"]:
    same.append(((op, (1, 2)), (op, (2, 1)), op in COMM))
same += [
    (("add", (1, 2)), ("add", (1, 2)), True),
    (("add", (1, 2)), ("mul", (1, 2)), False),
    (("add", (1, 2)), ("sub", (1, 2)), False),
    (("lt", (3, 4)), ("le", (3, 4)), False),
    (("and", (1, 2)), ("or", (2, 1)), False),
    (("add", (1, 1)), ("add", (1, 2)), False),
    (("sub", (2, 2)), ("sub", (2, 2)), True),
    (("not", (1,)), ("not", (2,)), False),
    (("not", (3,)), ("not", (3,)), True),
]
t2 = listing("SAME_KEY", same)
run(ns, "def _hidden_ref():\n" + REF_LVN + "\n    return reference\nREF_LVN = _hidden_ref()")
t3 = table("EXPECTED_REDUNDANT", [(i, ns["REF_LVN"](b)) for i, b in enumerate(ns["BLOCKS"])])
setsrc(nb, "setup", SETUP)
setsrc(nb, "test_fold_constant", T1 % (t1, REF_FOLD.rstrip("\n")))
setsrc(nb, "test_value_key", T2 % t2)
setsrc(nb, "test_count_redundant", T3 % (t3, REF_LVN.rstrip("\n")))
save(nb, NAME)
print("written", NAME)
