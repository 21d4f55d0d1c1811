"""The AArch64 back end end to end: scheduled SSA quads -> allocated machine IR -> text.

The same steps as x86-64 (:mod:`ssa_course.codegen.compile`): select (:mod:`.select`),
lower phis, allocate with the *same* allocator given this target's register file
(:data:`.registers.AARCH64`), drop redundant reloads, lay out frames (:mod:`.frame`),
print (:mod:`.emit`); the runtime (:mod:`.runtime`) goes in front per run.
"""

from __future__ import annotations

from dataclasses import dataclass

from ssa_course.codegen import regalloc
from ssa_course.codegen.aarch64 import emit, frame
from ssa_course.codegen.aarch64.machine import AARCH64_MACHINE
from ssa_course.codegen.aarch64.registers import AARCH64, AARCH64_UNFUELLED
from ssa_course.codegen.aarch64.runtime import program_source
from ssa_course.codegen.compile import (
    CompiledProgram,
    allocate_functions,
    machine_program,
    main_params,
)
from ssa_course.codegen.isel import select_program_functions
from ssa_course.codegen.mir import MProgram
from ssa_course.codegen.patterns import CodegenError
from ssa_course.quads.ir import Program
from ssa_course.runtime import paused_gc

TARGET = "aarch64"


def select_program(program: Program, fuel: bool = True, frame_arrays: bool = True
                   ) -> MProgram:
    # Only selection is AArch64's own; the MProgram it fills is the same structure as
    # x86-64's, so register allocation and the reload clean-up are shared.
    functions, sites = select_program_functions(AARCH64_MACHINE, program, fuel, frame_arrays)
    return machine_program(program, functions, sites)


def allocate_program(mprog: MProgram, allocator: str = "color", fuel: bool = True
                     ) -> dict[str, object]:
    """Allocate (graph colouring over AArch64's register file; x27 too when there are no
    fuel checks) and lay out every frame."""
    if allocator != "color":
        raise CodegenError(f"the aarch64 target has the 'color' allocator only, not "
                           f"{allocator!r}")
    # Without fuel checks x27 holds no counter and becomes one more callee-saved register
    # for values (registers.py).
    regfile = AARCH64 if fuel else AARCH64_UNFUELLED
    # The same steps as x86-64's compile.allocate_program: allocate, drop redundant
    # reloads, then lay out the frame once its size is final.
    return allocate_functions(mprog, lambda fn: regalloc.allocate(fn, regfile=regfile),
                              frame.layout)


@dataclass(eq=False, slots=True)
class CompiledA64(CompiledProgram):
    """A program compiled once for AArch64: x86-64's ``CompiledProgram`` with AArch64's
    runtime in front of the text (:meth:`source`: the whole assembly file for one run's
    limits)."""

    target: str = TARGET
    runtime_source = staticmethod(program_source)


def compile_parts(program: Program, source_lines: list[str] | None = None, *,
                  allocator: str = "color", fuel: bool = True,
                  frame_arrays: bool = True) -> CompiledA64:
    """Compile scheduled SSA quads for AArch64 once; :meth:`CompiledA64.source` adds the
    runtime per run."""
    # Compiled once, limits chosen per run (CompiledA64.source), as on x86-64.
    with paused_gc():
        mprog = select_program(program, fuel, frame_arrays)
        allocations = allocate_program(mprog, allocator, fuel)
        text = emit.program_text(mprog, source_lines)
    return CompiledA64(mprog, text, main_params(program), fuel, allocations)
