"""Small helpers to write machine IR by hand in tests (the instruction selector's job in
the real pipeline): each returns an MInstr with its defs and uses filled in."""

from __future__ import annotations

from ssa_course.codegen.mir import (
    Imm,
    LabelRef,
    MBlock,
    MFunction,
    MInstr,
    PReg,
    VReg,
)
from ssa_course.codegen.x86_64.registers import ARG_REGS, CALLER_SAVED

RAX, RDX, RDI, RSI = PReg("rax"), PReg("rdx"), PReg("rdi"), PReg("rsi")


def regs(*operands) -> list:
    return [o for o in operands if isinstance(o, VReg | PReg)]


def mov(dst, src) -> MInstr:
    return MInstr("mov", [dst, src], regs(dst), regs(src))


def imm(dst, value: int) -> MInstr:
    return mov(dst, Imm(value))


def arith(op: str, dst, src) -> MInstr:
    """``op dst, src``: dst is read and written (two-address x86)."""
    return MInstr(op, [dst, src], [dst], regs(dst, src))


def cmp(a, b) -> MInstr:
    return MInstr("cmp", [a, b], [], regs(a, b))


def jcc(cond: str, label: str) -> MInstr:
    return MInstr("jcc", [LabelRef(label)], cond=cond)


def jmp(label: str) -> MInstr:
    return MInstr("jmp", [LabelRef(label)])


def ret() -> MInstr:
    return MInstr("ret", [], [], [RAX])


def call(symbol: str, nargs: int) -> MInstr:
    """A System V call: reads the first ``nargs`` argument registers, clobbers every
    caller-saved register (the result is in rax)."""
    return MInstr("call", [LabelRef(symbol)], [PReg(r) for r in CALLER_SAVED],
                  [PReg(r) for r in ARG_REGS[:nargs]])


def cqo() -> MInstr:
    return MInstr("cqo", [], [RDX], [RAX])


def idiv(divisor) -> MInstr:
    return MInstr("idiv", [divisor], [RAX, RDX], [RAX, RDX, divisor])


class Builder:
    """Numbered vregs and blocks of one function."""

    def __init__(self, name: str = "f"):
        self.fn = MFunction(name, [])
        self.count = 0

    def v(self, hint: str = "") -> VReg:
        self.count += 1
        return VReg(self.count, hint)

    def block(self, label: str, instrs: list[MInstr], succs: list[str] | None = None,
              handler: bool = False) -> MBlock:
        block = MBlock(label, list(instrs), list(succs or []), handler)
        self.fn.blocks.append(block)
        return block
