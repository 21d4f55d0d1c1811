"""Regenerates the setup and graded cells of solutions/07-*.ipynb (see build.py)."""
# ruff: noqa: E402, E501, E702 - cell templates keep the notebooks' style; imports follow setup
from common import listing, load, run, save, setsrc, table
from types_src import tsrc

NAME = "07-optimistic.ipynb"
nb = load(NAME)

SETUP = r'''
import ssa_course
import ssa_course.son.control
import ssa_course.son.graph
import ssa_course.son.types
from ssa_course.grading import check_against
from ssa_course.grading.forbid import guard
from ssa_course.grading.son import draw_types, sea, sccp_prefixes
from ssa_course.son.control import If, Phi, Region, Start
from ssa_course.son.program import FunctionGraph
from ssa_course.son.types import (BOOL_BOTTOM, BOOL_TOP, BOTTOM, CTRL, FALSE, INT_BOTTOM,
                                  INT_TOP, TOP, TRUE, XCTRL, IntType, int_const, tuple_of)

PROGRAMS = {
    "loop": "fn main(n: int) { var x = 1; var i = 0; while (i < n) { x = 2 - x; i = i + 1; } print(x); }",
    "branch": "fn main(n: int) { var x = 0; if (n > 0) { x = 1; } else { x = 1; } print(x); }",
    "dead": "fn main(n: int) { var x = 1; var i = 0; while (i < n) { if (x != 1) { x = 5; } i = i + 1; } print(x); }",
}
# program -> its optimized graph, and the type tables SCCP goes through on main
GRAPHS = {name: sea(src) for name, src in PROGRAMS.items()}
TABLES = {name: sccp_prefixes(g) for name, g in GRAPHS.items()}

def node_of(case):
    """case = (program, node id, table number): the node in a fresh copy of the graph"""
    return sea(PROGRAMS[case[0]]).functions["main"].graph.nodes[case[1]]

def describe(case):
    return f"program {case[0]!r}: {PROGRAMS[case[0]]}\n(node #{case[1]}, table {case[2]})"

def drawn(answer, compute):
    """draw= for check_against: the graph with the node's expected and computed result."""
    def draw(case):
        try:
            actual = compute(answer, case)
        except Exception as e:
            actual = e
        return draw_types(GRAPHS[case[0]].functions["main"], TABLES[case[0]][case[2]], case[1],
                          compute(None, case), actual,
                          title=f"{PROGRAMS[case[0]]}  (table {case[2]})")
    return draw

# What the answers may use of the course's code: the nodes they get and the types.
NODES_ONLY = dict(forbid=[ssa_course], allow=[ssa_course.son.graph, ssa_course.son.control,
                                              ssa_course.son.types, FunctionGraph.nodes])
'''

T1 = r'''
# Checks phi_type() on each phi of each program, for the tables SCCP goes through; the
# expected types are written out below.
_phi_type = guard(phi_type, forbid=[ssa_course, Phi.compute], allow=NODES_ONLY["allow"])
# (program, phi id, table number) -> type
%s

def _phi(answer, case):
    if answer is None:
        return EXPECTED_PHI[case]
    return answer(node_of(case), dict(TABLES[case[0]][case[2]]))

check_against(lambda c: _phi(_phi_type, c), EXPECTED_PHI.__getitem__, list(EXPECTED_PHI),
              describe=describe, draw=drawn(_phi_type, _phi),
              size=lambda c: (len(PROGRAMS[c[0]]), c[2]), what="type of the phi")
### BEGIN HIDDEN TESTS
def _hidden():
    from ssa_course.grading.son import with_types
    src = ("fn main(n: int) { var a = 3; var b = 3; while (n > a) { var t = a; a = b; b = t; "
           "n = n - 1; } print(a + b); }")
    fg = sea(src).functions["main"]
    tables = sccp_prefixes(sea(src))
    cases = [(n.id, k) for n in fg.nodes() if isinstance(n, Phi) for k in range(len(tables))]
    check_against(lambda c: _phi_type(fg.graph.nodes[c[0]], dict(tables[c[1]])),
                  lambda c: with_types(fg.graph.nodes[c[0]], tables[c[1]]), cases,
                  describe=lambda c: f"{src}\n(node #{c[0]}, table {c[1]})", size=lambda c: c[1],
                  what="type of the phi")

_hidden()
### END HIDDEN TESTS
'''

T2 = r'''
# Checks if_type() on every pair of control and predicate types; answers below.
_if_type = guard(if_type, forbid=[ssa_course, If.compute], allow=[ssa_course.son.types])
# (control type, predicate type, type of the If)
%s
check_against(lambda c: _if_type(c[0], c[1]), lambda c: c[2], IF_TYPES,
              describe=lambda c: f"if_type({c[0]}, {c[1]})", size=lambda c: 0,
              what="type of the If")
### BEGIN HIDDEN TESTS
def _hidden():
    from ssa_course.son.graph import Graph, Node

    class Given(Node):
        def __init__(self, graph, t):
            super().__init__(graph)
            self.type = t

    def reference(ctrl, pred):
        g = Graph()
        Start(g, [])
        return If(g, Given(g, ctrl), Given(g, pred)).compute()

    cases = [(c, p) for c in (TOP, XCTRL, CTRL, BOTTOM)
             for p in (TOP, BOOL_TOP, TRUE, FALSE, BOOL_BOTTOM, BOTTOM)]
    check_against(lambda c: _if_type(*c), lambda c: reference(*c), cases,
                  describe=lambda c: f"if_type({c[0]}, {c[1]})", size=lambda c: 0,
                  what="type of the If")

_hidden()
### END HIDDEN TESTS
'''

T3 = r'''
# Checks users_to_push() on every node of each program; answers below.
_users_to_push = guard(users_to_push, **NODES_ONLY)
# (program, node id) -> ids of the nodes to push
%s

def _push(answer, case):
    if answer is None:
        return EXPECTED_PUSH[case[:2]]
    return answer(node_of(case))

check_against(lambda c: _push(_users_to_push, c + (0,)), EXPECTED_PUSH.__getitem__,
              list(EXPECTED_PUSH), describe=lambda c: describe(c + (0,)),
              draw=lambda c: drawn(_users_to_push, _push)(c + (0,)),
              size=lambda c: len(PROGRAMS[c[0]]), what="nodes to push")
### BEGIN HIDDEN TESTS
def _hidden():
    from ssa_course.son.sccp import users_to_push as reference
    src = ("fn main(n: int) { var a = 3; var b = 3; while (n > a) { var t = a; a = b; b = t; "
           "if (t == 4) { break; } n = n - 1; } print(a + b); }")
    fg = sea(src).functions["main"]
    check_against(lambda i: _users_to_push(fg.graph.nodes[i]),
                  lambda i: [u.id for u in reference(fg.graph.nodes[i])],
                  [n.id for n in fg.nodes()], describe=lambda i: f"{src}\n(node #{i})",
                  size=lambda i: 0, what="nodes to push")

_hidden()
### END HIDDEN TESTS
'''

ns = {}
run(ns, SETUP)
from ssa_course.grading.son import _Given, with_types
from ssa_course.son.control import If, Start
from ssa_course.son.graph import Graph


def ref_if(c, p):
    g = Graph(); Start(g, [])
    return If(g, _Given(g, c), _Given(g, p)).compute()
from ssa_course.son.control import Phi
from ssa_course.son.sccp import users_to_push as ref_push

G, TB = ns["GRAPHS"], ns["TABLES"]
rows = []
for name, g in G.items():
    fg = g.functions["main"]
    for n in fg.nodes():
        if isinstance(n, Phi):
            for k in range(len(TB[name])):
                rows.append(((name, n.id, k), with_types(n, TB[name][k])))
t1 = table("EXPECTED_PHI", rows, val=tsrc)
S = ns
IF = [(c, p, ref_if(c, p)) for c in (S["TOP"], S["XCTRL"], S["CTRL"]) for p in (S["TOP"], S["BOOL_TOP"], S["TRUE"], S["FALSE"], S["BOOL_BOTTOM"])]
t2 = listing("IF_TYPES", IF, fmt=lambda r: f"({tsrc(r[0])}, {tsrc(r[1])}, {tsrc(r[2])})")
prow = [((name, n.id), [u.id for u in ref_push(n)]) for name, g in G.items() for n in g.functions["main"].nodes()]
t3 = table("EXPECTED_PUSH", prow)
setsrc(nb, "setup", SETUP)
setsrc(nb, "test_phi_type", T1 % t1)
setsrc(nb, "test_if_type", T2 % t2)
setsrc(nb, "test_users_to_push", T3 % t3)
save(nb, NAME)
print("written", NAME)
