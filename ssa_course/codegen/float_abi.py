"""Floats in machine code, the target-neutral half (issue #36): how a float is held, and
where float arguments and results travel at calls.

**Values.** A float lives in the register allocator's ordinary (general-purpose) virtual
registers as its raw 64-bit IEEE 754 bits, so liveness, colouring, spilling and phi
lowering never learn that floats exist: a phi of floats is a copy of bits, a spill a
qword store. Each float operation moves its operands into the CPU's float registers,
which the allocator never hands out (x86-64's xmm0/xmm1 are scratch, reserved from
nothing else), computes there and moves the result back. A float constant is its bits
as a 64-bit integer constant (:func:`float_bits`), so ``mov r, imm64`` makes it.

**Calls.** The platform ABI is kept at function boundaries (System V AMD64, AAPCS64):
float arguments go in the float argument registers (x86-64 xmm0-xmm7), counted apart
from the integer ones, a float result comes back in the first float register; what
does not fit in either class's registers goes on the stack in argument order, one
qword each (:func:`arg_places`). The callee copies its float parameters out of those
registers into virtual registers at entry, the caller copies its float arguments in
right before the ``call`` and the result out right after it.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ssa_course.codegen.mir import PReg, VReg
from ssa_course.tiny.types import FloatType

if TYPE_CHECKING:
    from ssa_course.codegen.isel import Selector


def is_float(t: object) -> bool:
    """Is a value of type ``t`` a float (held as its bits, passed in float registers)?"""
    return isinstance(t, FloatType)


def float_bits(value: float) -> int:
    """The IEEE 754 bits of ``value`` as a signed 64-bit integer (what ``mov r, imm64``
    loads; -0.0 is ``-2**63``, not 0)."""
    return int.from_bytes(struct.pack("<d", float(value)), "little", signed=True)


def bits_float(bits: int) -> float:
    """The float whose IEEE 754 bits are ``bits`` (signed or unsigned 64-bit)."""
    return float(struct.unpack("<d", (bits & ((1 << 64) - 1)).to_bytes(8, "little"))[0])


@dataclass(frozen=True, slots=True)
class Place:
    """Where one argument travels: ``kind`` ``"int"`` (integer argument register
    ``index``), ``"float"`` (float argument register ``index``) or ``"stack"`` (the
    ``index``-th qword of the stack arguments)."""

    kind: str
    index: int


def arg_places(floats: list[bool], nint: int, nfloat: int) -> list[Place]:
    """The place of each argument (``floats[k]``: is argument k a float) with ``nint``
    integer and ``nfloat`` float argument registers: each class fills its own registers
    in order, the rest go on the stack in argument order (System V's rule, AAPCS64's)."""
    places: list[Place] = []
    ints = fl = stack = 0
    for f in floats:
        if f and fl < nfloat:
            places.append(Place("float", fl))
            fl += 1
        elif not f and ints < nint:
            places.append(Place("int", ints))
            ints += 1
        else:
            places.append(Place("stack", stack))
            stack += 1
    return places


def _float_regs(sel: Selector) -> tuple[str, ...]:
    return sel.machine.effects.float_args


def receive_params(sel: Selector) -> None:
    """At the function's entry: copy each parameter out of where the ABI put it into its
    virtual register (an integer register or the caller's stack: ``param_source``; a
    float register: the machine's move between the register classes)."""
    fx = sel.machine.effects
    floats = [is_float(t) for _, t in sel.fn.params]
    nint = len(sel.machine.arg_regs)
    for p, place in zip(sel.mfn.params, arg_places(floats, nint, len(fx.float_args)),
                        strict=True):
        if place.kind == "float":
            sel.emit(fx.float_move, p, PReg(fx.float_args[place.index]))
        elif place.kind == "int":
            sel.emit("mov", p, sel.machine.param_source(place.index))
        else:  # the stack arguments follow the register ones in param_source's numbering
            sel.emit("mov", p, sel.machine.param_source(nint + place.index))


def call_places(sel: Selector, args: list[str]) -> list[Place]:
    """The places of a call's arguments (named values of this function)."""
    return arg_places([is_float(sel.types.get(a)) for a in args],
                      len(sel.machine.arg_regs), len(_float_regs(sel)))


def float_result(sel: Selector) -> PReg:
    """The register a float result travels in (x86-64 xmm0)."""
    fx = sel.machine.effects
    if fx.float_result is None:
        raise AssertionError(f"{sel.machine.name} has no float result register")
    return fx.float_result


def from_float_register(sel: Selector, d: VReg, reg: PReg) -> None:
    """``d`` = the bits in float register ``reg``."""
    sel.emit(sel.machine.effects.float_move, d, reg)


def to_float_register(sel: Selector, reg: PReg, name: str) -> None:
    """Float register ``reg`` = the bits of value ``name`` (a constant is loaded into an
    integer register first: the bits of a float constant are an integer constant)."""
    sel.emit(sel.machine.effects.float_move, reg, sel.reg(name))
