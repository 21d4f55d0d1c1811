"""AArch64 machine IR -> GNU assembler text (``aarch64-linux-gnu-as`` syntax).

Each machine-IR instruction prints as one AArch64 instruction or, where one 32-bit word
cannot say it, a few: a 64-bit constant becomes ``movz``/``movn`` + ``movk`` (or one
``orr`` with a bitmask immediate, :mod:`.immediates`), an address the load's offset field
cannot reach is built in the scratch register x17, a store of a constant goes through x16.
The blocks are laid out by :mod:`ssa_course.codegen.listing` (shared with x86-64): a jump
to the next block is left out; ``b.cc T; b F`` with T next becomes ``b.!cc F``. The first
instruction of each source line is preceded by ``// line N: <the line>``.

The text keeps to what all three assemblers accept (:mod:`.assemble`): explicit
``movz``/``movn``/``movk``/``ldur`` (never the assembler's choice behind ``mov #imm`` or
``ldr [x, #-8]``), symbols only as branch targets, ``adr`` of a local label, and
``adrp`` + ``:lo12:`` for data.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ssa_course.codegen import listing
from ssa_course.codegen.aarch64.frame import slot_address
from ssa_course.codegen.aarch64.immediates import MASK64, arith_imm, logical_imm, mov_sequence
from ssa_course.codegen.aarch64.minstr import Shift
from ssa_course.codegen.aarch64.registers import NEGATE
from ssa_course.codegen.float_abi import bits_float
from ssa_course.codegen.listing import Syntax
from ssa_course.codegen.mir import (
    Imm,
    Mem,
    MFunction,
    MInstr,
    MProgram,
    Operand,
    PReg,
    Slot,
    VReg,
)

# The AAPCS64 intra-procedure-call scratch registers (IP0/IP1): the allocator never hands
# them out, so emission may use them between two instructions to build what one A64
# instruction cannot hold (a large constant, a far address) without disturbing any value.
X16, X17 = "x16", "x17"
_OFFSET = re.compile(r", #(-?\d+)\]$")
# ldr/str's unsigned 12-bit offset counts in units of the access size: 8-byte accesses
# reach 4095 * 8 bytes.
MAX_SCALED = 4095 * 8
# Runtime entries reached by a conditional branch (fuel and depth checks): b.cond reaches
# only +-1 MiB, so each function branches to a stub of its own that jumps there.
FAR_ENTRIES = frozenset({"rt_step_limit", "rt_stack_overflow"})


def reg(o: object) -> str:
    return str(o)


def _wreg(name: str) -> str:
    """The 32-bit name of a register (``x5`` -> ``w5``, ``xzr`` -> ``wzr``)."""
    return "w" + name[1:] if name.startswith("x") else name


def load_constant(dest: str, value: int) -> list[str]:
    """The instructions that put ``value`` in register ``dest``."""
    # A64 instructions are 32 bits, so a 64-bit constant is built 16 bits at a time
    # (movz/movn then movk) or, when it is a repeating bit pattern, by one orr from xzr;
    # mov_sequence picks the shortest.
    out = []
    for op, imm, shift in mov_sequence(value):
        if op == "orr":
            out.append(f"orr {dest}, xzr, #{imm:#x}")
        else:
            out.append(f"{op} {dest}, #{imm:#x}" + (f", lsl #{shift}" if shift else ""))
    return out


def _address(m: Mem, out: list[str], scratch: str = X17, size: int = 8) -> str:
    """The bracketed address of ``m`` for an access of ``size`` bytes (instructions to
    build it first go to ``out``)."""
    # A64 has [base, index, lsl #3] and [base, #offset] but not both at once: with an
    # index *and* a displacement, the sum base + index goes into the scratch register first.
    base = reg(m.base)
    if m.index is not None:
        shifted = f"{reg(m.index)}, lsl #3" if m.scale == 8 else reg(m.index)
        if m.disp == 0:
            return f"[{base}, {shifted}]"
        out.append(f"add {scratch}, {base}, {shifted}")
        base, m = scratch, Mem(PReg(scratch), disp=m.disp)
    d = m.disp
    if d == 0:
        return f"[{base}]"
    if size == 1 and 0 < d <= 4095:  # ldrb/strb: an unsigned 12-bit offset
        return f"[{base}, #{d}]"
    # Two encodings reach an offset directly: scaled unsigned (ldr) or 9-bit signed
    # (ldur, chosen in _memory); anything else is added into the scratch register first.
    if size == 8 and (d % 8 == 0 and 0 < d <= MAX_SCALED or -256 <= d < 256):
        return f"[{base}, #{d}]"
    out.extend(_add_constant(scratch, base, d))
    return f"[{scratch}]"


def _add_constant(dest: str, base: str, value: int) -> list[str]:
    a = arith_imm(abs(value))
    op = "add" if value >= 0 else "sub"
    if a is not None:
        imm, shift = a
        return [f"{op} {dest}, {base}, #{imm}" + (", lsl #12" if shift else "")]
    return [*load_constant(X16, value), f"add {dest}, {base}, {X16}"]


def _memory(op: str, r: str, m: Mem) -> list[str]:
    out: list[str] = []
    addr = _address(m, out)
    offset = _OFFSET.search(addr)
    unscaled = offset is not None and not (int(offset.group(1)) % 8 == 0
                                           and int(offset.group(1)) > 0)
    name = {"ldr": "ldur", "str": "stur"}[op] if unscaled else op
    return [*out, f"{name} {r}, {addr}"]


def _operand(o: Operand | Shift) -> str:
    if isinstance(o, Imm):
        return f"#{o.value}"
    return str(o)


def _arith(op: str, d: str, a: str, b: Operand, extra: Sequence[Operand | Shift]
           ) -> list[str]:
    """add/sub/subs with an immediate (flipping the op for a negative one) or registers."""
    if isinstance(b, Imm):
        v = b.value
        # The 12-bit field is unsigned (optionally shifted by 12): x + (-5) is written
        # x - 5, and a constant fitting neither way goes through x16.
        fits = arith_imm(v) if v >= 0 else arith_imm(-v)
        if fits is not None:
            flip = {"add": "sub", "sub": "add", "subs": "adds", "adds": "subs"}
            name = op if v >= 0 else flip[op]
            imm, shift = fits
            return [f"{name} {d}, {a}, #{imm}" + (", lsl #12" if shift else "")]
        return [*load_constant(X16, v), f"{op} {d}, {a}, {X16}"]
    tail = "".join(f", {_operand(e)}" for e in extra)
    return [f"{op} {d}, {a}, {b}{tail}"]


def _compare(a: str, b: Operand) -> list[str]:
    if isinstance(b, Imm):
        v = b.value
        fits = arith_imm(v) if v >= 0 else arith_imm(-v)
        if fits is not None:
            imm, shift = fits
            # cmn (compare negative, i.e. adds to xzr) covers x == -c with the same field.
            return [f"{'cmp' if v >= 0 else 'cmn'} {a}, #{imm}" + (", lsl #12" if shift else "")]
        return [*load_constant(X16, v), f"cmp {a}, {X16}"]
    return [f"cmp {a}, {b}"]


def _logical(op: str, d: str, a: str, b: Operand) -> list[str]:
    # Logical immediates are not numbers but bit patterns (a rotated run of ones, repeated):
    # 0xff fits, 5 (0b101) does not. logical_imm decides, as the assembler would.
    if isinstance(b, Imm):
        if logical_imm(b.value) is not None:
            return [f"{op} {d}, {a}, #{b.value & MASK64:#x}"]
        return [*load_constant(X16, b.value), f"{op} {d}, {a}, {X16}"]
    return [f"{op} {d}, {a}, {b}"]


def instr_lines(fn: MFunction, i: MInstr) -> list[str]:
    """The assembly of one instruction (a VReg prints as ``%id.hint``, for listings made
    before allocation)."""
    # The machine IR keeps x86's one `mov` for all moves; A64 splits it by operand kind:
    # ldr (from memory), str (to memory), mov (register), a constant sequence (immediate).
    ops = [slot_address(fn, o) if isinstance(o, Slot) else o for o in i.operands]
    op = i.op
    if op == "mov":
        dst, src = ops
        if isinstance(dst, Mem):
            if isinstance(src, Imm):
                # Storing 0 needs no register: xzr reads as zero.
                if src.value == 0:
                    return _memory("str", "xzr", dst)
                return [*load_constant(X16, src.value), *_memory("str", X16, dst)]
            return _memory("str", reg(src), dst)
        if isinstance(src, Mem):
            return _memory("ldr", reg(dst), src)
        if isinstance(src, Imm):
            return load_constant(reg(dst), src.value)
        return [f"mov {dst}, {src}"]
    if op in ("ldr", "str"):
        m = ops[1]
        assert isinstance(m, Mem)  # slots became addresses above
        return _memory(op, reg(ops[0]), m)
    if op in ("ldrb", "strb"):  # a byte (a [bool] element): the w form of the register
        m = ops[1]
        assert isinstance(m, Mem)
        out: list[str] = []
        addr = _address(m, out, size=1)
        return [*out, f"{op} {_wreg(reg(ops[0]))}, {addr}"]
    if op in ("add", "sub") and ops[0] == ops[1] == PReg("sp") and isinstance(ops[2], Imm) \
            and arith_imm(ops[2].value) is None:  # a big frame: high part, then low part
        high, low = ops[2].value & ~0xFFF, ops[2].value & 0xFFF
        return [f"{op} sp, sp, #{high >> 12}, lsl #12", *([f"{op} sp, sp, #{low}"] if low
                                                         else [])]
    if op in ("add", "sub", "subs"):
        return _arith(op, reg(ops[0]), reg(ops[1]), ops[2], ops[3:])
    if op == "cmp":
        return _compare(reg(ops[0]), ops[1])
    if op in ("and", "orr", "eor"):
        return _logical(op, reg(ops[0]), reg(ops[1]), ops[2])
    if op == "test":
        return [line.replace("ands xzr,", "tst", 1)
                for line in _logical("ands", "xzr", reg(ops[0]), ops[1])]
    # The IR's jcc covers both branch kinds: a flags condition (b.lt) and the register
    # tests z/nz, which become cbz/cbnz and read the register operand instead of flags.
    if op == "jcc":
        if i.cond in ("z", "nz"):
            return [f"cb{i.cond} {ops[1]}, {ops[0]}"]
        return [f"b.{i.cond} {ops[0]}"]
    if op == "jmp":
        return [f"b {ops[0]}"]
    if op == "call":
        return [f"bl {ops[0]}"]
    if op in ("cset",):
        return [f"cset {ops[0]}, {i.cond}"]
    if op == "csel":
        return [f"csel {ops[0]}, {ops[1]}, {ops[2]}, {i.cond}"]
    if op == "lea":
        m = ops[1]
        assert isinstance(m, Mem)
        if m.symbol is not None:  # adr: a pc-relative address within +-1 MiB
            return [f"adr {ops[0]}, {m.symbol}"]
        return _add_constant(reg(ops[0]), reg(m.base), m.disp)
    if op in ("stp!", "ldp+", "stp", "ldp"):
        m = ops[2]
        assert isinstance(m, Mem)
        if op == "stp!":
            return [f"stp {ops[0]}, {ops[1]}, [{m.base}, #{m.disp}]!"]
        if op == "ldp+":
            return [f"ldp {ops[0]}, {ops[1]}, [{m.base}], #{m.disp}"]
        return [f"{op} {ops[0]}, {ops[1]}, [{m.base}, #{m.disp}]"]
    if op == "fcmp" and isinstance(ops[1], Imm):  # the compare-with-zero form
        return [f"fcmp {ops[0]}, #0.0"]
    if op == "fmov" and isinstance(ops[1], Imm):  # a float in fmov's 8-bit field: 2.0, 0.5
        return [f"fmov {ops[0]}, #{bits_float(ops[1].value)!r}"]
    if not ops:
        return [op]
    return [f"{op} " + ", ".join(_operand(o) for o in ops)]


def instr_text(fn: MFunction, i: MInstr) -> str:
    return "; ".join(instr_lines(fn, i))


# What the shared listing code (codegen/listing.py) needs to know about this assembler.
# main_entry loads the two counters into their callee-saved registers once: from then on
# every check is a register subtract, never a memory access (adrp + :lo12: is A64's way
# to address a symbol anywhere in +-4 GiB).
SYNTAX = Syntax(comment="//", jump="b", negate=NEGATE, header=(".text",),
                main_entry=("adrp x16, rt_depth", "ldr x28, [x16, :lo12:rt_depth]",
                            "adrp x16, rt_fuel", "ldr x27, [x16, :lo12:rt_fuel]"),
                far_entries=FAR_ENTRIES, lines=instr_lines)


def function_text(fn: MFunction, lines: list[str] | None = None) -> list[str]:
    """The assembly lines of one function (after allocation and frame layout)."""
    return listing.function_text(fn, SYNTAX, lines)


def program_text(program: MProgram, lines: list[str] | None = None) -> str:
    return listing.program_text(program, SYNTAX, lines)


__all__ = ["Imm", "VReg", "function_text", "instr_text", "load_constant", "program_text"]
