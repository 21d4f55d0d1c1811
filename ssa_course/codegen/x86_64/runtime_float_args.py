"""``rt_parse_float``: a float argument of ``main`` read from the command line, exactly
(issue #36), in the x86-64 runtime.

The interpreters read a float argument with Python's ``float`` (correctly rounded, any
number of digits: ``ssa_course/args.py``). Correct rounding of any decimal needs big
integers; this reader is exact on the forms it accepts and refuses the rest in one line:

* ``Infinity``, with an optional sign;
* a decimal (``args._FLOAT_ARG``'s grammar: ``-1.5``, ``.5``, ``2e10``) whose significant
  digits make an integer M below 2^53 and whose decimal exponent E is within -22..22
  (after moving zeros into M while it stays below 2^53): M and 10^|E| are then exact
  doubles and one ``mulsd``/``divsd`` rounds correctly (Clinger's fast path). Every
  argument of Bril's float benchmarks is one;
* Python's ``float.hex()`` form (``0x1.8000000000000p+1``, ``-0x0.0p+0``): exact bits,
  for any double. The ``run`` face passes every float this way
  (:func:`ssa_course.codegen.native.format_args`), so ``run --via native`` reads every
  value the interpreters read.

Anything else is ``error: argument 'x' must be a float, not '...'`` (status 1, the CLI's
wording), or, for a decimal outside the fast path, ``... cannot be read exactly ...``.
"""

from __future__ import annotations

from ssa_course.codegen.runtime_abi import length_of

# rt_parse_float(rdi = text, rsi = parameter index) -> rax: the double's bits. Keeps rsi
# (the error path names the parameter), rbx and r12-r15 (_start's); clobbers xmm0, xmm1.
FLOAT_ARGS_TEXT = f"""
# ---- float arguments of main (exact: the fast path, Infinity, float.hex())
rt_parse_float:
    mov r10, rdi
    mov rcx, rdi
    xor r8d, r8d
    movzx eax, byte ptr [rcx]
    cmp eax, 45
    jne .Lfa_plus
    mov r8, -9223372036854775808
    inc rcx
    jmp .Lfa_body
.Lfa_plus:
    cmp eax, 43
    jne .Lfa_body
    inc rcx
.Lfa_body:
    mov rdi, rcx
    lea r11, [rip + rt_str_lit_infinity]
    call rt_same_text
    jne .Lfa_hex
    mov rax, 9218868437227405312
    or rax, r8
    ret
.Lfa_hex:
    cmp byte ptr [rcx], 48
    jne .Lfa_decimal
    cmp byte ptr [rcx + 1], 120
    je rt_parse_hex_float
.Lfa_decimal:
    xor eax, eax
    xor r9d, r9d
    xor r11d, r11d
    xor edi, edi
.Lfa_int:
    movzx edx, byte ptr [rcx]
    sub edx, 48
    cmp edx, 9
    ja .Lfa_point
    mov edi, 1
    test rax, rax
    jnz .Lfa_int_take
    test edx, edx
    jz .Lfa_int_next
.Lfa_int_take:
    cmp r9, 19
    jae .Lfa_int_over
    imul rax, rax, 10
    add rax, rdx
    inc r9
    jmp .Lfa_int_next
.Lfa_int_over:
    test edx, edx
    jnz .Lfa_inexact
    inc r11
.Lfa_int_next:
    inc rcx
    jmp .Lfa_int
.Lfa_point:
    cmp byte ptr [rcx], 46
    jne .Lfa_exponent
    inc rcx
.Lfa_frac:
    movzx edx, byte ptr [rcx]
    sub edx, 48
    cmp edx, 9
    ja .Lfa_exponent
    mov edi, 1
    test rax, rax
    jnz .Lfa_frac_take
    test edx, edx
    jz .Lfa_frac_zero
.Lfa_frac_take:
    cmp r9, 19
    jae .Lfa_frac_over
    imul rax, rax, 10
    add rax, rdx
    inc r9
.Lfa_frac_zero:
    dec r11
    jmp .Lfa_frac_next
.Lfa_frac_over:
    test edx, edx
    jnz .Lfa_inexact
.Lfa_frac_next:
    inc rcx
    jmp .Lfa_frac
.Lfa_exponent:
    test edi, edi
    jz .Lfa_form
    movzx edx, byte ptr [rcx]
    or edx, 32
    cmp edx, 101
    jne .Lfa_end
    inc rcx
    xor edi, edi
    movzx edx, byte ptr [rcx]
    cmp edx, 45
    jne .Lfa_exp_plus
    mov edi, 1
    inc rcx
    jmp .Lfa_exp_first
.Lfa_exp_plus:
    cmp edx, 43
    jne .Lfa_exp_first
    inc rcx
.Lfa_exp_first:
    movzx edx, byte ptr [rcx]
    sub edx, 48
    cmp edx, 9
    ja .Lfa_form
    xor r9d, r9d
.Lfa_exp_digit:
    movzx edx, byte ptr [rcx]
    sub edx, 48
    cmp edx, 9
    ja .Lfa_exp_done
    cmp r9, 100000
    jae .Lfa_exp_next
    imul r9, r9, 10
    add r9, rdx
.Lfa_exp_next:
    inc rcx
    jmp .Lfa_exp_digit
.Lfa_exp_done:
    test edi, edi
    jz .Lfa_exp_add
    neg r9
.Lfa_exp_add:
    add r11, r9
.Lfa_end:
    cmp byte ptr [rcx], 0
    jne .Lfa_form
    test rax, rax
    jz .Lfa_signed
    mov rdx, 9007199254740992
.Lfa_scale_up:
    cmp rax, rdx
    ja .Lfa_inexact
    cmp r11, 22
    jle .Lfa_check
    imul rcx, rax, 10
    cmp rcx, rdx
    ja .Lfa_inexact
    mov rax, rcx
    dec r11
    jmp .Lfa_scale_up
.Lfa_check:
    cmp r11, -22
    jl .Lfa_inexact
    cvtsi2sd xmm0, rax
    mov rax, 4621819117588971520
    movq xmm1, rax
    mov rcx, r11
    test rcx, rcx
    jns .Lfa_power
    neg rcx
.Lfa_power:
    mov rax, 4607182418800017408
    movq xmm2, rax
.Lfa_power_step:
    test rcx, rcx
    jz .Lfa_apply
    mulsd xmm2, xmm1
    dec rcx
    jmp .Lfa_power_step
.Lfa_apply:
    test r11, r11
    js .Lfa_divide
    mulsd xmm0, xmm2
    jmp .Lfa_bits
.Lfa_divide:
    divsd xmm0, xmm2
.Lfa_bits:
    movq rax, xmm0
.Lfa_signed:
    or rax, r8
    ret
.Lfa_form:
    mov rdi, r10
    lea rdx, [rip + rt_str_not_float]
    mov ecx, {length_of('rt_str_not_float')}
    jmp rt_arg_error
.Lfa_inexact:
    mov rdi, r10
    lea rdx, [rip + rt_str_float_inexact]
    mov ecx, {length_of('rt_str_float_inexact')}
    jmp rt_arg_error

# rt_parse_hex_float: rcx at "0x", r8 the sign, r10 the text: float.hex()'s form,
# 0xL.HHHHHHHHHHHHHp[+-]D with L 1 (normal) or 0 (zero or subnormal, exponent -1022)
rt_parse_hex_float:
    add rcx, 2
    movzx r9d, byte ptr [rcx]
    sub r9d, 48
    cmp r9d, 1
    ja .Lfa_form
    cmp byte ptr [rcx + 1], 46
    jne .Lfa_form
    add rcx, 2
    xor eax, eax
    mov edi, 13
.Lfh_digit:
    movzx edx, byte ptr [rcx]
    cmp edx, 112
    je .Lfh_exponent
    sub edx, 48
    cmp edx, 9
    jbe .Lfh_take
    sub edx, 49
    cmp edx, 5
    ja .Lfa_form
    add edx, 10
.Lfh_take:
    test edi, edi
    jz .Lfa_form
    dec edi
    shl rax, 4
    or rax, rdx
    inc rcx
    jmp .Lfh_digit
.Lfh_exponent:
    cmp edi, 13
    je .Lfa_form
.Lfh_pad:
    test edi, edi
    jz .Lfh_padded
    shl rax, 4
    dec edi
    jmp .Lfh_pad
.Lfh_padded:
    inc rcx
    xor edi, edi
    movzx edx, byte ptr [rcx]
    cmp edx, 45
    jne .Lfh_exp_plus
    mov edi, 1
    inc rcx
    jmp .Lfh_exp_first
.Lfh_exp_plus:
    cmp edx, 43
    jne .Lfa_form
    inc rcx
.Lfh_exp_first:
    xor r11d, r11d
    movzx edx, byte ptr [rcx]
    sub edx, 48
    cmp edx, 9
    ja .Lfa_form
.Lfh_exp_digit:
    movzx edx, byte ptr [rcx]
    test edx, edx
    jz .Lfh_exp_done
    sub edx, 48
    cmp edx, 9
    ja .Lfa_form
    cmp r11, 100000
    jae .Lfh_exp_next
    imul r11, r11, 10
    add r11, rdx
.Lfh_exp_next:
    inc rcx
    jmp .Lfh_exp_digit
.Lfh_exp_done:
    test edi, edi
    jz .Lfh_exp_signed
    neg r11
.Lfh_exp_signed:
    test r9d, r9d
    jz .Lfh_subnormal
    cmp r11, -1022
    jl .Lfa_form
    cmp r11, 1023
    jg .Lfa_form
    add r11, 1023
    shl r11, 52
    or rax, r11
    jmp .Lfa_signed
.Lfh_subnormal:
    test rax, rax
    jz .Lfa_signed
    cmp r11, -1022
    jne .Lfa_form
    jmp .Lfa_signed
"""
