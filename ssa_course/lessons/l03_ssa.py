"""Lesson 03 adds SSA form: minimal and pruned (phis at iterated dominance frontiers),
built on the fly (Braun et al.), and back out of SSA with parallel copies; and the
``ssa`` / ``out-of-ssa`` passes. Every SSA form is checked by the SSA verifier when built.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ssa_course.compilation import Compilation
from ssa_course.lessons.faces import add_quads
from ssa_course.registry import add_pass, build_as

if TYPE_CHECKING:  # modules are imported where they are used: a lesson loads cheaply
    from ssa_course.passes import PassState
    from ssa_course.quads.ir import Program


def ssa_program(comp: Compilation, pruned: bool = True) -> Program:
    """The verified SSA form of a compilation's quads (cached; statistics kept under
    ``ssa-stats-pruned`` / ``ssa-stats-minimal`` in the compilation's cache)."""
    from ssa_course.quads.ir import Program

    return build_as(comp, "ssa-pruned" if pruned else "ssa-minimal", Program)


def _ssa(pruned: bool) -> Callable[[Compilation], Program]:
    def make(comp: Compilation) -> Program:
        from ssa_course.ssa.construct import SSAStats, program_to_ssa

        stats = SSAStats()
        program = program_to_ssa(comp.quads, pruned=pruned, stats=stats)
        comp._cache[f"ssa-stats-{'pruned' if pruned else 'minimal'}"] = stats
        return program

    return make


def _braun(comp: Compilation) -> Program:
    from ssa_course.ssa.braun import program_braun_ssa
    from ssa_course.ssa.construct import SSAStats

    stats = SSAStats()
    program = program_braun_ssa(comp.quads, stats)
    comp._cache["ssa-stats-braun"] = stats
    return program


def _out_of_ssa(comp: Compilation) -> Program:
    from ssa_course.ssa.destruct import program_from_ssa

    return program_from_ssa(ssa_program(comp))


add_quads("ssa-minimal", "minimal SSA: a phi at every iterated dominance frontier",
          _ssa(False), ssa=True)
add_quads("ssa-pruned", "pruned SSA: phis only where the variable is live", _ssa(True),
          ssa=True, checks=("ssa",))
add_quads("ssa-braun", "SSA built on the fly (Braun et al.): sealed blocks, trivial phis "
          "removed", _braun, ssa=True)
add_quads("out-of-ssa", "pruned SSA back to quads with parallel copies", _out_of_ssa)


@add_pass("ssa", "quads into pruned SSA form", ("quads", "source"), "ssa")
def _ssa_pass(state: PassState) -> None:
    from ssa_course.ssa.construct import program_to_ssa

    state.quads = program_to_ssa(state.quads or state.comp.quads)


@add_pass("out-of-ssa", "phis become copies (critical edges split, parallel copies "
          "sequentialized)", ("ssa", "phis"), "quads")
def _out_of_ssa_pass(state: PassState) -> None:
    from ssa_course.ssa.destruct import program_from_ssa

    state.quads = program_from_ssa(state.quads_program())
