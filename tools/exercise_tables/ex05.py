"""Regenerates the setup and graded cells of solutions/05-*.ipynb (see build.py)."""
# ruff: noqa: E501 - cell templates keep the notebooks' style; imports follow setup
from common import load, run, save, setsrc, table

NAME = "05-control-as-data.ipynb"
nb = load(NAME)

SETUP = r'''
import ssa_course
import ssa_course.son.control
import ssa_course.son.graph
import ssa_course.son.types
from ssa_course.grading import check_against
from ssa_course.grading.forbid import guard
from ssa_course.grading.son import sea
from ssa_course.son.program import FunctionGraph
from ssa_course.son.control import Call, If, Loop, Never, Phi, Proj, Region, Start, Stop

PROGRAMS = {
    "straight": "fn main(n: int) { print(n + 1); }",
    "if_else": "fn main(n: int) { var x = 0; if (n > 0) { x = n; } else { x = 0 - n; } print(x); }",
    "while": "fn main(n: int) { var i = 0; while (i < n) { i = i + 1; } print(i); }",
    "nested": ("fn main(n: int) { var s = 0; var i = 0; while (i < n) { i = i + 1; "
               "if (i == 2) { continue; } var j = 0; while (true) { if (j >= i) { break; } "
               "s = s + j; j = j + 1; } } print(s); }"),
    "calls": "fn sq(x: int) -> int { return x * x; } fn main(n: int) { print(sq(n) + sq(2)); }",
    "try": ("fn f(x: int) -> int { if (x > 1) { throw x; } return x; } "
            "fn main(n: int) { try { print(f(n)); } catch (e) { print(e); } }"),
}

def source(name):
    return PROGRAMS.get(name, name)  # a name from PROGRAMS, or a program's source itself

def graphs(name):
    """A fresh, unoptimized sea of nodes of the program (node ids are per function)."""
    return sea(source(name), optimize=False)

def node_of(case):
    """case = (program, function, node id)"""
    name, fn, node_id = case
    return graphs(name).functions[fn].graph.nodes[node_id]

def describe(case):
    name, fn, node_id = case
    return f"node #{node_id} of function {fn!r} in program {name!r}:\n{source(name)}"

def draw(case):
    return graphs(case[0]).draw()

def control_cases(names):
    return [(name, fn, n.id) for name in names for fn, fg in graphs(name).functions.items()
            for n in fg.nodes() if n.is_control]

def phi_cases(names):
    return [(name, fn, n.id) for name in names for fn, fg in graphs(name).functions.items()
            for n in fg.nodes() if isinstance(n, Phi)]

# What the answers may use of the course's code: the nodes they get and their fields.
# (Phi.idealize is out: it already knows when a phi is a mere copy.)
NODES_ONLY = dict(forbid=[ssa_course, Phi.idealize], allow=[ssa_course.son.graph, ssa_course.son.control,
                                              ssa_course.son.types, FunctionGraph.nodes])
'''

REF_SUCC = r'''
    def reference(node):
        if isinstance(node, (Start, If, Call)):
            projs = [u for u in node.outputs if isinstance(u, Proj) and u.is_control]
            return [p.id for p in sorted(projs, key=lambda p: p.index)]
        return sorted(u.id for u in set(node.outputs)
                      if u.is_control and not isinstance(u, (Proj, Never))
                      and (u.inputs[0] is node or isinstance(u, (Region, Stop))))
'''
REF_SPLIT = r'''
    def reference(phi):
        region = phi.inputs[0]
        return [(region.inputs[i].id, v.id) for i, v in enumerate(phi.inputs[1:], start=1)
                if v is not None and region.inputs[i] is not None]
'''
REF_CARRIED = r'''
    def reference(fg):
        return {n.id: sorted(p.var_name for p in n.phis()
                             if p.inputs[2] is not p and p.inputs[2] is not p.inputs[1])
                for n in fg.nodes() if isinstance(n, Loop)}
'''

T1 = r'''
# Checks control_successors() on every control node of every function; answers below.
_control_successors = guard(control_successors, **NODES_ONLY)
# (program, function, node id) -> ids of the next control nodes
%s
check_against(lambda c: _control_successors(node_of(c)), EXPECTED_SUCCESSORS.__getitem__,
              list(EXPECTED_SUCCESSORS), describe=describe, draw=draw,
              size=lambda c: len(source(c[0])), what="successors")
### BEGIN HIDDEN TESTS
def _hidden():
%s
    srcs = ["fn main(n: int) { for (var i = 0; i < n; i = i + 1) { if (i == 3) { break; } print(i); } }",
            "fn g(x: int) -> int { if (x > 0) { throw x; } return 0; } fn main(n: int) { "
            "try { var a = g(n); print(g(a)); } catch (e) { print(e); } print(1); }"]
    check_against(lambda c: _control_successors(node_of(c)), lambda c: reference(node_of(c)),
                  control_cases(srcs), describe=describe, size=lambda c: len(c[0]),
                  what="successors")

_hidden()
### END HIDDEN TESTS
'''

T2 = r'''
# Checks split_phi() on every phi of every function; answers below.
_split_phi = guard(split_phi, **NODES_ONLY)
# (program, function, phi id) -> (control id, value id) per live path
%s
check_against(lambda c: _split_phi(node_of(c)), EXPECTED_SELECTS.__getitem__,
              list(EXPECTED_SELECTS), describe=describe, draw=draw,
              size=lambda c: len(source(c[0])), what="selects")
### BEGIN HIDDEN TESTS
def _hidden():
%s
    srcs = ["fn main(a: int, b: int) { var x = a; if (a < b) { x = b; } if (x > 10) { x = 10; } print(x); }",
            "fn main(n: int) { var x = 0; while (n > 0) { if (n == 5) { x = 1; break; } n = n - 1; } print(x); }"]
    check_against(lambda c: _split_phi(node_of(c)), lambda c: reference(node_of(c)),
                  phi_cases(srcs), describe=describe, size=lambda c: len(c[0]), what="selects")

_hidden()
### END HIDDEN TESTS
'''

T3 = r'''
# Checks loop_carried() on every function; answers below.
_loop_carried = guard(loop_carried, **NODES_ONLY)
# (program, function) -> {loop id: variables the loop changes}
%s
check_against(lambda c: _loop_carried(graphs(c[0]).functions[c[1]]), EXPECTED_CARRIED.__getitem__,
              list(EXPECTED_CARRIED), describe=lambda c: f"function {c[1]} of\n{source(c[0])}",
              draw=draw, size=lambda c: len(source(c[0])), what="changed variables")
### BEGIN HIDDEN TESTS
def _hidden():
%s
    srcs = ["fn main(n: int) { var a = new int[3]; var k = 1; var i = 0; while (i < 3) { a[i] = k; i = i + 1; } print(a[2]); }",
            "fn main(n: int) { var x = 1; var y = 2; var i = 0; while (i < n) { var t = x; x = y; y = t; "
            "var j = 0; while (j < i) { j = j + 1; } i = i + 1; } print(x, y); }"]
    cases = [(s, fn) for s in srcs for fn in graphs(s).functions]
    check_against(lambda c: _loop_carried(graphs(c[0]).functions[c[1]]),
                  lambda c: reference(graphs(c[0]).functions[c[1]]), cases,
                  describe=lambda c: f"function {c[1]} of\n{c[0]}", size=lambda c: len(c[0]),
                  what="changed variables")

_hidden()
### END HIDDEN TESTS
'''

ns = {}
run(ns, SETUP)
for nm, src in (("S", REF_SUCC), ("P", REF_SPLIT), ("C", REF_CARRIED)):
    run(ns, "def _h():\n" + src + f"\n    return reference\nREF_{nm} = _h()")
P = list(ns["PROGRAMS"])
t1 = table("EXPECTED_SUCCESSORS", [(c, ns["REF_S"](ns["node_of"](c))) for c in ns["control_cases"](P)])
t2 = table("EXPECTED_SELECTS", [(c, ns["REF_P"](ns["node_of"](c))) for c in ns["phi_cases"](P)])
fcases = [(n, fn) for n in P for fn in ns["graphs"](n).functions]
t3 = table("EXPECTED_CARRIED", [(c, ns["REF_C"](ns["graphs"](c[0]).functions[c[1]])) for c in fcases])
setsrc(nb, "setup", SETUP)
setsrc(nb, "test_control_successors", T1 % (t1, REF_SUCC.rstrip("\n")))
setsrc(nb, "test_split_phi", T2 % (t2, REF_SPLIT.rstrip("\n")))
setsrc(nb, "test_loop_carried", T3 % (t3, REF_CARRIED.rstrip("\n")))
save(nb, NAME)
print("written", NAME)
