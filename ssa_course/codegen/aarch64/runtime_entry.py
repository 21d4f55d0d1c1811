"""AArch64 program entry, as assembly: ``_start`` (a private stack, the handler stack,
``main``'s arguments parsed with the CLI's wording and exit status 1, ``tiny_main`` called
with sp 16-byte aligned, output flushed, exit 0) and the parsing routines it calls."""

from __future__ import annotations

from ssa_course.codegen.aarch64 import asmtext as rt
from ssa_course.codegen.float_abi import arg_places
from ssa_course.codegen.runtime_abi import (
    MIN_STACK_BYTES,
    PROT_NONE,
    RuntimeConfig,
    bad_type_message,
    count_message,
    guard_bytes,
    length_of,
    stack_bytes,
    stack_limit_offset,
    strlen,
)


def start_text(config: RuntimeConfig, handlers: int, record: int) -> str:
    """``_start``: stacks, arguments, ``tiny_main``, flush, exit 0."""
    n = len(config.main_params)
    # the stack sized and guarded as on x86-64 (runtime_entry.start_text): the guard is the
    # mapping's lowest bytes, made PROT_NONE
    mprotect = rt.const("x8", rt.SYS_MPROTECT)
    parts = [f"""_start:
    mov x19, sp
    movz x18, #0
{rt.const("x20", stack_bytes(config))}.Lstart_stack_try:
{rt.mmap("x20")}    cmn x0, #4095
    b.lo .Lstart_stack_got
    lsr x20, x20, #2
{rt.const("x9", MIN_STACK_BYTES)}    cmp x20, x9
    b.hs .Lstart_stack_try
    b .Lstart_stack_kept
.Lstart_stack_got:
    add x9, x0, x20
    mov sp, x9
{rt.const("x18", stack_limit_offset(config))}    add x18, x18, x0
{rt.const("x1", guard_bytes(config))}{rt.const("x2", PROT_NONE)}{mprotect}    svc #0
.Lstart_stack_kept:
{rt.const("x20", handlers)}{rt.mmap("x20")}    cmn x0, #4095
    b.hs rt_out_of_memory
    adrp x9, rt_hstack_base
    str x0, [x9, :lo12:rt_hstack_base]
    adrp x9, rt_hstack_top
    str x0, [x9, :lo12:rt_hstack_top]
{rt.const("x10", handlers - record)}    add x10, x10, x0
    adrp x9, rt_hstack_end
    str x10, [x9, :lo12:rt_hstack_end]
    ldr x0, [x19]
    sub x0, x0, #1
{rt.const("x3", strlen(count_message(config)))}    cmp x0, #{n}
    b.ne rt_arg_count_error
"""]
    for k, (name, ty) in enumerate(config.main_params):
        if ty not in ("int", "bool", "char", "float"):
            parts.append(rt.addr("x1", f"rt_arg_bad_type{k}")
                         + rt.const("x2", strlen(bad_type_message(name, ty)))
                         + "    b rt_usage_error\n")
            continue
        # a float exactly or not at all: runtime_float_args.py; char: Bril's extension
        # (runtime_ptr.py)
        parse = {"int": "rt_parse_int", "bool": "rt_parse_bool", "char": "rt_parse_char",
                 "float": "rt_parse_float"}[ty]
        parts.append(f"""    ldr x0, [x19, #{8 * (k + 2)}]
    movz x1, #{k}
    bl {parse}
{rt.addr("x9", "rt_args")}    str x0, [x9, #{8 * k}]
""")
    parts.append("    mov x9, sp\n    and x9, x9, #0xfffffffffffffff0\n    mov sp, x9\n")
    parts.append(rt.addr("x9", "rt_args"))
    # AAPCS64, as every call: floats in d0-d7, the other values in x0-x7, the rest on the
    # stack in argument order (float_abi.arg_places)
    places = arg_places([ty == "float" for _, ty in config.main_params], 8, 8)
    stack_args = [k for k, p in enumerate(places) if p.kind == "stack"]
    if stack_args:
        parts.append(f"    sub sp, sp, #{(8 * len(stack_args) + 15) // 16 * 16}\n")
        for j, k in enumerate(stack_args):
            parts.append(f"    ldr x10, [x9, #{8 * k}]\n    str x10, [sp, #{8 * j}]\n")
    for k, p in enumerate(places):
        if p.kind == "int":
            parts.append(f"    ldr x{p.index}, [x9, #{8 * k}]\n")
        elif p.kind == "float":
            parts.append(f"    ldr x10, [x9, #{8 * k}]\n    fmov d{p.index}, x10\n")
    parts.append(f"""    bl tiny_main
    bl rt_ptr_exit_check
    bl rt_flush
    movz x0, #0
{rt.const("x8", rt.SYS_EXIT_GROUP)}    svc #0
""")
    return "".join(parts)


def _command_line_text() -> str:
    return f"""
// ---- command line (before anything runs: exit status 1, the CLI's wording)
// rt_arg_count_error(x0 = arguments given, x3 = length of rt_str_count)
rt_arg_count_error:
    mov x19, x0
{rt.addr("x1", "rt_str_count")}    mov x2, x3
    bl rt_err_write
    mov x0, x19
    bl rt_format_int
    bl rt_err_write
    cmp x19, #1
    b.eq .Lcount_was
{rt.string("rt_str_were")}    b .Lcount_write
.Lcount_was:
{rt.string("rt_str_was")}.Lcount_write:
    bl rt_err_write
    movz x0, #1
    b rt_exit

// rt_usage_error(x1 = message, x2 = count): a whole prepared message, exit 1
rt_usage_error:
    bl rt_err_write
    movz x0, #1
    b rt_exit

// rt_arg_error(x0 = text, x1 = parameter index, x2 = middle, x3 = its count)
rt_arg_error:
    mov x19, x0
    mov x20, x1
    mov x21, x2
    mov x22, x3
{rt.string("rt_str_argument")}    bl rt_err_write
{rt.addr("x9", "rt_pnames")}    add x9, x9, x20, lsl #4
    ldr x1, [x9]
    ldr x2, [x9, #8]
{rt.addr("x10", "rt_pname_blob")}    add x1, x1, x10
    bl rt_err_write
    mov x1, x21
    mov x2, x22
    bl rt_err_write
// the argument's bytes as args.shown_argument quotes them: printable ASCII as is, any
// other byte as \\xNN (the message stays one line, the same as the interpreters')
.Larg_byte:
    ldrb w9, [x19]
    cbz x9, .Larg_end
{rt.addr("x1", "rt_numbuf")}    cmp x9, #32
    b.lo .Larg_escape
    cmp x9, #126
    b.hi .Larg_escape
    strb w9, [x1]
    movz x2, #1
    b .Larg_write
.Larg_escape:
    movz x10, #92
    strb w10, [x1]
    movz x10, #120
    strb w10, [x1, #1]
{rt.addr("x11", "rt_str_hex")}    lsr x10, x9, #4
    ldrb w10, [x11, x10]
    strb w10, [x1, #2]
    and x10, x9, #15
    ldrb w10, [x11, x10]
    strb w10, [x1, #3]
    movz x2, #4
.Larg_write:
    bl rt_err_write
    add x19, x19, #1
    b .Larg_byte
.Larg_end:
{rt.addr("x1", "rt_str_quote_nl")}    movz x2, #2
    bl rt_err_write
    movz x0, #1
    b rt_exit

// rt_parse_int(x0 = text, x1 = parameter index) -> x0: -?[0-9]+ within 64 bits
rt_parse_int:
    mov x2, x0
    movz x3, #0
    ldrb w4, [x2]
    cmp x4, #45
    b.ne .Lint_first
    movz x3, #1
    add x2, x2, #1
.Lint_first:
    ldrb w4, [x2]
    cbz x4, .Lint_form
    movz x5, #0
    movz x6, #0
    movz x7, #10
.Lint_loop:
    ldrb w4, [x2]
    cbz x4, .Lint_end
    sub x4, x4, #48
    cmp x4, #9
    b.hi .Lint_form
    cbnz x6, .Lint_significant
    cbz x4, .Lint_next
.Lint_significant:
    add x6, x6, #1
    cmp x6, #19
    b.hi .Lint_form
    madd x5, x5, x7, x4
.Lint_next:
    add x2, x2, #1
    b .Lint_loop
.Lint_end:
    movz x8, #0x8000, lsl #48
    cbz x3, .Lint_positive
    cmp x5, x8
    b.hi .Lint_range
    neg x0, x5
    ret
.Lint_positive:
    cmp x5, x8
    b.hs .Lint_range
    mov x0, x5
    ret
.Lint_form:
{rt.addr("x2", "rt_str_not_int")}{rt.const("x3", length_of("rt_str_not_int"))}    b rt_arg_error
.Lint_range:
{rt.addr("x2", "rt_str_range")}{rt.const("x3", length_of("rt_str_range"))}    b rt_arg_error

// rt_parse_bool(x0 = text, x1 = parameter index) -> x0: true or false, exactly
rt_parse_bool:
    mov x15, x30
    mov x10, x0
{rt.addr("x11", "rt_str_lit_true")}    bl rt_same_text
    movz x9, #1
    cbnz x12, .Lpbool_done
    mov x10, x0
{rt.addr("x11", "rt_str_lit_false")}    bl rt_same_text
    movz x9, #0
    cbnz x12, .Lpbool_done
{rt.addr("x2", "rt_str_not_bool")}{rt.const("x3", length_of("rt_str_not_bool"))}    b rt_arg_error
.Lpbool_done:
    mov x0, x9
    mov x30, x15
    ret

// rt_same_text(x10, x11: NUL-terminated) -> x12 = 1 when equal; clobbers x10, x11, x13, x14
rt_same_text:
    ldrb w13, [x10]
    ldrb w14, [x11]
    cmp x13, x14
    b.ne .Lsame_no
    cbz x13, .Lsame_yes
    add x10, x10, #1
    add x11, x11, #1
    b rt_same_text
.Lsame_no:
    movz x12, #0
    ret
.Lsame_yes:
    movz x12, #1
    ret
"""



COMMAND_LINE_TEXT = _command_line_text()
