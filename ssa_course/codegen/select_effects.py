"""What memory, calls, output and exceptions become (the other half of
:mod:`ssa_course.codegen.select_ops`): array and struct access with Tiny's checks, the
runtime's allocation and print entries, System V calls, returns, try/catch/throw.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ssa_course.codegen.minstr import fits32
from ssa_course.codegen.mir import ARG_REGS, Imm, LabelRef, Mem, PReg
from ssa_course.codegen.names import call_symbol
from ssa_course.codegen.patterns import CodegenError
from ssa_course.codegen.runtime_abi import CODE
from ssa_course.quads.ir import Instr
from ssa_course.tiny.types import BOOL, ArrayType

if TYPE_CHECKING:
    from ssa_course.codegen.isel import Selector

RAX, RDI, RSI, RSP = PReg("rax"), PReg("rdi"), PReg("rsi"), PReg("rsp")
TRAP_BOUNDS, TRAP_UNSET = CODE["index out of bounds"], CODE["unset element"]


def _bounds(sel: Selector, i: Instr, ra, index: str) -> Mem:
    """Check ``index`` against the length (one unsigned compare catches negatives too);
    the address of the element. An access lesson 09 proved in bounds is not tested."""
    if i.in_bounds:
        c = sel.const(index)
        if c is not None and c >= 0 and fits32(8 * c + 8):
            return Mem(ra, disp=8 * c + 8)
        return Mem(ra, sel.reg(index), scale=8, disp=8)  # pattern: proven in bounds
    stub = sel.trap_stub(TRAP_BOUNDS, i)
    c = sel.const(index)
    if c is not None and c >= 0 and fits32(8 * c + 8):  # pattern: constant index
        sel.emit("cmp", Mem(ra), Imm(c))
        sel.emit("jcc", LabelRef(stub), cond="be")
        return Mem(ra, disp=8 * c + 8)
    ri = sel.reg(index)
    sel.emit("cmp", ri, Mem(ra))  # pattern: bounds check
    sel.emit("jcc", LabelRef(stub), cond="ae")
    return Mem(ra, ri, scale=8, disp=8)


def s_aload(sel: Selector, i: Instr) -> None:
    ra = sel.reg(i.args[0])
    addr = _bounds(sel, i, ra, i.args[1])
    d = sel.dest(i)
    sel.emit("mov", d, addr)
    t = sel.types.get(i.args[0])
    if isinstance(t, ArrayType) and t.elem.is_ref():  # pattern: unset check
        sel.emit("test", d, d)
        sel.emit("jcc", LabelRef(sel.trap_stub(TRAP_UNSET, i)), cond="e")


def s_astore(sel: Selector, i: Instr) -> None:
    ra = sel.reg(i.args[0])
    addr = _bounds(sel, i, ra, i.args[1])
    sel.emit("mov", addr, sel.val(i.args[2]))


def s_alen(sel: Selector, i: Instr) -> None:
    sel.emit("mov", sel.dest(i), Mem(sel.reg(i.args[0])))


def s_newarr(sel: Selector, i: Instr) -> None:
    site = len(sel.sites)
    sel.sites.append((i.pos.line, i.pos.col) if i.pos else (0, 0))
    sel.emit("mov", RDI, sel.val(i.args[0]))
    sel.emit("mov", RSI, Imm(site))
    length = sel.stack.get(id(i))
    if length is not None:  # pattern: an array that never escapes, in the frame
        _stack_array(sel, i, length)
        return
    sel.call("rt_new_array", 2)
    sel.emit("mov", sel.dest(i), RAX)


def _stack_array(sel: Selector, i: Instr, length: int) -> None:
    """``length + 1`` frame slots hold ``[length][elements...]``: the budget is charged as
    for the heap (same site, same message), then the block is filled afresh each time the
    ``newarr`` runs. Slot ``k`` lies below slot ``k - 1``, so the array starts at the last."""
    sel.call("rt_charge_array", 2)
    first = [sel.mfn.new_slot() for _ in range(length + 1)][-1]
    d = sel.dest(i)
    sel.emit("lea", d, first)
    sel.emit("mov", Mem(d), Imm(length))
    for k in range(1, length + 1):
        sel.emit("mov", Mem(d, disp=8 * k), Imm(0))


def _field_offset(sel: Selector, ref: str, field: str | None) -> int:
    t = sel.types.get(ref)
    struct = sel.program.structs.get(str(t))
    names = [f for f, _ in struct.fields] if struct else []
    if field not in names:
        raise CodegenError(f"@{sel.fn.name}: unknown field '{field}' of '{t}'")
    return 8 * names.index(field)


def s_newstruct(sel: Selector, i: Instr) -> None:
    sel.emit("mov", RDI, Imm(len(i.args)))
    sel.call("rt_new_struct", 1)
    d = sel.dest(i)
    sel.emit("mov", d, RAX)
    for k, arg in enumerate(i.args):
        sel.emit("mov", Mem(d, disp=8 * k), sel.val(arg))


def s_getf(sel: Selector, i: Instr) -> None:
    off = _field_offset(sel, i.args[0], i.field)
    sel.emit("mov", sel.dest(i), Mem(sel.reg(i.args[0]), disp=off))


def s_setf(sel: Selector, i: Instr) -> None:
    off = _field_offset(sel, i.args[0], i.field)
    sel.emit("mov", Mem(sel.reg(i.args[0]), disp=off), sel.val(i.args[1]))


def s_print(sel: Selector, i: Instr) -> None:
    for k, arg in enumerate(i.args):
        if k:
            sel.call("rt_print_space")
        sel.emit("mov", RDI, sel.val(arg))
        sel.call("rt_print_bool" if sel.types.get(arg) == BOOL else "rt_print_int", 1)
    sel.call("rt_print_newline")


def s_call(sel: Selector, i: Instr) -> None:
    n = len(i.args)
    extra = max(0, n - len(ARG_REGS))
    pad = extra % 2  # keep rsp 16-byte aligned at the call
    if pad:
        sel.emit("sub", RSP, Imm(8))
    for arg in reversed(i.args[len(ARG_REGS):]):  # pattern: stack arguments right to left
        sel.emit("push", sel.val(arg))
    for k, arg in enumerate(i.args[:len(ARG_REGS)]):
        sel.emit("mov", PReg(ARG_REGS[k]), sel.val(arg))
    sel.call(call_symbol(i.funcs[0]), min(n, len(ARG_REGS)))
    if extra + pad:
        sel.emit("add", RSP, Imm(8 * (extra + pad)))
    if i.dest is not None:
        sel.emit("mov", sel.dest(i), RAX)


def s_ret(sel: Selector, i: Instr) -> None:
    if i.args:
        sel.emit("mov", RAX, sel.val(i.args[0]))
        sel.emit("ret", uses=(RAX,))
    else:
        sel.emit("ret")
    sel.cur.succs = []


def s_jmp(sel: Selector, i: Instr) -> None:
    sel.end_jump(sel.label(i.labels[0]))


def s_enter(sel: Selector, i: Instr) -> None:
    body, handler = sel.label(i.labels[0]), sel.label(i.labels[1])
    sel.emit("lea", RDI, Mem(symbol=handler))
    sel.call("rt_enter", 1)
    sel.emit("jmp", LabelRef(body))
    sel.cur.succs = [body, handler]


def s_leave(sel: Selector, i: Instr) -> None:
    sel.call("rt_leave")


def s_throw(sel: Selector, i: Instr) -> None:
    sel.emit("mov", RDI, sel.val(i.args[0]))
    sel.call("rt_throw", 1)
    sel.cur.succs = []


def s_catch(sel: Selector, i: Instr) -> None:
    sel.emit("mov", sel.dest(i), RAX)  # the thrown value arrives in rax
