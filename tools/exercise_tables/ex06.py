"""Regenerates the setup and graded cells of solutions/06-*.ipynb (see build.py)."""
# ruff: noqa: E402, E501 - cell templates keep the notebooks' style; imports follow setup
from common import cell, listing, load, run, save, setsrc, table
from types_src import tsrc

NAME = "06-types-and-peepholes.ipynb"
nb = load(NAME)

SETUP = r'''
import ssa_course
import ssa_course.son.graph
import ssa_course.son.types
from ssa_course.grading import check_against
from ssa_course.grading.forbid import guard
from ssa_course.grading.son import (BOOL_SAMPLES, INT_SAMPLES, expressions_with_add, sea,
                                    size_and_outputs)
from ssa_course.runtime import wrap
from ssa_course.son import data
from ssa_course.son.data import Add, Mul, Not, Sub, const
from ssa_course.son.graph import Node
from ssa_course.son.types import (BOOL_BOTTOM, BOOL_TOP, BOTTOM, FALSE, INT_BOTTOM, INT_MAX,
                                  INT_MIN, INT_TOP, TOP, TRUE, BoolType, IntType, int_const)

# What the answers may use of the course's code: types, nodes' fields, making constants.
TYPES_ONLY = dict(forbid=[ssa_course], allow=[ssa_course.son.types, wrap])
'''

T1 = r'''
# Checks mul_type() and not_type() on every pair of sample types; answers below.
_mul_type = guard(mul_type, **TYPES_ONLY)
_not_type = guard(not_type, **TYPES_ONLY)
# (a, b, type of a*b)
%s
# (t, type of !t)
%s
check_against(lambda c: _mul_type(c[0], c[1]), lambda c: c[2], MUL_TYPES,
              describe=lambda c: f"mul_type({c[0]}, {c[1]})", size=lambda c: 0,
              what="type of a*b")
check_against(lambda c: _not_type(c[0]), lambda c: c[1], NOT_TYPES,
              describe=lambda c: f"not_type({c[0]})", size=lambda c: 0, what="type of !x")
### BEGIN HIDDEN TESTS
def _hidden():
    from ssa_course.grading.son import engine_compute
    more = [(int_const(2**40), int_const(2**40)), (int_const(-1), int_const(INT_MIN)),
            (int_const(3), int_const(-5)), (IntType("int", 0, 5), INT_BOTTOM),
            (int_const(0), IntType("int", -3, 3))]
    check_against(lambda p: _mul_type(*p), lambda p: engine_compute(Mul, *p), more,
                  describe=lambda p: f"mul_type({p[0]}, {p[1]})", size=lambda p: 0,
                  what="type of a*b")

_hidden()
### END HIDDEN TESTS
'''

REF_IDEAL = r'''
    def reference(node):
        left, right = node.inputs[1], node.inputs[2]
        if right.type == int_const(0):
            return left
        if left.type == int_const(0):
            return right
        if isinstance(left, Add) and left.inputs[2].type.is_constant() \
                and right.type.is_constant():
            c = const(node, wrap(left.inputs[2].type.lo + right.type.lo))
            return type(node)(node.graph, None, left.inputs[1], c)
        if left.type.is_constant() and not right.type.is_constant():
            return type(node)(node.graph, None, right, left)
        return None
'''

T2 = r'''
# Checks idealize_add() in the optimizer on many expressions; answers below.
_idealize_add = guard(idealize_add, forbid=[ssa_course],
                      allow=[ssa_course.son.graph, ssa_course.son.types, wrap, const,
                             data.Constant, data.Binary.__init__, data.type_of_value,
                             data.constant_value])

def program(e):
    return f"fn main(n: int, m: int) {{ print({e}); }}"

# expression -> (printed expressions, outputs on (0, 0), (5, -2), (-7, 3))
%s
check_against(lambda e: expressions_with_add(program(e), _idealize_add),
              EXPECTED_IDEAL.__getitem__, list(EXPECTED_IDEAL), describe=program,
              draw=lambda e: sea(program(e)).draw(), size=len,
              what="(printed expression, outputs)")
### BEGIN HIDDEN TESTS
def _hidden():
%s
    more = ["(((n + 1) + 1) + 1) + 0", "0 + (0 + m)", "(m + 5) + (0 - 5)", "2 + (3 + (n + 4))"]
    check_against(lambda e: expressions_with_add(program(e), _idealize_add),
                  lambda e: expressions_with_add(program(e), reference), more,
                  describe=program, size=len, what="(printed expression, outputs)")

_hidden()
### END HIDDEN TESTS
'''

T3 = r'''
# Checks gvn_key() inside the optimizer (node count and outputs); answers below. Only Add,
# Sub and Mul nodes use your key; the others keep the course's.
_gvn_key = guard(gvn_key, forbid=[ssa_course, Node.key], allow=[ssa_course.son.graph,
                                                                ssa_course.son.types])

def _key(node):
    return _gvn_key(node) if isinstance(node, (Add, Sub, Mul)) else node.key()

ARGS = [[0, 0], [5, 2], [-3, 7]]
# program -> (node count, outputs on ARGS)
%s
check_against(lambda src: size_and_outputs(src, _key, ARGS), EXPECTED_GVN.__getitem__,
              list(EXPECTED_GVN), describe=str, draw=lambda src: sea(src).draw(), size=len,
              what="(node count, outputs)")
### BEGIN HIDDEN TESTS
check_against(lambda src: size_and_outputs(src, _key, ARGS),
              lambda src: size_and_outputs(src, lambda node: node.key(), ARGS),
              ["fn main(n: int, m: int) { print((n - m) * (m - n), (m - n) * (n - m)); }",
               "fn main(n: int, m: int) { var a = n + m; var b = m + n; print(a - b, b - a, a * b); }"],
              describe=str, size=len, what="(node count, outputs)")
### END HIDDEN TESTS
'''

GVN_PROGRAMS = [
    "fn main(n: int, m: int) { print(n * m, m * n); }",
    "fn main(n: int, m: int) { print(n - m, m - n); }",
    "fn main(n: int, m: int) { print(n + m, m + n, n - m); }",
    "fn main(n: int, m: int) { var a = n * 3; var b = 3 * n; print(a - b, b - a, a + b); }",
    "fn main(n: int, m: int) { var i = 0; while (i < n) { print(i * m, m * i, i - m); i = i + 1; } }",
]
EXPRESSIONS = ["n + 0", "0 + n", "n + m", "3 + n", "(n + 1) + 2", "(3 + n) + 4",
               "((n + 1) + 2) + 3", "(n + m) + 1", "1 + (n + 2)", "(n + 1) + (m + 2)"]

ns = {}
run(ns, SETUP)
from ssa_course.grading.son import engine_compute
from ssa_course.son.data import Mul, Not

IS, BS = ns["INT_SAMPLES"], ns["BOOL_SAMPLES"]
t_mul = listing("MUL_TYPES", [(a, b, engine_compute(Mul, a, b)) for a in IS for b in IS],
                fmt=lambda r: f"({tsrc(r[0])}, {tsrc(r[1])}, {tsrc(r[2])})")
t_not = listing("NOT_TYPES", [(t, engine_compute(Not, t)) for t in BS],
                fmt=lambda r: f"({tsrc(r[0])}, {tsrc(r[1])})")
run(ns, "def _h():\n" + REF_IDEAL + "\n    return reference\nREF_IDEAL = _h()")
t_ideal = table("EXPECTED_IDEAL", [(e, ns["expressions_with_add"](f"fn main(n: int, m: int) {{ print({e}); }}", ns["REF_IDEAL"]))
                                   for e in EXPRESSIONS])
t_gvn = table("EXPECTED_GVN", [(p, ns["size_and_outputs"](p, lambda node: node.key(), [[0, 0], [5, 2], [-3, 7]]))
                               for p in GVN_PROGRAMS])
setsrc(nb, "setup", SETUP)
setsrc(nb, "test_transfer", T1 % (t_mul, t_not))
setsrc(nb, "test_idealize_add", T2 % (t_ideal, REF_IDEAL.rstrip("\n")))
setsrc(nb, "test_gvn_key", T3 % t_gvn)
# (the answer cell and task text were changed once, by hand: gvn_key is only called for
# Add, Sub and Mul nodes, so its stub no longer falls back to node.key())
assert "node.key()" not in cell(nb, "gvn_key").source
save(nb, NAME)
print("written", NAME)
