"""Our own x86-64 encoder: one Intel-syntax instruction -> its bytes, field by field.

An x86-64 instruction is, in this order (Intel SDM vol. 2, chapter 2)::

    [prefix] [REX] opcode [ModRM] [SIB] [displacement] [immediate]

* **REX** (``0100WRXB``) is there when a 64-bit operand size is asked for (W) or a register
  numbered 8-15 is used: R extends ModRM.reg, X the SIB index, B ModRM.rm, the SIB base or
  the register in the opcode;
* the **opcode** comes from the table (:mod:`ssa_course.codegen.x86_64.table`), found by the
  operands' kinds (register, memory, immediate and their widths);
* **ModRM** (``mod:2 reg:3 rm:3``): ``mod=11`` means ``rm`` is a register; otherwise ``rm``
  names a base register and ``mod`` says how many displacement bytes follow (0, 1, 4);
  ``rm=100`` means "a SIB byte follows", ``mod=00 rm=101`` means ``[rip + disp32]``;
* **SIB** (``scale:2 index:3 base:3``) for ``[base + index*scale]``, and for a base of rsp
  or r12 (whose number 100 in ``rm`` means "SIB");
* the **displacement** (1 byte when it fits, else 4; rbp and r13 as a base always have
  one: ``mod=00`` with their number means something else) and the **immediate**, both
  little-endian two's complement.

:func:`encode` gives the bytes, :func:`fields` the same bytes named and explained (the
lesson shows them); labels are not placed here (:mod:`ssa_course.codegen.x86_64.layout` does it).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ssa_course.codegen.x86_64.operands import (
    EncodeError,
    Immediate,
    Memory,
    Operand,
    Reg,
    parse_operand,
    split,
)
from ssa_course.codegen.x86_64.table import CONDITIONS, FORMS, NEEDS_REX, Form

__all__ = ["EncodeError", "Field", "branch", "branch_size", "choose", "encode", "fields",
           "fits", "form_width", "parse_operand", "split"]

# Legacy prefixes that a table row writes as part of its opcode (rep movsb is F3 A4): they
# must come before REX, which has to be the byte right before the opcode (SDM vol. 2, 2.2.1).
_PREFIXES = frozenset({0xF2, 0xF3, 0x66})
_FAMILIES = ("cmov", "set", "j")  # mnemonics ending in a condition code


@dataclass(frozen=True, slots=True)
class Field:
    """One part of an encoded instruction: its name, its bytes and what they say."""

    name: str
    data: bytes
    meaning: str


def _family(mnemonic: str) -> tuple[str, int | None]:
    """``sete`` -> (``setcc``, 4); ``add`` -> (``add``, None)."""
    if mnemonic in FORMS:
        return mnemonic, None
    for head in _FAMILIES:
        if mnemonic.startswith(head) and mnemonic[len(head):] in CONDITIONS:
            return head + "cc", CONDITIONS[mnemonic[len(head):]]
    raise EncodeError(f"unknown instruction '{mnemonic}'")


_WIDTHS = {"r8": 8, "r/m8": 8, "al": 8, "r32": 32, "r/m32": 32, "eax": 32, "r64": 64,
           "r/m64": 64, "rax": 64}


def form_width(form: Form) -> int:
    """The operand size of a form: the width of its first sized operand (64 when none)."""
    return next((_WIDTHS[k] for k in form.operands if k in _WIDTHS), 64)


def fits(value: int, bits: int, width: int) -> bool:
    """Whether ``value`` is an ``imm<bits>`` of an instruction of operand size ``width``:
    taken modulo the width (``cmp ecx, 0xffffffff`` is ``cmp ecx, -1``), then sign
    extended from ``bits``."""
    # Accept anything representable in `width` bits, signed or unsigned, as an assembler
    # does; then ask whether its signed reading survives the round trip through `bits`.
    if not -(1 << (width - 1)) <= value < 1 << width:
        return False
    v = _signed(value, width)
    return -(1 << (bits - 1)) <= v < 1 << (bits - 1) or bits == width


def _signed(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _matches(form: Form, operands: list[Operand]) -> bool:
    if len(form.operands) != len(operands) or form.rel:
        return False
    width = form_width(form)
    # A memory operand without `qword ptr` takes its width from a register operand
    # (`add [rax], ecx` is 32-bit), as GNU as infers it.
    regs = [o.width for o in operands if isinstance(o, Reg)]
    for kind, o in zip(form.operands, operands, strict=True):
        if kind in ("r8", "r32", "r64"):  # before the names: r8 is also a register
            ok = isinstance(o, Reg) and o.width == int(kind[1:])
        elif kind in ("al", "eax", "rax"):
            ok = isinstance(o, Reg) and o.name == kind
        elif kind.startswith("r/m"):
            w = int(kind[3:])
            ok = (isinstance(o, Reg) and o.width == w) or (
                isinstance(o, Memory) and (o.width == w or (o.width is None and w in regs)))
        elif kind == "m":
            ok = isinstance(o, Memory)
        elif kind == "xmm":
            ok = isinstance(o, Reg) and o.width == 128
        elif kind == "xmm/m64":
            ok = (isinstance(o, Reg) and o.width == 128) or (
                isinstance(o, Memory) and o.width in (64, None))
        elif kind == "1":
            ok = isinstance(o, Immediate) and o.value == 1
        else:  # imm8 / imm32 / imm64
            ok = isinstance(o, Immediate) and fits(o.value, int(kind[3:]), width)
        if not ok:
            return False
    return True


def choose(mnemonic: str, operands: list[Operand]) -> tuple[Form, int | None]:
    """The table row this instruction uses: the shortest form that fits, the first of
    those in table order; and the condition code for a ``cc`` family."""
    family, cc = _family(mnemonic)
    fitting = [f for f in FORMS[family] if _matches(f, operands)]
    if not fitting:
        shown = ", ".join(type(o).__name__.lower() for o in operands) or "no operands"
        raise EncodeError(f"no form of '{mnemonic}' takes {shown}")
    # min() keeps the first of equal minima, so "shortest, then table order" is one call;
    # it is GNU as's choice too, which is what lets the images be compared byte for byte.
    return min(fitting, key=lambda f: _length(f, operands)), cc


def _length(form: Form, operands: list[Operand]) -> int:
    return sum(len(f.data) for f in _encode(form, None, operands))


def fields(text: str) -> list[Field]:
    """The encoding of one instruction, part by part (prefix, REX, opcode, ModRM, SIB,
    displacement, immediate), each with what it says."""
    mnemonic, operands = split(text)
    form, cc = choose(mnemonic, operands)
    return _encode(form, cc, operands)


@lru_cache(maxsize=1 << 16)  # the runtime's instructions repeat in every program
def encode(text: str) -> bytes:
    """The bytes of one instruction (no labels: see :mod:`ssa_course.codegen.x86_64.layout`)."""
    return b"".join(f.data for f in fields(text))


def branch(mnemonic: str, rel: int, short: bool) -> bytes:
    """``jmp``/``jcc``/``call`` with displacement ``rel`` (from the end of the
    instruction), in its rel8 form when ``short`` (not for ``call``), else rel32."""
    family, cc = _family(mnemonic)
    size = 1 if short else 4
    form = next((f for f in FORMS[family] if f.rel == size), None)
    if form is None:
        raise EncodeError(f"'{mnemonic}' has no rel{8 * size} form")
    # The condition code lives in the opcode's low four bits (70+cc, 0F 80+cc).
    op = bytearray(form.opcode)
    op[-1] += cc or 0
    return bytes(op) + rel.to_bytes(size, "little", signed=True)


@lru_cache(maxsize=256)
def branch_size(mnemonic: str, short: bool) -> int:
    return len(branch(mnemonic, 0, short))


def _encode(form: Form, cc: int | None, operands: list[Operand]) -> list[Field]:
    out: list[Field] = []
    opcode = bytearray(form.opcode)
    while len(opcode) > 1 and opcode[0] in _PREFIXES:
        # F3 is rep before a string instruction; before 0F it is, like 66 and F2, the
        # mandatory prefix that selects an SSE instruction (F2 0F 58 addsd)
        out.append(Field("prefix", bytes([opcode[0]]), "rep" if form.mnemonic.startswith(
            "rep ") else "mandatory prefix (SSE)"))
        del opcode[0]
    rm_op = reg_op = None  # the operands in ModRM.rm and ModRM.reg (or the opcode's +r)
    imm = None
    for kind, o in zip(form.operands, operands, strict=True):
        if isinstance(o, Immediate):
            imm = o.value
        elif kind.startswith("r/m") or kind in ("m", "xmm/m64"):
            rm_op = o
        elif kind in ("r8", "r32", "r64", "xmm"):
            reg_op = o
    # x86-64 has 16 registers but ModRM/SIB fields are 3 bits: the fourth bit of each
    # register number goes in REX (R extends ModRM.reg, X SIB.index, B ModRM.rm, SIB.base
    # or the opcode's +r register).
    rex_r = isinstance(reg_op, Reg) and reg_op.number > 7 and form.modrm == "r"
    rex_x = isinstance(rm_op, Memory) and rm_op.index is not None and rm_op.index.number > 7
    rex_b = (isinstance(rm_op, Reg) and rm_op.number > 7) or (
        isinstance(rm_op, Memory) and rm_op.base is not None and rm_op.base.number > 7) or (
        form.plus == "r" and isinstance(reg_op, Reg) and reg_op.number > 7)
    # An empty REX (0x40) still matters: it turns byte registers 4-7 from ah..bh into
    # spl..dil, which setcc into sil or dil needs.
    forced = any(isinstance(o, Reg) and o.name in NEEDS_REX for o in operands)
    if form.rex_w or rex_r or rex_x or rex_b or forced:
        rex = 0x40 | form.rex_w << 3 | rex_r << 2 | rex_x << 1 | rex_b
        out.append(Field("REX", bytes([rex]), f"0100 W={int(form.rex_w)} R={int(rex_r)} "
                         f"X={int(rex_x)} B={int(rex_b)}"
                         + (" (64-bit operand)" if form.rex_w else "")))
    meaning = form.text
    if form.plus == "r" and isinstance(reg_op, Reg):
        opcode[-1] += reg_op.number & 7
        meaning += f" ({reg_op.name} = {reg_op.number & 7:03b} in the low bits)"
    elif form.plus == "cc" and cc is not None:
        opcode[-1] += cc
        meaning += f" (condition {cc:04b})"
    out.append(Field("opcode", bytes(opcode), meaning))
    if form.modrm is not None:
        reg = (reg_op.number if isinstance(reg_op, Reg) else 0) if form.modrm == "r" \
            else int(form.modrm)
        reg_text = reg_op.name if form.modrm == "r" and isinstance(reg_op, Reg) \
            else f"/{form.modrm}: part of the opcode"
        assert rm_op is not None, form.text
        out += _modrm(reg & 7, reg_text, rm_op)
    if form.imm:
        assert imm is not None
        data = (imm & ((1 << 8 * form.imm) - 1)).to_bytes(form.imm, "little")
        out.append(Field(f"imm{8 * form.imm}", data, f"{imm}"))
    return out


def _modrm(reg: int, reg_text: str, rm: Operand) -> list[Field]:
    # ModRM = mod(2) reg(3) rm(3). mod=11: rm is a register; otherwise a memory address
    # whose displacement size mod says (00 none, 01 one byte, 10 four bytes).
    if isinstance(rm, Reg):
        byte = 0b11 << 6 | reg << 3 | (rm.number & 7)
        return [Field("ModRM", bytes([byte]), f"mod=11 (register) reg={reg:03b} ({reg_text}) "
                      f"rm={rm.number & 7:03b} ({rm.name})")]
    assert isinstance(rm, Memory)
    # mod=00 rm=101 means [rip + disp32] in 64-bit mode (it meant [disp32] in 32-bit mode):
    # how the code reaches its data (rt_fuel) with 4 bytes instead of a 64-bit address.
    if rm.rip:
        byte = reg << 3 | 0b101
        return [Field("ModRM", bytes([byte]), f"mod=00 reg={reg:03b} ({reg_text}) rm=101 "
                      "([rip + disp32])"),
                Field("disp32", rm.disp.to_bytes(4, "little", signed=True),
                      f"{rm.disp} from the end of the instruction")]
    base = rm.base
    if base is None:  # [index*scale + disp32]: SIB with "no base" (101 under mod=00)
        mod, disp, sib = 0b00, rm.disp.to_bytes(4, "little", signed=True), True
    # rbp/r13 (low bits 101) cannot use mod=00 (that encoding is rip-relative, above), so
    # [rbp] is written [rbp + 0] with a one-byte displacement.
    elif rm.disp == 0 and base.number & 7 != 5:
        mod, disp, sib = 0b00, b"", rm.index is not None or base.number & 7 == 4
    elif -128 <= rm.disp < 128:
        mod, disp = 0b01, rm.disp.to_bytes(1, "little", signed=True)
        sib = rm.index is not None or base.number & 7 == 4
    else:
        mod, disp = 0b10, rm.disp.to_bytes(4, "little", signed=True)
        sib = rm.index is not None or base.number & 7 == 4
    # rm=100 means "a SIB byte follows": needed for an index, and for a base of rsp/r12
    # (low bits 100), which would otherwise be read as that escape.
    rm_bits = 0b100 if sib or base is None else base.number & 7  # no base: always a SIB
    shown = "(a SIB byte follows)" if sib or base is None else f"({base.name})"
    size = ("no", "1-byte", "4-byte")[mod] if base is not None else "4-byte"
    out = [Field("ModRM", bytes([mod << 6 | reg << 3 | rm_bits]),
                 f"mod={mod:02b} ({size} displacement) reg={reg:03b} ({reg_text}) "
                 f"rm={rm_bits:03b} {shown}")]
    if sib:
        # index=100 is "no index" (so rsp can never be an index register).
        index = rm.index.number & 7 if rm.index is not None else 0b100
        scale = (1, 2, 4, 8).index(rm.scale)
        base_bits = base.number & 7 if base is not None else 0b101
        out.append(Field("SIB", bytes([scale << 6 | index << 3 | base_bits]),
                         f"scale={scale:02b} (x{rm.scale}) index={index:03b} "
                         f"({rm.index.name if rm.index else 'none'}) base={base_bits:03b} "
                         f"({base.name if base else 'none: a 4-byte displacement'})"))
    if disp:
        out.append(Field(f"disp{8 * len(disp)}", disp, f"{rm.disp}"))
    return out
