"""The back end's driver, for any CPU: scheduled SSA quads -> allocated machine IR -> text.

:func:`compile_with` runs the same steps for every :class:`~ssa_course.codegen.machine.Machine`:
select instructions for every function (:mod:`.isel`; phis lowered), allocate registers
(the machine's allocator over its register file), drop redundant reloads, the machine's
peepholes, lay out each frame, print the listing. The runtime goes in front per run
(:meth:`CompiledProgram.source`), so one compilation serves every run's limits. Each
CPU's ``compile.py`` is this driver with its own machine and its historical signatures.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ssa_course.codegen.isel import select_program_functions
from ssa_course.codegen.mir import MFunction, MProgram
from ssa_course.codegen.reloads import remove_dead_reloads, remove_redundant_reloads
from ssa_course.codegen.runtime_abi import RuntimeConfig, program_messages, run_config
from ssa_course.quads.ir import Program
from ssa_course.runtime import paused_gc
from ssa_course.tiny.types import BOOL

if TYPE_CHECKING:
    from ssa_course.codegen.machine import Machine


def machine_program(program: Program, functions: dict[str, MFunction],
                    sites: list[tuple[int, int]]) -> MProgram:
    """The :class:`MProgram` of ``program`` around the functions a target selected (the
    same structure for every target: main's parameter types, struct fields, messages)."""
    main = program.functions.get("main")
    params = ["bool" if t == BOOL else "int" for _, t in main.params] if main else []
    structs = {name: [f for f, _ in info.fields] for name, info in program.structs.items()}
    return MProgram(functions, params, structs, sites, program_messages(program))


def main_params(program: Program) -> tuple[tuple[str, str], ...]:
    """``main``'s parameters as (name, type) for the runtime's argument parsing."""
    main = program.functions.get("main")
    return tuple((name, str(t)) for name, t in main.params) if main else ()


def select_with(machine: Machine, program: Program, fuel: bool = True,
                frame_arrays: bool = True) -> MProgram:
    """Machine IR over virtual registers for every function (phis lowered); small arrays
    that never escape live in the frame unless ``frame_arrays`` is false."""
    # Fuel checks are compiled in only when asked for: a program compiled without them
    # runs at full speed but cannot be stopped by a step count.
    functions, sites = select_program_functions(machine, program, fuel, frame_arrays)
    return machine_program(program, functions, sites)


def allocate_functions(mprog: MProgram, alloc: Callable[[MFunction], object],
                       layout: Callable[[MFunction], None],
                       peephole: Callable[[MFunction], int] | None = None
                       ) -> dict[str, object]:
    """The steps after selection every target shares, per function: ``alloc`` (the
    target's register file), the reload clean-up, the target's ``peephole`` (x86-64:
    :mod:`ssa_course.codegen.x86_64.peep`), the target's frame ``layout``."""
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


def allocate_with(machine: Machine, mprog: MProgram, allocator: str = "color",
                  fuel: bool = True) -> dict[str, object]:
    """Allocate registers and lay out the frame of every function, in place, with
    ``machine``'s ``allocator``; returns what the allocator says about each function."""
    return allocate_functions(mprog, lambda fn: machine.allocate(fn, allocator, fuel),
                              machine.layout_frame, machine.peephole)


def runtime_config(program: Program, mprog: MProgram, step_limit: int | None,
                   depth_limit: int) -> RuntimeConfig:
    """What the generated runtime needs to know about this program and run."""
    return run_config(mprog, main_params(program), True, step_limit, depth_limit, None)


@dataclass(eq=False, slots=True)
class CompiledProgram:
    """A program compiled once, runnable under any limits: the allocated machine IR, the
    assembly of its functions (the ``asm`` listing), what the runtime needs, and the
    machine it was compiled for (which writes its runtime).

    ``fuel`` says whether loop headers and function entries burn fuel; with fuel, the step
    limit is the runtime's data, chosen per run by :meth:`source`.
    """

    mprog: MProgram
    program_asm: str
    main_params: tuple[tuple[str, str], ...]
    fuel: bool
    allocations: dict[str, object]
    machine: Machine

    def source(self, step_limit: int | None = None, depth_limit: int = 100_000,
               allocation_limit: int | None = None) -> str:
        """The whole assembly file (runtime first) for one run's limits. Without fuel
        checks compiled in, ``step_limit`` cannot be enforced and is ignored."""
        return self.machine.runtime_source(self.program_asm, run_config(
            self.mprog, self.main_params, self.fuel, step_limit, depth_limit,
            allocation_limit))


def compile_with(machine: Machine, program: Program, source_lines: list[str] | None = None,
                 *, allocator: str = "color", fuel: bool = True,
                 frame_arrays: bool = True) -> CompiledProgram:
    """Compile scheduled SSA quads once for ``machine`` (the artifact of the ``asm`` /
    ``native`` / ``emulated`` representations); :meth:`CompiledProgram.source` adds the
    runtime per run."""
    # The limits are *not* baked in: fuel only switches fuel checks on; the real step
    # limit is runtime data chosen per run, so one compilation serves every run of a
    # lesson or a test.
    with paused_gc():  # a compiler's objects all stay alive: nothing for the collector
        mprog = select_with(machine, program, fuel, frame_arrays)
        allocations = allocate_with(machine, mprog, allocator, fuel)
        text = machine.program_text(mprog, source_lines)
    return CompiledProgram(mprog, text, main_params(program), fuel, allocations, machine)
