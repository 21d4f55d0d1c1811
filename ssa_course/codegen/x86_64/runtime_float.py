"""The runtime's ``rt_print_float`` for x86-64, as assembly: a double printed digit for
digit as :func:`ssa_course.floats.format_float` prints it, with integers only (the plan:
:mod:`ssa_course.codegen.float_print_plan`).

``rt_print_float(rdi = the double's 64 bits)`` appends the text to the output buffer as
``rt_print_int`` does; like every runtime call it may clobber the caller-saved registers
(the xmm registers it leaves alone) and keeps rbx, rbp, r12-r15. Its frame (about 1.5 KB
below the caller's rsp) holds the text, the digits, a few slots and six numbers of
:data:`~ssa_course.codegen.float_print_plan.LIMBS` limbs: R, a scratch T, and S, 2S, 4S,
8S. The helpers ``rt_fp_mul``, ``rt_fp_sub``, ``rt_fp_pow`` work on such numbers.
"""

from __future__ import annotations

from ssa_course.codegen.float_print_plan import (
    BUFFER,
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
    """(rdx:rax) >>= r9 (0 <= r9 < 128), a bit of r9 at a time (shifts by a register are
    not among the instructions our assembler encodes)."""
    out = ["    test r9, 64\n    jz .Lpf_shift64\n    mov rax, rdx\n    xor edx, edx\n"]
    for c in (32, 16, 8, 4, 2, 1):
        out.append(f""".Lpf_shift{2 * c}:
    test r9, {c}
    jz .Lpf_shift{c}
    mov r8, rdx
    shl r8, {64 - c}
    shr rax, {c}
    or rax, r8
    shr rdx, {c}
""")
    return "".join(out) + ".Lpf_shift1:\n"


def _shift_right_64() -> str:
    """r10 >>= r9 (0 <= r9 < 128)."""
    out = ["    test r9, 64\n    jz .Lpf_int64\n    xor r10d, r10d\n"]
    for c in (32, 16, 8, 4, 2, 1):
        out.append(f".Lpf_int{2 * c}:\n    test r9, {c}\n    jz .Lpf_int{c}\n"
                   f"    shr r10, {c}\n")
    return "".join(out) + ".Lpf_int1:\n"


def _digit_step(weight: int, buffer: int) -> str:
    """One of a digit's four passes: R - weight*S into T; if not negative, T is the new R
    (the pointers in r12 and r13 swap) and the digit gains ``weight``."""
    return f"""    mov rdi, r13
    mov rsi, r12
    lea rdx, [rsp + {buffer}]
    mov rcx, r14
    call rt_fp_sub
    test rax, rax
    jnz .Lpf_less{weight}
    mov rax, r12
    mov r12, r13
    mov r13, rax
    add byte ptr [rsp + rbx + {_DIGITS}], {weight}
.Lpf_less{weight}:
"""


def _double(source: int, target: int) -> str:
    """target = 2 * source (numbers in the frame)."""
    return f"""    lea rsi, [rsp + {source}]
    lea rdi, [rsp + {target}]
    mov ecx, {BUFFER}
    rep movsb
    lea rdi, [rsp + {target}]
    mov esi, 2
    mov ecx, {LIMBS}
    call rt_fp_mul
"""


def _multiples() -> str:
    """2S, 4S and 8S from S."""
    return _double(_S1, _S2) + _double(_S2, _S4) + _double(_S4, _S8)


FLOAT_TEXT = f"""
# ---- print a double (docs: codegen/float_print_plan.py): exact integers, no FPU
# rt_fp_mul(rdi = limbs, rsi = factor < 2^32, rcx = count): limbs *= factor (the carry out
# of the last limb is dropped: the numbers are sized so that there is none);
# clobbers rax, rdx, r8
rt_fp_mul:
    xor r8d, r8d
    xor edx, edx
.Lfp_mul_loop:
    mov rax, qword ptr [rdi + 8*rdx]
    imul rax, rsi
    add rax, r8
    mov r8, rax
    shr r8, 32
    mov eax, eax
    mov qword ptr [rdi + 8*rdx], rax
    inc rdx
    cmp rdx, rcx
    jb .Lfp_mul_loop
    ret

# rt_fp_sub(rdi = difference, rsi = a, rdx = b, rcx = count) -> rax = 1 when a < b (the
# difference wrapped), else 0; clobbers r8, r9
rt_fp_sub:
    xor r8d, r8d
    xor r9d, r9d
.Lfp_sub_loop:
    mov rax, qword ptr [rsi + 8*r9]
    sub rax, qword ptr [rdx + 8*r9]
    sub rax, r8
    mov r8, rax
    shr r8, 63
    mov eax, eax
    mov qword ptr [rdi + 8*r9], rax
    inc r9
    cmp r9, rcx
    jb .Lfp_sub_loop
    mov rax, r8
    ret

# rt_fp_pow(rdi = limbs, rsi = k, rdx = base, rcx = count): limbs *= base^k, in factors
# below 2^32; clobbers rax, rdx, rsi, r8-r11
rt_fp_pow:
    mov r10, rdx
    mov r11, rsi
    mov r9d, 1
.Lfp_pow_loop:
    test r11, r11
    jz .Lfp_pow_last
    mov rax, r9
    imul rax, r10
    mov rdx, rax
    shr rdx, 32
    jnz .Lfp_pow_flush
    mov r9, rax
    dec r11
    jmp .Lfp_pow_loop
.Lfp_pow_flush:
    mov rsi, r9
    call rt_fp_mul
    mov r9d, 1
    jmp .Lfp_pow_loop
.Lfp_pow_last:
    mov rsi, r9
    jmp rt_fp_mul

# rt_print_float(rdi = the bits of a double): its text as brili prints it, into the output
.globl rt_print_float
rt_print_float:
    push rbx
    push r12
    push r13
    push r14
    sub rsp, {_FRAME}
    mov qword ptr [rsp + {_BITS}], rdi
    mov rbx, rdi
    mov rax, 0x7fffffffffffffff
    and rbx, rax
    mov rax, 0x7ff0000000000000
    cmp rbx, rax
    jae .Lpf_special
# m (r13) and e (r14): x = m * 2^e (zero: m = 0, e = 0); the form by |x|'s bits
    mov r14, rbx
    shr r14, 52
    mov r13, {SIGNIFICAND_BIT - 1:#x}
    and r13, rbx
    test r14, r14
    jz .Lpf_subnormal
    mov rax, {SIGNIFICAND_BIT:#x}
    or r13, rax
    sub r14, 1075
    jmp .Lpf_form
.Lpf_subnormal:
    mov r14, -1074
    test r13, r13
    jnz .Lpf_form
    xor r14d, r14d
.Lpf_form:
    mov rax, {EXP_FORM_HI:#x}
    cmp rbx, rax
    jae .Lpf_exponent
    mov rax, {EXP_FORM_LO:#x}
    cmp rbx, rax
    ja .Lpf_fixed
    test rbx, rbx
    jz .Lpf_fixed
# the exponent form: P = floor(log10 |x|), perhaps one low, from the normalised m
.Lpf_exponent:
    mov rax, {SIGNIFICAND_BIT:#x}
.Lpf_normalise:
    test r13, rax
    jnz .Lpf_normal
    add r13, r13
    dec r14
    jmp .Lpf_normalise
.Lpf_normal:
    lea r8, [r14 + 52]
    imul r8, r8, {LOG10_2_NUM}
    sar r8, {LOG10_2_SHIFT}
    mov qword ptr [rsp + {_P}], r8
# R = m, S = 1 (every other limb 0); then |x| / 10^P = R / S
    lea rdi, [rsp + {_R}]
    xor eax, eax
    mov ecx, {6 * BUFFER}
    rep stosb
    mov rax, r13
    mov eax, eax
    mov qword ptr [rsp + {_R}], rax
    mov rax, r13
    shr rax, 32
    mov qword ptr [rsp + {_R + 8}], rax
    mov qword ptr [rsp + {_S1}], 1
    mov rsi, qword ptr [rsp + {_P}]
    lea rdi, [rsp + {_S1}]
    test rsi, rsi
    jns .Lpf_fives
    lea rdi, [rsp + {_R}]
    neg rsi
.Lpf_fives:
    mov edx, 5
    mov ecx, {LIMBS}
    call rt_fp_pow
    mov rsi, r14
    sub rsi, qword ptr [rsp + {_P}]
    lea rdi, [rsp + {_R}]
    test rsi, rsi
    jns .Lpf_twos
    lea rdi, [rsp + {_S1}]
    neg rsi
.Lpf_twos:
    mov edx, 2
    mov ecx, {LIMBS}
    call rt_fp_pow
# R >= 10 S: P was one low
    lea rsi, [rsp + {_S1}]
    lea rdi, [rsp + {_S2}]
    mov ecx, {BUFFER}
    rep movsb
    lea rdi, [rsp + {_S2}]
    mov esi, 10
    mov ecx, {LIMBS}
    call rt_fp_mul
    lea rdi, [rsp + {_T}]
    lea rsi, [rsp + {_R}]
    lea rdx, [rsp + {_S2}]
    mov ecx, {LIMBS}
    call rt_fp_sub
    test rax, rax
    jnz .Lpf_scaled
    lea rsi, [rsp + {_S2}]
    lea rdi, [rsp + {_S1}]
    mov ecx, {BUFFER}
    rep movsb
    add qword ptr [rsp + {_P}], 1
.Lpf_scaled:
{_multiples()}# r14 = the limbs in use: 10 S (and so R) fits in one more than S has
    mov r14d, {LIMBS - 1}
.Lpf_top:
    cmp qword ptr [rsp + 8*r14 + {_S1}], 0
    jne .Lpf_top_found
    dec r14
    jmp .Lpf_top
.Lpf_top_found:
    add r14, 2
# the digits: 19 of them (the last only rounds); rbx = i, r12 = R, r13 = T
    lea r12, [rsp + {_R}]
    lea r13, [rsp + {_T}]
    xor ebx, ebx
.Lpf_digit:
    mov byte ptr [rsp + rbx + {_DIGITS}], 0
{_digit_step(8, _S8)}{_digit_step(4, _S4)}{_digit_step(2, _S2)}{_digit_step(1, _S1)}    mov rdi, r12
    mov esi, 10
    mov rcx, r14
    call rt_fp_mul
    inc rbx
    cmp rbx, {EXP_DIGITS}
    jbe .Lpf_digit
# round half up: the extra digit is 5 or more exactly when the rest is half or more
    mov ebx, {EXP_DIGITS}
    cmp byte ptr [rsp + rbx + {_DIGITS}], 5
    jb .Lpf_text
.Lpf_carry:
    dec rbx
    js .Lpf_carry_out
    cmp byte ptr [rsp + rbx + {_DIGITS}], 9
    jne .Lpf_bump
    mov byte ptr [rsp + rbx + {_DIGITS}], 0
    jmp .Lpf_carry
.Lpf_bump:
    add byte ptr [rsp + rbx + {_DIGITS}], 1
    jmp .Lpf_text
.Lpf_carry_out:
    mov byte ptr [rsp + {_DIGITS}], 1
    add qword ptr [rsp + {_P}], 1
# the text: sign, d.ddddddddddddddddde+P
.Lpf_text:
    lea rdi, [rsp + {_TEXT}]
    cmp qword ptr [rsp + {_BITS}], 0
    jge .Lpf_exp_text
    mov byte ptr [rdi], 45
    inc rdi
.Lpf_exp_text:
    movzx eax, byte ptr [rsp + {_DIGITS}]
    add eax, 48
    mov byte ptr [rdi], al
    mov byte ptr [rdi + 1], 46
    add rdi, 2
    mov ecx, 1
.Lpf_exp_loop:
    movzx eax, byte ptr [rsp + rcx + {_DIGITS}]
    add eax, 48
    mov byte ptr [rdi], al
    inc rdi
    inc rcx
    cmp rcx, {EXP_DIGITS}
    jb .Lpf_exp_loop
    mov byte ptr [rdi], 101
    inc rdi
    mov r12, rdi
    mov rdi, qword ptr [rsp + {_P}]
    test rdi, rdi
    js .Lpf_exp_digits
    mov byte ptr [r12], 43
    inc r12
.Lpf_exp_digits:
    call rt_format_int
    mov rdi, r12
    mov rcx, rdx
    rep movsb
.Lpf_out:
    lea rsi, [rsp + {_TEXT}]
    mov rdx, rdi
    sub rdx, rsi
    call rt_out_bytes
    add rsp, {_FRAME}
    pop r14
    pop r13
    pop r12
    pop rbx
    ret
# the fixed form, in 128 bits: n = round(|x| 10^17) = (floor(2 m 10^17 / 2^k) + 1) / 2
# with k = -e (0 <= k < 90 here), the integer part I = m >> k, the decimals n - I 10^17
# (below 10^17: no double lies within 5e-18 below an integer)
.Lpf_fixed:
    mov rax, r13
    mov rcx, {TEN_TO_DECIMALS}
    mul rcx
    mov r8, rax
    shr r8, 63
    add rdx, rdx
    or rdx, r8
    add rax, rax
    mov r9, r14
    neg r9
{_shift_right_128()}    add rax, 1
    adc rdx, 0
    shr rax, 1
    shl rdx, 63
    or rax, rdx
    mov r10, r13
{_shift_right_64()}    mov r11, r10
    imul r11, rcx
    sub rax, r11
# the text: sign, I, '.', the 17 decimals (leading zeros kept)
    mov r13, rax
    lea r12, [rsp + {_TEXT}]
    cmp qword ptr [rsp + {_BITS}], 0
    jge .Lpf_fixed_int
    mov byte ptr [r12], 45
    inc r12
.Lpf_fixed_int:
    mov rdi, r10
    call rt_format_int
    mov rdi, r12
    mov rcx, rdx
    rep movsb
    mov byte ptr [rdi], 46
    inc rdi
    lea rsi, [rdi + {FIXED_DECIMALS}]
    mov r9, rsi
    mov rax, r13
    mov r8, 0xcccccccccccccccd
.Lpf_decimal:
    mov rcx, rax
    mul r8
    shr rdx, 3
    lea rax, [rdx + 4*rdx]
    add rax, rax
    sub rcx, rax
    add cl, 48
    dec rsi
    mov byte ptr [rsi], cl
    mov rax, rdx
    cmp rsi, rdi
    ja .Lpf_decimal
    mov rdi, r9
    jmp .Lpf_out
# NaN (any sign: brili prints no sign) and the infinities
.Lpf_special:
    lea rdi, [rsp + {_TEXT}]
    mov rax, 0x7ff0000000000000
    cmp rbx, rax
    jne .Lpf_nan
    cmp qword ptr [rsp + {_BITS}], 0
    jge .Lpf_infinity
    mov byte ptr [rdi], 45
    inc rdi
.Lpf_infinity:
    mov rax, {_INFINITY:#x}
    mov qword ptr [rdi], rax
    add rdi, 8
    jmp .Lpf_out
.Lpf_nan:
    mov dword ptr [rdi], {_NAN:#x}
    add rdi, 3
    jmp .Lpf_out
"""
