"""The runtime's output and error routines, as assembly: the 64 KiB output buffer and its
flush, decimal formatting, ``rt_print_*``, and ``rt_trap`` / ``rt_step_limit`` /
``rt_stack_overflow`` (flush, one line on standard error, exit 2)."""

from __future__ import annotations

from ssa_course.codegen.runtime_abi import (
    CODE,
    MESSAGE_SHIFT,
    OUT_BUFFER,
    SYS_EXIT_GROUP,
    SYS_WRITE,
    length_of,
)

IO_TEXT = f"""
# ---- output: a 64 KiB buffer written by rt_flush (before exit and every error)
rt_flush:
    lea rsi, [rip + rt_outbuf]
    mov rdx, qword ptr [rip + rt_outlen]
.Lflush_loop:
    test rdx, rdx
    jz .Lflush_done
    mov edi, 1
    mov eax, {SYS_WRITE}
    syscall
    test rax, rax
    jle .Lflush_failed
    add rsi, rax
    sub rdx, rax
    jmp .Lflush_loop
.Lflush_done:
    mov qword ptr [rip + rt_outlen], 0
    ret
.Lflush_failed:
    mov qword ptr [rip + rt_outlen], 0
    lea rsi, [rip + rt_str_wfail]
    mov rdx, {length_of('rt_str_wfail')}
    call rt_err_write
    mov edi, 1
    jmp rt_exit

# rt_out_bytes(rsi = bytes, rdx = count): append to the output buffer (one copy when it
# fits, else byte by byte with flushes)
rt_out_bytes:
    mov rcx, qword ptr [rip + rt_outlen]
    lea rax, [rcx + rdx]
    cmp rax, {OUT_BUFFER}
    ja .Lout_slow
    mov qword ptr [rip + rt_outlen], rax
    lea rdi, [rip + rt_outbuf]
    add rdi, rcx
    mov rcx, rdx
    rep movsb
    ret
.Lout_slow:
    test rdx, rdx
    jz .Lout_done
.Lout_loop:
    mov rcx, qword ptr [rip + rt_outlen]
    cmp rcx, {OUT_BUFFER}
    jb .Lout_room
    push rsi
    push rdx
    call rt_flush
    pop rdx
    pop rsi
    xor ecx, ecx
.Lout_room:
    movzx eax, byte ptr [rsi]
    lea r8, [rip + rt_outbuf]
    mov byte ptr [r8 + rcx], al
    inc rcx
    mov qword ptr [rip + rt_outlen], rcx
    inc rsi
    dec rdx
    jnz .Lout_loop
.Lout_done:
    ret

# rt_err_write(rsi = bytes, rdx = count): straight to standard error
rt_err_write:
    test rdx, rdx
    jz .Lerr_done
    mov edi, 2
    mov eax, {SYS_WRITE}
    syscall
    test rax, rax
    jle .Lerr_done
    add rsi, rax
    sub rdx, rax
    jmp rt_err_write
.Lerr_done:
    ret

# rt_exit(rdi = status)
rt_exit:
    mov eax, {SYS_EXIT_GROUP}
    syscall

# rt_format_int(rdi = value) -> rsi = digits, rdx = count (in rt_numbuf); the digits come
# from an unsigned divide by 10 done as a multiply (|INT_MIN| = 2^63 is fine unsigned)
rt_format_int:
    lea rsi, [rip + rt_numbuf + 32]
    mov rax, rdi
    test rax, rax
    jns .Lfmt_digits
    neg rax
.Lfmt_digits:
    mov r8, 0xcccccccccccccccd
.Lfmt_loop:
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
    test rax, rax
    jnz .Lfmt_loop
    test rdi, rdi
    jns .Lfmt_done
    dec rsi
    mov byte ptr [rsi], 45
.Lfmt_done:
    lea rdx, [rip + rt_numbuf + 32]
    sub rdx, rsi
    ret

# ---- print
.globl rt_print_int
rt_print_int:
    call rt_format_int
    jmp rt_out_bytes

.globl rt_print_bool
rt_print_bool:
    test rdi, rdi
    jz .Lbool_false
    lea rsi, [rip + rt_str_true]
    mov edx, 4
    jmp rt_out_bytes
.Lbool_false:
    lea rsi, [rip + rt_str_false]
    mov edx, 5
    jmp rt_out_bytes

.globl rt_print_space
rt_print_space:
    lea rsi, [rip + rt_str_space]
    mov edx, 1
    jmp rt_out_bytes

.globl rt_print_newline
rt_print_newline:
    lea rsi, [rip + rt_str_newline]
    mov edx, 1
    jmp rt_out_bytes

# ---- errors: flush the output, one line on standard error, exit 2
# rt_trap(rdi = message code, rsi = line, rdx = col); line 0 means no position
.globl rt_trap
rt_trap:
    mov rbx, rdi
    mov r12, rsi
    mov r13, rdx
    call rt_flush
    lea rsi, [rip + rt_str_error]
    mov edx, {length_of('rt_str_error')}
    call rt_err_write
    shl rbx, {MESSAGE_SHIFT}
    lea rsi, [rip + rt_messages]
    add rsi, rbx
    movzx edx, byte ptr [rsi]
    inc rsi
    call rt_err_write
# rt_err_located_exit(r12 = line, r13 = col): " at L:C" when the line is not 0, the
# newline, exit 2 (the end of every runtime error line: rt_trap's, the pointer checks')
rt_err_located_exit:
    test r12, r12
    jz .Ltrap_end
    lea rsi, [rip + rt_str_at]
    mov edx, {length_of('rt_str_at')}
    call rt_err_write
    mov rdi, r12
    call rt_format_int
    call rt_err_write
    lea rsi, [rip + rt_str_colon]
    mov edx, 1
    call rt_err_write
    mov rdi, r13
    call rt_format_int
    call rt_err_write
.Ltrap_end:
    lea rsi, [rip + rt_str_newline]
    mov edx, 1
    call rt_err_write
    mov edi, 2
    jmp rt_exit

.globl rt_step_limit
rt_step_limit:
    mov edi, {CODE['step limit exceeded']}
    xor esi, esi
    xor edx, edx
    jmp rt_trap

.globl rt_stack_overflow
rt_stack_overflow:
    mov edi, {CODE['stack overflow']}
    xor esi, esi
    xor edx, edx
    jmp rt_trap
"""
