"""The runtime's Bril pointers and chars, as x86-64 assembly (issue #36): the allocation
table, ``rt_ptr_alloc`` / ``rt_ptr_free`` / ``rt_ptr_load`` / ``rt_ptr_store`` /
``rt_ptr_add`` with brili's checks, the leak check at exit, ``rt_print_char`` (UTF-8),
``rt_print_ptr``, ``rt_char2int`` / ``rt_int2char``, ``rt_parse_char`` for ``main``'s
char parameters, and ``rt_ptr_trap``, which writes a message with numbers in it.

Representations and messages: :mod:`ssa_course.codegen.ptr_abi`. Every entry is a System V
call that may clobber the caller-saved registers and keeps the callee-saved ones (r15, the
depth counter, included).
"""

from __future__ import annotations

from ssa_course.codegen.ptr_abi import ENTRY_BYTES, KEY_SHIFT, NOT_CHAR, TABLE_START
from ssa_course.codegen.runtime_abi import CODE, length_of, strlen

# A block's cells: 8 bytes each, then one initialised flag per cell; a larger block than
# this many cells could not be mapped anyway (and 9 * n must not wrap).
MAX_CELLS = 1 << 40

PTR_TEXT = f"""
# ---- Bril pointers: p = block << 32 | offset (low half signed); table entry = 3 qwords
# {{address of the cells, 0 once freed; length; the alloc's trap-site id}} (entry k at
# 8 * 3k: lea [k + 2*k], shl 3); cells then their initialised flags, 2^k bytes in all
# (a free list per k: rt_ptr_class)
# rt_ptr_alloc(rdi = cells, rsi = trap-site id) -> rax = the new block's pointer
.globl rt_ptr_alloc
rt_ptr_alloc:
    test rdi, rdi
    jle .Lpa_size
    mov rax, qword ptr [rip + rt_ptr_left]
    sub rax, rdi
    js .Lpa_budget
    mov rcx, {MAX_CELLS}
    cmp rdi, rcx
    ja .Lpa_budget
    mov qword ptr [rip + rt_ptr_left], rax
    mov rax, qword ptr [rip + rt_ptr_count]
    cmp rax, qword ptr [rip + rt_ptr_cap]
    jb .Lpa_room
    push rdi
    push rsi
    call rt_ptr_grow
    pop rsi
    pop rdi
.Lpa_room:
    push rsi
    push rdi
    lea rdi, [rdi + 8*rdi + 7]
    and rdi, -8
    call rt_ptr_class
    lea rdx, [rip + rt_ptr_free_lists]
    mov rsi, qword ptr [rdx + 8*rax]
    test rsi, rsi
    jz .Lpa_fresh
    mov rcx, qword ptr [rsi]
    mov qword ptr [rdx + 8*rax], rcx
    mov rcx, qword ptr [rsp]
    lea rdi, [rsi + 8*rcx]
    xor eax, eax
    rep stosb
    mov rax, rsi
    jmp .Lpa_got
.Lpa_fresh:
    call rt_alloc
.Lpa_got:
    pop rcx
    pop r8
    mov rdx, qword ptr [rip + rt_ptr_count]
    lea rsi, [rdx + 2*rdx]
    shl rsi, 3
    add rsi, qword ptr [rip + rt_ptr_table]
    mov qword ptr [rsi], rax
    mov qword ptr [rsi + 8], rcx
    mov qword ptr [rsi + 16], r8
    lea rax, [rdx + 1]
    mov qword ptr [rip + rt_ptr_count], rax
    add qword ptr [rip + rt_ptr_live], 1
    mov rax, rdx
    shl rax, 32
    ret
.Lpa_size:
    mov r8, rsi
    mov rsi, rdi
    lea rdi, [rip + rt_pmsg_alloc]
    jmp rt_ptr_trap
.Lpa_budget:
    mov edi, {CODE['out of memory']}
    shl rsi, 4
    lea rax, [rip + rt_sites]
    mov rdx, qword ptr [rax + rsi + 8]
    mov rsi, qword ptr [rax + rsi]
    jmp rt_trap

# rt_ptr_grow: the table twice as big (at least {TABLE_START} entries), entries copied over;
# 2^32 blocks would not fit a pointer's high half: out of memory
rt_ptr_grow:
    mov rdi, qword ptr [rip + rt_ptr_cap]
    add rdi, rdi
    mov eax, {TABLE_START}
    cmp rdi, rax
    cmovb rdi, rax
    mov rax, 0x100000000
    cmp rdi, rax
    ja rt_out_of_memory
    push rdi
    lea rdi, [rdi + 2*rdi]
    shl rdi, 3
    call rt_alloc
    pop rcx
    mov qword ptr [rip + rt_ptr_cap], rcx
    mov rsi, qword ptr [rip + rt_ptr_table]
    mov rdi, rax
    mov qword ptr [rip + rt_ptr_table], rax
    mov rcx, qword ptr [rip + rt_ptr_count]
    lea rcx, [rcx + 2*rcx]
    shl rcx, 3
    rep movsb
    ret

# rt_ptr_free(rdi = pointer, rsi = trap-site id): freed once, at offset 0
.globl rt_ptr_free
rt_ptr_free:
    call rt_ptr_entry
    cmp qword ptr [rax], 0
    je .Lpf_double
    test rcx, rcx
    jnz .Lpf_offset
    mov r8, qword ptr [rax]
    mov qword ptr [rax], 0
    mov rdi, qword ptr [rax + 8]
    add qword ptr [rip + rt_ptr_left], rdi
    sub qword ptr [rip + rt_ptr_live], 1
    lea rdi, [rdi + 8*rdi + 7]
    and rdi, -8
    call rt_ptr_class
    lea rdx, [rip + rt_ptr_free_lists]
    mov rcx, qword ptr [rdx + 8*rax]
    mov qword ptr [r8], rcx
    mov qword ptr [rdx + 8*rax], r8
    ret
.Lpf_double:
    mov r8, rsi
    mov rsi, rdx
    lea rdi, [rip + rt_pmsg_double_free]
    jmp rt_ptr_trap
.Lpf_offset:
    mov r8, rsi
    mov rsi, rcx
    lea rdi, [rip + rt_pmsg_free_offset]
    jmp rt_ptr_trap

# rt_ptr_class(rdi = bytes) -> rax = k, rdi = 2^k >= bytes (k >= 4): a block's size class;
# a freed block goes on its class's list and the next alloc of that class takes it back
# (its flags cleared), so a program that allocates and frees in a loop stays in its memory
rt_ptr_class:
    mov eax, 4
    mov ecx, 16
.Lclass_loop:
    cmp rcx, rdi
    jae .Lclass_done
    add rcx, rcx
    inc rax
    jmp .Lclass_loop
.Lclass_done:
    mov rdi, rcx
    ret

# rt_ptr_entry(rdi = pointer) -> rax = its table entry, rcx = offset, rdx = block
rt_ptr_entry:
    mov rdx, rdi
    shr rdx, 32
    mov rcx, rdi
    shl rcx, 32
    sar rcx, 32
    lea rax, [rdx + 2*rdx]
    shl rax, 3
    add rax, qword ptr [rip + rt_ptr_table]
    ret

# rt_ptr_load(rdi = pointer, rsi = trap-site id) -> rax: a live block, in bounds, stored
.globl rt_ptr_load
rt_ptr_load:
    call rt_ptr_entry
    mov r8, qword ptr [rax]
    test r8, r8
    jz .Lpl_freed
    mov r9, qword ptr [rax + 8]
    cmp rcx, r9
    jae .Lpl_bounds
    lea r10, [r8 + 8*r9]
    cmp byte ptr [r10 + rcx], 0
    je .Lpl_uninit
    mov rax, qword ptr [r8 + 8*rcx]
    ret
.Lpl_freed:
    lea rdi, [rip + rt_pmsg_load_freed]
    jmp .Lpl_freed_trap
.Lpl_bounds:
    lea rdi, [rip + rt_pmsg_load_bounds]
    jmp .Lpl_bounds_trap
.Lpl_uninit:
    mov r8, rsi
    mov rsi, rcx
    lea rdi, [rip + rt_pmsg_uninit]
    jmp rt_ptr_trap

# rt_ptr_store(rdi = pointer, rsi = value, rdx = trap-site id): a live block, in bounds
.globl rt_ptr_store
rt_ptr_store:
    mov r11, rdx
    call rt_ptr_entry
    mov r8, qword ptr [rax]
    test r8, r8
    jz .Lps_freed
    mov r9, qword ptr [rax + 8]
    cmp rcx, r9
    jae .Lps_bounds
    mov qword ptr [r8 + 8*rcx], rsi
    lea r10, [r8 + 8*r9]
    mov byte ptr [r10 + rcx], 1
    ret
.Lps_freed:
    mov rsi, r11
    lea rdi, [rip + rt_pmsg_store_freed]
.Lpl_freed_trap:
    mov r8, rsi
    mov rsi, rdx
    jmp rt_ptr_trap
.Lps_bounds:
    mov rsi, r11
    lea rdi, [rip + rt_pmsg_store_bounds]
.Lpl_bounds_trap:
    mov r8, rsi
    mov rsi, rcx
    mov rcx, r9
    jmp rt_ptr_trap

# rt_ptr_add(rdi = pointer, rsi = k) -> rax: k added to the offset, wrapping in its half
.globl rt_ptr_add
rt_ptr_add:
    lea rax, [rdi + rsi]
    mov eax, eax
    shr rdi, 32
    shl rdi, 32
    or rax, rdi
    ret

# rt_ptr_exit_check: brili's rule when main returns: every block freed; else the count,
# the oldest block left (the first live entry) and its alloc's position
rt_ptr_exit_check:
    mov rsi, qword ptr [rip + rt_ptr_live]
    test rsi, rsi
    jnz .Lleak
    ret
.Lleak:
    mov rax, qword ptr [rip + rt_ptr_table]
    xor edx, edx
.Lleak_find:
    cmp qword ptr [rax], 0
    jne .Lleak_found
    add rax, {ENTRY_BYTES}
    inc rdx
    jmp .Lleak_find
.Lleak_found:
    mov r8, qword ptr [rax + 16]
    lea rdi, [rip + rt_pmsg_leak]
    lea rax, [rip + rt_pmsg_leak1]
    cmp rsi, 1
    cmove rdi, rax
    jmp rt_ptr_trap

# rt_ptr_format(rdi = NUL-terminated template, rsi, rdx, rcx = the numbers %1 %2 %3,
# r8 = 1: to standard error, 0: to the output buffer)
rt_ptr_format:
    push rbx
    push r12
    mov qword ptr [rip + rt_ptr_nums], rsi
    mov qword ptr [rip + rt_ptr_nums + 8], rdx
    mov qword ptr [rip + rt_ptr_nums + 16], rcx
    mov rbx, rdi
    mov r12, r8
.Lpfmt_loop:
    movzx eax, byte ptr [rbx]
    test eax, eax
    jz .Lpfmt_done
    cmp eax, 37
    je .Lpfmt_number
    mov rsi, rbx
    mov edx, 1
    inc rbx
    call rt_ptr_emit
    jmp .Lpfmt_loop
.Lpfmt_number:
    movzx eax, byte ptr [rbx + 1]
    sub eax, 49
    lea rcx, [rip + rt_ptr_nums]
    mov rdi, qword ptr [rcx + 8*rax]
    call rt_format_int
    call rt_ptr_emit
    add rbx, 2
    jmp .Lpfmt_loop
.Lpfmt_done:
    pop r12
    pop rbx
    ret

# rt_ptr_emit(rsi = bytes, rdx = count, r12 = 1: standard error, 0: the output buffer)
rt_ptr_emit:
    test r12, r12
    jnz rt_err_write
    jmp rt_out_bytes

# rt_ptr_trap(rdi = template, rsi, rdx, rcx = numbers, r8 = trap-site id, -1: none):
# flush, `error: <message>[ at L:C]` on standard error, exit 2
rt_ptr_trap:
    push r8
    push rdi
    push rsi
    push rdx
    push rcx
    call rt_flush
    lea rsi, [rip + rt_str_error]
    mov edx, {length_of('rt_str_error')}
    call rt_err_write
    pop rcx
    pop rdx
    pop rsi
    pop rdi
    mov r8d, 1
    call rt_ptr_format
    pop r8
    test r8, r8
    js .Lptrap_end
    shl r8, 4
    lea rax, [rip + rt_sites]
    mov r12, qword ptr [rax + r8]
    mov r13, qword ptr [rax + r8 + 8]
    jmp rt_err_located_exit
.Lptrap_end:
    xor r12d, r12d
    jmp rt_err_located_exit

# rt_print_ptr(rdi = pointer): `<pointer to block B + O>`, as the interpreters print one
.globl rt_print_ptr
rt_print_ptr:
    call rt_ptr_entry
    mov rsi, rdx
    mov rdx, rcx
    lea rdi, [rip + rt_pmsg_ptr]
    xor r8d, r8d
    jmp rt_ptr_format

# ---- chars: a char is its key (code point, + {KEY_SHIFT:#x} for U+E000..U+FFFF)
# rt_char2int(rdi = key) -> rax = code point
.globl rt_char2int
rt_char2int:
    mov rax, rdi
    lea rcx, [rdi - {KEY_SHIFT}]
    cmp rdi, {KEY_SHIFT}
    cmovae rax, rcx
    ret

# rt_int2char(rdi = int, rsi = trap-site id) -> rax = key; brili's error on a value that is
# not a Unicode scalar value (negative, a surrogate, above U+10FFFF)
.globl rt_int2char
rt_int2char:
    cmp rdi, 0x10FFFF
    ja .Lic_bad
    lea rax, [rdi - 0xD800]
    cmp rax, 0x800
    jb .Lic_bad
    lea rax, [rdi - 0xE000]
    cmp rax, 0x2000
    jae .Lic_plain
    lea rax, [rdi + {KEY_SHIFT}]
    ret
.Lic_plain:
    mov rax, rdi
    ret
.Lic_bad:
    mov r8, rsi
    mov rsi, rdi
    lea rdi, [rip + rt_pmsg_char]
    jmp rt_ptr_trap

# rt_print_char(rdi = key): the character's UTF-8 bytes
.globl rt_print_char
rt_print_char:
    mov rax, rdi
    lea rcx, [rdi - {KEY_SHIFT}]
    cmp rdi, {KEY_SHIFT}
    cmovae rax, rcx
    lea rsi, [rip + rt_charbuf]
    cmp rax, 0x80
    jae .Lpc_two
    mov byte ptr [rsi], al
    mov edx, 1
    jmp rt_out_bytes
.Lpc_two:
    cmp rax, 0x800
    jae .Lpc_three
    mov rcx, rax
    shr rcx, 6
    or rcx, 0xC0
    mov byte ptr [rsi], cl
    mov edx, 2
    jmp .Lpc_last
.Lpc_three:
    cmp rax, 0x10000
    jae .Lpc_four
    mov rcx, rax
    shr rcx, 12
    or rcx, 0xE0
    mov byte ptr [rsi], cl
    mov edx, 3
    jmp .Lpc_middle
.Lpc_four:
    mov rcx, rax
    shr rcx, 18
    or rcx, 0xF0
    mov byte ptr [rsi], cl
    mov rcx, rax
    shr rcx, 12
    and rcx, 0x3F
    or rcx, 0x80
    mov byte ptr [rsi + 1], cl
    mov edx, 4
.Lpc_middle:
    mov rcx, rax
    shr rcx, 6
    and rcx, 0x3F
    or rcx, 0x80
    mov byte ptr [rsi + rdx - 2], cl
.Lpc_last:
    and rax, 0x3F
    or rax, 0x80
    mov byte ptr [rsi + rdx - 1], al
    jmp rt_out_bytes

# rt_parse_char(rdi = text, rsi = parameter index) -> rax = key: exactly one Unicode
# scalar value in UTF-8 (no overlong form, no surrogate), as the CLI reads a char
rt_parse_char:
    movzx eax, byte ptr [rdi]
    test eax, eax
    jz .Lpch_bad
    cmp eax, 0x80
    jb .Lpch_one
    cmp eax, 0xC2
    jb .Lpch_bad
    cmp eax, 0xE0
    jb .Lpch_two
    cmp eax, 0xF0
    jb .Lpch_three
    cmp eax, 0xF5
    jae .Lpch_bad
    and rax, 7
    mov ecx, 3
    mov r8d, 0x10000
    jmp .Lpch_cont
.Lpch_three:
    and rax, 15
    mov ecx, 2
    mov r8d, 0x800
    jmp .Lpch_cont
.Lpch_two:
    and rax, 31
    mov ecx, 1
    mov r8d, 0x80
.Lpch_cont:
    lea rdx, [rdi + 1]
.Lpch_loop:
    movzx r9, byte ptr [rdx]
    mov r11, r9
    and r11, 0xC0
    cmp r11, 0x80
    jne .Lpch_bad
    shl rax, 6
    and r9, 0x3F
    or rax, r9
    inc rdx
    dec rcx
    jnz .Lpch_loop
    cmp byte ptr [rdx], 0
    jne .Lpch_bad
    cmp rax, r8
    jb .Lpch_bad
    cmp rax, 0x10FFFF
    ja .Lpch_bad
    lea rcx, [rax - 0xD800]
    cmp rcx, 0x800
    jb .Lpch_bad
    lea rcx, [rax - 0xE000]
    cmp rcx, 0x2000
    jae .Lpch_done
    add rax, {KEY_SHIFT}
.Lpch_done:
    ret
.Lpch_one:
    cmp byte ptr [rdi + 1], 0
    jne .Lpch_bad
    ret
.Lpch_bad:
    lea rdx, [rip + rt_str_not_char]
    mov ecx, {strlen(NOT_CHAR)}
    jmp rt_arg_error
"""
