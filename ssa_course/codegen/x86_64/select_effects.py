"""The x86-64 side of :mod:`ssa_course.codegen.select_effects`: how an array element is
reached and checked, an array kept in the frame, stack arguments (System V: pushed right
to left, ``rsp`` 16-byte aligned at the call).

Arrays: a reference points at the length (a qword); element ``k`` lies at ``w * k + 8``,
``w`` its width (8 bytes, 1 for a ``[bool]``: ``movzx``/``mov byte ptr``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ssa_course.codegen.minstr import fits32
from ssa_course.codegen.mir import Imm, LabelRef, Mem, PReg, VReg
from ssa_course.codegen.runtime_abi import CODE
from ssa_course.codegen.select_effects import Effects
from ssa_course.quads.ir import Instr

if TYPE_CHECKING:
    from ssa_course.codegen.isel import Selector

RAX, RSP = PReg("rax"), PReg("rsp")
TRAP_BOUNDS, TRAP_UNSET = CODE["index out of bounds"], CODE["unset element"]


def _store(sel: Selector, addr: Mem, name: str, width: int) -> None:
    if width == 8:
        sel.emit("mov", addr, sel.val(name))
        return
    c = sel.const(name)  # a bool: 0 or 1
    value = Imm(c) if c is not None else sel.reg(name)
    sel.emit("movb", addr, value)  # pattern: a bool element is a byte


def _bounds(sel: Selector, i: Instr, ra: VReg, index: str, width: int) -> Mem:
    """Check ``index`` against the length (one unsigned compare catches negatives too);
    the address of the element. An access lesson 09 proved in bounds is not tested."""
    if i.in_bounds:
        c = sel.const(index)
        if c is not None and c >= 0 and fits32(width * c + 8):
            return Mem(ra, disp=width * c + 8)
        folded = _offset(sel, index)
        if folded is not None and fits32(width * folded[1] + 8):
            # insertion_sort's `a[j + 1]`: no lea; once nothing else reads j + 1,
            # dead-code removal takes it.  # pattern: index x + c -> displacement
            return Mem(ra, sel.reg(folded[0]), scale=width, disp=width * folded[1] + 8)
        return Mem(ra, sel.reg(index), scale=width, disp=8)  # pattern: proven in bounds
    stub = sel.trap_stub(TRAP_BOUNDS, i)
    c = sel.const(index)
    if c is not None and c >= 0 and fits32(width * c + 8):  # pattern: constant index
        sel.emit("cmp", Mem(ra), Imm(c))
        sel.emit("jcc", LabelRef(stub), cond="be")
        return Mem(ra, disp=width * c + 8)
    ri = sel.reg(index)
    sel.emit("cmp", ri, Mem(ra))  # pattern: bounds check
    sel.emit("jcc", LabelRef(stub), cond="ae")
    return Mem(ra, ri, scale=width, disp=8)


def _offset(sel: Selector, index: str) -> tuple[str, int] | None:
    """(x, c) when ``index`` is ``x + c`` or ``x - c`` for a constant c (x not one)."""
    # x still holds its value wherever index is used: index's definition dominates the
    # use and x's dominates index's, so every path from a redefinition of x's register
    # (a phi copy, on an edge into x's block) to the use passes index's definition again.
    d = sel.defs.get(index)
    if d is None or d.op not in ("add", "sub") or len(d.args) != 2:
        return None
    x, y = d.args
    cx, cy = sel.const(x), sel.const(y)
    if cy is not None and cx is None:
        return x, cy if d.op == "add" else -cy
    if cx is not None and cy is None and d.op == "add":
        return y, cx
    return None


def _unset_check(sel: Selector, d: VReg, i: Instr) -> None:
    sel.emit("test", d, d)  # pattern: unset check
    sel.emit("jcc", LabelRef(sel.trap_stub(TRAP_UNSET, i)), cond="e")


def _stack_array(sel: Selector, i: Instr, length: int, width: int) -> None:
    """Frame slots hold ``[length][elements...]`` (one slot per element, or per 8 bytes of
    a ``[bool]``), zeroed afresh each time the ``newarr`` runs. Slot ``k`` lies below slot
    ``k - 1``, so the array starts at the last."""
    # Re-zeroed on every run of the newarr: a loop's second array must look new (unset
    # slots read as 0), exactly like a fresh heap array.
    words = (length * width + 7) // 8
    first = [sel.mfn.new_slot() for _ in range(words + 1)][-1]
    d = sel.dest(i)
    sel.emit("lea", d, first)
    sel.emit("mov", Mem(d), Imm(length))
    for k in range(1, words + 1):
        sel.emit("mov", Mem(d, disp=8 * k), Imm(0))


def _stack_args(sel: Selector, args: list[str]) -> int:
    pad = len(args) % 2  # keep rsp 16-byte aligned at the call
    if pad:
        sel.emit("sub", RSP, Imm(8))
    for arg in reversed(args):  # pattern: stack arguments right to left
        sel.emit("push", sel.val(arg))
    return 8 * (len(args) + pad)


# System V: the caller pops stack arguments (the callee's `ret` takes no byte count).
def _release(sel: Selector, size: int) -> None:
    sel.emit("add", RSP, Imm(size))


EFFECTS = Effects(
    result=RAX, load="mov", load_byte="movzx", length_disp=0, store=_store, element=_bounds,
    unset_check=_unset_check, stack_array=_stack_array, stack_args=_stack_args,
    release=_release,
    # System V: float arguments in xmm0-xmm7, a float result in xmm0; movq copies the
    # bits between them and the general registers floats live in (float_abi)
    float_args=tuple(f"xmm{k}" for k in range(8)), float_result=PReg("xmm0"),
    float_move="movq")
