"""The runtime's memory and exception routines, as assembly: bump allocation from zeroed
``mmap`` chunks, ``rt_new_array`` (length checks, the allocation budget, trap sites),
``rt_new_struct``, and the handler records of ``rt_enter`` / ``rt_leave`` / ``rt_throw``."""

from __future__ import annotations

from ssa_course.codegen.runtime_abi import (
    CODE,
    HANDLER_RECORD,
    HEAP_CHUNK,
    MAP_PRIVATE_ANON_NORESERVE,
    PROT_RW,
    SYS_MMAP,
    length_of,
)
from ssa_course.runtime import MAX_ARRAY_LENGTH


def mmap_text(size: str | None) -> str:
    """The system call ``mmap(NULL, size, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS|
    MAP_NORESERVE, -1, 0)``: fresh zeroed memory in rax, or ``-errno`` (the caller tests
    ``cmp rax, -4096``). ``size`` (an operand) is moved into rsi first; None: it is there.
    Written once for the heap's chunks, ``_start``'s stack and its handler records."""
    move = f"    mov rsi, {size}\n" if size is not None else ""
    # Linux's system-call registers: rdi, rsi, rdx, r10, r8, r9 (r10, not the function
    # call's rcx: syscall overwrites rcx with the return address, and r11 with the flags).
    return f"""    xor edi, edi
{move}    mov edx, {PROT_RW}
    mov r10, {MAP_PRIVATE_ANON_NORESERVE}
    mov r8, -1
    xor r9d, r9d
    mov eax, {SYS_MMAP}
    syscall
"""


HEAP_TEXT = f"""
# ---- memory: bump allocation from zeroed mmap chunks (never freed)
# rt_alloc(rdi = bytes, a multiple of 8) -> rax, 16-byte aligned (as malloc's blocks: an
# array's rows then lie as far apart as a C program's, and so share cache sets as theirs do)
rt_alloc:
    add rdi, 15
    and rdi, -16
    mov rax, qword ptr [rip + rt_heap_ptr]
    lea rcx, [rax + rdi]
    cmp rcx, qword ptr [rip + rt_heap_end]
    ja .Lalloc_chunk
    mov qword ptr [rip + rt_heap_ptr], rcx
    ret
.Lalloc_chunk:
    push rdi
    lea rsi, [rdi + 4095]
    and rsi, -4096
    mov rcx, {HEAP_CHUNK}
    cmp rsi, rcx
    cmovb rsi, rcx
{mmap_text(None)}    pop rdi
    cmp rax, -4096
    ja rt_out_of_memory
    lea rcx, [rax + rsi]
    mov qword ptr [rip + rt_heap_end], rcx
    lea rcx, [rax + rdi]
    mov qword ptr [rip + rt_heap_ptr], rcx
    ret

rt_out_of_memory:
    mov edi, {CODE['out of memory']}
    xor esi, esi
    xor edx, edx
    jmp rt_trap

# rt_new_array(rdi = length, rsi = trap-site id) -> rax = [length][elements...], a qword
# an element; rt_new_bytes the same with a byte an element (a [bool]), rounded up to
# qwords. Both check the length and charge the budget in elements.
.globl rt_new_bytes
rt_new_bytes:
    mov eax, 1
    jmp .Lnew_checked
.globl rt_new_array
rt_new_array:
    mov eax, 0
.Lnew_checked:
    test rdi, rdi
    js .Lnew_negative
    cmp rdi, {MAX_ARRAY_LENGTH}
    jg .Lnew_too_large
    sub qword ptr [rip + rt_alloc_left], rdi
    js .Lnew_budget
    push rdi
    test rax, rax
    jnz .Lnew_bytes
    lea rdi, [8*rdi + 8]
    jmp .Lnew_alloc
.Lnew_bytes:
    add rdi, 15
    and rdi, -8
.Lnew_alloc:
    call rt_alloc
    pop rcx
    mov qword ptr [rax], rcx
    ret
.Lnew_negative:
    mov edi, {CODE['negative array length']}
    jmp .Lnew_trap
.Lnew_too_large:
    mov edi, {CODE['array too large']}
    jmp .Lnew_trap
.Lnew_budget:
    mov edi, {CODE['out of memory']}
.Lnew_trap:
    shl rsi, 4
    lea rax, [rip + rt_sites]
    mov rdx, qword ptr [rax + rsi + 8]
    mov rsi, qword ptr [rax + rsi]
    jmp rt_trap

# rt_charge_array(rdi = length, rsi = trap-site id): an array the code keeps in its frame
# (escape analysis) still counts against the run's budget, with the same message and site
.globl rt_charge_array
rt_charge_array:
    sub qword ptr [rip + rt_alloc_left], rdi
    js .Lnew_budget
    ret

# rt_new_struct(rdi = fields) -> rax, zeroed (at least one qword: distinct addresses)
.globl rt_new_struct
rt_new_struct:
    test rdi, rdi
    jnz .Lstruct_sized
    mov edi, 1
.Lstruct_sized:
    shl rdi, 3
    jmp rt_alloc

# ---- exceptions: records {{handler, rsp, rbp, depth, rbx, r12, r13, r14, r15}} on a
# stack of their own. A throw skips the epilogues that would restore the callee-saved
# registers, so the record keeps them as they were at rt_enter and the throw puts them back.
# rt_enter(rdi = handler address); clobbers rax, rcx
.globl rt_enter
rt_enter:
    mov rcx, qword ptr [rip + rt_hstack_top]
    cmp rcx, qword ptr [rip + rt_hstack_end]
    jae rt_stack_overflow
    mov qword ptr [rcx], rdi
    lea rax, [rsp + 8]
    mov qword ptr [rcx + 8], rax
    mov qword ptr [rcx + 16], rbp
    mov rax, qword ptr [rip + rt_depth]
    mov qword ptr [rcx + 24], rax
    mov qword ptr [rcx + 32], rbx
    mov qword ptr [rcx + 40], r12
    mov qword ptr [rcx + 48], r13
    mov qword ptr [rcx + 56], r14
    mov qword ptr [rcx + 64], r15
    add rcx, {HANDLER_RECORD}
    mov qword ptr [rip + rt_hstack_top], rcx
    ret

# rt_leave(): pop the innermost record; clobbers nothing
.globl rt_leave
rt_leave:
    sub qword ptr [rip + rt_hstack_top], {HANDLER_RECORD}
    ret

# rt_throw(rdi = value): to the innermost handler with rax = value, or uncaught
.globl rt_throw
rt_throw:
    mov rcx, qword ptr [rip + rt_hstack_top]
    cmp rcx, qword ptr [rip + rt_hstack_base]
    je .Lthrow_uncaught
    sub rcx, {HANDLER_RECORD}
    mov qword ptr [rip + rt_hstack_top], rcx
    mov rax, rdi
    mov rsp, qword ptr [rcx + 8]
    mov rbp, qword ptr [rcx + 16]
    mov rdx, qword ptr [rcx + 24]
    mov qword ptr [rip + rt_depth], rdx
    mov rbx, qword ptr [rcx + 32]
    mov r12, qword ptr [rcx + 40]
    mov r13, qword ptr [rcx + 48]
    mov r14, qword ptr [rcx + 56]
    mov r15, qword ptr [rcx + 64]
    jmp qword ptr [rcx]
.Lthrow_uncaught:
    mov rbx, rdi
    call rt_flush
    lea rsi, [rip + rt_str_uncaught]
    mov edx, {length_of('rt_str_uncaught')}
    call rt_err_write
    mov rdi, rbx
    call rt_format_int
    call rt_err_write
    lea rsi, [rip + rt_str_newline]
    mov edx, 1
    call rt_err_write
    mov edi, 2
    jmp rt_exit
"""
