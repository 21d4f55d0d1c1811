"""How the generated runtime prints a double (``rt_print_float``), the plan both CPUs'
routines follow (``x86_64/runtime_float.py``, ``aarch64/runtime_float.py``).

The text is :func:`ssa_course.floats.format_float`'s, digit for digit: ``NaN``,
``[-]Infinity``; ``toFixed(17)`` when ``|log10 |x|| < 10`` (zero and ``-0`` included),
else ``toExponential(17)``; an exact tie rounds away from zero. No floating-point
instruction is used: the routine reads the bits (``x = m * 2^e``, ``m`` the 53-bit
significand) and works with exact integers.

1. **The form.** ``|log10 |x|| >= 10`` as Python decides it for doubles is, for the bits of
   ``|x|`` read as an unsigned number, ``bits >= EXP_FORM_HI`` or ``0 < bits <=
   EXP_FORM_LO`` (the doubles' order is their bits' order; the two boundaries are the
   first doubles the rule puts in the exponent form, ten of them just below ``1e10``,
   where ``log10`` rounds to 10.0, and the last one above ``1e-10``; a test checks them
   against ``math.log10``).
2. **The fixed form**, in 128-bit integers: ``n = round(|x| * 10^17)`` is
   ``(floor(2 m 10^17 / 2^k) + 1) / 2`` with ``k = -e`` (``0 <= k < 90`` for
   ``1e-10 < |x| < 1e10``; ``2 m 10^17 < 2^111``; the shift by ``k`` goes a bit of ``k``
   at a time, as neither assembler encodes shifts by a register). The integer part is
   ``I = m >> k``, the decimals ``F = n - I 10^17`` (in 64 bits; below ``10^17``, as no
   double lies within ``5e-18`` below an integer: rounding never carries into ``I``).
   Text: ``I`` by ``rt_format_int``, ``.``, ``F`` in 17 digits.
3. **The exponent form**, with exact big integers. ``P = floor(log10 |x|)`` starts as
   ``floor(e2 * log10 2) = (e2 * 78913) >> 18`` (exact for these exponents), ``e2 =
   floor(log2 |x|)`` from the significand normalised to 53 bits; the true ``P`` is that
   or one more. ``|x| / 10^P = R / S`` with ``10^P = 5^P * 2^P``: the fives go to ``S``
   (``P >= 0``) or ``R`` (``P < 0``), the twos are netted against ``2^e`` and go to one
   side; ``R = m``, ``S = 1`` to start, each multiplied by factors below 2^32. If ``R >=
   10 S`` the estimate was one low: ``S = 10 S``, ``P + 1``. Numbers are :data:`LIMBS`
   limbs of 32 bits, each kept in a 64-bit word (a limb times a factor plus a carry fits
   in 64 bits, a difference's borrow is its sign bit).
4. **Digits.** ``0 <= R < 10 S``; each digit is found by subtracting ``8S``, ``4S``,
   ``2S``, ``S`` where the difference is not negative (four passes over the limbs in
   use), then ``R = 10 R``; one digit more than the 18 printed is made: the rest is a tie
   or more (``2R >= S``) exactly when that digit is 5 or more, then the digits are
   rounded up, a carry out of the first turning ``9.99...e+P`` into ``1.00...e+P+1``.
   Text: ``d.ddddddddddddddddde+P`` (``e-P``), the exponent by ``rt_format_int``.

The text is built in the routine's frame and appended with ``rt_out_bytes``
(``rt_print_int``'s buffer and flushes). A print costs about 600 instructions in the
fixed form and 8,000 to 50,000 in the exponent form (AArch64, emulated).
"""

from __future__ import annotations

EXP_FORM_HI = 0x4202A05F1FFFFFF6  # 9999999999.99998...: the smallest large double printed e+10
EXP_FORM_LO = 0x3DDB7CDFD9D7BDCA  # 1.000000000000002e-10: the largest small one printed e-10
LOG10_2_NUM = 78913  # floor(e2 * log10(2)) == (e2 * 78913) >> 18 for |e2| <= 1100
LOG10_2_SHIFT = 18
LIMBS = 28  # 32-bit limbs per number: R and 10 S of every double fit in 25 (a test checks)
LIMB_BYTES = 8  # each limb in a 64-bit word
BUFFER = LIMBS * LIMB_BYTES
FIXED_DECIMALS = 17  # toFixed(17)
TEN_TO_DECIMALS = 10**FIXED_DECIMALS
EXP_DIGITS = 18  # toExponential(17): one digit, the point, 17 more
SIGNIFICAND_BIT = 1 << 52


# The routine's frame on both CPUs, from the stack pointer: the text, the digits, two
# slots (the bits, the power P), then the big numbers R, T, 8S, 4S, 2S, S.
FRAME_TEXT, FRAME_DIGITS, FRAME_BITS, FRAME_P, FRAME_R = 0, 64, 96, 104, 128
FRAME_T, FRAME_S8, FRAME_S4, FRAME_S2, FRAME_S1 = (FRAME_R + k * BUFFER for k in range(1, 6))
FRAME = FRAME_R + 6 * BUFFER
assert FRAME % 16 == 0 and FRAME < 4096 and EXP_DIGITS + 1 <= FRAME_BITS - FRAME_DIGITS
