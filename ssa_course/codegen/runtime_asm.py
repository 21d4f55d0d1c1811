"""The runtime of native Tiny programs, generated as Intel-syntax assembly (no libc, no C).

:func:`runtime_asm` returns the assembly of ``_start`` (a private 1 GiB stack, ``main``'s
arguments parsed from the command line with the CLI's wording, ``tiny_main`` called, output
flushed) and of every ``rt_*`` entry the generated code calls (docs/codegen.md, "The
runtime"). The program's own functions are appended after it (:func:`program_source`).

Only three system calls are used -- ``write``, ``mmap``, ``exit_group`` -- so the emulator
(:mod:`ssa_course.codegen.emulate`) can serve them all. The source keeps to the subset both
assemblers accept (:mod:`ssa_course.codegen.assemble`): data is referenced only as
``[rip + symbol]``, labels inside a function start with ``.L``, and data holds numbers and
strings, never addresses.
"""

from __future__ import annotations

from dataclasses import dataclass

from ssa_course.runtime import (
    DEFAULT_ALLOCATION_LIMIT,
    DEFAULT_DEPTH_LIMIT,
    DEFAULT_STEP_LIMIT,
    MAX_ARRAY_LENGTH,
)

# rt_trap's message codes (rdi), in index order; 6 and 7 have no position.
MESSAGES = ("division by zero", "index out of bounds", "negative array length",
            "array too large", "unset element", "out of memory", "step limit exceeded",
            "stack overflow")
CODE = {m: k for k, m in enumerate(MESSAGES)}
_MSG_RECORD = 32  # bytes per message: a length byte, then the text

NO_FUEL_LIMIT = 1 << 62  # the fuel of a build without a step limit: never runs out
STACK_BYTES = 1 << 30  # the private stack: 100,000 nested calls of big frames fit
HANDLER_BYTES = 1 << 30  # try/catch records (32 bytes each), reserved, touched on use
HEAP_CHUNK = 1 << 26  # arrays and structs are bump-allocated from chunks this big
OUT_BUFFER = 65536

SYS_WRITE, SYS_MMAP, SYS_EXIT_GROUP = 1, 9, 231
PROT_RW = 3
MAP_PRIVATE_ANON_NORESERVE = 0x02 | 0x20 | 0x4000


@dataclass(frozen=True, slots=True)
class RuntimeConfig:
    """What the runtime needs to know about one program and one run.

    ``main_params`` are ``(name, type)`` pairs (``"int"``/``"bool"``; any other type is
    reported as the CLI does); ``step_limit`` None means no fuel limit (a standalone
    executable); ``array_sites`` is the ``(line, col)`` of trap-site id k of ``rt_new_array``.
    """

    main_params: tuple[tuple[str, str], ...] = ()
    step_limit: int | None = DEFAULT_STEP_LIMIT
    depth_limit: int = DEFAULT_DEPTH_LIMIT
    allocation_limit: int = DEFAULT_ALLOCATION_LIMIT
    array_sites: tuple[tuple[int, int], ...] = ()


def program_source(program_asm: str, config: RuntimeConfig) -> str:
    """The whole assembly file of a program: the runtime, then the program's text."""
    return runtime_asm(config) + "\n.text\n" + program_asm.rstrip("\n") + "\n"


def _ascii(text: str) -> str:
    """A ``.ascii`` directive for ``text`` (bytes as octal escapes where needed)."""
    out = []
    for b in text.encode("utf-8"):
        ch = chr(b)
        out.append(ch if 32 <= b < 127 and ch not in '"\\' else f"\\{b:03o}")
    return f'.ascii "{"".join(out)}"'


def _string(label: str, text: str) -> list[str]:
    return [f"{label}:", f"    {_ascii(text)}"] if text else [f"{label}:"]


def _strlen(text: str) -> int:
    return len(text.encode("utf-8"))


def runtime_asm(config: RuntimeConfig) -> str:
    """The runtime's assembly for ``config`` (text, data and bss sections)."""
    lines = [".intel_syntax noprefix", ".text", ".globl _start"]
    lines += _start(config).splitlines()
    lines += _RUNTIME_TEXT.strip("\n").splitlines()
    lines += _data(config)
    return "\n".join(lines) + "\n"


def _syscall_mmap(size: int, fail: str) -> str:
    return f"""    xor edi, edi
    mov rsi, {size}
    mov edx, {PROT_RW}
    mov r10, {MAP_PRIVATE_ANON_NORESERVE}
    mov r8, -1
    xor r9d, r9d
    mov eax, {SYS_MMAP}
    syscall
    cmp rax, -4096
    ja {fail}
"""


def _start(config: RuntimeConfig) -> str:
    """``_start``: stacks, arguments, ``tiny_main``, flush, exit 0."""
    n = len(config.main_params)
    parts = [f"""_start:
    mov r12, rsp
{_syscall_mmap(STACK_BYTES, '.Lstart_stack_kept')}    lea rsp, [rax + {STACK_BYTES}]
.Lstart_stack_kept:
{_syscall_mmap(HANDLER_BYTES, 'rt_out_of_memory')}    mov qword ptr [rip + rt_hstack_base], rax
    mov qword ptr [rip + rt_hstack_top], rax
    lea rcx, [rax + {HANDLER_BYTES}]
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
        else:
            parts.append(f"    lea rsi, [rip + rt_arg_bad_type{k}]\n"
                         f"    mov rdx, {_strlen(_bad_type(name, ty))}\n"
                         "    jmp rt_usage_error\n")
            continue
        parts.append(f"""    mov rdi, qword ptr [r12 + {8 * (k + 2)}]
    mov rsi, {k}
    call {parse}
    mov qword ptr [rip + rt_args + {8 * k}], rax
""")
    parts.append("    and rsp, -16\n")
    stack_args = list(range(6, n))
    if len(stack_args) % 2:
        parts.append("    sub rsp, 8\n")
    for k in reversed(stack_args):
        parts.append(f"    push qword ptr [rip + rt_args + {8 * k}]\n")
    regs = ("rdi", "rsi", "rdx", "rcx", "r8", "r9")
    for k in range(min(n, 6)):
        parts.append(f"    mov {regs[k]}, qword ptr [rip + rt_args + {8 * k}]\n")
    parts.append(f"""    call tiny_main
    call rt_flush
    xor edi, edi
    mov eax, {SYS_EXIT_GROUP}
    syscall
""")
    return "".join(parts)


def _bad_type(name: str, ty: str) -> str:
    return (f"error: argument '{name}' has type {ty}, which cannot come from the command "
            "line\n")


def _count_message(config: RuntimeConfig) -> str:
    """The start of the CLI's wrong-count message (the count given follows it)."""
    params = config.main_params
    wanted = ", ".join(f"{n}: {t}" for n, t in params) or "none"
    return (f"error: main takes {len(params)} argument{'s' * (len(params) != 1)} "
            f"({wanted}), but ")


def _data(config: RuntimeConfig) -> list[str]:
    fuel = NO_FUEL_LIMIT if config.step_limit is None else config.step_limit
    out = [".data", ".balign 8",
           "rt_fuel:", f"    .quad {fuel}",
           "rt_depth:", f"    .quad {config.depth_limit}",
           "rt_alloc_left:", f"    .quad {config.allocation_limit}",
           "rt_sites:"]
    for line, col in config.array_sites or ((0, 0),):
        out.append(f"    .quad {line}, {col}")
    # Parameter names: (offset, length) into rt_pname_blob (data holds no addresses).
    out.append("rt_pnames:")
    offset = 0
    for name, _ in config.main_params:
        out.append(f"    .quad {offset}, {_strlen(name)}")
        offset += _strlen(name)
    out += _string("rt_pname_blob", "".join(n for n, _ in config.main_params))
    out.append("rt_messages:")
    for m in MESSAGES:
        raw = m.encode()
        out.append(f"    .byte {len(raw)}")
        out.append(f"    {_ascii(m)}")
        out.append(f"    .zero {_MSG_RECORD - 1 - len(raw)}")
    for k, (name, ty) in enumerate(config.main_params):
        if ty not in ("int", "bool"):
            out += _string(f"rt_arg_bad_type{k}", _bad_type(name, ty))
    count = _count_message(config)
    out += _string("rt_str_count", count)
    out += ["rt_str_count_len:", f"    .quad {_strlen(count)}"]
    for label, text in _STRINGS:
        out += _string(label, text)
    out += [".bss", ".balign 8", "rt_outlen:", "    .zero 8", "rt_heap_ptr:", "    .zero 8",
            "rt_heap_end:", "    .zero 8", "rt_hstack_base:", "    .zero 8",
            "rt_hstack_top:", "    .zero 8", "rt_hstack_end:", "    .zero 8",
            "rt_numbuf:", "    .zero 32",
            "rt_args:", f"    .zero {8 * max(1, len(config.main_params))}",
            "rt_outbuf:", f"    .zero {OUT_BUFFER}"]
    return out


# Fixed strings; their lengths are written into the code below by _len().
_STRINGS = (
    ("rt_str_true", "true"), ("rt_str_false", "false"), ("rt_str_space", " "),
    ("rt_str_newline", "\n"), ("rt_str_error", "error: "), ("rt_str_at", " at "),
    ("rt_str_colon", ":"), ("rt_str_uncaught", "error: uncaught exception "),
    ("rt_str_was", " was given\n"), ("rt_str_were", " were given\n"),
    ("rt_str_argument", "error: argument '"), ("rt_str_quote_nl", "'\n"),
    ("rt_str_not_int", "' must be an int, not '"),
    ("rt_str_range", "' is out of the 64-bit int range: '"),
    ("rt_str_not_bool", "' must be true or false, not '"),
    ("rt_str_lit_true", "true\0"), ("rt_str_lit_false", "false\0"),
    ("rt_str_wfail", "error: cannot write standard output\n"),
)
_LEN = {label: _strlen(text) for label, text in _STRINGS}


def _len(label: str) -> int:
    return _LEN[label]


# The fixed part of the runtime. Calling convention: System V; internal helpers document
# which registers they clobber. Functions that never return may clobber anything.
_RUNTIME_TEXT = f"""
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
    mov rdx, {_len('rt_str_wfail')}
    call rt_err_write
    mov edi, 1
    jmp rt_exit

# rt_out_bytes(rsi = bytes, rdx = count): append to the output buffer
rt_out_bytes:
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

# rt_format_int(rdi = value) -> rsi = digits, rdx = count (in rt_numbuf)
rt_format_int:
    lea rsi, [rip + rt_numbuf + 32]
    mov rax, rdi
    test rax, rax
    jns .Lfmt_digits
    neg rax
.Lfmt_digits:
    mov ecx, 10
.Lfmt_loop:
    xor edx, edx
    div rcx
    add dl, 48
    dec rsi
    mov byte ptr [rsi], dl
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

# ---- memory: bump allocation from zeroed mmap chunks (never freed)
# rt_alloc(rdi = bytes, a multiple of 8) -> rax
rt_alloc:
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
    xor edi, edi
    mov edx, {PROT_RW}
    mov r10, {MAP_PRIVATE_ANON_NORESERVE}
    mov r8, -1
    xor r9d, r9d
    mov eax, {SYS_MMAP}
    syscall
    pop rdi
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

# rt_new_array(rdi = length, rsi = trap-site id) -> rax = [length][elements...]
.globl rt_new_array
rt_new_array:
    test rdi, rdi
    js .Lnew_negative
    cmp rdi, {MAX_ARRAY_LENGTH}
    jg .Lnew_too_large
    sub qword ptr [rip + rt_alloc_left], rdi
    js .Lnew_budget
    push rdi
    lea rdi, [8*rdi + 8]
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

# rt_new_struct(rdi = fields) -> rax, zeroed (at least one qword: distinct addresses)
.globl rt_new_struct
rt_new_struct:
    test rdi, rdi
    jnz .Lstruct_sized
    mov edi, 1
.Lstruct_sized:
    shl rdi, 3
    jmp rt_alloc

# ---- errors: flush the output, one line on standard error, exit 2
# rt_trap(rdi = message code, rsi = line, rdx = col); line 0 means no position
.globl rt_trap
rt_trap:
    mov rbx, rdi
    mov r12, rsi
    mov r13, rdx
    call rt_flush
    lea rsi, [rip + rt_str_error]
    mov edx, {_len('rt_str_error')}
    call rt_err_write
    shl rbx, 5
    lea rsi, [rip + rt_messages]
    add rsi, rbx
    movzx edx, byte ptr [rsi]
    inc rsi
    call rt_err_write
    test r12, r12
    jz .Ltrap_end
    lea rsi, [rip + rt_str_at]
    mov edx, {_len('rt_str_at')}
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

# ---- exceptions: records {{handler, rsp, rbp, depth}} on a stack of their own
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
    add rcx, 32
    mov qword ptr [rip + rt_hstack_top], rcx
    ret

# rt_leave(): pop the innermost record; clobbers nothing
.globl rt_leave
rt_leave:
    sub qword ptr [rip + rt_hstack_top], 32
    ret

# rt_throw(rdi = value): to the innermost handler with rax = value, or uncaught
.globl rt_throw
rt_throw:
    mov rcx, qword ptr [rip + rt_hstack_top]
    cmp rcx, qword ptr [rip + rt_hstack_base]
    je .Lthrow_uncaught
    sub rcx, 32
    mov qword ptr [rip + rt_hstack_top], rcx
    mov rax, rdi
    mov rsp, qword ptr [rcx + 8]
    mov rbp, qword ptr [rcx + 16]
    mov rdx, qword ptr [rcx + 24]
    mov qword ptr [rip + rt_depth], rdx
    jmp qword ptr [rcx]
.Lthrow_uncaught:
    mov rbx, rdi
    call rt_flush
    lea rsi, [rip + rt_str_uncaught]
    mov edx, {_len('rt_str_uncaught')}
    call rt_err_write
    mov rdi, rbx
    call rt_format_int
    call rt_err_write
    lea rsi, [rip + rt_str_newline]
    mov edx, 1
    call rt_err_write
    mov edi, 2
    jmp rt_exit

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
    mov edx, {_len('rt_str_were')}
    cmp rbx, 1
    jne .Lcount_write
    lea rsi, [rip + rt_str_was]
    mov edx, {_len('rt_str_was')}
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
    mov edx, {_len('rt_str_argument')}
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
    mov rsi, rbx
    xor edx, edx
.Larg_strlen:
    cmp byte ptr [rsi + rdx], 0
    je .Larg_text
    inc rdx
    jmp .Larg_strlen
.Larg_text:
    call rt_err_write
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
    ja .Lint_form
    imul rax, rax, 10
    add rax, rdx
.Lint_next:
    inc rcx
    jmp .Lint_loop
.Lint_end:
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
    mov ecx, {_len('rt_str_not_int')}
    jmp rt_arg_error
.Lint_range:
    lea rdx, [rip + rt_str_range]
    mov ecx, {_len('rt_str_range')}
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
    mov ecx, {_len('rt_str_not_bool')}
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
