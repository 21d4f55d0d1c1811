"""The whole back end: scheduled SSA quads -> allocated machine IR -> assembly text.

``compile_program`` selects instructions for every function, lowers the phis, allocates
registers (graph colouring from :mod:`ssa_course.codegen.regalloc`, or every value in a
slot with ``allocator="spill-all"``), lays out the frames and prints the assembly, with the
runtime (:mod:`ssa_course.codegen.runtime_asm`) in front: one assembly file per program.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ssa_course.codegen import emit, frame, regalloc, spill_all, x86_peep
from ssa_course.codegen.frame import DEPTH_REG
from ssa_course.codegen.isel import select_program_functions
from ssa_course.codegen.mir import ALLOCATABLE, MFunction, MProgram
from ssa_course.codegen.patterns import CodegenError
from ssa_course.codegen.reloads import remove_dead_reloads, remove_redundant_reloads
from ssa_course.codegen.runtime_abi import RuntimeConfig, program_messages, run_config
from ssa_course.codegen.runtime_asm import program_source
from ssa_course.codegen.x86_64.machine import X86_64_MACHINE
from ssa_course.quads.ir import Program
from ssa_course.runtime import paused_gc
from ssa_course.tiny.types import BOOL

# Two allocators to compare in the lesson: graph colouring, and the baseline that keeps
# every value in a stack slot (correct by construction, and the measure of what colouring
# saves).
ALLOCATORS = ("color", "spill-all")


def allocator(name: str) -> Callable[[MFunction], object]:
    """The allocation function for ``name``: graph colouring ("color") or spill-all."""
    if name not in ALLOCATORS:
        raise CodegenError(f"unknown register allocator {name!r} (expected one of "
                           f"{', '.join(ALLOCATORS)})")
    if name == "color":
        # r15 carries the call depth through every function (frame.DEPTH_REG), so the
        # allocator must never hand it to a value.
        registers = tuple(r for r in ALLOCATABLE if r != DEPTH_REG.name)
        return lambda fn: regalloc.allocate(fn, registers)
    return spill_all.allocate


def select_program(program: Program, step_limit: int | None = None,
                   frame_arrays: bool = True) -> MProgram:
    """Machine IR over virtual registers for every function (phis lowered); small arrays
    that never escape live in the frame unless ``frame_arrays`` is false."""
    # Fuel checks are compiled in only when a step limit is asked for: a program compiled
    # without them runs at full speed but cannot be stopped by a step count.
    functions, sites = select_program_functions(X86_64_MACHINE, program,
                                                fuel=step_limit is not None,
                                                frame_arrays=frame_arrays)
    return machine_program(program, functions, sites)


def machine_program(program: Program, functions: dict[str, MFunction],
                    sites: list[tuple[int, int]]) -> MProgram:
    """The :class:`MProgram` of ``program`` around the functions a target selected (the
    same structure for both targets: main's parameter types, struct fields, messages)."""
    main = program.functions.get("main")
    params = ["bool" if t == BOOL else "int" for _, t in main.params] if main else []
    structs = {name: [f for f, _ in info.fields] for name, info in program.structs.items()}
    return MProgram(functions, params, structs, sites, program_messages(program))


def main_params(program: Program) -> tuple[tuple[str, str], ...]:
    """``main``'s parameters as (name, type) for the runtime's argument parsing."""
    main = program.functions.get("main")
    return tuple((name, str(t)) for name, t in main.params) if main else ()


def allocate_program(mprog: MProgram, allocator_name: str = "color") -> dict[str, object]:
    """Allocate registers and lay out the frame of every function, in place; returns what
    the allocator says about each function (the ``interference`` view shows it)."""
    return allocate_functions(mprog, allocator(allocator_name), frame.layout, x86_peep.peephole)


def allocate_functions(mprog: MProgram, alloc: Callable[[MFunction], object],
                       layout: Callable[[MFunction], None],
                       peephole: Callable[[MFunction], int] | None = None
                       ) -> dict[str, object]:
    """The steps after selection both targets share, per function: ``alloc`` (the
    target's register file), the reload clean-up, the target's ``peephole`` (x86-64:
    :mod:`ssa_course.codegen.x86_peep`), the target's frame ``layout``."""
    done: dict[str, object] = {}
    # Per function, in this order: allocation decides registers and slots; the reload
    # clean-up needs physical registers to see that a value is still in one; frame layout
    # needs the final slot count and callee-saved set to place slots and write prologues.
    for name, fn in mprog.functions.items():
        done[name] = alloc(fn)
        remove_redundant_reloads(fn)
        remove_dead_reloads(fn)
        if peephole is not None:
            peephole(fn)
        layout(fn)
    return done


def runtime_config(program: Program, mprog: MProgram, step_limit: int | None,
                   depth_limit: int) -> RuntimeConfig:
    """What the generated runtime needs to know about this program and run."""
    return run_config(mprog, main_params(program), True, step_limit, depth_limit, None)


def compile_program(program: Program, structs: object = None,
                    source_lines: list[str] | None = None, step_limit: int | None = None,
                    depth_limit: int = 100_000, allocator: str = "color"
                    ) -> tuple[MProgram, str]:
    """Scheduled SSA quads -> (allocated machine IR, the program's assembly text).

    ``structs`` is accepted for symmetry with the other back ends; the field layout is
    read from ``program.structs``. Without a ``step_limit`` no fuel checks are emitted.
    """
    # The back end in three steps: instruction selection (over virtual registers, phis
    # already lowered to copies), register allocation + frames, then assembly text.
    with paused_gc():  # a compiler's objects all stay alive: nothing for the collector
        mprog = select_program(program, step_limit)
        allocate_program(mprog, allocator)
        text = emit.program_text(mprog, source_lines)
    config = runtime_config(program, mprog, step_limit, depth_limit)
    return mprog, program_source(text, config)


@dataclass(eq=False, slots=True)
class CompiledProgram:
    """A program compiled once, runnable under any limits: the allocated machine IR, the
    assembly of its functions (the ``asm`` listing), and what the runtime needs.

    ``fuel`` says whether loop headers and function entries burn fuel; with fuel, the step
    limit is the runtime's data, chosen per run by :meth:`source`.
    """

    mprog: MProgram
    program_asm: str
    main_params: tuple[tuple[str, str], ...]
    fuel: bool
    allocations: dict[str, object]

    def source(self, step_limit: int | None = None, depth_limit: int = 100_000,
               allocation_limit: int | None = None) -> str:
        """The whole assembly file (runtime first) for one run's limits. Without fuel
        checks compiled in, ``step_limit`` cannot be enforced and is ignored."""
        return self.runtime_source(self.program_asm, run_config(
            self.mprog, self.main_params, self.fuel, step_limit, depth_limit,
            allocation_limit))

    # The target's runtime in front of the program's text (AArch64's subclass gives its
    # own); a static method, so the dataclass keeps only the compiled fields.
    runtime_source = staticmethod(program_source)


def compile_parts(program: Program, source_lines: list[str] | None = None, *,
                  allocator: str = "color", fuel: bool = True,
                  frame_arrays: bool = True) -> CompiledProgram:
    """Compile scheduled SSA quads once (the artifact of the ``asm``/``native``/``emulated``
    representations); :meth:`CompiledProgram.source` adds the runtime per run."""
    # The limits are *not* baked in: `1` only switches fuel checks on; the real step limit
    # is runtime data chosen per run by CompiledProgram.source, so one compilation serves
    # every run of a lesson or a test.
    with paused_gc():
        mprog = select_program(program, 1 if fuel else None, frame_arrays)
        allocations = allocate_program(mprog, allocator)
        text = emit.program_text(mprog, source_lines)
    return CompiledProgram(mprog, text, main_params(program), fuel, allocations)
