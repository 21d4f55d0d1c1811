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


# Everything a further step could change, as a comparable value; member *counts* (not
# lists) suffice, since a union that merged nothing new cannot change them.
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
        # Invariant 1: what a container's escape implies for its contents is already in the
        # contents' state (a returned object's fields are returned too).
        for r in list(cls.roots):
            reach = solver.reach(r)
            for c in cls.contents(r):
                if not reach.leq(cls.root(c).info.escape_only()):
                    raise VerifyError("contents escape like their container", name,
                                      f"class of {cls.root(c).members[:1]}")
        # Invariant 2: the solution is a fixed point -- one more application of every
        # transfer function and of propagation changes nothing. This is what "solved"
        # means, checked directly instead of trusted from the worklist's bookkeeping.
        before = _snapshot(solver)
        for pc in range(len(fe.ir.stmts), 0, -1):
            solver.transfer(pc)
        solver.classes.changed |= set(solver.classes.roots)  # revisit every class
        solver.propagate()
        if _snapshot(solver) != before:
            raise VerifyError("escape state is a fixed point", name,
                              "one more step of the analysis changed it")
        # Invariant 3: the program-wide rounds settled -- re-solving with the final
        # summaries yields nothing this function's summary does not already say.
        again = FunctionSolver(fe.ir, structs, summaries).solve().summary()
        if join_summaries(fe.summary, again) != fe.summary:
            raise VerifyError("summaries are a fixed point", name,
                              f"re-solved: {again.describe(fe.ir.argnames)}")
