"""The FP/SIMD instructions of our AArch64 encoder: doubles in ``d`` registers.

A float lives in a general-purpose register as its raw 64-bit bits; an operation moves
its operands into scratch ``d`` registers (``fmov d0, x1``), computes there and moves the
result back (``fmov x0, d0``). So the encoder needs only the scalar double-precision
forms below, each one 32-bit word with the same field positions as the integer forms
(``Rd`` at bit 0, ``Rn`` at 5, ``Rm`` at 16) and ``type = 01`` (double) at bits 22-23:

* ``fmov`` between an ``x`` and a ``d`` register (both ways: a bit copy, no conversion)
  and between two ``d`` registers, and ``fmov d, #c`` for a constant ``c`` that fits
  eight bits (:func:`fp_imm8`: +-(16 + m)/16 * 2^e, m 0..15, e -3..4: 2.0, 0.5, -1.25, 31.0);
* ``fadd fsub fmul fdiv`` ``d, d, d``, ``fneg d, d`` and ``fabs d, d``;
* ``fcmp d, d`` and ``fcmp d, #0.0`` (set NZCV; unordered, a NaN operand, sets C and V);
* ``scvtf d, x`` (signed 64-bit integer -> double, rounded as FPCR says: to nearest)
  and ``fcvtzs x, d`` (double -> signed 64-bit, toward zero, saturating; NaN gives 0).

:func:`encode_fp` gives the word, or None when the mnemonic is not one of these.
"""

from __future__ import annotations

import re
import struct

# Base words (Arm ARM, "Floating-point data-processing" and "Conversion between
# floating-point and integer"), type = 01 (double), sf = 1 (64-bit integer side).
FP_THREE = {"fadd": 0x1E602800, "fsub": 0x1E603800, "fmul": 0x1E600800,
            "fdiv": 0x1E601800}
FMOV_D_FROM_X = 0x9E670000  # fmov Dd, Xn
FMOV_X_FROM_D = 0x9E660000  # fmov Xd, Dn
FMOV_D_FROM_D = 0x1E604000  # fmov Dd, Dn
FMOV_D_IMM = 0x1E601000  # fmov Dd, #imm (imm8 at bit 13)
FNEG = 0x1E614000
FABS = 0x1E60C000
FCMP = 0x1E602000  # fcmp Dn, Dm (Rd field 0)
FCMP_ZERO = 0x1E602008  # fcmp Dn, #0.0 (opc bit 3: compare with zero)
SCVTF = 0x9E620000  # scvtf Dd, Xn
FCVTZS = 0x9E780000  # fcvtzs Xd, Dn
FP_OPS = frozenset({*FP_THREE, "fmov", "fneg", "fabs", "fcmp", "scvtf", "fcvtzs"})


class FpEncodeError(ValueError):
    """An FP instruction with an operand it does not take."""


def dreg(text: str) -> int:
    m = re.fullmatch(r"d(\d+)", text.strip())
    if m is None or int(m.group(1)) > 31:
        raise FpEncodeError(f"not a d register here: {text!r}")
    return int(m.group(1))


def _xreg(text: str) -> int:
    # x31 is xzr in these fields: fmov d0, xzr is +0.0, scvtf of xzr is 0.0.
    t = text.strip()
    if t == "xzr":
        return 31
    m = re.fullmatch(r"x(\d+)", t)
    if m is None or int(m.group(1)) > 30:
        raise FpEncodeError(f"not an x register here: {text!r}")
    return int(m.group(1))


def fp_imm8(bits: int) -> int | None:
    """The 8-bit field of ``fmov d, #c`` for the double whose bits are ``bits``, or None.

    The Arm ARM's VFPExpandImm reads imm8 = a:bcd:efgh as sign a, exponent NOT(b)
    b b b b b b b b c d (11 bits), fraction efgh then 48 zeros: so the low 48 bits must be
    zero and exponent bits 61..54 all equal to b, bit 62 its opposite. (0.0 has no form.)"""
    bits &= (1 << 64) - 1
    b = bits >> 61 & 1
    if bits & ((1 << 48) - 1) or bits >> 62 & 1 == b or bits >> 54 & 0xFF != 0xFF * b:
        return None
    return (bits >> 63) << 7 | b << 6 | (bits >> 48 & 0x3F)


def encode_fp(op: str, ops: list[str]) -> int | None:
    """The word of FP instruction ``op`` with operands ``ops``, or None if ``op`` is not
    an FP mnemonic this back end emits."""
    if op not in FP_OPS:
        return None
    if op in FP_THREE:
        _arity(op, ops, 3)
        return FP_THREE[op] | dreg(ops[2]) << 16 | dreg(ops[1]) << 5 | dreg(ops[0])
    _arity(op, ops, 2)
    if op == "fmov":
        dst, src = ops[0].strip(), ops[1].strip()
        if dst.startswith("d") and src.startswith("d"):
            return FMOV_D_FROM_D | dreg(src) << 5 | dreg(dst)
        if dst.startswith("d") and src.startswith("#"):
            return FMOV_D_IMM | _imm8(src) << 13 | dreg(dst)
        if dst.startswith("d"):
            return FMOV_D_FROM_X | _xreg(src) << 5 | dreg(dst)
        return FMOV_X_FROM_D | dreg(src) << 5 | _xreg(dst)
    if op in ("fneg", "fabs"):
        return (FNEG if op == "fneg" else FABS) | dreg(ops[1]) << 5 | dreg(ops[0])
    if op == "fcmp":
        if ops[1].replace(" ", "") in ("#0.0", "#0"):
            return FCMP_ZERO | dreg(ops[0]) << 5
        return FCMP | dreg(ops[1]) << 16 | dreg(ops[0]) << 5
    if op == "scvtf":
        return SCVTF | _xreg(ops[1]) << 5 | dreg(ops[0])
    return FCVTZS | dreg(ops[1]) << 5 | _xreg(ops[0])  # fcvtzs


def _imm8(text: str) -> int:
    try:
        value = float(text[1:])
    except ValueError:
        raise FpEncodeError(f"not a float immediate: {text!r}") from None
    field = fp_imm8(struct.unpack("<q", struct.pack("<d", value))[0])
    if field is None:
        raise FpEncodeError(f"{text} does not fit fmov's 8-bit float immediate")
    return field


def _arity(op: str, ops: list[str], n: int) -> None:
    if len(ops) != n:
        raise FpEncodeError(f"{op} takes {n} operands, not {len(ops)}: {', '.join(ops)}")
