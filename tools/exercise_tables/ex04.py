"""Regenerates the setup and graded cells of solutions/04-*.ipynb (see build.py)."""
# ruff: noqa: E501 - cell templates keep the notebooks' style; imports follow setup
from common import load, run, save, setsrc, sset, table

NAME = "04-julia-ir.ipynb"
nb = load(NAME)

SETUP = r'''
import ssa_course
import ssa_course.ssa.ircode
import ssa_course.ssa.julia
import ssa_course.tiny.types
from ssa_course.grading import Mismatch, check_against
from ssa_course.grading.forbid import guard
from ssa_course.ssa.ircode import Expr, IRCode, PhiNode, SSAValue, compact
from ssa_course.ssa.irinterp import run_ircode
from ssa_course.ssa.irverify import verify_ir
from ssa_course.ssa.julia import build_ircode, format_ir, ir_to_dot
from ssa_course.runtime import Limits, Output
from ssa_course.tiny.types import INT
from ssa_course.viz.dot import Drawing

PROGRAMS = {
    "straight": "fn main(x: int) { var y = x * 2; var z = y + x; print(z * 2); }",
    "branch": "fn main(x: int) { var y = 0; if (x < 10) { y = x * 2; } else { y = x - 1; } print(y); }",
    "loop": "fn main(x: int) { var s = 0; var i = 0; while (i < x) { s = s + i * 2; i = i + 1; } print(s); }",
    "unused": "fn main(x: int) { var a = x * 2; var b = a + 1; var c = x - 3; print(c); }",
    "nested": "fn main(x: int) { var s = 0; for (var i = 0; i < x; i = i + 1) { if (i % 2 == 0) { s = s + i * 2; } } print(s * 2); }",
    "two_left": "fn main(x: int) { var y = 2 * x; var z = 2 * y * 2; print(y + z, x * 3); }",
}

def source(name):
    return PROGRAMS.get(name, name)  # a name from PROGRAMS, or a program's source itself

def ir_of(name):
    return build_ircode(ssa_course.compile(source(name)).quads.functions["main"])

def describe(name):
    return source(name) + "\n\n" + format_ir(ir_of(name))

def draw(name):
    return Drawing(ir_to_dot(ir_of(name)))

def run_ir(ir, *args):
    out = Output()
    run_ircode({ir.name: ir}, list(args), out, Limits())
    return out.text()

# What the answers may use of the course's code: the IR classes and their methods (and
# format_ir, to print what you are doing).
IR_ONLY = dict(forbid=[ssa_course], allow=[ssa_course.ssa.ircode, ssa_course.tiny.types,
                                           format_ir, ssa_course.ssa.julia._stmt_text])
'''

REF_USES = r'''
    def reference(ir):
        uses = {i: set() for i in range(1, len(ir.stmts) + 1)}
        for j, s in enumerate(ir.stmts, start=1):
            for v in (s.operands() if s is not None else []):
                if isinstance(v, SSAValue):
                    uses[v.id].add(j)
        return {i: sorted(js) for i, js in uses.items()}
'''
REF_DEAD = r'''
    def reference(ir):
        pure = {"add", "sub", "mul", "eq", "lt", "gt", "le", "ge", "not", "and", "or"}
        used = {v.id for s in ir.stmts if s is not None for v in s.operands()
                if isinstance(v, SSAValue)}
        return {i for i, s in enumerate(ir.stmts, start=1)
                if isinstance(s, Expr) and s.head in pure and i not in used}
'''

T1 = r'''
# Checks uses_of() on the programs of the setup cell; the expected answers are below.
_uses_of = guard(uses_of, **IR_ONLY)
%s
check_against(lambda n: _uses_of(ir_of(n)), EXPECTED_USES.__getitem__, list(EXPECTED_USES),
              describe=describe, draw=draw, size=lambda n: len(PROGRAMS[n]), what="uses")
### BEGIN HIDDEN TESTS
def _hidden():
%s
    srcs = ["fn f(v: int) -> int { throw v; } fn main(x: int) { var y = 1; try { y = f(x); } "
            "catch (e) { print(y + e); } }",
            "fn main(x: int) { var a = x + x; var b = a * a; while (b > x) { b = b - a; } print(b); }"]
    check_against(lambda s: _uses_of(ir_of(s)), lambda s: reference(ir_of(s)), srcs,
                  describe=describe, size=len, what="uses")

_hidden()
### END HIDDEN TESTS
'''

T2 = r'''
# Checks dead_pure() on the programs of the setup cell; the expected answers are below.
_dead_pure = guard(dead_pure, **IR_ONLY)
%s
check_against(lambda n: _dead_pure(ir_of(n)), EXPECTED_DEAD.__getitem__, list(EXPECTED_DEAD),
              describe=describe, draw=draw, size=lambda n: len(PROGRAMS[n]),
              what="dead statements")
### BEGIN HIDDEN TESTS
def _hidden():
%s
    srcs = ["fn main(x: int) { var a = x < 3; var b = !a; var c = x * x; print(x); }",
            "fn main(x: int) { var a = x + 1; var b = a - 2; var c = b == a; print(a); }"]
    check_against(lambda s: _dead_pure(ir_of(s)), lambda s: reference(ir_of(s)), srcs,
                  describe=describe, size=len, what="dead statements")

_hidden()
### END HIDDEN TESTS
'''

T3 = r'''
# Checks double_to_add(): no multiplication by 2 may be left, the outputs must not change,
# and the pass must insert with ir.insert_node and finish with compact.
_double_to_add = guard(double_to_add, require=[IRCode.insert_node, compact], **IR_ONLY)

def _summary(ir, name):
    """(multiplications by 2 left, outputs) of the IR your pass returned; an IR that is not
    valid or does not run fails the check here, showing that IR."""
    if not isinstance(ir, IRCode):
        raise Mismatch(f"your double_to_add returned {ir!r}, not an IRCode (return compact(ir))"
                       f"\non this input:\n{describe(name)}")
    try:
        verify_ir(ir)
        outputs = tuple(run_ir(ir, x) for x in (0, 3, 7, 12))
    except Exception as e:
        raise Mismatch(f"your double_to_add returned an IR that does not run "
                       f"({type(e).__name__}: {e}):\n{format_ir(ir)}\n"
                       f"on this input:\n{describe(name)}") from None
    muls = sum(1 for s in ir.stmts if isinstance(s, Expr) and s.head == "mul"
               and 2 in [a for a in s.args if not isinstance(a, bool)])
    return (muls, outputs)

def _expected(name):  # none left; the outputs of the program as it was
    ir = ir_of(name)
    return (0, tuple(run_ir(ir, x) for x in (0, 3, 7, 12)))

check_against(lambda n: _summary(_double_to_add(ir_of(n)), n), _expected, list(PROGRAMS),
              describe=describe, draw=draw, size=lambda n: len(PROGRAMS[n]),
              what="(multiplications by 2 left, outputs)")
### BEGIN HIDDEN TESTS
check_against(lambda s: _summary(_double_to_add(ir_of(s)), s), _expected,
              ["fn main(x: int) { var a = 2 * x; var b = a * 2 * 2; print(a, b, x * 3); }",
               "fn main(x: int) { var i = 0; var s = 2 * x; while (i < x) { s = s * 2; "
               "i = i + 1; } print(s * 2); }"],
              describe=describe, size=len, what="(multiplications by 2 left, outputs)")
### END HIDDEN TESTS
'''

ns = {}
run(ns, SETUP)
run(ns, "def _h():\n" + REF_USES + "\n    return reference\nREF_USES = _h()")
run(ns, "def _h():\n" + REF_DEAD + "\n    return reference\nREF_DEAD = _h()")
P = ns["PROGRAMS"]
t1 = table("EXPECTED_USES", [(n, ns["REF_USES"](ns["ir_of"](n))) for n in P])
t2 = table("EXPECTED_DEAD", [(n, ns["REF_DEAD"](ns["ir_of"](n))) for n in P], val=sset)
setsrc(nb, "setup", SETUP)
setsrc(nb, "test_uses_of", T1 % (t1, REF_USES.rstrip("\n")))
setsrc(nb, "test_dead_pure", T2 % (t2, REF_DEAD.rstrip("\n")))
setsrc(nb, "test_double_to_add", T3)
save(nb, NAME)
print("written", NAME)
