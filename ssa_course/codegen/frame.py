"""The stack frame: prologue, epilogue, slot addresses, and the two limit checks.

After register allocation a function knows how many stack slots it uses and which
callee-saved registers it writes. Its frame, from the caller's return address down::

    [rbp + 16 + 8k]  stack argument k+6 (pushed by the caller)
    [rbp + 8]        return address
    [rbp]            the caller's rbp
    [rbp - 8*(j+1)]  saved callee-saved register j
    [rbp - 8*(k+1) - 8*saved]   slot k
    rsp              16-byte aligned (the call pushed 8, ``push rbp`` 8 more, the rest
                     is rounded to 16), so every ``call`` in the body is aligned

The prologue also counts the call depth down (in r15, see :data:`DEPTH_REG`; the epilogue
counts it back up) and every function entry and loop header burns fuel (``rt_fuel``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ssa_course.codegen.minstr import ins
from ssa_course.codegen.mir import Imm, LabelRef, Mem, MFunction, MInstr, PReg, Slot

if TYPE_CHECKING:
    from ssa_course.codegen.isel import Selector

RBP, RSP = PReg("rbp"), PReg("rsp")
# The call depth left lives in r15 (never allocated): a counter in memory would cost a
# store-to-load round trip on every call and return. A throw lands in a handler with
# r15 as it was at that try's rt_enter (the runtime's record keeps rbx, r12-r15).
DEPTH_REG = PReg("r15")


def fuel_check(sel: Selector, steps: int) -> None:
    """``sub qword ptr [rip + rt_fuel], K; js rt_step_limit`` (K quads of this block)."""
    sel.emit("sub", Mem(symbol="rt_fuel"), Imm(steps), comment="fuel")
    sel.emit("jcc", LabelRef("rt_step_limit"), cond="s")


def frame_size(fn: MFunction) -> int:
    """Bytes below the saved registers: the slots, rounded so rsp stays 16-aligned."""
    size = 8 * fn.slots
    if (size + 8 * len(fn.used_callee_saved)) % 16:
        size += 8
    return size


def slot_address(fn: MFunction, slot: Slot) -> Mem:
    return Mem(RBP, disp=-8 * (slot.index + 1) - 8 * len(fn.used_callee_saved))


def prologue(fn: MFunction) -> list[MInstr]:
    out = [ins("push", RBP), ins("mov", RBP, RSP)]
    out += [ins("push", PReg(r)) for r in fn.used_callee_saved]
    size = frame_size(fn)
    if size:
        out.append(ins("sub", RSP, Imm(size)))
    out.append(ins("sub", DEPTH_REG, Imm(1), comment="depth"))
    out.append(ins("jcc", LabelRef("rt_stack_overflow"), cond="s"))
    return out


def epilogue(fn: MFunction, ret: MInstr) -> list[MInstr]:
    saved = len(fn.used_callee_saved)
    out = [ins("add", DEPTH_REG, Imm(1))]
    # At a ret rsp is where the prologue left it (stack arguments are popped right after
    # their call; a throw lands with the rsp rt_enter saw), so only the slots are freed.
    size = frame_size(fn)
    if size:
        out.append(ins("lea", RSP, Mem(RBP, disp=-8 * saved)) if saved
                   else ins("mov", RSP, RBP))
    out += [ins("pop", PReg(r)) for r in reversed(fn.used_callee_saved)]
    out += [ins("pop", RBP), ret]
    return out


def layout(fn: MFunction) -> None:
    """Give ``fn`` (allocated: no VRegs left) its prologue, epilogues and slot addresses.

    A function with a handler needs nothing more: the runtime gives a handler back the
    callee-saved registers as they were at its ``rt_enter`` (the epilogues a throw skips
    would have restored them).
    """
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
