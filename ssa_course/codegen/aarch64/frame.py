"""The AArch64 stack frame: prologue, epilogue, slot addresses, the depth check.

From the caller's stack pointer down::

    [x29 + 16 + 8k]   stack argument k+8 (stored by the caller below its sp)
    [x29 + 8]         x30, the return address (bl put it in the link register)
    [x29]             the caller's x29
    [x29 - 8(j+1)]    saved callee-saved register j
    [x29 - 8(saved + k + 1)]   slot k
    sp                16-byte aligned (AAPCS64 requires it at every access through sp)

The prologue is ``stp x29, x30, [sp, #-16]!`` (store the pair and move sp, one
instruction), ``mov x29, sp``, ``sub sp, sp, #N``, the callee-saved registers stored in
pairs, then the call depth counted down in x28 (``subs`` + ``b.mi rt_stack_overflow``).
"""

from __future__ import annotations

from ssa_course.codegen.aarch64.minstr import ins
from ssa_course.codegen.aarch64.registers import DEPTH_REG, FP, LR, SP
from ssa_course.codegen.mir import Imm, LabelRef, Mem, MFunction, MInstr, PReg, Slot


def frame_size(fn: MFunction) -> int:
    """Bytes below x29: saved registers and slots, rounded up to 16."""
    return (8 * (len(fn.used_callee_saved) + fn.slots) + 15) // 16 * 16


def slot_address(fn: MFunction, slot: Slot) -> Mem:
    return Mem(FP, disp=-8 * (len(fn.used_callee_saved) + slot.index + 1))


def _saved_pairs(fn: MFunction) -> list[tuple[PReg, PReg | None, int]]:
    """(register, its pair or None, offset of the lower one from x29)."""
    regs = [PReg(r) for r in fn.used_callee_saved]
    out = []
    for j in range(0, len(regs), 2):
        if j + 1 < len(regs):
            out.append((regs[j + 1], regs[j], -8 * (j + 2)))
        else:
            out.append((regs[j], None, -8 * (j + 1)))
    return out


def prologue(fn: MFunction) -> list[MInstr]:
    out = [ins("stp!", FP, LR, Mem(SP, disp=-16)), ins("mov", FP, SP)]
    size = frame_size(fn)
    if size:
        out.append(ins("sub", SP, SP, Imm(size)))
    for low, high, off in _saved_pairs(fn):
        out.append(ins("stp", low, high, Mem(FP, disp=off)) if high is not None
                   else ins("str", low, Mem(FP, disp=off)))
    out.append(ins("subs", DEPTH_REG, DEPTH_REG, Imm(1), comment="depth"))
    out.append(ins("jcc", LabelRef("rt_stack_overflow"), cond="mi"))
    return out


def epilogue(fn: MFunction, ret: MInstr) -> list[MInstr]:
    out = [ins("add", DEPTH_REG, DEPTH_REG, Imm(1))]
    for low, high, off in _saved_pairs(fn):
        out.append(ins("ldp", low, high, Mem(FP, disp=off)) if high is not None
                   else ins("ldr", low, Mem(FP, disp=off)))
    out += [ins("mov", SP, FP), ins("ldp+", FP, LR, Mem(SP, disp=16)), ret]
    return out


def layout(fn: MFunction) -> None:
    """Give ``fn`` (allocated) its prologue, epilogues and slot addresses."""
    for block in fn.blocks:
        new: list[MInstr] = []
        for instr in block.instrs:
            for k, o in enumerate(instr.operands):
                if isinstance(o, Slot):
                    instr.operands[k] = slot_address(fn, o)
            if instr.op == "ret":
                new.extend(epilogue(fn, instr))
            else:
                new.append(instr)
        block.instrs = new
    fn.blocks[0].instrs[:0] = prologue(fn)
