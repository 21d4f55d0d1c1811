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
counts it back up), checks that rsp is above ``rt_stack_limit`` (the stack left, see
``runtime_abi.STACK_SLACK``), and every function entry and loop header burns fuel
(``rt_fuel``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ssa_course.codegen.frame_layout import lay_out
from ssa_course.codegen.mir import Imm, LabelRef, Mem, MFunction, MInstr, PReg, Slot
from ssa_course.codegen.x86_64.minstr import ins

if TYPE_CHECKING:
    from ssa_course.codegen.isel import Selector

RBP, RSP = PReg("rbp"), PReg("rsp")
# The call depth left lives in r15 (never allocated): a counter in memory would cost a
# store-to-load round trip on every call and return. A throw lands in a handler with
# r15 as it was at that try's rt_enter (the runtime's record keeps rbx, r12-r15).
DEPTH_REG = PReg("r15")


def fuel_check(sel: Selector, steps: int) -> None:
    """``sub qword ptr [rip + rt_fuel], K; js rt_step_limit`` (K quads of this block)."""
    # One memory subtract that sets the flags itself: the check costs two instructions
    # and no register, so it never disturbs allocation. Charging K steps at once keeps the
    # count close to the interpreters' without a check per quad.
    sel.emit("sub", Mem(symbol="rt_fuel"), Imm(steps), comment="fuel")
    sel.emit("jcc", LabelRef("rt_step_limit"), cond="s")


def frame_size(fn: MFunction) -> int:
    """Bytes below the saved registers: the slots, rounded so rsp stays 16-aligned."""
    # System V requires rsp % 16 == 0 at every call. On entry rsp % 16 == 8 (the return
    # address); push rbp makes it 0; so what follows (saved registers + slots) must be a
    # multiple of 16 -- one padding word when their count is odd.
    size = 8 * fn.slots
    if (size + 8 * len(fn.used_callee_saved)) % 16:
        size += 8
    return size


# rbp-relative, below the saved registers: rbp does not move while the body runs (rsp
# does, around pushes of stack arguments), so a slot's address is one constant.
def slot_address(fn: MFunction, slot: Slot) -> Mem:
    return Mem(RBP, disp=-8 * (slot.index + 1) - 8 * len(fn.used_callee_saved))


def prologue(fn: MFunction) -> list[MInstr]:
    # The classic frame-pointer prologue: rbp stays fixed for the whole body, so slots and
    # stack arguments have constant offsets while rsp moves. Then save exactly the
    # callee-saved registers the body writes
    # (the System V contract: the caller finds them unchanged).
    out = [ins("push", RBP), ins("mov", RBP, RSP)]
    out += [ins("push", PReg(r)) for r in fn.used_callee_saved]
    size = frame_size(fn)
    if size:
        out.append(ins("sub", RSP, Imm(size)))
    # The recursion limit: checked after the frame is built, so rt_stack_overflow reports
    # from a well-formed frame, with the interpreters' message ("stack overflow").
    out.append(ins("sub", DEPTH_REG, Imm(1), comment="depth"))
    out.append(ins("jcc", LabelRef("rt_stack_overflow"), cond="s"))
    # The stack left: below rt_stack_limit (set by _start; runtime_abi.STACK_SLACK) the
    # next call level could reach the guard, so that is "stack overflow" too -- the
    # interpreters' message, when a stack mapped smaller than the depth needs runs out.
    out.append(ins("cmp", RSP, Mem(symbol="rt_stack_limit"), comment="stack"))
    out.append(ins("jcc", LabelRef("rt_stack_overflow"), cond="b"))
    return out


def epilogue(fn: MFunction, ret: MInstr) -> list[MInstr]:
    # The prologue undone in reverse order: depth back up, slots freed, registers popped in
    # the opposite order they were pushed, then the caller's rbp. `ret` stays last.
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
    # Runs after allocation because only then are the slot count and the used
    # callee-saved registers final -- both fix where every slot sits.
    lay_out(fn, lambda o: slot_address(fn, o) if isinstance(o, Slot) else None,
            prologue, epilogue)
