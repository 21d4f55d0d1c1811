"""Reading an instruction's operands (Intel syntax, as our listings print them) for the
encoder (:mod:`ssa_course.codegen.x86_64.encode`): a register (``r12``, ``eax``, ``sil``), a
memory operand (``qword ptr [base + index*scale + disp]``, ``[rip + disp]``) or an
immediate (``-5``, ``0x7fffffff``). Symbols are not operands here: the layout
(:mod:`ssa_course.codegen.x86_64.layout`) replaces them by numbers first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ssa_course.codegen.x86_64.table import REGISTERS

_SIZES = {"byte": 8, "word": 16, "dword": 32, "qword": 64}
_NUMBER = re.compile(r"-?(?:0x[0-9a-fA-F]+|\d+)\Z")
_MEMORY = re.compile(r"(?:(byte|word|dword|qword)\s+ptr\s*)?\[([^\]]*)\]\Z")


class EncodeError(ValueError):
    """The instruction is not one the table has (the message says which)."""


@dataclass(frozen=True, slots=True)
class Reg:
    """A register: its name, number (0-15) and width in bits."""

    name: str
    number: int
    width: int


@dataclass(frozen=True, slots=True)
class Memory:
    """``[base + index*scale + disp]`` or ``[rip + disp]``."""

    width: int | None  # from "qword ptr" etc.; None when the instruction says it
    base: Reg | None
    index: Reg | None
    scale: int
    disp: int
    rip: bool


@dataclass(frozen=True, slots=True)
class Immediate:
    """A number in the instruction."""

    value: int


Operand = Reg | Memory | Immediate


def parse_operand(text: str) -> Operand:
    """One operand; :class:`EncodeError` when it is none of the three kinds."""
    text = text.strip()
    low = text.lower()
    if low in REGISTERS:
        number, width = REGISTERS[low]
        return Reg(low, number, width)
    if _NUMBER.match(text):
        return Immediate(int(text, 0))
    m = _MEMORY.match(low)
    if m is None:
        raise EncodeError(f"cannot read operand '{text}' (symbols are placed by the layout)")
    return _memory(_SIZES[m.group(1)] if m.group(1) else None, m.group(2), text)


def _memory(width: int | None, inside: str, text: str) -> Memory:
    base = index = None
    scale, disp, rip = 1, 0, False
    for sign, term in re.findall(r"([+-]?)\s*([^+\-\s][^+\-]*)", inside):
        term = term.strip()
        if _NUMBER.match(term):
            disp += -int(term, 0) if sign == "-" else int(term, 0)
            continue
        if sign == "-":
            raise EncodeError(f"a register cannot be subtracted in '{text}'")
        if term == "rip":
            rip = True
            continue
        reg, _, factor = term.partition("*")
        reg, factor = reg.strip(), factor.strip()
        if _NUMBER.match(reg):  # "8*rcx"
            reg, factor = factor, reg
        if reg not in REGISTERS:
            raise EncodeError(f"'{term}' is not a register or a number in '{text}' "
                              "(symbols are placed by the layout)")
        if REGISTERS[reg][1] != 64:
            raise EncodeError(f"'{term}' is not a 64-bit register in '{text}'")
        r = Reg(reg, *REGISTERS[reg])
        if factor or (base is not None):
            if index is not None or reg == "rsp":
                raise EncodeError(f"bad index in '{text}'")
            index, scale = r, int(factor or "1", 0)
            if scale not in (1, 2, 4, 8):
                raise EncodeError(f"scale must be 1, 2, 4 or 8 in '{text}'")
        else:
            base = r
    if rip and (base is not None or index is not None):
        raise EncodeError(f"rip-relative addresses take no registers: '{text}'")
    if base is None and index is None and not rip:
        raise EncodeError(f"no register in '{text}' (absolute addresses are not used)")
    if not -(1 << 31) <= disp < 1 << 31:
        raise EncodeError(f"displacement out of range in '{text}'")
    return Memory(width, base, index, scale, disp, rip)


def split(text: str) -> tuple[str, list[Operand]]:
    """The mnemonic and the parsed operands of one instruction."""
    words = text.strip().split(None, 1)
    if not words:
        raise EncodeError("empty instruction")
    mnemonic, rest = words[0].lower(), (words[1] if len(words) > 1 else "")
    if mnemonic == "rep":
        mnemonic, rest = f"rep {rest.strip().lower()}", ""
    operands = [parse_operand(t) for t in rest.split(",")] if rest.strip() else []
    return mnemonic, operands
