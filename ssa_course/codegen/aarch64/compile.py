"""The AArch64 back end end to end (:func:`ssa_course.codegen.compile.compile_with` with
this CPU's machine): scheduled SSA quads -> allocated machine IR -> text.

The same steps as x86-64: select, lower phis, allocate with the *same* allocator given
this target's register file (:data:`.registers.AARCH64`; x27 too when there are no fuel
checks), drop redundant reloads, lay out frames (:mod:`.frame`), print (:mod:`.emit`);
the runtime (:mod:`.runtime`) goes in front per run.
"""

from __future__ import annotations

from dataclasses import dataclass

from ssa_course.codegen.aarch64.machine import AARCH64_MACHINE
from ssa_course.codegen.compile import (
    CompiledProgram,
    allocate_with,
    compile_with,
    main_params,
    select_with,
)
from ssa_course.codegen.mir import MProgram
from ssa_course.quads.ir import Program

TARGET = "aarch64"


def select_program(program: Program, fuel: bool = True, frame_arrays: bool = True
                   ) -> MProgram:
    """Machine IR over virtual registers for every function (phis lowered)."""
    return select_with(AARCH64_MACHINE, program, fuel, frame_arrays)


def allocate_program(mprog: MProgram, allocator: str = "color", fuel: bool = True
                     ) -> dict[str, object]:
    """Allocate (graph colouring over AArch64's register file; x27 too when there are no
    fuel checks) and lay out every frame."""
    return allocate_with(AARCH64_MACHINE, mprog, allocator, fuel)


@dataclass(eq=False, slots=True)
class CompiledA64(CompiledProgram):
    """A program compiled once for AArch64 (:meth:`source`: the whole assembly file, its
    runtime in front, for one run's limits)."""

    target: str = TARGET


def compile_parts(program: Program, source_lines: list[str] | None = None, *,
                  allocator: str = "color", fuel: bool = True,
                  frame_arrays: bool = True) -> CompiledA64:
    """Compile scheduled SSA quads for AArch64 once; :meth:`CompiledA64.source` adds the
    runtime per run."""
    c = compile_with(AARCH64_MACHINE, program, source_lines, allocator=allocator,
                     fuel=fuel, frame_arrays=frame_arrays)
    return CompiledA64(c.mprog, c.program_asm, main_params(program), c.fuel, c.allocations,
                       c.machine)
