"""The SSA stages (lesson 03): each builds its form, verifies it, and runs it.

* ``ssa-minimal`` / ``ssa-pruned`` -- phis at iterated dominance frontiers, all of them or
  only where the variable is live;
* ``ssa-braun`` -- SSA built on the fly, without dominators (Braun et al.);
* ``out-of-ssa`` -- pruned SSA turned back into ordinary quads with parallel copies.

Every form is checked by :func:`~ssa_course.ssa.verify.verify_ssa` when it is built, so a
differential test names the stage whose output broke an invariant.
"""

from __future__ import annotations

from ssa_course.pipeline import Compilation
from ssa_course.quads.interp import run_quads
from ssa_course.quads.ir import Program
from ssa_course.runtime import Limits, Output
from ssa_course.stages import register


def ssa_program(comp: Compilation, pruned: bool = True) -> Program:
    """The (verified) SSA form of a compilation's quads, cached."""
    from ssa_course.ssa.construct import SSAStats, program_to_ssa
    from ssa_course.ssa.verify import verify_ssa_program

    def build() -> Program:
        stats = SSAStats()
        program = program_to_ssa(comp.quads, pruned=pruned, stats=stats)
        verify_ssa_program(program)
        comp._cache[f"ssa-stats-{pruned}"] = stats
        return program

    return comp.cached(f"ssa-{'pruned' if pruned else 'minimal'}", build)


def out_of_ssa_program(comp: Compilation) -> Program:
    from ssa_course.ssa.destruct import program_from_ssa

    return comp.cached("out-of-ssa", lambda: program_from_ssa(ssa_program(comp)))


@register("ssa-minimal", "minimal SSA: a phi at every iterated dominance frontier")
def run_minimal(comp: Compilation, args: list[object], out: Output, limits: Limits) -> int:
    return run_quads(ssa_program(comp, pruned=False), args, out, limits)


@register("ssa-pruned", "pruned SSA: phis only where the variable is live")
def run_pruned(comp: Compilation, args: list[object], out: Output, limits: Limits) -> int:
    return run_quads(ssa_program(comp, pruned=True), args, out, limits)


@register("out-of-ssa", "pruned SSA back to quads with parallel copies")
def run_out_of_ssa(comp: Compilation, args: list[object], out: Output, limits: Limits) -> int:
    return run_quads(out_of_ssa_program(comp), args, out, limits)


def braun_program(comp: Compilation) -> Program:
    from ssa_course.ssa.braun import program_braun_ssa
    from ssa_course.ssa.construct import SSAStats
    from ssa_course.ssa.verify import verify_ssa_program

    def build() -> Program:
        stats = SSAStats()
        program = program_braun_ssa(comp.quads, stats)
        verify_ssa_program(program)
        comp._cache["ssa-stats-braun"] = stats
        return program

    return comp.cached("ssa-braun", build)


@register("ssa-braun", "SSA built on the fly (Braun et al.): sealed blocks, trivial phis removed")
def run_braun(comp: Compilation, args: list[object], out: Output, limits: Limits) -> int:
    return run_quads(braun_program(comp), args, out, limits)


def julia_program(comp: Compilation) -> dict:
    """Every function as verified, compacted Julia-style IRCode, cached."""
    from ssa_course.ssa.irverify import verify_ir
    from ssa_course.ssa.julia import program_ircode

    def build() -> dict:
        program = program_ircode(comp.quads)
        for ir in program.values():
            verify_ir(ir)
        return program

    return comp.cached("julia", build)


@register("julia", "Julia-style IRCode (flat statements, PiNodes, Upsilon/PhiC), compacted")
def run_julia(comp: Compilation, args: list[object], out: Output, limits: Limits) -> int:
    from ssa_course.ssa.irinterp import run_ircode

    return run_ircode(julia_program(comp), args, out, limits, comp.quads.structs)
