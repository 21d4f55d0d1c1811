"""The runtime's ``rt_print_float`` for AArch64, as assembly: a double printed digit for
digit as :func:`ssa_course.floats.format_float` prints it, with integers only (the plan:
:mod:`ssa_course.codegen.float_print_plan`; x86-64's routine is the same steps).

``rt_print_float(x0 = the double's 64 bits)`` appends the text to the output buffer as
``rt_print_int`` does; like every runtime call it may clobber x0-x17 (the FP registers it
leaves alone) and keeps x18 (the stack limit), x19-x28 and sp. Its frame (about 1.5 KB)
holds the text, the digits, a few slots and six numbers of
:data:`~ssa_course.codegen.float_print_plan.LIMBS` limbs: R, a scratch T, and S, 2S, 4S,
8S. The helpers ``rt_fp_mul``, ``rt_fp_sub``, ``rt_fp_pow``, ``rt_fp_copy`` work on such
numbers.
"""

from __future__ import annotations

from ssa_course.codegen.aarch64.asmtext import const
from ssa_course.codegen.float_print_plan import (
    EXP_DIGITS,
    EXP_FORM_HI,
    EXP_FORM_LO,
    FIXED_DECIMALS,
    FRAME,
    FRAME_BITS,
    FRAME_DIGITS,
    FRAME_P,
    FRAME_R,
    FRAME_S1,
    FRAME_S2,
    FRAME_S4,
    FRAME_S8,
    FRAME_T,
    FRAME_TEXT,
    LIMBS,
    LOG10_2_NUM,
    LOG10_2_SHIFT,
    SIGNIFICAND_BIT,
    TEN_TO_DECIMALS,
)

# The frame both CPUs' routines share (float_print_plan.py), under short names.
_TEXT, _DIGITS, _BITS, _P, _R = FRAME_TEXT, FRAME_DIGITS, FRAME_BITS, FRAME_P, FRAME_R
_T, _S8, _S4, _S2, _S1, _FRAME = FRAME_T, FRAME_S8, FRAME_S4, FRAME_S2, FRAME_S1, FRAME

_INFINITY = int.from_bytes(b"Infinity", "little")
_NAN = int.from_bytes(b"NaN", "little")


def _shift_right_128() -> str:
    """(x11:x10) >>= x13 (0 <= x13 < 128), a bit of x13 at a time (shifts by a register
    are not among the instructions our assembler encodes)."""
    out = ["    tst x13, #64\n    b.eq .Lpf_shift64\n    mov x10, x11\n    movz x11, #0\n"]
    for c in (32, 16, 8, 4, 2, 1):
        out.append(f""".Lpf_shift{2 * c}:
    tst x13, #{c}
    b.eq .Lpf_shift{c}
    lsr x10, x10, #{c}
    lsl x12, x11, #{64 - c}
    orr x10, x10, x12
    lsr x11, x11, #{c}
""")
    return "".join(out) + ".Lpf_shift1:\n"


def _shift_right_64() -> str:
    """x14 >>= x13 (0 <= x13 < 128)."""
    out = ["    tst x13, #64\n    b.eq .Lpf_int64\n    movz x14, #0\n"]
    for c in (32, 16, 8, 4, 2, 1):
        out.append(f".Lpf_int{2 * c}:\n    tst x13, #{c}\n    b.eq .Lpf_int{c}\n"
                   f"    lsr x14, x14, #{c}\n")
    return "".join(out) + ".Lpf_int1:\n"


def _digit_step(weight: int, buffer: int) -> str:
    """One of a digit's four passes: R - weight*S into T; if not negative, T is the new R
    (the pointers in x20 and x21 swap) and the digit (x23[x19]) gains ``weight``."""
    return f"""    mov x0, x21
    mov x1, x20
    add x2, sp, #{buffer}
    mov x3, x22
    bl rt_fp_sub
    cbnz x0, .Lpf_less{weight}
    mov x9, x20
    mov x20, x21
    mov x21, x9
    ldrb w9, [x23, x19]
    add x9, x9, #{weight}
    strb w9, [x23, x19]
.Lpf_less{weight}:
"""


def _copy(source: int, target: int) -> str:
    return f"""    add x0, sp, #{target}
    add x1, sp, #{source}
    bl rt_fp_copy
"""


def _double(source: int, target: int) -> str:
    """target = 2 * source (numbers in the frame)."""
    return _copy(source, target) + f"""    movz x1, #2
    movz x2, #{LIMBS}
    bl rt_fp_mul
"""


def _add_to_p(label: str = "") -> str:
    return f"""{label}    ldr x9, [sp, #{_P}]
    add x9, x9, #1
    str x9, [sp, #{_P}]
"""


def _put(char: str) -> str:
    """One character at x20, which moves on."""
    return f"    movz x9, #{ord(char)}\n    strb w9, [x20]\n    add x20, x20, #1\n"



def _multiples() -> str:
    """2S, 4S and 8S from S."""
    return _double(_S1, _S2) + _double(_S2, _S4) + _double(_S4, _S8)


FLOAT_TEXT = f"""
// ---- print a double (docs: codegen/float_print_plan.py): exact integers, no FP registers
// rt_fp_mul(x0 = limbs, x1 = factor < 2^32, x2 = count): limbs *= factor (the carry out
// of the last limb is dropped: the numbers are sized so that there is none); clobbers x3-x6
rt_fp_mul:
    movz x3, #0
    movz x4, #0
.Lfp_mul_loop:
    ldr x5, [x0, x4, lsl #3]
    madd x5, x5, x1, x3
    and x6, x5, #0xffffffff
    str x6, [x0, x4, lsl #3]
    lsr x3, x5, #32
    add x4, x4, #1
    cmp x4, x2
    b.lo .Lfp_mul_loop
    ret

// rt_fp_sub(x0 = difference, x1 = a, x2 = b, x3 = count) -> x0 = 1 when a < b (the
// difference wrapped), else 0; clobbers x4-x7
rt_fp_sub:
    movz x4, #0
    movz x5, #0
.Lfp_sub_loop:
    ldr x6, [x1, x5, lsl #3]
    ldr x7, [x2, x5, lsl #3]
    sub x6, x6, x7
    sub x6, x6, x4
    lsr x4, x6, #63
    and x6, x6, #0xffffffff
    str x6, [x0, x5, lsl #3]
    add x5, x5, #1
    cmp x5, x3
    b.lo .Lfp_sub_loop
    mov x0, x4
    ret

// rt_fp_copy(x0 = target, x1 = source): {LIMBS} limbs; clobbers x3, x4
rt_fp_copy:
    movz x3, #0
.Lfp_copy_loop:
    ldr x4, [x1, x3, lsl #3]
    str x4, [x0, x3, lsl #3]
    add x3, x3, #1
    cmp x3, #{LIMBS}
    b.lo .Lfp_copy_loop
    ret

// rt_fp_pow(x0 = limbs, x1 = k, x2 = count, x9 = base): limbs *= base^k, in factors
// below 2^32; clobbers x1, x3-x6, x10, x11
rt_fp_pow:
    stp x29, x30, [sp, #-16]!
    mov x10, x1
    movz x11, #1
.Lfp_pow_loop:
    cbz x10, .Lfp_pow_last
    mul x1, x11, x9
    lsr x3, x1, #32
    cbnz x3, .Lfp_pow_flush
    mov x11, x1
    sub x10, x10, #1
    b .Lfp_pow_loop
.Lfp_pow_flush:
    mov x1, x11
    bl rt_fp_mul
    movz x11, #1
    b .Lfp_pow_loop
.Lfp_pow_last:
    mov x1, x11
    bl rt_fp_mul
    ldp x29, x30, [sp], #16
    ret

// rt_print_float(x0 = the bits of a double): its text as brili prints it, into the output
.globl rt_print_float
rt_print_float:
    stp x29, x30, [sp, #-16]!
    stp x19, x20, [sp, #-16]!
    stp x21, x22, [sp, #-16]!
    stp x23, x24, [sp, #-16]!
    sub sp, sp, #{_FRAME}
    str x0, [sp, #{_BITS}]
    and x20, x0, #0x7fffffffffffffff
{const("x9", 0x7FF0000000000000)}    cmp x20, x9
    b.hs .Lpf_special
// m (x21) and e (x22): x = m * 2^e (zero: m = 0, e = 0); the form by |x|'s bits
    lsr x22, x20, #52
    and x21, x20, #{SIGNIFICAND_BIT - 1:#x}
    cbz x22, .Lpf_subnormal
    orr x21, x21, #{SIGNIFICAND_BIT:#x}
    sub x22, x22, #1075
    b .Lpf_form
.Lpf_subnormal:
{const("x22", -1074)}    cbnz x21, .Lpf_form
    movz x22, #0
.Lpf_form:
{const("x9", EXP_FORM_HI)}    cmp x20, x9
    b.hs .Lpf_normalise
{const("x9", EXP_FORM_LO)}    cmp x20, x9
    b.hi .Lpf_fixed
    cbz x20, .Lpf_fixed
// the exponent form: P = floor(log10 |x|), perhaps one low, from the normalised m
.Lpf_normalise:
    tst x21, #{SIGNIFICAND_BIT:#x}
    b.ne .Lpf_normal
    lsl x21, x21, #1
    sub x22, x22, #1
    b .Lpf_normalise
.Lpf_normal:
    add x10, x22, #52
{const("x9", LOG10_2_NUM)}    mul x10, x10, x9
    asr x10, x10, #{LOG10_2_SHIFT}
    str x10, [sp, #{_P}]
// R = m, S = 1 (every other limb 0); then |x| / 10^P = R / S
    add x9, sp, #{_R}
    movz x10, #0
.Lpf_zero:
    str xzr, [x9, x10, lsl #3]
    add x10, x10, #1
    cmp x10, #{6 * LIMBS}
    b.lo .Lpf_zero
    and x9, x21, #0xffffffff
    str x9, [sp, #{_R}]
    lsr x9, x21, #32
    str x9, [sp, #{_R + 8}]
    movz x9, #1
    str x9, [sp, #{_S1}]
    ldr x1, [sp, #{_P}]
    add x0, sp, #{_S1}
    cmp x1, #0
    b.ge .Lpf_fives
    add x0, sp, #{_R}
    neg x1, x1
.Lpf_fives:
    movz x2, #{LIMBS}
    movz x9, #5
    bl rt_fp_pow
    ldr x9, [sp, #{_P}]
    sub x1, x22, x9
    add x0, sp, #{_R}
    cmp x1, #0
    b.ge .Lpf_twos
    add x0, sp, #{_S1}
    neg x1, x1
.Lpf_twos:
    movz x2, #{LIMBS}
    movz x9, #2
    bl rt_fp_pow
// R >= 10 S: P was one low
{_copy(_S1, _S2)}    movz x1, #10
    movz x2, #{LIMBS}
    bl rt_fp_mul
    add x0, sp, #{_T}
    add x1, sp, #{_R}
    add x2, sp, #{_S2}
    movz x3, #{LIMBS}
    bl rt_fp_sub
    cbnz x0, .Lpf_scaled
{_copy(_S2, _S1)}{_add_to_p()}.Lpf_scaled:
{_multiples()}// x22 = the limbs in use: 10 S (and so R) fits in one more than S has
    add x9, sp, #{_S1}
    movz x22, #{LIMBS - 1}
.Lpf_top:
    ldr x10, [x9, x22, lsl #3]
    cbnz x10, .Lpf_top_found
    sub x22, x22, #1
    b .Lpf_top
.Lpf_top_found:
    add x22, x22, #2
// the digits: 19 of them (the last only rounds); x19 = i, x20 = R, x21 = T, x23 = digits
    add x20, sp, #{_R}
    add x21, sp, #{_T}
    add x23, sp, #{_DIGITS}
    movz x24, #{EXP_DIGITS}
    movz x19, #0
.Lpf_digit:
    strb wzr, [x23, x19]
{_digit_step(8, _S8)}{_digit_step(4, _S4)}{_digit_step(2, _S2)}{_digit_step(1, _S1)}    mov x0, x20
    movz x1, #10
    mov x2, x22
    bl rt_fp_mul
    add x19, x19, #1
    cmp x19, x24
    b.ls .Lpf_digit
// round half up: the extra digit is 5 or more exactly when the rest is half or more
    ldrb w9, [x23, x24]
    cmp x9, #5
    b.lo .Lpf_text
    mov x19, x24
.Lpf_carry:
    cbz x19, .Lpf_carry_out
    sub x19, x19, #1
    ldrb w9, [x23, x19]
    cmp x9, #9
    b.ne .Lpf_bump
    strb wzr, [x23, x19]
    b .Lpf_carry
.Lpf_bump:
    add x9, x9, #1
    strb w9, [x23, x19]
    b .Lpf_text
.Lpf_carry_out:
    movz x9, #1
    strb w9, [x23]
{_add_to_p()}// the text at x20: sign, d.ddddddddddddddddde+P
.Lpf_text:
    add x20, sp, #{_TEXT}
    ldr x9, [sp, #{_BITS}]
    cmp x9, #0
    b.ge .Lpf_exp_text
{_put("-")}.Lpf_exp_text:
    ldrb w9, [x23]
    add x9, x9, #48
    strb w9, [x20]
    add x20, x20, #1
{_put(".")}    movz x10, #1
.Lpf_exp_loop:
    ldrb w9, [x23, x10]
    add x9, x9, #48
    strb w9, [x20]
    add x20, x20, #1
    add x10, x10, #1
    cmp x10, #{EXP_DIGITS}
    b.lo .Lpf_exp_loop
{_put("e")}    ldr x0, [sp, #{_P}]
    cmp x0, #0
    b.lt .Lpf_exp_digits
{_put("+")}.Lpf_exp_digits:
    bl rt_format_int
    movz x3, #0
.Lpf_exp_copy:
    ldrb w4, [x1, x3]
    strb w4, [x20, x3]
    add x3, x3, #1
    cmp x3, x2
    b.lo .Lpf_exp_copy
    add x20, x20, x2
.Lpf_out:
    add x1, sp, #{_TEXT}
    sub x2, x20, x1
    bl rt_out_bytes
    add sp, sp, #{_FRAME}
    ldp x23, x24, [sp], #16
    ldp x21, x22, [sp], #16
    ldp x19, x20, [sp], #16
    ldp x29, x30, [sp], #16
    ret
// the fixed form, in 128 bits: n = round(|x| 10^17) = (floor(2 m 10^17 / 2^k) + 1) / 2
// with k = -e (0 <= k < 90 here), the integer part I = m >> k, the decimals n - I 10^17
// (below 10^17: no double lies within 5e-18 below an integer)
// (smulh is umulh here: m < 2^53 and 10^17 < 2^63 are both non-negative)
.Lpf_fixed:
{const("x9", TEN_TO_DECIMALS)}    mul x10, x21, x9
    smulh x11, x21, x9
    lsr x12, x10, #63
    lsl x11, x11, #1
    orr x11, x11, x12
    lsl x10, x10, #1
    neg x13, x22
{_shift_right_128()}    adds x10, x10, #1
    csinc x11, x11, x11, lo
    lsr x10, x10, #1
    lsl x11, x11, #63
    orr x10, x10, x11
    mov x14, x21
{_shift_right_64()}    msub x10, x14, x9, x10
// the text: sign, I, '.', the 17 decimals (leading zeros kept)
    mov x21, x10
    add x20, sp, #{_TEXT}
    ldr x9, [sp, #{_BITS}]
    cmp x9, #0
    b.ge .Lpf_fixed_int
{_put("-")}.Lpf_fixed_int:
    mov x0, x14
    bl rt_format_int
    movz x3, #0
.Lpf_int_copy:
    ldrb w4, [x1, x3]
    strb w4, [x20, x3]
    add x3, x3, #1
    cmp x3, x2
    b.lo .Lpf_int_copy
    add x20, x20, x2
{_put(".")}    movz x3, #{FIXED_DECIMALS}
    movz x5, #10
.Lpf_decimal:
    sub x3, x3, #1
    udiv x6, x21, x5
    msub x7, x6, x5, x21
    add x7, x7, #48
    strb w7, [x20, x3]
    mov x21, x6
    cbnz x3, .Lpf_decimal
    add x20, x20, #{FIXED_DECIMALS}
    b .Lpf_out
// NaN (any sign: brili prints no sign) and the infinities
.Lpf_special:
    b.ne .Lpf_nan
    add x20, sp, #{_TEXT}
    ldr x9, [sp, #{_BITS}]
    cmp x9, #0
    b.ge .Lpf_infinity
{_put("-")}.Lpf_infinity:
{const("x9", _INFINITY)}    str x9, [x20]
    add x20, x20, #8
    b .Lpf_out
.Lpf_nan:
    add x20, sp, #{_TEXT}
{const("x9", _NAN)}    str x9, [x20]
    add x20, x20, #3
    b .Lpf_out
"""
