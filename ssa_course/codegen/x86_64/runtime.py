"""The runtime of native Tiny programs, generated as Intel-syntax assembly (no libc, no C).

:func:`runtime_asm` returns the assembly of ``_start`` (a private 1 GiB stack, ``main``'s
arguments parsed from the command line with the CLI's wording, ``tiny_main`` called, output
flushed) and of every ``rt_*`` entry the generated code calls (docs/codegen.md, "The
runtime"). The program's own functions are appended after it (:func:`program_source`).

Only three system calls are used -- ``write``, ``mmap``, ``exit_group`` -- so the emulator
(:mod:`ssa_course.codegen.x86_64.emulate`) can serve them all. The source keeps to the subset both
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
    data_lines,
    handler_bytes,
    string_data,
    strlen,
)
from ssa_course.codegen.x86_64.runtime_entry import COMMAND_LINE_TEXT, start_text
from ssa_course.codegen.x86_64.runtime_float import FLOAT_TEXT
from ssa_course.codegen.x86_64.runtime_float_args import FLOAT_ARGS_TEXT
from ssa_course.codegen.x86_64.runtime_heap import HEAP_TEXT
from ssa_course.codegen.x86_64.runtime_io import IO_TEXT
from ssa_course.codegen.x86_64.runtime_ptr import PTR_TEXT
from ssa_course.runtime import Limits

RUNTIME_TEXT = (IO_TEXT + FLOAT_TEXT + HEAP_TEXT + PTR_TEXT + COMMAND_LINE_TEXT
                + FLOAT_ARGS_TEXT)


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
    lines += data_lines(config)
    return "\n".join(lines) + "\n"
