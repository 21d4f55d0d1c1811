"""Machine instructions every CPU's machine IR shares: a copy, a jump, immediates that fit,
and the runtime entries that never return or that return a value.

Neutral passes (phi lowering, hoisting constants before loops) make only ``mov`` and
``jmp``; each CPU builds its other instructions with its own ``minstr.ins``, which knows
which operands its mnemonics write.
"""

from __future__ import annotations

from ssa_course.codegen.mir import Imm, LabelRef, Mem, MInstr, Operand, PReg, Reg, VReg
from ssa_course.codegen.ptr_abi import RETURNING

# Runtime entry points that never return (a call or jump to them ends a path).
NO_RETURN = frozenset({"rt_trap", "rt_throw", "rt_step_limit", "rt_stack_overflow"})
# Runtime entry points that return a value in the result register.
RUNTIME_RESULTS = frozenset({"rt_new_array", "rt_new_bytes", "rt_new_struct"}) | RETURNING


def mov(dst: Operand, src: Operand, line: int | None = None) -> MInstr:
    """``mov dst, src``: writes ``dst`` when it is a register, reads every other register
    it names (an address's base and index included)."""
    d: list[Reg] = []
    u: list[Reg] = []
    for k, o in enumerate((dst, src)):
        if isinstance(o, Mem):
            u.extend(o.regs())
        elif isinstance(o, VReg | PReg):
            (d if k == 0 else u).append(o)
    return MInstr("mov", [dst, src], d, u, None, line, "")


def jmp(label: str) -> MInstr:
    """``jmp label``: reads and writes no register."""
    return MInstr("jmp", [LabelRef(label)], [], [], None, None, "")


def fits32(value: int) -> bool:
    """Does an immediate fit a sign-extended 32-bit field?"""
    return -(1 << 31) <= value < (1 << 31)


def imm(value: int | bool) -> Imm:
    return Imm(int(value))
