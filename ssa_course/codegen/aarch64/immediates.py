"""Which constants fit an AArch64 instruction, and how a 64-bit constant is built.

Every instruction is 32 bits, so no instruction holds a 64-bit constant. Three kinds of
immediate field exist, and a constant that fits none goes through a register:

* **arithmetic** (``add``/``sub``/``cmp``): 12 bits unsigned, optionally shifted left by
  12 -- 0..4095 and multiples of 4096 up to 4095 << 12; a negative one flips the op
  (``add x, -5`` is ``sub x, 5``; ``cmp x, -5`` is ``cmn x, 5``);
* **logical** (``and``/``orr``/``eor``/``tst``): a *bitmask* -- a run of ones, rotated,
  repeated in every 2/4/8/16/32/64-bit element (``0xff``, ``-16``, ``0x5555...``);
  0 and -1 are not encodable (:func:`logical_imm` gives the N:immr:imms fields);
* **move wide** (``movz``/``movn``/``movk``): 16 bits at bit 0, 16, 32 or 48. A constant is
  built by one ``movz`` (or ``movn`` for mostly-ones values) and a ``movk`` for each other
  16-bit piece, or by one ``orr d, xzr, #bitmask`` (:func:`mov_sequence`).
"""

from __future__ import annotations

MASK64 = (1 << 64) - 1


def arith_imm(value: int) -> tuple[int, int] | None:
    """``(imm12, shift)`` when ``value`` fits an add/sub immediate (shift 0 or 12)."""
    if 0 <= value < 4096:
        return value, 0
    if 0 <= value < (4096 << 12) and value & 0xFFF == 0:
        return value >> 12, 12
    return None


def logical_imm(value: int) -> tuple[int, int, int] | None:
    """``(N, immr, imms)`` of ``value`` as a 64-bit bitmask immediate, or None."""
    v = value & MASK64
    if v in (0, MASK64):
        return None
    size = 64
    while size > 2:  # the smallest element the value repeats
        half = size // 2
        m = (1 << half) - 1
        if (v & m) != ((v >> half) & m):
            break
        size = half
    m = (1 << size) - 1
    e = v & m
    ones = bin(e).count("1")
    # rotate right until the ones are at the bottom: e == ror(ones_run, r)
    for r in range(size):
        rotated = ((e << r) | (e >> (size - r))) & m if r else e
        if rotated == (1 << ones) - 1:
            immr = r
            break
    else:
        return None
    n = 1 if size == 64 else 0
    imms = ((~(size - 1) << 1) & 0x3F) | (ones - 1)
    return n, immr, imms


def decode_logical(n: int, immr: int, imms: int) -> int:
    """The 64-bit value of a bitmask immediate's fields (the inverse of :func:`logical_imm`)."""
    combined = (n << 6) | (~imms & 0x3F)
    size = 1 << (combined.bit_length() - 1)
    ones = (imms & (size - 1)) + 1
    e = (1 << ones) - 1
    m = (1 << size) - 1
    e = ((e >> immr) | (e << (size - immr))) & m if immr else e
    out = 0
    for k in range(0, 64, size):
        out |= e << k
    return out


def mov_sequence(value: int) -> list[tuple[str, int, int]]:
    """How to put ``value`` (64-bit, signed or not) in a register: a list of
    ``(op, imm, shift)`` with op ``movz``/``movn``/``movk``, or ``("orr", value, 0)`` for one
    ``orr d, xzr, #value``. The shortest is chosen; ties prefer movz, then movn, then orr."""
    v = value & MASK64
    parts = [(v >> s) & 0xFFFF for s in (0, 16, 32, 48)]
    zeros = parts.count(0)
    ones = parts.count(0xFFFF)
    if zeros >= 3 or zeros >= ones and zeros >= 2:
        base = "movz"
    elif ones >= 2:
        base = "movn"
    else:
        base = "movz"
    if base == "movz":
        pieces = [(k, p) for k, p in enumerate(parts) if p != 0] or [(0, 0)]
        first_k, first_p = pieces[0]
        seq = [("movz", first_p, 16 * first_k)]
    else:
        pieces = [(k, p) for k, p in enumerate(parts) if p != 0xFFFF] or [(0, 0xFFFF)]
        first_k, first_p = pieces[0]
        seq = [("movn", ~first_p & 0xFFFF, 16 * first_k)]
    seq += [("movk", p, 16 * k) for k, p in pieces[1:]]
    if len(seq) > 1 and logical_imm(v) is not None:
        return [("orr", v, 0)]
    return seq
