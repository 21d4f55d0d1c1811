"""Our own AArch64 encoder: one instruction's text -> one 32-bit word.

Every AArch64 instruction is exactly 4 bytes, little-endian; the word is a fixed opcode
pattern with fields OR-ed into it -- registers are 5-bit numbers (``Rd`` at bit 0, ``Rn``
at 5, ``Rm`` at 16; 31 means ``sp`` or ``xzr`` depending on the instruction), immediates
sit in fields of fixed width (imm12 at 10, imm16 at 5, a branch's word offset in the low
26 or 19 bits). There is no length to work out and no prefix, unlike x86-64.

:func:`encode` takes an instruction whose symbols are already addresses (:mod:`.layout`
resolves them: a branch target ``#0x401100``, ``adr x0, .+16``, ``adrp x0, #0x20000000``,
``:lo12:`` already a number) and its own address. It covers exactly what this back end
emits (the FP forms for floats are :mod:`.encode_fp`); anything else is an
:class:`EncodeError`.
"""

from __future__ import annotations

import re

from ssa_course.codegen.aarch64.encode_fp import FpEncodeError, encode_fp
from ssa_course.codegen.aarch64.immediates import logical_imm

# A64 condition codes in encoding order (Arm ARM, "Condition code"): a condition and
# its negation differ only in the lowest bit (eq 0 / ne 1, ge 10 / lt 11, ...).
COND = {c: k for k, c in enumerate(("eq", "ne", "hs", "lo", "mi", "pl", "vs", "vc", "hi",
                                    "ls", "ge", "lt", "gt", "le", "al"))}
SHIFT = {"lsl": 0, "lsr": 1, "asr": 2}
# 64-bit data-processing opcodes (fields OR-ed in below). Every A64 instruction is one
# 32-bit word with fixed field positions (Rd bits 0-4, Rn 5-9, Rm 16-20), so encoding is
# a base word OR-ed with shifted fields -- no variable lengths, prefixes or ModRM as on x86.
ADD_IMM = {"add": 0x91000000, "adds": 0xB1000000, "sub": 0xD1000000, "subs": 0xF1000000}
ADD_REG = {"add": 0x8B000000, "adds": 0xAB000000, "sub": 0xCB000000, "subs": 0xEB000000}
LOG_IMM = {"and": 0x92000000, "orr": 0xB2000000, "eor": 0xD2000000, "ands": 0xF2000000}
LOG_REG = {"and": 0x8A000000, "orr": 0xAA000000, "eor": 0xCA000000, "ands": 0xEA000000}
MOVE_WIDE = {"movn": 0x92800000, "movz": 0xD2800000, "movk": 0xF2800000}
THREE_REG = {"sdiv": 0x9AC00C00, "udiv": 0x9AC00800, "smulh": 0x9B407C00,
             "mul": 0x9B007C00}
FOUR_REG = {"madd": 0x9B000000, "msub": 0x9B008000}
COND_SELECT = {"csel": 0x9A800000, "csinc": 0x9A800400, "csneg": 0xDA800400}


class EncodeError(ValueError):
    """An instruction the encoder does not know (or an operand out of range)."""


def reg(text: str, sp: bool = False) -> int:
    """Register number; ``sp`` says whether 31 is spelled ``sp`` here (else ``xzr``)."""
    # Register 31 is two registers: sp in address bases and add/sub immediates, xzr in
    # most data-processing forms. The caller says which the field means, and the other
    # spelling is an error rather than a silent misencoding.
    t = text.strip()
    if t == ("sp" if sp else "xzr") or t == ("wsp" if sp else "wzr"):
        return 31
    m = re.fullmatch(r"[xw](\d+)", t)
    if m is None or int(m.group(1)) > 30:
        raise EncodeError(f"not a register here: {text!r}")
    return int(m.group(1))


def imm(text: str) -> int:
    t = text.strip()
    if not t.startswith("#"):
        raise EncodeError(f"not an immediate: {text!r}")
    return int(t[1:], 0)


def _split(operands: str) -> list[str]:
    """Operands split at top-level commas (a bracketed address stays one piece)."""
    out, depth, cur = [], 0, ""
    for ch in operands:
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        depth += ch == "["
        depth -= ch == "]"
        cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


# A signed field of `bits` bits, range-checked: an out-of-range branch or offset must be an
# error here, not wrap into a different (valid-looking) target.
def _field(value: int, bits: int, what: str) -> int:
    if not -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
        raise EncodeError(f"{what} out of range: {value}")
    return value & ((1 << bits) - 1)


def _branch_offset(target: str, pc: int, bits: int) -> int:
    # Branch offsets count instructions (words), not bytes: b.cond's 19 bits reach
    # +-1 MiB, b/bl's 26 bits +-128 MiB.
    off = imm(target) - pc
    if off % 4:
        raise EncodeError(f"branch target not word-aligned: {target}")
    return _field(off >> 2, bits, "branch offset")


def _shift(parts: list[str]) -> tuple[int, int]:
    if not parts:
        return 0, 0
    kind, amount = parts[0].split()
    return SHIFT[kind], imm(amount)


def _memory(op: str, rt: int, addr: str, post: str | None) -> int:
    """ldr/str/ldur/stur/ldrb/strb/ldp/stp addressing forms."""
    pre = addr.endswith("!")
    inner = _split(addr.rstrip("!").strip()[1:-1])
    rn = reg(inner[0], sp=True)
    byte = op in ("ldrb", "strb")
    load = op.startswith("ld")
    if len(inner) >= 2 and not inner[1].startswith("#"):  # register offset
        rm = reg(inner[1])
        scaled = len(inner) == 3
        if byte:
            base = 0x38606800 if load else 0x38206800
        else:
            base = 0xF8606800 if load else 0xF8206800
            if scaled:
                if inner[2].replace(" ", "") != "lsl#3":
                    raise EncodeError(f"index shift must be lsl #3: {addr}")
                base |= 1 << 12
        return base | rm << 16 | rn << 5 | rt
    offset = imm(inner[1]) if len(inner) == 2 else 0
    # ldur/stur: the unscaled form, a signed 9-bit byte offset (-256..255).
    if op in ("ldur", "stur"):
        return (0xF8400000 if load else 0xF8000000) | _field(offset, 9, "offset") << 12 \
            | rn << 5 | rt
    # ldr/str (unsigned offset): 12 bits counting units of the access size, so only
    # non-negative multiples of 8 (of 1 for bytes) are encodable here.
    size = 1 if byte else 8
    if offset % size or not 0 <= offset // size < 4096 or pre or post:
        raise EncodeError(f"offset {offset} not encodable for {op}")
    base = (0x39400000 if load else 0x39000000) if byte else \
        (0xF9400000 if load else 0xF9000000)
    return base | (offset // size) << 10 | rn << 5 | rt


def _pair(op: str, ops: list[str]) -> int:
    rt, rt2 = reg(ops[0]), reg(ops[1])
    addr = ops[2]
    load = op == "ldp"
    inner = _split(addr.rstrip("!").strip()[1:-1])
    rn = reg(inner[0], sp=True)
    if len(ops) == 4:  # post-index: [base], #imm
        offset, kind = imm(ops[3]), 0xA8800000
    elif addr.endswith("!"):
        offset, kind = imm(inner[1]), 0xA9800000
    else:
        offset, kind = (imm(inner[1]) if len(inner) == 2 else 0), 0xA9000000
    if offset % 8:
        raise EncodeError(f"pair offset {offset} not a multiple of 8")
    return kind | (1 << 22 if load else 0) | _field(offset // 8, 7, "pair offset") << 15 \
        | rt2 << 10 | rn << 5 | rt


def encode(text: str, pc: int) -> int:
    """The 32-bit word of one instruction (symbols already resolved) at address ``pc``."""
    text = text.strip()
    op, _, rest = text.partition(" ")
    ops = _split(rest)
    if op.startswith("b."):
        return 0x54000000 | _branch_offset(ops[0], pc, 19) << 5 | COND[op[2:]]
    if op in ("b", "bl"):
        return (0x14000000 if op == "b" else 0x94000000) | _branch_offset(ops[0], pc, 26)
    if op in ("cbz", "cbnz"):
        return (0xB4000000 if op == "cbz" else 0xB5000000) \
            | _branch_offset(ops[1], pc, 19) << 5 | reg(ops[0])
    if op == "ret":
        return 0xD65F03C0
    if op == "br":
        return 0xD61F0000 | reg(ops[0]) << 5
    if op == "svc":
        return 0xD4000001 | imm(ops[0]) << 5
    if op == "adr":
        off = int(ops[1][1:].replace("+", ""), 0) if ops[1].startswith(".") else imm(ops[1]) - pc
        v = _field(off, 21, "adr offset")
        return 0x10000000 | (v & 3) << 29 | (v >> 2) << 5 | reg(ops[0])
    # adrp: the 4 KiB page of a symbol relative to the page of pc (+-4 GiB); the low 12
    # bits come from the :lo12: offset of the instruction that follows.
    if op == "adrp":
        v = _field((imm(ops[1]) >> 12) - (pc >> 12), 21, "adrp page offset")
        return 0x90000000 | (v & 3) << 29 | (v >> 2) << 5 | reg(ops[0])
    if op in MOVE_WIDE:
        hw = imm(ops[2].split()[1]) // 16 if len(ops) == 3 else 0
        return MOVE_WIDE[op] | hw << 21 | (imm(ops[1]) & 0xFFFF) << 5 | reg(ops[0])
    # Many A64 mnemonics are aliases of one real instruction (Arm ARM "alias" notes):
    # mov is orr with xzr (or add #0 when sp is involved, since orr cannot name sp), cmp is
    # subs into xzr, tst is ands into xzr, neg is sub from xzr. Each is encoded as its
    # real form, which is also what a disassembler shows back.
    if op == "mov":
        if "sp" in (ops[0], ops[1]):  # add d, n, #0
            return ADD_IMM["add"] | reg(ops[1], sp=True) << 5 | reg(ops[0], sp=True)
        return LOG_REG["orr"] | reg(ops[1]) << 16 | 31 << 5 | reg(ops[0])
    if op in ("cmp", "cmn"):
        return encode(f"{'subs' if op == 'cmp' else 'adds'} xzr, {rest}", pc)
    if op == "tst":
        return encode(f"ands xzr, {rest}", pc)
    if op == "neg":
        return encode(f"sub {ops[0]}, xzr, {', '.join(ops[1:])}", pc)
    if op in ADD_IMM:
        if ops[2].startswith("#"):
            value, shifted = imm(ops[2]), len(ops) == 4
            if shifted and ops[3].replace(" ", "") != "lsl#12" or not 0 <= value < 4096:
                raise EncodeError(f"immediate {rest} does not fit {op}")
            rd = reg(ops[0], sp=not op.endswith("s"))
            return ADD_IMM[op] | shifted << 22 | value << 10 | reg(ops[1], sp=True) << 5 | rd
        kind, amount = _shift(ops[3:])
        return ADD_REG[op] | kind << 22 | reg(ops[2]) << 16 | amount << 10 \
            | reg(ops[1]) << 5 | reg(ops[0])
    if op in LOG_IMM:
        if ops[2].startswith("#"):
            fields = logical_imm(imm(ops[2]))
            if fields is None:
                raise EncodeError(f"{ops[2]} is not a bitmask immediate")
            n, immr, imms = fields
            rd = reg(ops[0], sp=op != "ands")
            return LOG_IMM[op] | n << 22 | immr << 16 | imms << 10 | reg(ops[1]) << 5 | rd
        kind, amount = _shift(ops[3:])
        return LOG_REG[op] | kind << 22 | reg(ops[2]) << 16 | amount << 10 \
            | reg(ops[1]) << 5 | reg(ops[0])
    # Immediate shifts are bitfield moves (ubfm/sbfm): lsl #k is ubfm with immr = -k mod 64
    # and imms = 63 - k; lsr/asr #k keep immr = k, imms = 63.
    if op in ("lsl", "lsr", "asr"):
        k = imm(ops[2])
        if not 0 <= k < 64:
            raise EncodeError(f"shift {k} out of range")
        immr, imms = ((-k) % 64, 63 - k) if op == "lsl" else (k, 63)
        base = 0x93400000 if op == "asr" else 0xD3400000
        return base | immr << 16 | imms << 10 | reg(ops[1]) << 5 | reg(ops[0])
    if op in THREE_REG:
        return THREE_REG[op] | reg(ops[2]) << 16 | reg(ops[1]) << 5 | reg(ops[0])
    if op in FOUR_REG:
        return FOUR_REG[op] | reg(ops[2]) << 16 | reg(ops[3]) << 10 | reg(ops[1]) << 5 \
            | reg(ops[0])
    if op in COND_SELECT:
        return COND_SELECT[op] | reg(ops[2]) << 16 | COND[ops[3]] << 12 | reg(ops[1]) << 5 \
            | reg(ops[0])
    if op == "cset":  # csinc d, xzr, xzr, !cond
        return encode(f"csinc {ops[0]}, xzr, xzr, {_invert(ops[1])}", pc)
    if op == "cneg":  # csneg d, n, n, !cond
        return encode(f"csneg {ops[0]}, {ops[1]}, {ops[1]}, {_invert(ops[2])}", pc)
    if op in ("ldr", "str", "ldur", "stur", "ldrb", "strb"):
        return _memory(op, reg(ops[0]), ops[1], ops[2] if len(ops) > 2 else None)
    if op in ("ldp", "stp"):
        return _pair(op, ops)
    try:  # the FP/SIMD forms (floats): encode_fp
        word = encode_fp(op, ops)
    except FpEncodeError as e:
        raise EncodeError(str(e)) from None
    if word is not None:
        return word
    raise EncodeError(f"no encoding for {text!r}")


# The opposite condition flips the lowest bit of its number (see COND).
def _invert(cond: str) -> str:
    return next(c for c, k in COND.items() if k == COND[cond] ^ 1)
