"""Making x86-64 machine instructions with their ``defs``/``uses`` filled in from the operands.

Instruction selection, the frame and the spill-all allocator build x86-64's
:class:`~ssa_course.codegen.mir.MInstr` through :func:`ins`, so the registers an instruction
reads and writes are derived in one place from one table of operand roles (the neutral
``mov``/``jmp`` of :mod:`ssa_course.codegen.minstr` agree with it).
"""

from __future__ import annotations

from ssa_course.codegen.mir import (
    LabelRef,
    Mem,
    MInstr,
    Operand,
    PReg,
    Reg,
    VReg,
)
from ssa_course.codegen.x86_64.registers import ARG_REGS, CALLER_SAVED

# How an op treats its first operand: written only ("w"), read and written ("rw"), read ("r").
# Every later operand is read. Ops not listed read every operand and write none.
FIRST_ROLE = {
    "mov": "w", "lea": "w", "movzx": "w", "setcc": "w", "pop": "w", "imul3": "w",
    "add": "rw", "sub": "rw", "imul": "rw", "and": "rw", "or": "rw", "xor": "rw",
    "shl": "rw", "sar": "rw", "shr": "rw", "neg": "rw", "not": "rw", "xchg": "rw",
    "movq": "w", "cvttsd2si": "w", "cvtsi2sd": "w",
}


def _xmm(o: object) -> bool:
    """An SSE register: float scratch (xmm0, xmm1) or a float argument register, which
    the allocator never hands out nor tracks (select_float's docstring)."""
    return isinstance(o, PReg) and o.name.startswith("xmm")


def ins(op: str, *operands: Operand, cond: str | None = None, defs: tuple[Reg, ...] = (),
        uses: tuple[Reg, ...] = (), line: int | None = None, comment: str = "") -> MInstr:
    """An instruction whose ``defs``/``uses`` are its register operands by role, plus the
    implicit ``defs``/``uses`` given. ``imul3`` is the three-operand ``imul d, a, imm``."""
    d: list[Reg] = []
    u: list[Reg] = []
    role = FIRST_ROLE.get(op, "r")
    for k, o in enumerate(operands):
        if isinstance(o, Mem):
            u.extend(o.regs())
        elif _xmm(o):
            continue
        elif isinstance(o, VReg | PReg):
            if k == 0 and role in ("w", "rw"):
                d.append(o)
                if role == "rw":
                    u.append(o)
            else:
                u.append(o)
    if op == "xchg" and len(operands) == 2 and isinstance(operands[1], VReg | PReg):
        d.append(operands[1])
    d.extend(r for r in defs if r not in d)
    u.extend(r for r in uses if r not in u)
    return MInstr(op, list(operands), d, u, cond, line, comment)


def call(symbol: str, nargs: int = 0, line: int | None = None) -> MInstr:
    """``call symbol``: reads the argument registers it is given, clobbers every
    caller-saved register (the result arrives in rax)."""
    return ins("call", LabelRef(symbol), defs=tuple(PReg(r) for r in CALLER_SAVED),
               uses=tuple(PReg(r) for r in ARG_REGS[:nargs]), line=line)

