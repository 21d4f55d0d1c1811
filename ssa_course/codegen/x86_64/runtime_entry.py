"""Program entry, as assembly: ``_start`` (private stacks, ``main``'s arguments parsed
from the command line with the CLI's wording and exit status 1, ``tiny_main`` called with
rsp aligned, output flushed, exit 0) and the parsing routines it calls."""

from __future__ import annotations

from ssa_course.codegen.float_abi import arg_places
from ssa_course.codegen.runtime_abi import (
    HANDLER_RECORD,
    MIN_STACK_BYTES,
    PROT_NONE,
    SYS_EXIT_GROUP,
    SYS_MPROTECT,
    RuntimeConfig,
    bad_type_message,
    guard_bytes,
    handler_bytes,
    length_of,
    stack_bytes,
    stack_limit_offset,
    strlen,
)
from ssa_course.codegen.x86_64.runtime_heap import mmap_text


def _syscall_mmap(size: int, fail: str) -> str:
    return mmap_text(str(size)) + f"""    cmp rax, -4096
    ja {fail}
"""


def start_text(config: RuntimeConfig) -> str:
    """``_start``: stacks, arguments, ``tiny_main``, flush, exit 0."""
    n = len(config.main_params)
    handlers = handler_bytes(config)
    # The stack: sized for the depth limit and the program's largest frame (at least
    # 1 GiB, runtime_abi.stack_bytes) if the address space allows it (ulimit -v), else a
    # quarter, down to 16 MiB; if even that fails the OS stack is kept. Its lowest bytes
    # are a guard (PROT_NONE): a stack mapped smaller than asked ends in a fault there,
    # never in the mapping below it (the handler records, the heap).
    parts = [f"""_start:
    mov r12, rsp
    mov r13, {stack_bytes(config)}
.Lstart_stack_try:
{mmap_text('r13')}    cmp rax, -4096
    jbe .Lstart_stack_got
    shr r13, 2
    cmp r13, {MIN_STACK_BYTES}
    jae .Lstart_stack_try
    jmp .Lstart_stack_kept
.Lstart_stack_got:
    lea rsp, [rax + r13]
    mov rdi, rax
    mov rcx, {stack_limit_offset(config)}
    add rcx, rax
    mov qword ptr [rip + rt_stack_limit], rcx
    mov rsi, {guard_bytes(config)}
    mov edx, {PROT_NONE}
    mov eax, {SYS_MPROTECT}
    syscall
.Lstart_stack_kept:
{_syscall_mmap(handlers, 'rt_out_of_memory')}    mov qword ptr [rip + rt_hstack_base], rax
    mov qword ptr [rip + rt_hstack_top], rax
    mov rcx, {handlers - HANDLER_RECORD}
    add rcx, rax
    mov qword ptr [rip + rt_hstack_end], rcx
    mov rdi, qword ptr [r12]
    dec rdi
    cmp rdi, {n}
    jne rt_arg_count_error
"""]
    for k, (name, ty) in enumerate(config.main_params):
        if ty == "int":
            parse = "rt_parse_int"
        elif ty == "bool":
            parse = "rt_parse_bool"
        elif ty == "float":  # exact: runtime_float_args.py
            parse = "rt_parse_float"
        elif ty == "char":
            parse = "rt_parse_char"  # Bril's char extension (runtime_ptr.py)
        else:
            parts.append(f"    lea rsi, [rip + rt_arg_bad_type{k}]\n"
                         f"    mov rdx, {strlen(bad_type_message(name, ty))}\n"
                         "    jmp rt_usage_error\n")
            continue
        parts.append(f"""    mov rdi, qword ptr [r12 + {8 * (k + 2)}]
    mov rsi, {k}
    call {parse}
    mov qword ptr [rip + rt_args + {8 * k}], rax
""")
    parts.append("    and rsp, -16\n")
    # System V, as every call: floats in xmm0-xmm7, the other values in the six integer
    # registers, the rest on the stack in argument order (float_abi.arg_places)
    places = arg_places([ty == "float" for _, ty in config.main_params], 6, 8)
    stack_args = [k for k, p in enumerate(places) if p.kind == "stack"]
    if len(stack_args) % 2:
        parts.append("    sub rsp, 8\n")
    for k in reversed(stack_args):
        parts.append(f"    push qword ptr [rip + rt_args + {8 * k}]\n")
    regs = ("rdi", "rsi", "rdx", "rcx", "r8", "r9")
    for k, p in enumerate(places):
        if p.kind == "int":
            parts.append(f"    mov {regs[p.index]}, qword ptr [rip + rt_args + {8 * k}]\n")
        elif p.kind == "float":
            parts.append(f"    mov rax, qword ptr [rip + rt_args + {8 * k}]\n"
                         f"    movq xmm{p.index}, rax\n")
    parts.append(f"""    call tiny_main
    call rt_ptr_exit_check
    call rt_flush
    xor edi, edi
    mov eax, {SYS_EXIT_GROUP}
    syscall
""")
    return "".join(parts)


COMMAND_LINE_TEXT = f"""
# ---- command line (before anything runs: exit status 1, the CLI's wording)
# rt_arg_count_error(rdi = arguments given)
rt_arg_count_error:
    mov rbx, rdi
    lea rsi, [rip + rt_str_count]
    mov rdx, qword ptr [rip + rt_str_count_len]
    call rt_err_write
    mov rdi, rbx
    call rt_format_int
    call rt_err_write
    lea rsi, [rip + rt_str_were]
    mov edx, {length_of('rt_str_were')}
    cmp rbx, 1
    jne .Lcount_write
    lea rsi, [rip + rt_str_was]
    mov edx, {length_of('rt_str_was')}
.Lcount_write:
    call rt_err_write
    mov edi, 1
    jmp rt_exit

# rt_usage_error(rsi = message, rdx = count): a whole prepared message, exit 1
rt_usage_error:
    call rt_err_write
    mov edi, 1
    jmp rt_exit

# rt_arg_error(rdi = text, rsi = parameter index, rdx = middle, rcx = its count)
rt_arg_error:
    mov rbx, rdi
    mov r12, rsi
    mov r13, rdx
    mov r14, rcx
    lea rsi, [rip + rt_str_argument]
    mov edx, {length_of('rt_str_argument')}
    call rt_err_write
    shl r12, 4
    lea rax, [rip + rt_pnames]
    mov rdx, qword ptr [rax + r12 + 8]
    mov rsi, qword ptr [rax + r12]
    lea rax, [rip + rt_pname_blob]
    add rsi, rax
    call rt_err_write
    mov rsi, r13
    mov rdx, r14
    call rt_err_write
# the argument's bytes as args.shown_argument quotes them: printable ASCII as is, any
# other byte as \\xNN (the message stays one line, the same as the interpreters')
.Larg_byte:
    movzx eax, byte ptr [rbx]
    test eax, eax
    jz .Larg_end
    lea rsi, [rip + rt_numbuf]
    cmp eax, 32
    jb .Larg_escape
    cmp eax, 126
    ja .Larg_escape
    mov byte ptr [rsi], al
    mov edx, 1
    jmp .Larg_write
.Larg_escape:
    mov byte ptr [rsi], 92
    mov byte ptr [rsi + 1], 120
    lea rdi, [rip + rt_str_hex]
    mov ecx, eax
    shr ecx, 4
    movzx ecx, byte ptr [rdi + rcx]
    mov byte ptr [rsi + 2], cl
    and eax, 15
    movzx eax, byte ptr [rdi + rax]
    mov byte ptr [rsi + 3], al
    mov edx, 4
.Larg_write:
    call rt_err_write
    inc rbx
    jmp .Larg_byte
.Larg_end:
    lea rsi, [rip + rt_str_quote_nl]
    mov edx, 2
    call rt_err_write
    mov edi, 1
    jmp rt_exit

# rt_parse_int(rdi = text, rsi = parameter index) -> rax: -?[0-9]+ within 64 bits
rt_parse_int:
    mov rcx, rdi
    xor r8d, r8d
    cmp byte ptr [rcx], 45
    jne .Lint_first
    mov r8d, 1
    inc rcx
.Lint_first:
    cmp byte ptr [rcx], 0
    je .Lint_form
    xor eax, eax
    xor r9d, r9d
.Lint_loop:
    movzx edx, byte ptr [rcx]
    test edx, edx
    jz .Lint_end
    sub edx, 48
    cmp edx, 9
    ja .Lint_form
    test r9, r9
    jnz .Lint_significant
    test edx, edx
    jz .Lint_next
.Lint_significant:
    inc r9
    cmp r9, 19
    ja .Lint_next
    imul rax, rax, 10
    add rax, rdx
.Lint_next:
    inc rcx
    jmp .Lint_loop
.Lint_end:
    cmp r9, 19
    ja .Lint_range
    mov rdx, 0x8000000000000000
    test r8, r8
    jz .Lint_positive
    cmp rax, rdx
    ja .Lint_range
    neg rax
    ret
.Lint_positive:
    cmp rax, rdx
    jae .Lint_range
    ret
.Lint_form:
    lea rdx, [rip + rt_str_not_int]
    mov ecx, {length_of('rt_str_not_int')}
    jmp rt_arg_error
.Lint_range:
    lea rdx, [rip + rt_str_range]
    mov ecx, {length_of('rt_str_range')}
    jmp rt_arg_error

# rt_parse_bool(rdi = text, rsi = parameter index) -> rax: true or false, exactly
rt_parse_bool:
    mov r10, rdi
    lea r11, [rip + rt_str_lit_true]
    call rt_same_text
    mov eax, 1
    je .Lbool_done
    mov rdi, r10
    lea r11, [rip + rt_str_lit_false]
    call rt_same_text
    mov eax, 0
    je .Lbool_done
    mov rdi, r10
    lea rdx, [rip + rt_str_not_bool]
    mov ecx, {length_of('rt_str_not_bool')}
    jmp rt_arg_error
.Lbool_done:
    ret

# rt_same_text(rdi, r11: NUL-terminated) -> ZF set when equal; clobbers rdi, r11, al
rt_same_text:
    mov al, byte ptr [rdi]
    cmp al, byte ptr [r11]
    jne .Lsame_done
    test al, al
    jz .Lsame_done
    inc rdi
    inc r11
    jmp rt_same_text
.Lsame_done:
    ret
"""
