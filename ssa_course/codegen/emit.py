"""Machine IR -> Intel-syntax GNU assembler text, with the Tiny source as comments.

A jump to the block laid out next is left out (it falls through), and ``jcc T; jmp F``
with ``T`` next becomes ``j<not cc> F``. The listing says where code comes from: the first
instruction of each source line is preceded by ``# line N: <the line>``.
"""

from __future__ import annotations

from ssa_course.codegen.frame import slot_address
from ssa_course.codegen.mir import (
    LOW8,
    LOW32,
    NEGATE,
    Imm,
    LabelRef,
    Mem,
    MFunction,
    MInstr,
    MProgram,
    Operand,
    PReg,
    Slot,
    VReg,
)
from ssa_course.codegen.names import MAIN_BODY, function_symbol

# NEGATE covers signed conditions; these are the unsigned and sign-flag ones.
NEGATE_ALL = {**NEGATE, "b": "ae", "ae": "b", "a": "be", "be": "a", "s": "ns", "ns": "s"}


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
    if i.op == "movzx":
        return f"movzx {_reg32(ops[0])}, {_reg8(ops[1])}"
    name = "imul" if i.op in ("imul3", "imul1") else i.op
    if not ops:
        return name
    sized = name != "lea"
    return f"{name} " + ", ".join(operand(fn, o, sized) for o in ops)


def _comment(i: MInstr, lines: list[str], last: list[int | None]) -> list[str]:
    if i.line is None or i.line == last[0]:
        return []
    last[0] = i.line
    text = lines[i.line - 1].strip() if 0 < i.line <= len(lines) else ""
    return [f"    # line {i.line}: {text}"]


def function_text(fn: MFunction, lines: list[str] | None = None) -> list[str]:
    """The assembly lines of one function (after allocation and frame layout)."""
    lines = lines or []
    sym = function_symbol(fn.name)
    out = ["", f"    .globl {sym}", f"{sym}:"]
    if fn.name == "main":  # the runtime's entry: the depth counter starts from rt_depth
        out += ["    mov r15, qword ptr [rip + rt_depth]", f"{MAIN_BODY}:"]
    last: list[int | None] = [None]
    before: set[str] = set()  # labels laid out up to here
    for k, block in enumerate(fn.blocks):
        before.add(block.label)
        nxt = fn.blocks[k + 1].label if k + 1 < len(fn.blocks) else None
        out.append(f"{block.label}:" + ("  # handler" if block.handler else ""))
        instrs = block.instrs
        n = len(instrs)
        for j, i in enumerate(instrs):
            if i.op == "jmp" and j == n - 1 and _target(i) == nxt:
                continue  # falls through
            if (i.op == "jcc" and j == n - 2 and instrs[-1].op == "jmp"
                    and i.cond in NEGATE_ALL):
                t, f = _target(i), _target(instrs[-1])
                if t == nxt:
                    out.append(f"    j{NEGATE_ALL[i.cond]} {f}")
                    break
                if f != nxt and f in before and t not in before:  # a loop's back edge:
                    out.append(f"    j{NEGATE_ALL[i.cond]} {f}")  # the taken jcc,
                    out.append(f"    jmp {t}")  # the way out once
                    break
            out.extend(_comment(i, lines, last))
            text = instr_text(fn, i)
            out.append(f"    {text}" + (f"  # {i.comment}" if i.comment else ""))
    return out


def _target(i: MInstr) -> str | None:
    o = i.operands[0] if i.operands else None
    return o.name if isinstance(o, LabelRef) else None


def program_text(program: MProgram, lines: list[str] | None = None) -> str:
    """The code of every function, ready to be placed after the runtime's header."""
    out = [".intel_syntax noprefix", ".text"]
    for fn in program.functions.values():
        out.extend(function_text(fn, lines))
    return "\n".join(out) + "\n"


__all__ = ["Imm", "VReg", "function_text", "instr_text", "program_text"]
