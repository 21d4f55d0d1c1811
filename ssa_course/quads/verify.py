"""The quads verifier: what every pass that writes quads must leave true.

The rules are Bril's static ones (:mod:`ssa_course.quads.bril_check`): each operation has
its shape (arguments, destination, labels, callee), labels are defined once and every
jump target exists, calls match their callee's signature, every variable has one type in
its function and each operation gets operands of the types it takes, a function with a
result returns a value on every ``ret``. One rule is left out on purpose: a read of a
variable that no path assigns is allowed, because it is the program's own runtime error
("undefined variable"), which a pass must keep, not a broken invariant.

Failures raise :class:`~ssa_course.errors.VerifyError` naming the function and the
instruction, so ``ssa-course opt`` can say which pass broke which rule.
"""

from __future__ import annotations

from ssa_course.errors import VerifyError
from ssa_course.quads.bril_check import check_shapes, check_types
from ssa_course.quads.bril_problem import BrilProblem
from ssa_course.quads.ir import Instr, Label, Program


def verify_quads(program: Program) -> None:
    """Raise :class:`VerifyError` for the first instruction that breaks a rule."""
    # The same checks that read Bril input (one rule book for what we read and what
    # passes write). Runtime errors stay allowed: a read of a variable no path assigns
    # is the program's own error at run time, which an optimizer keeps, not refuses.
    try:
        check_shapes(program)
        check_types(program, runtime_errors_allowed=True)
    except BrilProblem as e:
        from ssa_course.quads.bril_write import format_instr  # only to name the instruction

        # name the function and the instruction as Bril text: a reader can find it in
        # ``ssa-course show --as quads`` output
        where = f"@{e.function}" if e.function else "the program"
        if isinstance(e.item, Instr):
            where += f": {format_instr(e.item)}"
        elif isinstance(e.item, Label):
            where += f": .{e.item.name}"
        raise VerifyError("quads well formed", where, e.message) from None
