"""The runtime of AArch64 Tiny programs, generated as assembly (no libc, no C).

The same routines, messages and data as the x86-64 runtime (:mod:`ssa_course.codegen.
runtime_asm`; the data section is shared), written for AArch64 Linux: system calls are
``svc #0`` with the number in x8 (``write`` 64, ``mmap`` 222, ``exit_group`` 94) and the
arguments in x0-x5, the result in x0. Calls follow AAPCS64 (x0-x7 in, x0 out, x0-x17
clobbered, x19-x28 kept); the generated code keeps the fuel in x27 and the call depth in
x28, which no routine here touches except ``rt_throw`` (x28 comes back from the record).

Handler records (:data:`HANDLER_RECORD` bytes): handler, sp, x29, x28, x19-x26, x27; x27
is restored by a throw only in a build without a step limit (there the allocator may
use it; with a limit it is the fuel, which a throw must not give back).
"""

from __future__ import annotations

from ssa_course.codegen.aarch64.asmtext import (
    SYS_EXIT_GROUP,
    SYS_WRITE,
    addr,
    const,
    mmap,
    string,
)
from ssa_course.codegen.aarch64.immediates import mov_sequence
from ssa_course.codegen.aarch64.runtime_entry import COMMAND_LINE_TEXT, start_text
from ssa_course.codegen.aarch64.runtime_float import FLOAT_TEXT
from ssa_course.codegen.aarch64.runtime_float_args import FLOAT_ARGS_TEXT
from ssa_course.codegen.aarch64.runtime_ptr import PTR_TEXT
from ssa_course.codegen.runtime_abi import (
    CODE,
    HANDLERS_PER_FRAME,
    HEAP_CHUNK,
    MESSAGE_SHIFT,
    MIN_HANDLERS,
    OUT_BUFFER,
    RuntimeConfig,
    data_lines,
)
from ssa_course.runtime import MAX_ARRAY_LENGTH

HANDLER_RECORD = 112
_X27_BACK = "    // x27 comes back here in a build without a step limit\n"


assert len(mov_sequence(OUT_BUFFER)) == 1
IO_TEXT = f"""
// ---- output: a 64 KiB buffer written by rt_flush (before exit and every error)
rt_flush:
    adrp x9, rt_outlen
    ldr x2, [x9, :lo12:rt_outlen]
{addr("x1", "rt_outbuf")}.Lflush_loop:
    cbz x2, .Lflush_done
    movz x0, #1
{const("x8", SYS_WRITE)}    svc #0
    cmp x0, #0
    b.le .Lflush_failed
    add x1, x1, x0
    sub x2, x2, x0
    b .Lflush_loop
.Lflush_done:
    str xzr, [x9, :lo12:rt_outlen]
    ret
.Lflush_failed:
    str xzr, [x9, :lo12:rt_outlen]
{string("rt_str_wfail")}    bl rt_err_write
    movz x0, #1
    b rt_exit

// rt_out_bytes(x1 = bytes, x2 = count): append to the output buffer, flushing when full
rt_out_bytes:
    stp x29, x30, [sp, #-16]!
    movz x3, #0
.Lout_loop:
    cmp x3, x2
    b.hs .Lout_done
    adrp x9, rt_outlen
    ldr x4, [x9, :lo12:rt_outlen]
{const("x5", OUT_BUFFER)}    cmp x4, x5
    b.lo .Lout_room
    stp x1, x2, [sp, #-16]!
    stp x3, x4, [sp, #-16]!
    bl rt_flush
    ldp x3, x4, [sp], #16
    ldp x1, x2, [sp], #16
    movz x4, #0
.Lout_room:
    ldrb w6, [x1, x3]
{addr("x5", "rt_outbuf")}    strb w6, [x5, x4]
    add x4, x4, #1
    adrp x9, rt_outlen
    str x4, [x9, :lo12:rt_outlen]
    add x3, x3, #1
    b .Lout_loop
.Lout_done:
    ldp x29, x30, [sp], #16
    ret

// rt_err_write(x1 = bytes, x2 = count): straight to standard error
rt_err_write:
    cbz x2, .Lerr_done
    movz x0, #2
{const("x8", SYS_WRITE)}    svc #0
    cmp x0, #0
    b.le .Lerr_done
    add x1, x1, x0
    sub x2, x2, x0
    b rt_err_write
.Lerr_done:
    ret

// rt_exit(x0 = status)
rt_exit:
{const("x8", SYS_EXIT_GROUP)}    svc #0

// rt_format_int(x0 = value) -> x1 = digits, x2 = count (in rt_numbuf); |INT_MIN| = 2^63
// is fine as an unsigned number, so udiv by 10 gives every digit
rt_format_int:
{addr("x1", "rt_numbuf")}    add x1, x1, #32
    mov x3, x1
    cmp x0, #0
    cneg x4, x0, lt
    movz x5, #10
.Lfmt_loop:
    udiv x6, x4, x5
    msub x7, x6, x5, x4
    add x7, x7, #48
    sub x1, x1, #1
    strb w7, [x1]
    mov x4, x6
    cbnz x4, .Lfmt_loop
    cmp x0, #0
    b.ge .Lfmt_done
    sub x1, x1, #1
    movz x7, #45
    strb w7, [x1]
.Lfmt_done:
    sub x2, x3, x1
    ret

// ---- print
.globl rt_print_int
rt_print_int:
    stp x29, x30, [sp, #-16]!
    bl rt_format_int
    ldp x29, x30, [sp], #16
    b rt_out_bytes

.globl rt_print_bool
rt_print_bool:
    cbz x0, .Lbool_false
{addr("x1", "rt_str_true")}    movz x2, #4
    b rt_out_bytes
.Lbool_false:
{addr("x1", "rt_str_false")}    movz x2, #5
    b rt_out_bytes

.globl rt_print_space
rt_print_space:
{addr("x1", "rt_str_space")}    movz x2, #1
    b rt_out_bytes

.globl rt_print_newline
rt_print_newline:
{addr("x1", "rt_str_newline")}    movz x2, #1
    b rt_out_bytes

// ---- errors: flush the output, one line on standard error, exit 2
// rt_trap(x0 = message code, x1 = line, x2 = col); line 0 means no position
.globl rt_trap
rt_trap:
    mov x19, x0
    mov x20, x1
    mov x21, x2
    bl rt_flush
{string("rt_str_error")}    bl rt_err_write
{addr("x1", "rt_messages")}    add x1, x1, x19, lsl #{MESSAGE_SHIFT}
    ldrb w2, [x1]
    add x1, x1, #1
    bl rt_err_write
// rt_err_located_exit(x20 = line, x21 = col): " at L:C" when the line is not 0, the
// newline, exit 2 (the end of every runtime error line: rt_trap's, the pointer checks')
rt_err_located_exit:
    cbz x20, .Ltrap_end
{string("rt_str_at")}    bl rt_err_write
    mov x0, x20
    bl rt_format_int
    bl rt_err_write
{string("rt_str_colon")}    bl rt_err_write
    mov x0, x21
    bl rt_format_int
    bl rt_err_write
.Ltrap_end:
{string("rt_str_newline")}    bl rt_err_write
    movz x0, #2
    b rt_exit

.globl rt_step_limit
rt_step_limit:
    movz x0, #{CODE['step limit exceeded']}
    movz x1, #0
    movz x2, #0
    b rt_trap

.globl rt_stack_overflow
rt_stack_overflow:
    movz x0, #{CODE['stack overflow']}
    movz x1, #0
    movz x2, #0
    b rt_trap
"""

HEAP_TEXT = f"""
// ---- memory: bump allocation from zeroed mmap chunks (never freed)
// rt_alloc(x0 = bytes, a multiple of 8) -> x0, 16-byte aligned (as x86-64's and malloc's)
rt_alloc:
    add x0, x0, #15
    and x0, x0, #0xfffffffffffffff0
    adrp x9, rt_heap_ptr
    ldr x10, [x9, :lo12:rt_heap_ptr]
    adrp x11, rt_heap_end
    ldr x12, [x11, :lo12:rt_heap_end]
    add x13, x10, x0
    cmp x13, x12
    b.hi .Lalloc_chunk
    str x13, [x9, :lo12:rt_heap_ptr]
    mov x0, x10
    ret
.Lalloc_chunk:
    mov x14, x0
    add x15, x0, #4095
    and x15, x15, #0xfffffffffffff000
{const("x3", HEAP_CHUNK)}    cmp x15, x3
    csel x15, x3, x15, lo
{mmap("x15")}    cmn x0, #4095
    b.hs rt_out_of_memory
    add x12, x0, x15
    adrp x11, rt_heap_end
    str x12, [x11, :lo12:rt_heap_end]
    add x13, x0, x14
    adrp x9, rt_heap_ptr
    str x13, [x9, :lo12:rt_heap_ptr]
    ret

rt_out_of_memory:
    movz x0, #{CODE['out of memory']}
    movz x1, #0
    movz x2, #0
    b rt_trap

// rt_new_array(x0 = length, x1 = trap-site id) -> x0 = element 0, the length below it,
// a qword an element; rt_new_bytes the same with a byte an element (a [bool]), rounded up
// to qwords. Both check the length and charge the budget in elements.
.globl rt_new_bytes
rt_new_bytes:
    movz x12, #1
    b .Lnew_checked
.globl rt_new_array
rt_new_array:
    movz x12, #0
.Lnew_checked:
    cmp x0, #0
    b.lt .Lnew_negative
{const("x9", MAX_ARRAY_LENGTH)}    cmp x0, x9
    b.gt .Lnew_too_large
    adrp x10, rt_alloc_left
    ldr x11, [x10, :lo12:rt_alloc_left]
    subs x11, x11, x0
    b.mi .Lnew_budget
    str x11, [x10, :lo12:rt_alloc_left]
    stp x29, x30, [sp, #-16]!
    stp x0, x1, [sp, #-16]!
    cbnz x12, .Lnew_bytes
    lsl x0, x0, #3
    add x0, x0, #8
    b .Lnew_alloc
.Lnew_bytes:
    add x0, x0, #15
    and x0, x0, #0xfffffffffffffff8
.Lnew_alloc:
    bl rt_alloc
    ldp x1, x2, [sp], #16
    ldp x29, x30, [sp], #16
    str x1, [x0]
    add x0, x0, #8
    ret
.Lnew_negative:
    movz x0, #{CODE['negative array length']}
    b .Lnew_trap
.Lnew_too_large:
    movz x0, #{CODE['array too large']}
    b .Lnew_trap
.Lnew_budget:
    movz x0, #{CODE['out of memory']}
.Lnew_trap:
{addr("x9", "rt_sites")}    add x9, x9, x1, lsl #4
    ldr x2, [x9, #8]
    ldr x1, [x9]
    b rt_trap

// rt_charge_array(x0 = length, x1 = trap-site id): an array kept in the frame (escape
// analysis) still counts against the run's budget, with the same message and site
.globl rt_charge_array
rt_charge_array:
    adrp x10, rt_alloc_left
    ldr x11, [x10, :lo12:rt_alloc_left]
    subs x11, x11, x0
    b.mi .Lnew_budget
    str x11, [x10, :lo12:rt_alloc_left]
    ret

// rt_new_struct(x0 = fields) -> x0, zeroed (at least one qword: distinct addresses)
.globl rt_new_struct
rt_new_struct:
    cbnz x0, .Lstruct_sized
    movz x0, #1
.Lstruct_sized:
    lsl x0, x0, #3
    b rt_alloc

// ---- exceptions: records {{handler, sp, x29, x28, x19-x26, x27}} on a stack of their own;
// x27 is given back only without a step limit (then it may hold a value; with one it is
// the fuel, which a throw must not refund)
// rt_enter(x0 = handler address)
.globl rt_enter
rt_enter:
    adrp x9, rt_hstack_top
    ldr x10, [x9, :lo12:rt_hstack_top]
    adrp x11, rt_hstack_end
    ldr x12, [x11, :lo12:rt_hstack_end]
    cmp x10, x12
    b.hs rt_stack_overflow
    mov x13, sp
    stp x0, x13, [x10]
    stp x29, x28, [x10, #16]
    stp x19, x20, [x10, #32]
    stp x21, x22, [x10, #48]
    stp x23, x24, [x10, #64]
    stp x25, x26, [x10, #80]
    str x27, [x10, #96]
    add x10, x10, #{HANDLER_RECORD}
    str x10, [x9, :lo12:rt_hstack_top]
    ret

// rt_leave(): pop the innermost record
.globl rt_leave
rt_leave:
    adrp x9, rt_hstack_top
    ldr x10, [x9, :lo12:rt_hstack_top]
    sub x10, x10, #{HANDLER_RECORD}
    str x10, [x9, :lo12:rt_hstack_top]
    ret

// rt_throw(x0 = value): to the innermost handler with x0 = value, or uncaught
.globl rt_throw
rt_throw:
    adrp x9, rt_hstack_top
    ldr x10, [x9, :lo12:rt_hstack_top]
    adrp x11, rt_hstack_base
    ldr x12, [x11, :lo12:rt_hstack_base]
    cmp x10, x12
    b.eq .Lthrow_uncaught
    sub x10, x10, #{HANDLER_RECORD}
    str x10, [x9, :lo12:rt_hstack_top]
    ldp x13, x14, [x10]
    mov sp, x14
    ldp x29, x28, [x10, #16]
    ldp x19, x20, [x10, #32]
    ldp x21, x22, [x10, #48]
    ldp x23, x24, [x10, #64]
    ldp x25, x26, [x10, #80]
{_X27_BACK}    br x13
.Lthrow_uncaught:
    mov x19, x0
    bl rt_flush
{string("rt_str_uncaught")}    bl rt_err_write
    mov x0, x19
    bl rt_format_int
    bl rt_err_write
{string("rt_str_newline")}    bl rt_err_write
    movz x0, #2
    b rt_exit
"""

RUNTIME_TEXT = (IO_TEXT + FLOAT_TEXT + HEAP_TEXT + PTR_TEXT + COMMAND_LINE_TEXT
                + FLOAT_ARGS_TEXT)


def handler_bytes(config: RuntimeConfig) -> int:
    records = max(MIN_HANDLERS, config.depth_limit * HANDLERS_PER_FRAME)
    return (records * HANDLER_RECORD + 4095) // 4096 * 4096


def runtime_asm(config: RuntimeConfig) -> str:
    """The runtime's assembly for ``config`` (text, data and bss sections)."""
    lines = [".text", ".globl _start"]
    lines += start_text(config, handler_bytes(config), HANDLER_RECORD).splitlines()
    restore = "    ldr x27, [x10, #96]\n" if config.step_limit is None else ""
    lines += RUNTIME_TEXT.replace(_X27_BACK, restore).strip("\n").splitlines()
    lines += data_lines(config)
    return "\n".join(lines) + "\n"


def program_source(program_asm: str, config: RuntimeConfig) -> str:
    """The whole assembly file of a program: the runtime, then the program's text."""
    return runtime_asm(config) + "\n.text\n" + program_asm.rstrip("\n") + "\n"
