"""Machine IR -> Intel-syntax GNU assembler text, with the Tiny source as comments.

The blocks are laid out by :mod:`ssa_course.codegen.listing` (shared with AArch64): a
jump to the block laid out next is left out (it falls through), and ``jcc T; jmp F`` with
``T`` next becomes ``j<not cc> F``. The listing says where code comes from: the first
instruction of each source line is preceded by ``# line N: <the line>``.
"""

from __future__ import annotations

from ssa_course.codegen import listing
from ssa_course.codegen.listing import Syntax
from ssa_course.codegen.mir import (
    Imm,
    Mem,
    MFunction,
    MInstr,
    MProgram,
    Operand,
    PReg,
    Slot,
    VReg,
)
from ssa_course.codegen.x86_64.frame import slot_address
from ssa_course.codegen.x86_64.registers import LOW8, LOW32, NEGATE

# NEGATE covers signed conditions; these are the unsigned, sign, parity and overflow ones.
NEGATE_ALL = {**NEGATE, "b": "ae", "ae": "b", "a": "be", "be": "a", "s": "ns", "ns": "s",
              "p": "np", "np": "p", "o": "no", "no": "o"}


def _reg8(r: Operand) -> str:
    return LOW8[r.name] if isinstance(r, PReg) else f"{r}.b"


def _reg32(r: Operand) -> str:
    return LOW32[r.name] if isinstance(r, PReg) else f"{r}.d"


def address(m: Mem) -> str:
    return m.address()


def operand(fn: MFunction, o: Operand, sized: bool = True) -> str:
    if isinstance(o, Slot):
        o = slot_address(fn, o)
    if isinstance(o, Mem):
        return ("qword ptr " if sized else "") + address(o)
    return str(o)


def instr_text(fn: MFunction, i: MInstr) -> str:
    """One instruction in Intel syntax (a VReg prints as ``%id.hint``, for listings made
    before allocation)."""
    ops = i.operands
    if i.op == "jcc":
        return f"j{i.cond} {ops[0]}"
    if i.op == "setcc":
        return f"set{i.cond} {_reg8(ops[0])}" if not isinstance(ops[0], Mem | Slot) \
            else f"set{i.cond} byte ptr {address(ops[0]) if isinstance(ops[0], Mem) else ''}"
    if i.op == "movzx":  # a byte: a register's low 8 bits, or memory (a bool[] element)
        src = ops[1]
        return f"movzx {_reg32(ops[0])}, " + (f"byte ptr {address(src)}" if isinstance(src, Mem)
                                               else _reg8(src))
    if i.op == "movb":  # store a byte (a bool[] element)
        m, src = ops
        assert isinstance(m, Mem)
        value = str(src.value) if isinstance(src, Imm) else _reg8(src)
        return f"mov byte ptr {address(m)}, {value}"
    name = "imul" if i.op in ("imul3", "imul1") else i.op
    if not ops:
        return name
    sized = name != "lea"
    return f"{name} " + ", ".join(operand(fn, o, sized) for o in ops)


def _lines(fn: MFunction, i: MInstr) -> list[str]:
    return [instr_text(fn, i)]


SYNTAX = Syntax(comment="#", jump="jmp", negate=NEGATE_ALL,
                header=(".intel_syntax noprefix", ".text"),
                main_entry=("mov r15, qword ptr [rip + rt_depth]",),
                far_entries=frozenset(), lines=_lines)


def function_text(fn: MFunction, lines: list[str] | None = None) -> list[str]:
    """The assembly lines of one function (after allocation and frame layout)."""
    return listing.function_text(fn, SYNTAX, lines)


def program_text(program: MProgram, lines: list[str] | None = None) -> str:
    """The code of every function, ready to be placed after the runtime's header."""
    return listing.program_text(program, SYNTAX, lines)


__all__ = ["Imm", "VReg", "function_text", "instr_text", "program_text"]
