"""``rt_parse_float``: a float argument of ``main`` read from the command line, exactly
(issue #36), in the AArch64 runtime.

The same reader as x86-64's (:mod:`ssa_course.codegen.x86_64.runtime_float_args`, whose
docstring says the rules): ``Infinity`` with an optional sign; a decimal whose significant
digits make an integer M of at most 2^53 and whose decimal exponent E is within -22..22
(Clinger's fast path: M and 10^|E| are exact doubles, so one ``fmul``/``fdiv`` rounds
correctly); Python's ``float.hex()`` form, bit for bit (what the ``run`` face passes,
:func:`ssa_course.codegen.native.format_args`). Anything else is ``error: argument 'x'
must be a float, not '...'`` or, for a decimal outside the fast path, ``... cannot read
exactly ...`` (status 1, before anything runs).
"""

from __future__ import annotations

from ssa_course.codegen.aarch64 import asmtext as rt
from ssa_course.codegen.float_abi import float_bits
from ssa_course.codegen.runtime_abi import length_of

TWO_53 = 1 << 53
_INEXACT_LENGTH = rt.const("x3", length_of("rt_str_float_inexact"))

# rt_parse_float(x0 = text, x1 = parameter index) -> x0: the double's bits. Keeps x1 (the
# error path names the parameter) and x19-x28 (_start's); clobbers x2-x15 and d0-d2.
# Registers: x9 the text, x2 the cursor, x8 the sign bit, x3 M (then the bits), x5 the
# significant digits (then the exponent's value), x6 E, x7 "a digit was seen", x13 = 10.
FLOAT_ARGS_TEXT = f"""
// ---- float arguments of main (exact: the fast path, Infinity, float.hex())
rt_parse_float:
    mov x15, x30
    mov x9, x0
    mov x2, x0
    movz x8, #0
    ldrb w4, [x2]
    cmp x4, #45
    b.ne .Lfa_plus
    movz x8, #0x8000, lsl #48
    add x2, x2, #1
    b .Lfa_body
.Lfa_plus:
    cmp x4, #43
    b.ne .Lfa_body
    add x2, x2, #1
.Lfa_body:
    mov x10, x2
{rt.addr("x11", "rt_str_lit_infinity")}    bl rt_same_text
    mov x30, x15
    movz x13, #10
    cbz x12, .Lfa_hex
{rt.const("x3", float_bits(float("inf")))}    b .Lfa_signed
.Lfa_hex:
    ldrb w4, [x2]
    cmp x4, #48
    b.ne .Lfa_decimal
    ldrb w4, [x2, #1]
    cmp x4, #120
    b.eq rt_parse_hex_float
.Lfa_decimal:
    movz x3, #0
    movz x5, #0
    movz x6, #0
    movz x7, #0
.Lfa_int:
    ldrb w4, [x2]
    sub x4, x4, #48
    cmp x4, #9
    b.hi .Lfa_point
    movz x7, #1
    cbnz x3, .Lfa_int_take
    cbz x4, .Lfa_int_next
.Lfa_int_take:
    cmp x5, #19
    b.hs .Lfa_int_over
    madd x3, x3, x13, x4
    add x5, x5, #1
    b .Lfa_int_next
.Lfa_int_over:
    cbnz x4, .Lfa_inexact
    add x6, x6, #1
.Lfa_int_next:
    add x2, x2, #1
    b .Lfa_int
.Lfa_point:
    ldrb w4, [x2]
    cmp x4, #46
    b.ne .Lfa_exponent
    add x2, x2, #1
.Lfa_frac:
    ldrb w4, [x2]
    sub x4, x4, #48
    cmp x4, #9
    b.hi .Lfa_exponent
    movz x7, #1
    cbnz x3, .Lfa_frac_take
    cbz x4, .Lfa_frac_zero
.Lfa_frac_take:
    cmp x5, #19
    b.hs .Lfa_frac_over
    madd x3, x3, x13, x4
    add x5, x5, #1
.Lfa_frac_zero:
    sub x6, x6, #1
    b .Lfa_frac_next
.Lfa_frac_over:
    cbnz x4, .Lfa_inexact
.Lfa_frac_next:
    add x2, x2, #1
    b .Lfa_frac
.Lfa_exponent:
    cbz x7, .Lfa_form
    ldrb w4, [x2]
    orr x4, x4, #32
    cmp x4, #101
    b.ne .Lfa_end
    add x2, x2, #1
    movz x12, #0
    ldrb w4, [x2]
    cmp x4, #45
    b.ne .Lfa_exp_plus
    movz x12, #1
    add x2, x2, #1
    b .Lfa_exp_first
.Lfa_exp_plus:
    cmp x4, #43
    b.ne .Lfa_exp_first
    add x2, x2, #1
.Lfa_exp_first:
    ldrb w4, [x2]
    sub x4, x4, #48
    cmp x4, #9
    b.hi .Lfa_form
    movz x5, #0
{rt.const("x14", 100000)}.Lfa_exp_digit:
    ldrb w4, [x2]
    sub x4, x4, #48
    cmp x4, #9
    b.hi .Lfa_exp_done
    cmp x5, x14
    b.hs .Lfa_exp_next
    madd x5, x5, x13, x4
.Lfa_exp_next:
    add x2, x2, #1
    b .Lfa_exp_digit
.Lfa_exp_done:
    cbz x12, .Lfa_exp_add
    neg x5, x5
.Lfa_exp_add:
    add x6, x6, x5
.Lfa_end:
    ldrb w4, [x2]
    cbnz x4, .Lfa_form
    cbz x3, .Lfa_signed
{rt.const("x14", TWO_53)}.Lfa_scale_up:
    cmp x3, x14
    b.hi .Lfa_inexact
    cmp x6, #22
    b.le .Lfa_check
    mul x12, x3, x13
    cmp x12, x14
    b.hi .Lfa_inexact
    mov x3, x12
    sub x6, x6, #1
    b .Lfa_scale_up
.Lfa_check:
    cmn x6, #22
    b.lt .Lfa_inexact
    scvtf d0, x3
{rt.const("x12", float_bits(10.0))}    fmov d1, x12
{rt.const("x12", float_bits(1.0))}    fmov d2, x12
    cmp x6, #0
    cneg x12, x6, lt
.Lfa_power_step:
    cbz x12, .Lfa_apply
    fmul d2, d2, d1
    sub x12, x12, #1
    b .Lfa_power_step
.Lfa_apply:
    cmp x6, #0
    b.lt .Lfa_divide
    fmul d0, d0, d2
    b .Lfa_bits
.Lfa_divide:
    fdiv d0, d0, d2
.Lfa_bits:
    fmov x3, d0
.Lfa_signed:
    orr x0, x3, x8
    ret
.Lfa_form:
    mov x0, x9
{rt.addr("x2", "rt_str_not_float")}{rt.const("x3", length_of("rt_str_not_float"))}    b rt_arg_error
.Lfa_inexact:
    mov x0, x9
{rt.addr("x2", "rt_str_float_inexact")}{_INEXACT_LENGTH}    b rt_arg_error

// rt_parse_hex_float: x2 at "0x", x8 the sign, x9 the text: float.hex()'s form,
// 0xL.HHHHHHHHHHHHHp[+-]D with L 1 (normal) or 0 (zero or subnormal, exponent -1022)
rt_parse_hex_float:
    add x2, x2, #2
    ldrb w5, [x2]
    sub x5, x5, #48
    cmp x5, #1
    b.hi .Lfa_form
    ldrb w4, [x2, #1]
    cmp x4, #46
    b.ne .Lfa_form
    add x2, x2, #2
    movz x3, #0
    movz x7, #13
.Lfh_digit:
    ldrb w4, [x2]
    cmp x4, #112
    b.eq .Lfh_exponent
    sub x4, x4, #48
    cmp x4, #9
    b.ls .Lfh_take
    sub x4, x4, #49
    cmp x4, #5
    b.hi .Lfa_form
    add x4, x4, #10
.Lfh_take:
    cbz x7, .Lfa_form
    sub x7, x7, #1
    lsl x3, x3, #4
    orr x3, x3, x4
    add x2, x2, #1
    b .Lfh_digit
.Lfh_exponent:
    cmp x7, #13
    b.eq .Lfa_form
.Lfh_pad:
    cbz x7, .Lfh_padded
    lsl x3, x3, #4
    sub x7, x7, #1
    b .Lfh_pad
.Lfh_padded:
    add x2, x2, #1
    movz x12, #0
    ldrb w4, [x2]
    cmp x4, #45
    b.ne .Lfh_exp_plus
    movz x12, #1
    add x2, x2, #1
    b .Lfh_exp_first
.Lfh_exp_plus:
    cmp x4, #43
    b.ne .Lfa_form
    add x2, x2, #1
.Lfh_exp_first:
    movz x6, #0
    ldrb w4, [x2]
    sub x4, x4, #48
    cmp x4, #9
    b.hi .Lfa_form
{rt.const("x14", 100000)}.Lfh_exp_digit:
    ldrb w4, [x2]
    cbz x4, .Lfh_exp_done
    sub x4, x4, #48
    cmp x4, #9
    b.hi .Lfa_form
    cmp x6, x14
    b.hs .Lfh_exp_next
    madd x6, x6, x13, x4
.Lfh_exp_next:
    add x2, x2, #1
    b .Lfh_exp_digit
.Lfh_exp_done:
    cbz x12, .Lfh_exp_signed
    neg x6, x6
.Lfh_exp_signed:
    cbz x5, .Lfh_subnormal
    cmn x6, #1022
    b.lt .Lfa_form
    cmp x6, #1023
    b.gt .Lfa_form
    add x6, x6, #1023
    lsl x6, x6, #52
    orr x3, x3, x6
    b .Lfa_signed
.Lfh_subnormal:
    cbz x3, .Lfa_signed
    cmn x6, #1022
    b.ne .Lfa_form
    b .Lfa_signed
"""
