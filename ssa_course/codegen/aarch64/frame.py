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
from ssa_course.codegen.aarch64.registers import DEPTH_REG, FP, LR, SCRATCH0, SP
from ssa_course.codegen.frame_layout import lay_out
from ssa_course.codegen.mir import Imm, LabelRef, Mem, MFunction, MInstr, PReg, Slot

MAX_PAIR_OFFSET = 504  # stp/ldp with writeback: a signed 7-bit count of 8 bytes
STACK_LIMIT_REG = PReg("x18")  # the stack limit, set by _start (runtime_abi.STACK_SLACK)


@dataclass(frozen=True, slots=True)
class Incoming:
    """Stack argument ``k`` (0 = the ninth argument), above this function's frame."""

    # A placeholder operand, like Slot: its x29 offset depends on the frame size, which
    # is only known after allocation (spill slots, callee-saved registers used).
    index: int

    def __str__(self) -> str:
        return f"incoming{self.index}"


def frame_size(fn: MFunction) -> int:
    """Bytes of the frame: x29/x30, saved registers and slots, rounded up to 16."""
    # 16 for the x29/x30 pair, then saves and slots rounded up: AAPCS64 keeps sp 16-byte
    # aligned at all times (the hardware may fault on a misaligned sp base), not only at calls.
    return 16 + (8 * (len(fn.used_callee_saved) + fn.slots) + 15) // 16 * 16


# Positive offsets from x29 (it points at the frame's bottom, gcc's layout), which suits
# AArch64's `ldr/str [x29, #imm]`: a scaled *unsigned* 12-bit offset (negative ones only
# reach -256). x86-64's rbp, at the frame's top, counts downward instead.
def slot_address(fn: MFunction, slot: Slot) -> Mem:
    return Mem(FP, disp=16 + 8 * (len(fn.used_callee_saved) + slot.index))


def _saved_pairs(fn: MFunction) -> list[tuple[PReg, PReg | None, int]]:
    """(register, the next one or None, its offset from x29)."""
    # Pairs, because stp/ldp move two registers in one instruction; an odd count leaves a
    # last single str/ldr.
    regs = [PReg(r) for r in fn.used_callee_saved]
    return [(regs[j], regs[j + 1] if j + 1 < len(regs) else None, 16 + 8 * j)
            for j in range(0, len(regs), 2)]


def prologue(fn: MFunction) -> list[MInstr]:
    size = frame_size(fn)
    # Pre-indexed stp: allocate the whole frame and save x29/x30 in one instruction; the
    # caller's x30 must be saved before this function's first `bl` overwrites it.
    if size <= MAX_PAIR_OFFSET:
        out = [ins("stp!", FP, LR, Mem(SP, disp=-size))]
    else:  # too far for one pre-indexed store: move sp first
        out = [ins("sub", SP, SP, Imm(size - 16)), ins("stp!", FP, LR, Mem(SP, disp=-16))]
    out.append(ins("mov", FP, SP))
    for first, second, off in _saved_pairs(fn):
        out.append(ins("stp", first, second, Mem(FP, disp=off)) if second is not None
                   else ins("str", first, Mem(FP, disp=off)))
    # `subs` sets the flags, `b.mi` branches when the count went negative: the x86-64
    # `sub r15, 1; js` pair in AArch64 form.
    out.append(ins("subs", DEPTH_REG, DEPTH_REG, Imm(1), comment="depth"))
    out.append(ins("jcc", LabelRef("rt_stack_overflow"), cond="mi"))
    # The stack left, as on x86-64, against the limit _start keeps in x18 (the platform
    # register, never allocated; 0 when the OS stack is used): sp cannot be cmp's first
    # operand in every assembler, so it is copied to the scratch x16 first.
    out.append(ins("mov", SCRATCH0, SP))
    out.append(ins("cmp", SCRATCH0, STACK_LIMIT_REG, comment="stack"))
    out.append(ins("jcc", LabelRef("rt_stack_overflow"), cond="lo"))
    return out


def epilogue(fn: MFunction, ret: MInstr) -> list[MInstr]:
    # The prologue's mirror: registers reloaded from x29 (sp == x29 here), then one
    # post-indexed ldp restores x29/x30 and frees the frame.
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
    """Give ``fn`` (allocated) its prologue, epilogues and slot and argument addresses
    (the walk is the shared :func:`ssa_course.codegen.frame_layout.lay_out`; the addresses, the
    prologue and the epilogue are AArch64's)."""
    size = frame_size(fn)

    def address(o: object) -> Mem | None:
        if isinstance(o, Slot):
            return slot_address(fn, o)
        if isinstance(o, Incoming):
            # The caller's stack arguments start where this frame ends.
            return Mem(FP, disp=size + 8 * o.index)
        return None

    lay_out(fn, address, prologue, epilogue)
