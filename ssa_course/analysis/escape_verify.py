"""Checks that an escape result is what the analysis promises: a fixed point.

* every function's IRCode verifies (the IRCode verifier of lesson 04);
* every content class holds at least the escape of its container (the invariant the
  worklist maintains);
* running every transfer function once more over the solved state, and the worklist
  over every class after it, changes nothing (no class grows, merges or collapses);
* re-solving a function with the final summaries of its callees gives no summary larger
  than the one recorded (the summaries are a fixed point over the call graph).
"""

from __future__ import annotations

from ssa_course.analysis.escape import ProgramEscapes
from ssa_course.analysis.escape_solve import FunctionSolver
from ssa_course.analysis.escape_summary import join_summaries
from ssa_course.errors import VerifyError
from ssa_course.ssa.irverify import verify_ir


def _snapshot(solver: FunctionSolver) -> tuple:
    cls = solver.classes
    return tuple(sorted((r, root.info, root.collapsed, tuple(sorted(root.shape)),
                         len(root.members)) for r, root in cls.roots.items()))


def verify_escapes(result: ProgramEscapes) -> None:
    """Raise :class:`VerifyError` naming the broken rule and the function."""
    summaries = {name: fe.summary for name, fe in result.functions.items()}
    structs = getattr(result.program, "structs", {})
    for name, fe in result.functions.items():
        verify_ir(fe.ir)
        solver = fe.solver
        cls = solver.classes
        for r in list(cls.roots):
            reach = solver.reach(r)
            for c in cls.contents(r):
                if not reach.leq(cls.root(c).info.escape_only()):
                    raise VerifyError("contents escape like their container", name,
                                      f"class of {cls.root(c).members[:1]}")
        before = _snapshot(solver)
        for pc in range(len(fe.ir.stmts), 0, -1):
            solver.transfer(pc)
        solver.classes.changed |= set(solver.classes.roots)  # revisit every class
        solver.propagate()
        if _snapshot(solver) != before:
            raise VerifyError("escape state is a fixed point", name,
                              "one more step of the analysis changed it")
        again = FunctionSolver(fe.ir, structs, summaries).solve().summary()
        if join_summaries(fe.summary, again) != fe.summary:
            raise VerifyError("summaries are a fixed point", name,
                              f"re-solved: {again.describe(fe.ir.argnames)}")
