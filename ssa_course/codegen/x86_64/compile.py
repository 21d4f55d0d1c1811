"""The x86-64 back end end to end (:func:`ssa_course.codegen.compile.compile_with` with
this CPU's machine): scheduled SSA quads -> allocated machine IR -> assembly text.

Two allocators to compare in the lesson: graph colouring ("color"), and the baseline
that keeps every value in a stack slot ("spill-all": correct by construction, and the
measure of what colouring saves); the runtime (:mod:`.runtime`) goes in front.
"""

from __future__ import annotations

from ssa_course.codegen.compile import (
    CompiledProgram,
    allocate_with,
    compile_with,
    runtime_config,
    select_with,
)
from ssa_course.codegen.mir import MProgram
from ssa_course.codegen.x86_64.machine import X86_64_MACHINE
from ssa_course.quads.ir import Program
from ssa_course.runtime import paused_gc

ALLOCATORS = X86_64_MACHINE.allocators()


def select_program(program: Program, step_limit: int | None = None,
                   frame_arrays: bool = True) -> MProgram:
    """Machine IR over virtual registers for every function (phis lowered); fuel checks
    only with a ``step_limit``."""
    return select_with(X86_64_MACHINE, program, step_limit is not None, frame_arrays)


def allocate_program(mprog: MProgram, allocator_name: str = "color") -> dict[str, object]:
    """Allocate registers and lay out the frame of every function, in place; returns what
    the allocator says about each function (the ``interference`` view shows it)."""
    return allocate_with(X86_64_MACHINE, mprog, allocator_name)


def compile_program(program: Program, structs: object = None,
                    source_lines: list[str] | None = None, step_limit: int | None = None,
                    depth_limit: int = 100_000, allocator: str = "color"
                    ) -> tuple[MProgram, str]:
    """Scheduled SSA quads -> (allocated machine IR, the program's assembly text).

    ``structs`` is accepted for symmetry with the other back ends; the field layout is
    read from ``program.structs``. Without a ``step_limit`` no fuel checks are emitted.
    """
    with paused_gc():  # a compiler's objects all stay alive: nothing for the collector
        mprog = select_program(program, step_limit)
        allocate_program(mprog, allocator)
        text = X86_64_MACHINE.program_text(mprog, source_lines)
    config = runtime_config(program, mprog, step_limit, depth_limit)
    return mprog, X86_64_MACHINE.runtime_source(text, config)


def compile_parts(program: Program, source_lines: list[str] | None = None, *,
                  allocator: str = "color", fuel: bool = True,
                  frame_arrays: bool = True) -> CompiledProgram:
    """Compile scheduled SSA quads for x86-64 once; :meth:`CompiledProgram.source` adds
    the runtime per run."""
    return compile_with(X86_64_MACHINE, program, source_lines, allocator=allocator,
                        fuel=fuel, frame_arrays=frame_arrays)
