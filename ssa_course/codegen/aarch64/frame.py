"""The AArch64 stack frame: prologue, epilogue, slot addresses, the depth check.

The frame pointer x29 points at the *bottom* of the frame, as gcc lays it out; from the
caller's stack pointer down::

    [x29 + F + 8k]             stack argument k+8 (the caller stored it below its sp)
    [x29 + 16 + 8*saved + 8k]  slot k
    [x29 + 16 + 8j]            saved callee-saved register j
    [x29 + 8]                  x30, the return address (bl put it in the link register)
    [x29] = sp                 the caller's x29

F, the frame's size, is a multiple of 16 (AAPCS64 keeps sp 16-byte aligned). The prologue
is one ``stp x29, x30, [sp, #-F]!`` (store the pair *and* move sp), ``mov x29, sp``, the
callee-saved registers stored in pairs, and the call depth counted down in x28 (``subs`` +
``b.mi rt_stack_overflow``); the epilogue mirrors it, ending ``ldp x29, x30, [sp], #F``
and ``ret`` (sp is back at x29 at every return: a call's stack arguments are popped right
after it, and a throw lands with the sp ``rt_enter`` saw). Incoming stack arguments are
addressed through :class:`Incoming` until the frame's size is known.
"""

from __future__ import annotations

from dataclasses import dataclass

from ssa_course.codegen.aarch64.minstr import ins
from ssa_course.codegen.aarch64.registers import DEPTH_REG, FP, LR, SP
from ssa_course.codegen.mir import Imm, LabelRef, Mem, MFunction, MInstr, PReg, Slot

MAX_PAIR_OFFSET = 504  # stp/ldp with writeback: a signed 7-bit count of 8 bytes


@dataclass(frozen=True, slots=True)
class Incoming:
    """Stack argument ``k`` (0 = the ninth argument), above this function's frame."""

    index: int

    def __str__(self) -> str:
        return f"incoming{self.index}"


def frame_size(fn: MFunction) -> int:
    """Bytes of the frame: x29/x30, saved registers and slots, rounded up to 16."""
    return 16 + (8 * (len(fn.used_callee_saved) + fn.slots) + 15) // 16 * 16


def slot_address(fn: MFunction, slot: Slot) -> Mem:
    return Mem(FP, disp=16 + 8 * (len(fn.used_callee_saved) + slot.index))


def _saved_pairs(fn: MFunction) -> list[tuple[PReg, PReg | None, int]]:
    """(register, the next one or None, its offset from x29)."""
    regs = [PReg(r) for r in fn.used_callee_saved]
    return [(regs[j], regs[j + 1] if j + 1 < len(regs) else None, 16 + 8 * j)
            for j in range(0, len(regs), 2)]


def prologue(fn: MFunction) -> list[MInstr]:
    size = frame_size(fn)
    if size <= MAX_PAIR_OFFSET:
        out = [ins("stp!", FP, LR, Mem(SP, disp=-size))]
    else:  # too far for one pre-indexed store: move sp first
        out = [ins("sub", SP, SP, Imm(size - 16)), ins("stp!", FP, LR, Mem(SP, disp=-16))]
    out.append(ins("mov", FP, SP))
    for first, second, off in _saved_pairs(fn):
        out.append(ins("stp", first, second, Mem(FP, disp=off)) if second is not None
                   else ins("str", first, Mem(FP, disp=off)))
    out.append(ins("subs", DEPTH_REG, DEPTH_REG, Imm(1), comment="depth"))
    out.append(ins("jcc", LabelRef("rt_stack_overflow"), cond="mi"))
    return out


def epilogue(fn: MFunction, ret: MInstr) -> list[MInstr]:
    size = frame_size(fn)
    out = [ins("add", DEPTH_REG, DEPTH_REG, Imm(1))]
    for first, second, off in _saved_pairs(fn):
        out.append(ins("ldp", first, second, Mem(FP, disp=off)) if second is not None
                   else ins("ldr", first, Mem(FP, disp=off)))
    if size <= MAX_PAIR_OFFSET:
        out.append(ins("ldp+", FP, LR, Mem(SP, disp=size)))
    else:
        out += [ins("ldp+", FP, LR, Mem(SP, disp=16)), ins("add", SP, SP, Imm(size - 16))]
    out.append(ret)
    return out


def layout(fn: MFunction) -> None:
    """Give ``fn`` (allocated) its prologue, epilogues and slot and argument addresses."""
    size = frame_size(fn)
    for block in fn.blocks:
        new: list[MInstr] = []
        for instr in block.instrs:
            for k, o in enumerate(instr.operands):
                if isinstance(o, Slot):
                    instr.operands[k] = slot_address(fn, o)
                elif isinstance(o, Incoming):
                    instr.operands[k] = Mem(FP, disp=size + 8 * o.index)
            if instr.op == "ret":
                new.extend(epilogue(fn, instr))
            else:
                new.append(instr)
        block.instrs = new
    fn.blocks[0].instrs[:0] = prologue(fn)
