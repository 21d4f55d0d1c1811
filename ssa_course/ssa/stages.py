"""The SSA stages (lesson 03): each builds its form, verifies it, and runs it.

* ``ssa-minimal`` / ``ssa-pruned`` -- phis at iterated dominance frontiers, all of them or
  only where the variable is live;
* ``ssa-braun`` -- SSA built on the fly, without dominators (Braun et al.);
* ``out-of-ssa`` -- pruned SSA turned back into ordinary quads with parallel copies.

Every form is checked by :func:`~ssa_course.ssa.verify.verify_ssa` when it is built, so a
differential test names the stage whose output broke an invariant.
"""

from __future__ import annotations

import ssa_course.builtin_stages  # noqa: F401  (lessons 00-02 come first in the list)
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


# ---------------------------------------------------------------- views (show --as ...)


def _quads_view(build):  # noqa: ANN001, ANN202
    def text(comp: Compilation) -> str:
        from ssa_course.quads.bril import to_bril_text

        return to_bril_text(build(comp))

    def dot(comp: Compilation, options=None) -> str:  # noqa: ANN001 (a viz DrawOptions)
        import os

        from ssa_course.quads.cfg import build_cfg
        from ssa_course.viz.dot import program_cfg_dot

        cfgs = {n: build_cfg(f) for n, f in build(comp).functions.items()}
        return program_cfg_dot(cfgs, title=os.path.basename(comp.filename), options=options)

    return text, dot


def _julia_text(comp: Compilation) -> str:
    from ssa_course.ssa.julia import format_ir

    return "\n".join(format_ir(ir) for ir in julia_program(comp).values())


def _julia_dot(comp: Compilation, options=None) -> str:  # noqa: ANN001 (a DrawOptions)
    from ssa_course.ssa.julia import program_ir_dot

    return program_ir_dot(julia_program(comp), options)


def _register_views() -> None:
    from ssa_course.builtin_stages import peephole_program
    from ssa_course.views import register_view

    for name, description, build in (
        ("window", "quads after the fixed-window peephole",
         lambda c: peephole_program(c, "window")),
        ("lvn", "quads after local value numbering", lambda c: peephole_program(c, "lvn")),
        ("lvn-dce", "quads after LVN and dead-code elimination",
         lambda c: peephole_program(c, "lvn-dce")),
        ("ssa", "pruned SSA (quads with phis)", lambda c: ssa_program(c, True)),
        ("ssa-minimal", "minimal SSA (quads with phis)", lambda c: ssa_program(c, False)),
        ("ssa-braun", "SSA built on the fly (Braun et al.)", braun_program),
        ("out-of-ssa", "quads again, phis replaced by copies", out_of_ssa_program),
    ):
        text, dot = _quads_view(build)
        register_view(name, description, text, dot)
    register_view("julia", "Julia-style IRCode (code_typed)", _julia_text, _julia_dot)


_register_views()
