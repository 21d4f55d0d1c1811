"""AArch64 machine instructions with their ``defs``/``uses`` filled in from the operands.

The machine IR is shared with x86-64 (:mod:`ssa_course.codegen.mir`); so are a few op
names whose meaning is the same on both machines, because the shared passes (phis, spill
code, loop inversion) read them: ``mov`` (a copy, a constant, or a load/store of a stack
slot), ``jmp``, ``jcc`` (``cond`` = ``eq``/``lt``/...; ``z``/``nz`` are ``cbz``/``cbnz``
and read their second operand), ``cmp``, ``test`` (``tst``), ``call``, ``ret``, ``lea``
(an address: a slot's, or a handler label's). Everything else is an AArch64 mnemonic in
three-address form: the first operand is written, the rest are read.
"""

from __future__ import annotations

from dataclasses import dataclass

from ssa_course.codegen.aarch64.registers import ARG_REGS, CALLER_SAVED, is_fp
from ssa_course.codegen.mir import LabelRef, Mem, MInstr, Operand, PReg, Reg, VReg

# Ops that read every operand and write none (stores, compares, branches, calls).
READS_ONLY = frozenset({"str", "strb", "cmp", "cmn", "test", "jmp", "jcc", "call", "ret", "fuel",
                        "fcmp"})


@dataclass(frozen=True, slots=True)
class Shift:
    """A shifted register operand's shift: ``add d, a, b, lsl #3`` ends in Shift("lsl", 3)."""

    kind: str
    amount: int

    def __str__(self) -> str:
        return f"{self.kind} #{self.amount}"


def ins(op: str, *operands: Operand | Shift, cond: str | None = None,
        defs: tuple[Reg, ...] = (), uses: tuple[Reg, ...] = (), line: int | None = None,
        comment: str = "") -> MInstr:
    """An instruction whose ``defs``/``uses`` follow from its operands: the first register
    operand of a writing op is written, every other register (addresses included) read;
    ``mov`` into a slot or memory is a store; an FP ``d`` register is in neither.
    Extra implicit ``defs``/``uses`` are added."""
    d: list[Reg] = []
    u: list[Reg] = []
    writes = op not in READS_ONLY
    for k, o in enumerate(operands):
        if isinstance(o, Mem):
            u.extend(o.regs())
        elif isinstance(o, VReg) or isinstance(o, PReg) and not is_fp(o.name):
            # a d register (a float operation's scratch, select_float.py) is no business
            # of the allocator's: it is left out of defs and uses
            (d if k == 0 and writes else u).append(o)
    d.extend(r for r in defs if r not in d)
    u.extend(r for r in uses if r not in u)
    # a Shift (AArch64's shifted-register operand) is outside mir.Operand, which x86 shares
    return MInstr(op, list(operands), d, u, cond, line, comment)  # type: ignore[arg-type]


def call(symbol: str, nargs: int = 0, line: int | None = None) -> MInstr:
    """``bl symbol``: reads its argument registers, clobbers every caller-saved register
    the allocator hands out (the result arrives in x0)."""
    return ins("call", LabelRef(symbol), defs=tuple(PReg(r) for r in CALLER_SAVED),
               uses=tuple(PReg(r) for r in ARG_REGS[:nargs]), line=line)
