"""The runtime's Bril pointers and chars, as AArch64 assembly (issue #36): the same entries,
checks and messages as :mod:`ssa_course.codegen.x86_64.runtime_ptr` -- ``rt_ptr_alloc`` /
``rt_ptr_free`` / ``rt_ptr_load`` / ``rt_ptr_store`` / ``rt_ptr_add``, the leak check at
exit, ``rt_print_char`` (UTF-8), ``rt_print_ptr``, ``rt_char2int`` / ``rt_int2char``,
``rt_parse_char`` and ``rt_ptr_trap`` -- over AAPCS64 (x0-x7 in, x0 out; x9-x15 scratch;
x18, the stack limit, and x19-x28 kept, except on the paths that never return).

Representations and messages: :mod:`ssa_course.codegen.ptr_abi`.
"""

from __future__ import annotations

from ssa_course.codegen.aarch64.asmtext import addr, const, string
from ssa_course.codegen.ptr_abi import ENTRY_BYTES, KEY_SHIFT, NOT_CHAR, TABLE_START
from ssa_course.codegen.runtime_abi import CODE, strlen

# as x86-64's: a block's cells and flags must fit an mmap, and 9 * n must not wrap
MAX_CELLS = 1 << 40

# x0 = pointer -> x9 = its table entry, x10 = offset (sign-extended), x11 = block. Written
# in place: the routines using it stay leaves (no bl, so x30 needs no saving).
_ENTRY = f"""    lsr x11, x0, #32
{addr("x9", "rt_ptr_table")}    ldr x9, [x9]
    add x10, x11, x11, lsl #1
    add x9, x9, x10, lsl #3
    lsl x10, x0, #32
    asr x10, x10, #32
"""

# x0 = bytes -> x10 = k, x0 = 2^k >= bytes (k >= 4): a block's size class; a freed block
# goes on its class's list and the next alloc of that class takes it back (its flags
# cleared), so a program that allocates and frees in a loop stays in its memory.
# Clobbers x11.
_CLASS = """    movz x10, #4
    movz x11, #16
.L{label}_class:
    cmp x11, x0
    b.hs .L{label}_classed
    add x11, x11, x11
    add x10, x10, #1
    b .L{label}_class
.L{label}_classed:
    mov x0, x11
"""

PTR_TEXT = f"""
// ---- Bril pointers: p = block << 32 | offset (low half signed); table entry = 3 qwords
// {{address of the cells, 0 once freed; length; the alloc's trap-site id}} (entry k at
// 8 * 3k); cells then their initialised flags, 2^k bytes in all (a free list per k)
// rt_ptr_alloc(x0 = cells, x1 = trap-site id) -> x0 = the new block's pointer
.globl rt_ptr_alloc
rt_ptr_alloc:
    cmp x0, #0
    b.le .Lpa_size
    adrp x9, rt_ptr_left
    ldr x10, [x9, :lo12:rt_ptr_left]
    subs x10, x10, x0
    b.mi .Lpa_budget
{const("x11", MAX_CELLS)}    cmp x0, x11
    b.hi .Lpa_budget
    str x10, [x9, :lo12:rt_ptr_left]
    stp x29, x30, [sp, #-16]!
    stp x0, x1, [sp, #-16]!
    adrp x9, rt_ptr_count
    ldr x10, [x9, :lo12:rt_ptr_count]
    adrp x11, rt_ptr_cap
    ldr x12, [x11, :lo12:rt_ptr_cap]
    cmp x10, x12
    b.lo .Lpa_room
    bl rt_ptr_grow
.Lpa_room:
    ldr x0, [sp]
    add x0, x0, x0, lsl #3
    add x0, x0, #7
    and x0, x0, #0xfffffffffffffff8
{_CLASS.format(label="pa")}{addr("x9", "rt_ptr_free_lists")}    ldr x11, [x9, x10, lsl #3]
    cbz x11, .Lpa_fresh
    ldr x12, [x11]
    str x12, [x9, x10, lsl #3]
    ldr x12, [sp]
    add x13, x11, x12, lsl #3
.Lpa_clear:
    strb wzr, [x13]
    add x13, x13, #1
    subs x12, x12, #1
    b.ne .Lpa_clear
    mov x0, x11
    b .Lpa_got
.Lpa_fresh:
    bl rt_alloc
.Lpa_got:
    ldp x1, x2, [sp], #16
    ldp x29, x30, [sp], #16
    adrp x9, rt_ptr_count
    ldr x10, [x9, :lo12:rt_ptr_count]
    adrp x11, rt_ptr_table
    ldr x12, [x11, :lo12:rt_ptr_table]
    add x13, x10, x10, lsl #1
    add x12, x12, x13, lsl #3
    stp x0, x1, [x12]
    str x2, [x12, #16]
    add x13, x10, #1
    str x13, [x9, :lo12:rt_ptr_count]
    adrp x9, rt_ptr_live
    ldr x13, [x9, :lo12:rt_ptr_live]
    add x13, x13, #1
    str x13, [x9, :lo12:rt_ptr_live]
    lsl x0, x10, #32
    ret
.Lpa_size:
    mov x4, x1
    mov x1, x0
{addr("x0", "rt_pmsg_alloc")}    b rt_ptr_trap
.Lpa_budget:
    movz x0, #{CODE['out of memory']}
{addr("x9", "rt_sites")}    add x9, x9, x1, lsl #4
    ldr x2, [x9, #8]
    ldr x1, [x9]
    b rt_trap

// rt_ptr_grow: the table twice as big (at least {TABLE_START} entries), entries copied over;
// 2^32 blocks would not fit a pointer's high half: out of memory
rt_ptr_grow:
    stp x29, x30, [sp, #-16]!
    adrp x9, rt_ptr_cap
    ldr x0, [x9, :lo12:rt_ptr_cap]
    lsl x0, x0, #1
{const("x10", TABLE_START)}    cmp x0, x10
    csel x0, x10, x0, lo
{const("x10", 1 << 32)}    cmp x0, x10
    b.hi rt_out_of_memory
    str x0, [x9, :lo12:rt_ptr_cap]
    add x0, x0, x0, lsl #1
    lsl x0, x0, #3
    bl rt_alloc
    adrp x9, rt_ptr_table
    ldr x10, [x9, :lo12:rt_ptr_table]
    str x0, [x9, :lo12:rt_ptr_table]
    adrp x11, rt_ptr_count
    ldr x11, [x11, :lo12:rt_ptr_count]
    add x11, x11, x11, lsl #1
    movz x12, #0
.Lgrow_copy:
    cmp x12, x11
    b.hs .Lgrow_done
    ldr x13, [x10, x12, lsl #3]
    str x13, [x0, x12, lsl #3]
    add x12, x12, #1
    b .Lgrow_copy
.Lgrow_done:
    ldp x29, x30, [sp], #16
    ret

// rt_ptr_free(x0 = pointer, x1 = trap-site id): freed once, at offset 0
.globl rt_ptr_free
rt_ptr_free:
{_ENTRY}    ldp x12, x13, [x9]
    cbz x12, .Lpf_double
    cbnz x10, .Lpf_offset
    str xzr, [x9]
    adrp x14, rt_ptr_left
    ldr x15, [x14, :lo12:rt_ptr_left]
    add x15, x15, x13
    str x15, [x14, :lo12:rt_ptr_left]
    adrp x14, rt_ptr_live
    ldr x15, [x14, :lo12:rt_ptr_live]
    sub x15, x15, #1
    str x15, [x14, :lo12:rt_ptr_live]
    add x0, x13, x13, lsl #3
    add x0, x0, #7
    and x0, x0, #0xfffffffffffffff8
{_CLASS.format(label="pf")}{addr("x9", "rt_ptr_free_lists")}    ldr x11, [x9, x10, lsl #3]
    str x11, [x12]
    str x12, [x9, x10, lsl #3]
    ret
.Lpf_double:
    mov x4, x1
    mov x1, x11
{addr("x0", "rt_pmsg_double_free")}    b rt_ptr_trap
.Lpf_offset:
    mov x4, x1
    mov x1, x10
    mov x2, x11
{addr("x0", "rt_pmsg_free_offset")}    b rt_ptr_trap

// rt_ptr_load(x0 = pointer, x1 = trap-site id) -> x0: a live block, in bounds, stored
.globl rt_ptr_load
rt_ptr_load:
{_ENTRY}    ldp x12, x13, [x9]
    cbz x12, .Lpl_freed
    cmp x10, x13
    b.hs .Lpl_bounds
    add x14, x12, x13, lsl #3
    ldrb w15, [x14, x10]
    cbz x15, .Lpl_uninit
    ldr x0, [x12, x10, lsl #3]
    ret
.Lpl_freed:
    mov x4, x1
    mov x1, x11
{addr("x0", "rt_pmsg_load_freed")}    b rt_ptr_trap
.Lpl_bounds:
    mov x4, x1
    mov x1, x10
    mov x2, x11
    mov x3, x13
{addr("x0", "rt_pmsg_load_bounds")}    b rt_ptr_trap
.Lpl_uninit:
    mov x4, x1
    mov x1, x10
    mov x2, x11
{addr("x0", "rt_pmsg_uninit")}    b rt_ptr_trap

// rt_ptr_store(x0 = pointer, x1 = value, x2 = trap-site id): a live block, in bounds
.globl rt_ptr_store
rt_ptr_store:
{_ENTRY}    ldp x12, x13, [x9]
    cbz x12, .Lps_freed
    cmp x10, x13
    b.hs .Lps_bounds
    str x1, [x12, x10, lsl #3]
    add x14, x12, x13, lsl #3
    movz x15, #1
    strb w15, [x14, x10]
    ret
.Lps_freed:
    mov x4, x2
    mov x1, x11
{addr("x0", "rt_pmsg_store_freed")}    b rt_ptr_trap
.Lps_bounds:
    mov x4, x2
    mov x1, x10
    mov x2, x11
    mov x3, x13
{addr("x0", "rt_pmsg_store_bounds")}    b rt_ptr_trap

// rt_ptr_add(x0 = pointer, x1 = k) -> x0: k added to the offset, wrapping in its half
.globl rt_ptr_add
rt_ptr_add:
    add x9, x0, x1
    and x9, x9, #0xffffffff
    lsr x0, x0, #32
    orr x0, x9, x0, lsl #32
    ret

// rt_ptr_exit_check: brili's rule when main returns: every block freed; else the count,
// the oldest block left (the first live entry) and its alloc's position
rt_ptr_exit_check:
    adrp x9, rt_ptr_live
    ldr x1, [x9, :lo12:rt_ptr_live]
    cbnz x1, .Lleak
    ret
.Lleak:
{addr("x9", "rt_ptr_table")}    ldr x9, [x9]
    movz x2, #0
.Lleak_find:
    ldr x10, [x9]
    cbnz x10, .Lleak_found
    add x9, x9, #{ENTRY_BYTES}
    add x2, x2, #1
    b .Lleak_find
.Lleak_found:
    ldr x4, [x9, #16]
{addr("x0", "rt_pmsg_leak")}{addr("x9", "rt_pmsg_leak1")}    cmp x1, #1
    csel x0, x9, x0, eq
    b rt_ptr_trap

// rt_ptr_format(x0 = NUL-terminated template, x1, x2, x3 = the numbers %1 %2 %3,
// x4 = 1: to standard error, 0: to the output buffer)
rt_ptr_format:
    stp x29, x30, [sp, #-16]!
    stp x19, x20, [sp, #-16]!
{addr("x9", "rt_ptr_nums")}    stp x1, x2, [x9]
    str x3, [x9, #16]
    mov x19, x0
    mov x20, x4
.Lpfmt_loop:
    ldrb w9, [x19]
    cbz x9, .Lpfmt_done
    cmp x9, #37
    b.eq .Lpfmt_number
    mov x1, x19
    movz x2, #1
    add x19, x19, #1
    bl rt_ptr_emit
    b .Lpfmt_loop
.Lpfmt_number:
    ldrb w9, [x19, #1]
    sub x9, x9, #49
{addr("x10", "rt_ptr_nums")}    ldr x0, [x10, x9, lsl #3]
    bl rt_format_int
    bl rt_ptr_emit
    add x19, x19, #2
    b .Lpfmt_loop
.Lpfmt_done:
    ldp x19, x20, [sp], #16
    ldp x29, x30, [sp], #16
    ret

// rt_ptr_emit(x1 = bytes, x2 = count, x20 = 1: standard error, 0: the output buffer)
rt_ptr_emit:
    cbnz x20, rt_err_write
    b rt_out_bytes

// rt_ptr_trap(x0 = template, x1, x2, x3 = numbers, x4 = trap-site id, -1: none): flush,
// `error: <message>[ at L:C]` on standard error, exit 2
rt_ptr_trap:
    mov x19, x0
    mov x20, x1
    mov x21, x2
    mov x22, x3
    mov x23, x4
    bl rt_flush
{string("rt_str_error")}    bl rt_err_write
    mov x0, x19
    mov x1, x20
    mov x2, x21
    mov x3, x22
    movz x4, #1
    bl rt_ptr_format
    cmp x23, #0
    b.lt .Lptrap_end
{addr("x9", "rt_sites")}    add x9, x9, x23, lsl #4
    ldr x20, [x9]
    ldr x21, [x9, #8]
    b rt_err_located_exit
.Lptrap_end:
    movz x20, #0
    b rt_err_located_exit

// rt_print_ptr(x0 = pointer): `<pointer to block B + O>`, as the interpreters print one
.globl rt_print_ptr
rt_print_ptr:
{_ENTRY}    mov x1, x11
    mov x2, x10
{addr("x0", "rt_pmsg_ptr")}    movz x4, #0
    b rt_ptr_format

// ---- chars: a char is its key (code point, + {KEY_SHIFT:#x} for U+E000..U+FFFF)
// rt_char2int(x0 = key) -> x0 = code point
.globl rt_char2int
rt_char2int:
{const("x9", KEY_SHIFT)}    subs x10, x0, x9
    csel x0, x10, x0, hs
    ret

// rt_int2char(x0 = int, x1 = trap-site id) -> x0 = key; brili's error on a value that is
// not a Unicode scalar value (negative, a surrogate, above U+10FFFF)
.globl rt_int2char
rt_int2char:
{const("x9", 0x10FFFF)}    cmp x0, x9
    b.hi .Lic_bad
{const("x9", 0xD800)}    sub x10, x0, x9
    cmp x10, #0x800
    b.lo .Lic_bad
{const("x9", 0xE000)}    sub x10, x0, x9
{const("x9", 0x2000)}    cmp x10, x9
    b.hs .Lic_plain
{const("x9", KEY_SHIFT)}    add x0, x0, x9
.Lic_plain:
    ret
.Lic_bad:
    mov x4, x1
    mov x1, x0
{addr("x0", "rt_pmsg_char")}    b rt_ptr_trap

// rt_print_char(x0 = key): the character's UTF-8 bytes
.globl rt_print_char
rt_print_char:
{const("x9", KEY_SHIFT)}    subs x10, x0, x9
    csel x0, x10, x0, hs
{addr("x1", "rt_charbuf")}    cmp x0, #0x80
    b.hs .Lpc_two
    strb w0, [x1]
    movz x2, #1
    b rt_out_bytes
.Lpc_two:
    cmp x0, #0x800
    b.hs .Lpc_three
    lsr x9, x0, #6
    orr x9, x9, #0xc0
    strb w9, [x1]
    movz x2, #2
    b .Lpc_last
.Lpc_three:
{const("x10", 0x10000)}    cmp x0, x10
    b.hs .Lpc_four
    lsr x9, x0, #12
    orr x9, x9, #0xe0
    strb w9, [x1]
    movz x2, #3
    b .Lpc_middle
.Lpc_four:
    lsr x9, x0, #18
    orr x9, x9, #0xf0
    strb w9, [x1]
    lsr x9, x0, #12
    and x9, x9, #0x3f
    orr x9, x9, #0x80
    strb w9, [x1, #1]
    movz x2, #4
.Lpc_middle:
    lsr x9, x0, #6
    and x9, x9, #0x3f
    orr x9, x9, #0x80
    add x10, x1, x2
    sub x10, x10, #2
    strb w9, [x10]
.Lpc_last:
    and x9, x0, #0x3f
    orr x9, x9, #0x80
    add x10, x1, x2
    sub x10, x10, #1
    strb w9, [x10]
    b rt_out_bytes

// rt_parse_char(x0 = text, x1 = parameter index) -> x0 = key: exactly one Unicode
// scalar value in UTF-8 (no overlong form, no surrogate), as the CLI reads a char
rt_parse_char:
    ldrb w9, [x0]
    cbz x9, .Lpch_bad
    cmp x9, #0x80
    b.lo .Lpch_one
    cmp x9, #0xc2
    b.lo .Lpch_bad
    cmp x9, #0xe0
    b.lo .Lpch_two
    cmp x9, #0xf0
    b.lo .Lpch_three
    cmp x9, #0xf5
    b.hs .Lpch_bad
    and x9, x9, #7
    movz x10, #3
{const("x11", 0x10000)}    b .Lpch_cont
.Lpch_three:
    and x9, x9, #15
    movz x10, #2
    movz x11, #0x800
    b .Lpch_cont
.Lpch_two:
    and x9, x9, #31
    movz x10, #1
    movz x11, #0x80
.Lpch_cont:
    add x12, x0, #1
.Lpch_loop:
    ldrb w13, [x12]
    and x14, x13, #0xc0
    cmp x14, #0x80
    b.ne .Lpch_bad
    and x13, x13, #0x3f
    orr x9, x13, x9, lsl #6
    add x12, x12, #1
    subs x10, x10, #1
    b.ne .Lpch_loop
    ldrb w13, [x12]
    cbnz x13, .Lpch_bad
    cmp x9, x11
    b.lo .Lpch_bad
{const("x11", 0x10FFFF)}    cmp x9, x11
    b.hi .Lpch_bad
{const("x11", 0xD800)}    sub x12, x9, x11
    cmp x12, #0x800
    b.lo .Lpch_bad
{const("x11", 0xE000)}    sub x12, x9, x11
{const("x11", 0x2000)}    cmp x12, x11
    b.hs .Lpch_done
{const("x11", KEY_SHIFT)}    add x9, x9, x11
.Lpch_done:
    mov x0, x9
    ret
.Lpch_one:
    ldrb w13, [x0, #1]
    cbnz x13, .Lpch_bad
    mov x0, x9
    ret
.Lpch_bad:
{addr("x2", "rt_str_not_char")}{const("x3", strlen(NOT_CHAR))}    b rt_arg_error
"""
