"""The AArch64 side of :mod:`ssa_course.codegen.select_effects`: how an array element is
reached and checked (the length loaded once per loop where it can be), an array kept in
the frame, stack arguments (AAPCS64: eight argument registers, the rest in an area below
``sp``), stores with the zero register.

Arrays: a reference points at element 0; the length is the qword just below it
(``ldur len, [a, #-8]``), so an element is one ``ldr x, [a, i, lsl #3]``, or for a
``[bool]`` (a byte an element) ``ldrb w, [a, i]``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ssa_course.codegen.aarch64.immediates import arith_imm
from ssa_course.codegen.aarch64.registers import FLOAT_ARGS, FLOAT_RESULT, SP
from ssa_course.codegen.aarch64.select import hoisted_length
from ssa_course.codegen.mir import Imm, LabelRef, Mem, PReg, VReg
from ssa_course.codegen.runtime_abi import CODE
from ssa_course.codegen.select_effects import Effects
from ssa_course.quads.ir import Instr

if TYPE_CHECKING:
    from ssa_course.codegen.isel import Selector

X0, XZR = PReg("x0"), PReg("xzr")
TRAP_BOUNDS, TRAP_UNSET = CODE["index out of bounds"], CODE["unset element"]
MAX_OFFSET = 4095  # ldr/str x, [base, #imm12 * 8]; ldrb/strb w, [base, #imm12]


def _stored(sel: Selector, name: str) -> VReg | PReg:
    """A value to store: a register (0 is the zero register, xzr)."""
    return XZR if sel.const(name) == 0 else sel.reg(name)


def _store(sel: Selector, addr: Mem, name: str, width: int) -> None:
    if width == 1:  # pattern: a bool element is a byte
        sel.emit("strb", _stored(sel, name), addr)
        return
    sel.emit("str", _stored(sel, name), addr)


def _element(sel: Selector, i: Instr, ra: VReg, index: str, width: int) -> Mem:
    """Check ``index`` against the length (one unsigned compare catches negatives too);
    the element's address. An access lesson 09 proved in bounds is not tested."""
    c = sel.const(index)
    if c is not None and not 0 <= c <= MAX_OFFSET:
        c = None  # a constant too big for the scaled offset: a register index
    if not i.in_bounds:
        stub = sel.trap_stub(TRAP_BOUNDS, i)
        n = hoisted_length(sel, i.args[0])  # pattern: loop-invariant length, loaded once
        if n is None:
            n = sel.new_vreg("len")
            sel.emit("ldr", n, Mem(ra, disp=-8))
        if c is not None and arith_imm(c) is not None:  # pattern: constant index
            sel.emit("cmp", n, Imm(c))
            sel.emit("jcc", LabelRef(stub), cond="ls")
        else:
            sel.emit("cmp", sel.reg(index), n)  # pattern: bounds check
            sel.emit("jcc", LabelRef(stub), cond="hs")
    if c is not None:
        return Mem(ra, disp=width * c)
    return Mem(ra, sel.reg(index), scale=width)  # pattern: proven in bounds


def _unset_check(sel: Selector, d: VReg, i: Instr) -> None:
    stub = sel.trap_stub(TRAP_UNSET, i)
    sel.emit("jcc", LabelRef(stub), d, cond="z")  # pattern: unset check -> cbz


def _stack_array(sel: Selector, i: Instr, length: int, width: int) -> None:
    """Slot k + 1 lies 8 bytes above slot k (frame.slot_address): the length in the
    first, the elements above it (a slot each, or each 8 bytes of a ``[bool]``)."""
    words = (length * width + 7) // 8
    slots = [sel.mfn.new_slot() for _ in range(words + 1)]
    d = sel.dest(i)
    sel.emit("lea", d, slots[1] if words else slots[0])
    if not words:  # no elements: the reference points just above the length
        sel.emit("add", d, d, Imm(8))
    n = sel.materialise(length) if length else XZR
    sel.emit("str", n, Mem(d, disp=-8))
    for k in range(words):
        sel.emit("str", XZR, Mem(d, disp=8 * k))


def _stack_args(sel: Selector, args: list[str]) -> int:
    area = (8 * len(args) + 15) // 16 * 16  # sp stays 16-byte aligned
    if area:  # pattern: stack arguments in an area below sp
        sel.emit("sub", SP, SP, Imm(area))
        for k, arg in enumerate(args):
            sel.emit("str", _stored(sel, arg), Mem(SP, disp=8 * k))
    return area


def _release(sel: Selector, size: int) -> None:
    sel.emit("add", SP, SP, Imm(size))


EFFECTS = Effects(
    result=X0, load="ldr", load_byte="ldrb", length_disp=-8, store=_store, element=_element,
    unset_check=_unset_check, stack_array=_stack_array, stack_args=_stack_args,
    release=_release,
    # AAPCS64: float arguments in d0-d7, a float result in d0; fmov copies the bits
    float_args=FLOAT_ARGS, float_result=FLOAT_RESULT, float_move="fmov")
