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

from ssa_course.codegen.runtime_abi import (  # noqa: F401  (the runtime's interface)
    CODE,
    HANDLER_RECORD,
    MESSAGE_RECORD,
    MESSAGES,
    NO_FUEL_LIMIT,
    OUT_BUFFER,
    STRINGS,
    RuntimeConfig,
    ascii_directive,
    handler_bytes,
    string_data,
    strlen,
)
from ssa_course.codegen.runtime_entry import (
    COMMAND_LINE_TEXT,
    bad_type_message,
    count_message,
    start_text,
)
from ssa_course.codegen.runtime_heap import HEAP_TEXT
from ssa_course.codegen.runtime_io import IO_TEXT
from ssa_course.runtime import Limits

RUNTIME_TEXT = IO_TEXT + HEAP_TEXT + COMMAND_LINE_TEXT


def config_for(main_params: list[tuple[str, str]], limits: Limits | None = None,
               array_sites: list[tuple[int, int]] | None = None,
               fuel: bool = True) -> RuntimeConfig:
    """The runtime configuration of a run under ``limits`` (the defaults when None).

    ``fuel=False`` builds without a step limit (``ssa-course compile`` without
    ``--step-limit``); the depth and allocation limits always hold."""
    limits = limits or Limits()
    return RuntimeConfig(tuple(main_params), limits.steps if fuel else None, limits.depth,
                         limits.cells, tuple(array_sites or ()))


def program_source(program_asm: str, config: RuntimeConfig) -> str:
    """The whole assembly file of a program: the runtime, then the program's text."""
    return runtime_asm(config) + "\n.text\n" + program_asm.rstrip("\n") + "\n"


def runtime_asm(config: RuntimeConfig) -> str:
    """The runtime's assembly for ``config`` (text, data and bss sections)."""
    lines = [".intel_syntax noprefix", ".text", ".globl _start"]
    lines += start_text(config).splitlines()
    lines += RUNTIME_TEXT.strip("\n").splitlines()
    lines += _data(config)
    return "\n".join(lines) + "\n"


def _data(config: RuntimeConfig) -> list[str]:
    fuel = NO_FUEL_LIMIT if config.step_limit is None else config.step_limit
    out = [".data", ".balign 8",
           "rt_fuel:", f"    .quad {fuel}",
           "rt_depth:", f"    .quad {config.depth_limit}",
           # x86-64's stack limit (0: the OS stack, unchecked); AArch64 keeps it in x18
           "rt_stack_limit:", "    .quad 0",
           "rt_alloc_left:", f"    .quad {config.allocation_limit}",
           "rt_sites:"]
    for line, col in config.array_sites or ((0, 0),):
        out.append(f"    .quad {line}, {col}")
    # Parameter names: (offset, length) into rt_pname_blob (data holds no addresses).
    out.append("rt_pnames:")
    offset = 0
    for name, _ in config.main_params:
        out.append(f"    .quad {offset}, {strlen(name)}")
        offset += strlen(name)
    out += string_data("rt_pname_blob", "".join(n for n, _ in config.main_params))
    out.append("rt_messages:")
    for m in (*MESSAGES, *config.extra_messages):
        raw = m.encode()
        out.append(f"    .byte {len(raw)}")
        out.append(f"    {ascii_directive(m)}")
        out.append(f"    .zero {MESSAGE_RECORD - 1 - len(raw)}")
    for k, (name, ty) in enumerate(config.main_params):
        if ty not in ("int", "bool"):
            out += string_data(f"rt_arg_bad_type{k}", bad_type_message(name, ty))
    count = count_message(config)
    out += string_data("rt_str_count", count)
    out += ["rt_str_count_len:", f"    .quad {strlen(count)}"]
    for label, text in STRINGS:
        out += string_data(label, text)
    out += [".bss", ".balign 8", "rt_outlen:", "    .zero 8", "rt_heap_ptr:", "    .zero 8",
            "rt_heap_end:", "    .zero 8", "rt_hstack_base:", "    .zero 8",
            "rt_hstack_top:", "    .zero 8", "rt_hstack_end:", "    .zero 8",
            "rt_numbuf:", "    .zero 32",
            "rt_args:", f"    .zero {8 * max(1, len(config.main_params))}",
            "rt_outbuf:", f"    .zero {OUT_BUFFER}"]
    return out
