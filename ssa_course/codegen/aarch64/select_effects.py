"""What memory, calls, output and exceptions become on AArch64 (the other half of
:mod:`.select_ops`): array and struct access with Tiny's checks, runtime calls with
``bl``, AAPCS64 calls (eight argument registers, the rest on the stack), try/catch/throw.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ssa_course.codegen.aarch64.immediates import arith_imm
from ssa_course.codegen.aarch64.registers import ARG_REGS, SP
from ssa_course.codegen.mir import Imm, LabelRef, Mem, PReg, VReg
from ssa_course.codegen.names import call_symbol
from ssa_course.codegen.patterns import CodegenError
from ssa_course.codegen.runtime_abi import CODE
from ssa_course.quads.ir import Instr
from ssa_course.tiny.types import BOOL, ArrayType

if TYPE_CHECKING:
    from ssa_course.codegen.aarch64.select import A64Selector

X0, X1, XZR = PReg("x0"), PReg("x1"), PReg("xzr")
TRAP_BOUNDS, TRAP_UNSET = CODE["index out of bounds"], CODE["unset element"]
MAX_SCALED = 4095 * 8  # ldr/str x, [base, #imm12 * 8]


def _stored(sel: A64Selector, name: str) -> VReg | PReg:
    """A value to store: a register (0 is the zero register, xzr)."""
    return XZR if sel.const(name) == 0 else sel.reg(name)


def _element(sel: A64Selector, i: Instr, ra: VReg, index: str) -> Mem:
    """Check ``index`` against the length (one unsigned compare catches negatives too);
    the element's address. An access lesson 09 proved in bounds is not tested."""
    c = sel.const(index)
    if c is not None and not 0 <= 8 * c <= MAX_SCALED:
        c = None  # a constant too big for the scaled offset: a register index
    if not i.in_bounds:
        stub = sel.trap_stub(TRAP_BOUNDS, i)
        n = sel.hoisted_length(i.args[0])  # pattern: loop-invariant length, loaded once
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
        return Mem(ra, disp=8 * c)
    return Mem(ra, sel.reg(index), scale=8)  # pattern: proven in bounds


def s_aload(sel: A64Selector, i: Instr) -> None:
    ra = sel.reg(i.args[0])
    addr = _element(sel, i, ra, i.args[1])
    d = sel.dest(i)
    sel.emit("ldr", d, addr)
    t = sel.types.get(i.args[0])
    if isinstance(t, ArrayType) and t.elem.is_ref():  # pattern: unset check -> cbz
        sel.emit("jcc", LabelRef(sel.trap_stub(TRAP_UNSET, i)), d, cond="z")


def s_astore(sel: A64Selector, i: Instr) -> None:
    ra = sel.reg(i.args[0])
    addr = _element(sel, i, ra, i.args[1])
    sel.emit("str", _stored(sel, i.args[2]), addr)


def s_alen(sel: A64Selector, i: Instr) -> None:
    sel.emit("ldr", sel.dest(i), Mem(sel.reg(i.args[0]), disp=-8))


def s_newarr(sel: A64Selector, i: Instr) -> None:
    site = len(sel.sites)
    sel.sites.append((i.pos.line, i.pos.col) if i.pos else (0, 0))
    sel.emit("mov", X0, sel.val(i.args[0]))
    sel.emit("mov", X1, Imm(site))
    length = sel.stack.get(id(i))
    if length is not None:  # pattern: an array that never escapes, in the frame
        sel.call("rt_charge_array", 2)
        # slot k + 1 lies 8 bytes above slot k (frame.slot_address): the length in the
        # first, the elements above it
        slots = [sel.mfn.new_slot() for _ in range(length + 1)]
        d = sel.dest(i)
        sel.emit("lea", d, slots[1] if length else slots[0])
        if not length:  # no elements: the reference points just above the length
            sel.emit("add", d, d, Imm(8))
        n = sel.materialise(length) if length else XZR
        sel.emit("str", n, Mem(d, disp=-8))
        for k in range(length):
            sel.emit("str", XZR, Mem(d, disp=8 * k))
        return
    sel.call("rt_new_array", 2)
    sel.emit("mov", sel.dest(i), X0)


def _field_offset(sel: A64Selector, ref: str, field: str | None) -> int:
    t = sel.types.get(ref)
    struct = sel.program.structs.get(str(t))
    names = [f for f, _ in struct.fields] if struct else []
    if field not in names:
        raise CodegenError(f"@{sel.fn.name}: unknown field '{field}' of '{t}'")
    return 8 * names.index(field)


def s_newstruct(sel: A64Selector, i: Instr) -> None:
    sel.emit("mov", X0, Imm(len(i.args)))
    sel.call("rt_new_struct", 1)
    d = sel.dest(i)
    sel.emit("mov", d, X0)
    for k, arg in enumerate(i.args):
        sel.emit("str", _stored(sel, arg), Mem(d, disp=8 * k))


def s_getf(sel: A64Selector, i: Instr) -> None:
    off = _field_offset(sel, i.args[0], i.field)
    sel.emit("ldr", sel.dest(i), Mem(sel.reg(i.args[0]), disp=off))


def s_setf(sel: A64Selector, i: Instr) -> None:
    off = _field_offset(sel, i.args[0], i.field)
    sel.emit("str", _stored(sel, i.args[1]), Mem(sel.reg(i.args[0]), disp=off))


def s_print(sel: A64Selector, i: Instr) -> None:
    for k, arg in enumerate(i.args):
        if k:
            sel.call("rt_print_space")
        sel.emit("mov", X0, sel.val(arg))
        sel.call("rt_print_bool" if sel.types.get(arg) == BOOL else "rt_print_int", 1)
    sel.call("rt_print_newline")


def s_call(sel: A64Selector, i: Instr) -> None:
    n = len(i.args)
    extra = max(0, n - len(ARG_REGS))
    area = (8 * extra + 15) // 16 * 16  # sp stays 16-byte aligned
    if area:  # pattern: stack arguments in an area below sp
        sel.emit("sub", SP, SP, Imm(area))
        for k, arg in enumerate(i.args[len(ARG_REGS):]):
            sel.emit("str", _stored(sel, arg), Mem(SP, disp=8 * k))
    for k, arg in enumerate(i.args[:len(ARG_REGS)]):
        sel.emit("mov", PReg(ARG_REGS[k]), sel.val(arg))
    sel.call(call_symbol(i.funcs[0]), min(n, len(ARG_REGS)))
    if area:
        sel.emit("add", SP, SP, Imm(area))
    if i.dest is not None:
        sel.emit("mov", sel.dest(i), X0)


def s_ret(sel: A64Selector, i: Instr) -> None:
    if i.args:
        sel.emit("mov", X0, sel.val(i.args[0]))
        sel.emit("ret", uses=(X0,))
    else:
        sel.emit("ret")
    sel.cur.succs = []


def s_jmp(sel: A64Selector, i: Instr) -> None:
    sel.end_jump(sel.label(i.labels[0]))


def s_enter(sel: A64Selector, i: Instr) -> None:
    body, handler = sel.label(i.labels[0]), sel.label(i.labels[1])
    sel.emit("lea", X0, Mem(symbol=handler))  # adr x0, handler
    sel.call("rt_enter", 1)
    sel.emit("jmp", LabelRef(body))
    sel.cur.succs = [body, handler]


def s_leave(sel: A64Selector, i: Instr) -> None:
    sel.call("rt_leave")


def s_throw(sel: A64Selector, i: Instr) -> None:
    sel.emit("mov", X0, sel.val(i.args[0]))
    sel.call("rt_throw", 1)
    sel.cur.succs = []


def s_catch(sel: A64Selector, i: Instr) -> None:
    sel.emit("mov", sel.dest(i), X0)  # the thrown value arrives in x0
