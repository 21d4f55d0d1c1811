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
from ssa_course.codegen.aarch64.registers import AARCH64, AARCH64_UNFUELLED
from ssa_course.codegen.aarch64.runtime import program_source
from ssa_course.codegen.aarch64.select import select_program_a64
from ssa_course.codegen.mir import MProgram
from ssa_course.codegen.patterns import CodegenError
from ssa_course.codegen.reloads import remove_redundant_reloads
from ssa_course.codegen.runtime_abi import program_messages, run_config
from ssa_course.quads.ir import Program
from ssa_course.runtime import paused_gc
from ssa_course.tiny.types import BOOL

TARGET = "aarch64"


def select_program(program: Program, fuel: bool = True, frame_arrays: bool = True
                   ) -> MProgram:
    # Only selection is AArch64's own; the MProgram it fills is the same structure as
    # x86-64's, so register allocation and the reload clean-up are shared.
    functions, sites = select_program_a64(program, fuel, frame_arrays)
    main = program.functions.get("main")
    params = ["bool" if t == BOOL else "int" for _, t in main.params] if main else []
    structs = {name: [f for f, _ in info.fields] for name, info in program.structs.items()}
    return MProgram(functions, params, structs, sites, program_messages(program))


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
    done: dict[str, object] = {}
    # The same order as x86-64's compile.allocate_program: allocate, drop redundant
    # reloads, then lay out the frame once its size is final.
    for name, fn in mprog.functions.items():
        done[name] = regalloc.allocate(fn, regfile=regfile)
        remove_redundant_reloads(fn)
        frame.layout(fn)
    return done


@dataclass(eq=False, slots=True)
class CompiledA64:
    """A program compiled once for AArch64 (the shape of x86-64's ``CompiledProgram``)."""

    mprog: MProgram
    program_asm: str
    main_params: tuple[tuple[str, str], ...]
    fuel: bool
    allocations: dict[str, object]
    target: str = TARGET

    def source(self, step_limit: int | None = None, depth_limit: int = 100_000,
               allocation_limit: int | None = None) -> str:
        """The whole assembly file (runtime first) for one run's limits."""
        return program_source(self.program_asm, run_config(
            self.mprog, self.main_params, self.fuel, step_limit, depth_limit,
            allocation_limit))


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
    main = program.functions.get("main")
    params = tuple((name, str(t)) for name, t in main.params) if main else ()
    return CompiledA64(mprog, text, params, fuel, allocations)
