"""What memory, calls, output and exceptions become, on both targets (the other half of
each target's ``select_ops``): array and struct access with Tiny's checks, the runtime's
allocation and print entries, calls, returns, try/catch/throw.

The shapes are the same on x86-64 and AArch64 -- a call of a runtime entry with its
arguments in the first argument registers, a struct's fields at 8-byte offsets, a thrown
value arriving in the result register. What differs is a target's :class:`Effects`: its
registers and load op (data), and small hooks for what has another shape there (a
store's operand order, an element's address after the bounds check, the unset check, an
array kept in the frame, stack arguments). The x86-64 hooks are in
:mod:`ssa_course.codegen.x86_64.select_effects`, the AArch64 ones in
:mod:`ssa_course.codegen.aarch64.select_effects`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ssa_course.codegen.float_abi import (
    call_places,
    float_result,
    from_float_register,
    is_float,
    to_float_register,
)
from ssa_course.codegen.mir import Imm, LabelRef, Mem, PReg, VReg
from ssa_course.codegen.names import call_symbol
from ssa_course.codegen.patterns import CodegenError
from ssa_course.codegen.ptr_abi import print_entry
from ssa_course.quads.ir import Instr
from ssa_course.tiny.types import BOOL, ArrayType

if TYPE_CHECKING:
    from ssa_course.codegen.isel import Selector


@dataclass(frozen=True, slots=True)
class Effects:
    """What a target's memory accesses, calls and exceptions look like in machine IR.

    ``result``: where a call's result and a thrown value arrive (rax, x0); ``load``: the
    op loading a register from a qword in memory (``mov``, ``ldr``), ``load_byte`` from a
    byte, zero-extended (``movzx``, ``ldrb``); ``length_disp``: where an array's length
    lies from its reference (x86-64: at it, 0; AArch64: just below element 0, -8). The
    hooks, each given the selector first (``width``: an element's bytes,
    :func:`element_width`):

    * ``store`` -- store a named value of ``width`` bytes at an address (x86-64
      ``mov [m], v`` with an immediate where one fits; AArch64 ``str v, [m]`` with xzr
      for 0; ``mov byte ptr``/``strb`` for a byte);
    * ``element`` -- check the index of an ``aload``/``astore`` against the length
      (unless lesson 09 proved it in bounds) and give the element's address;
    * ``unset_check`` -- trap when the loaded reference is 0 (never stored);
    * ``stack_array`` -- lay out an array that never escapes in the frame, zeroed (its
      budget is charged already);
    * ``stack_args`` -- place a call's arguments beyond the argument registers, giving
      the bytes to release after the call, which ``release`` does.

    Floats (:mod:`ssa_course.codegen.float_abi`; empty on a target without float machine
    code): ``float_args``, the float argument registers in order (x86-64 xmm0-xmm7);
    ``float_result``, where a float result travels (xmm0); ``float_move``, the op copying
    64 bits between an integer and a float register, either way (``movq``)."""

    result: PReg
    load: str
    load_byte: str
    length_disp: int
    store: Callable[[Selector, Mem, str, int], None]
    element: Callable[[Selector, Instr, VReg, str, int], Mem]
    unset_check: Callable[[Selector, VReg, Instr], None]
    stack_array: Callable[[Selector, Instr, int, int], None]
    stack_args: Callable[[Selector, list[str]], int]
    release: Callable[[Selector, int], None]
    float_args: tuple[str, ...] = ()
    float_result: PReg | None = None
    float_move: str = ""


def _arg(sel: Selector, k: int) -> PReg:
    return PReg(sel.machine.arg_regs[k])


def _effects(sel: Selector) -> Effects:
    return sel.machine.effects


def element_width(t: object) -> int:
    """The bytes an element of an array of type ``t`` takes in memory: 1 for ``[bool]``
    (0 or 1, as C's ``bool``), 8 for an int or a reference. The length before the
    elements is a qword either way; a ``newarr`` and every access read the same type."""
    return 1 if isinstance(t, ArrayType) and t.elem == BOOL else 8


def s_aload(sel: Selector, i: Instr) -> None:
    fx = _effects(sel)
    ra = sel.reg(i.args[0])
    width = element_width(sel.types.get(i.args[0]))
    addr = fx.element(sel, i, ra, i.args[1], width)
    d = sel.dest(i)
    sel.emit(fx.load if width == 8 else fx.load_byte, d, addr)
    t = sel.types.get(i.args[0])
    # A reference must have been stored, unless the element was shown set before
    # (codegen/loop_rows.py marks such loads ``set_known``).
    if isinstance(t, ArrayType) and t.elem.is_ref() and not i.set_known:
        fx.unset_check(sel, d, i)


def s_astore(sel: Selector, i: Instr) -> None:
    fx = _effects(sel)
    ra = sel.reg(i.args[0])
    width = element_width(sel.types.get(i.args[0]))
    addr = fx.element(sel, i, ra, i.args[1], width)
    fx.store(sel, addr, i.args[2], width)


def s_alen(sel: Selector, i: Instr) -> None:
    fx = _effects(sel)
    sel.emit(fx.load, sel.dest(i), Mem(sel.reg(i.args[0]), disp=fx.length_disp))


def s_newarr(sel: Selector, i: Instr) -> None:
    """``rt_new_array(length, site)`` (``rt_new_bytes`` for a ``[bool]``: a byte an
    element); an array escape analysis keeps in the frame is charged to the same budget
    (``rt_charge_array``, same site, same message: the budget counts elements, whatever
    their width) and then laid out by the target's ``stack_array`` each time the
    ``newarr`` runs."""
    fx = _effects(sel)
    site = len(sel.sites)
    sel.sites.append((i.pos.line, i.pos.col) if i.pos else (0, 0))
    sel.emit("mov", _arg(sel, 0), sel.val(i.args[0]))
    sel.emit("mov", _arg(sel, 1), Imm(site))
    length = sel.stack.get(id(i))
    width = element_width(sel.types.get(i.dest or ""))
    if length is not None:  # pattern: an array that never escapes, in the frame
        sel.call("rt_charge_array", 2)
        fx.stack_array(sel, i, length, width)
        return
    sel.call("rt_new_array" if width == 8 else "rt_new_bytes", 2)
    sel.emit("mov", sel.dest(i), fx.result)


def _field_offset(sel: Selector, ref: str, field: str | None) -> int:
    t = sel.types.get(ref)
    struct = sel.program.structs.get(str(t))
    names = [f for f, _ in struct.fields] if struct else []
    if field not in names:
        raise CodegenError(f"@{sel.fn.name}: unknown field '{field}' of '{t}'")
    return 8 * names.index(field)


def s_newstruct(sel: Selector, i: Instr) -> None:
    fx = _effects(sel)
    sel.emit("mov", _arg(sel, 0), Imm(len(i.args)))
    sel.call("rt_new_struct", 1)
    d = sel.dest(i)
    sel.emit("mov", d, fx.result)
    for k, arg in enumerate(i.args):
        fx.store(sel, Mem(d, disp=8 * k), arg, 8)


def s_getf(sel: Selector, i: Instr) -> None:
    off = _field_offset(sel, i.args[0], i.field)
    sel.emit(_effects(sel).load, sel.dest(i), Mem(sel.reg(i.args[0]), disp=off))


def s_setf(sel: Selector, i: Instr) -> None:
    fx = _effects(sel)
    off = _field_offset(sel, i.args[0], i.field)
    fx.store(sel, Mem(sel.reg(i.args[0]), disp=off), i.args[1], 8)


def s_print(sel: Selector, i: Instr) -> None:
    for k, arg in enumerate(i.args):
        if k:
            sel.call("rt_print_space")
        sel.emit("mov", _arg(sel, 0), sel.val(arg))
        t = sel.types.get(arg)
        # a float's bits go in the first integer argument register: rt_print_float
        # prints them as brili does (ssa_course.floats.format_float); pointers and chars
        # have entries of their own (ptr_abi.print_entry)
        sel.call(print_entry(t) or ("rt_print_bool" if t == BOOL else
                                    "rt_print_float" if is_float(t) else "rt_print_int"), 1)
    sel.call("rt_print_newline")


def s_call(sel: Selector, i: Instr) -> None:
    fx = _effects(sel)
    # Each argument's place by the ABI: integer registers, float registers (counted
    # apart), the rest on the stack in argument order (float_abi.arg_places).
    places = call_places(sel, i.args)
    # Stack arguments first, register arguments last: the argument registers are caller-
    # saved, so loading them early would only lengthen their live ranges across the
    # pushes (and a push of a value may need a register itself).
    area = fx.stack_args(sel, [a for a, p in zip(i.args, places, strict=True)
                               if p.kind == "stack"])
    nints = 0
    for arg, p in zip(i.args, places, strict=True):
        if p.kind == "int":
            sel.emit("mov", _arg(sel, p.index), sel.val(arg))
            nints += 1
    # Float registers last of all, right before the call: the allocator does not know
    # them, so nothing it inserts may come between (only integer moves and reloads do).
    for arg, p in zip(i.args, places, strict=True):
        if p.kind == "float":
            to_float_register(sel, PReg(fx.float_args[p.index]), arg)
    # The call instruction names how many argument registers it reads (its uses), so
    # liveness keeps the moves above alive and the verifier can check the convention.
    sel.call(call_symbol(i.funcs[0]), nints)
    # The caller pops its own stack arguments (System V and AAPCS64 both), right away, so
    # the stack pointer is back at the frame's base between calls.
    if area:
        fx.release(sel, area)
    if i.dest is not None:
        if is_float(i.type):
            from_float_register(sel, sel.dest(i), float_result(sel))
        else:
            sel.emit("mov", sel.dest(i), fx.result)


def s_ret(sel: Selector, i: Instr) -> None:
    result = _effects(sel).result
    # `ret` reads the result register: without that use, liveness would find the move
    # into it dead and the allocator could reuse the register before the return.
    if i.args and is_float(sel.fn.ret):  # the float result register: unknown to the
        to_float_register(sel, float_result(sel), i.args[0])  # allocator, read by ret
        sel.emit("ret")
    elif i.args:
        sel.emit("mov", result, sel.val(i.args[0]))
        sel.emit("ret", uses=(result,))
    else:
        sel.emit("ret")
    sel.cur.succs = []


def s_jmp(sel: Selector, i: Instr) -> None:
    sel.end_jump(sel.label(i.labels[0]))


def s_enter(sel: Selector, i: Instr) -> None:
    # rt_enter records the handler's address with the registers a throw must restore
    # (stack and frame pointers, callee-saved ones); the handler is a successor of this
    # block, so values it reads are live here, before any call in the try can throw.
    body, handler = sel.label(i.labels[0]), sel.label(i.labels[1])
    sel.emit("lea", _arg(sel, 0), Mem(symbol=handler))  # the handler's address
    sel.call("rt_enter", 1)
    sel.emit("jmp", LabelRef(body))
    sel.cur.succs = [body, handler]


def s_leave(sel: Selector, i: Instr) -> None:
    sel.call("rt_leave")


def s_throw(sel: Selector, i: Instr) -> None:
    # rt_throw never returns here (it jumps to the innermost handler or ends the run), so
    # the block has no successor.
    sel.emit("mov", _arg(sel, 0), sel.val(i.args[0]))
    sel.call("rt_throw", 1)
    sel.cur.succs = []


def s_catch(sel: Selector, i: Instr) -> None:
    sel.emit("mov", sel.dest(i), _effects(sel).result)  # the thrown value arrives here


# Each target's select_ops table starts from these.
def s_bitcast(sel: Selector, i: Instr) -> None:
    """``float2bits`` / ``bits2float`` (Bril's bitcast): a float already lives as its 64
    bits in an integer register (``float_abi.py``), so the cast is a copy."""
    sel.emit("mov", sel.dest(i), sel.val(i.args[0]))


SELECT: dict[str, Callable[[Selector, Instr], None]] = {
    "float2bits": s_bitcast, "bits2float": s_bitcast,
    "aload": s_aload, "astore": s_astore, "alen": s_alen, "newarr": s_newarr,
    "newstruct": s_newstruct, "getf": s_getf, "setf": s_setf, "print": s_print,
    "call": s_call, "ret": s_ret, "jmp": s_jmp, "enter": s_enter, "leave": s_leave,
    "throw": s_throw, "catch": s_catch,
}
