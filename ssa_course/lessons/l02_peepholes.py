"""Lesson 02 adds local cleanups on quads: a fixed-window peephole, local value numbering
and dead-code elimination (representations ``window``, ``lvn``, ``lvn-dce``, and the
passes of the same names for ``ssa-course opt``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ssa_course.compilation import Compilation
from ssa_course.lessons.faces import add_quads, add_quads_pass

if TYPE_CHECKING:
    from ssa_course.quads.ir import Function, Program


def peephole_program(comp: Compilation, which: str) -> Program:
    """Quads after a local cleanup: ``window``, ``lvn`` or ``lvn-dce``."""
    from ssa_course.quads.peephole import (
        dead_code,
        local_value_numbering,
        on_program,
        window_peephole,
    )

    if which == "window":
        return on_program(window_peephole, comp.quads)
    program = on_program(local_value_numbering, comp.quads)
    return on_program(dead_code, program) if which == "lvn-dce" else program


add_quads("window", "quads after a fixed-window peephole pass",
          lambda comp: peephole_program(comp, "window"))
add_quads("lvn", "quads after local value numbering", lambda comp: peephole_program(comp, "lvn"))
add_quads("lvn-dce", "local value numbering, then dead-code elimination",
          lambda comp: peephole_program(comp, "lvn-dce"))



# The passes of ``ssa-course opt``: each loader imports its pass only when a pipeline runs it.
def _lvn() -> Callable[[Function], Function]:
    from ssa_course.quads.peephole import local_value_numbering

    return local_value_numbering


def _dce() -> Callable[[Function], Function]:
    from ssa_course.quads.peephole import dead_code

    return dead_code


def _window() -> Callable[[Function], Function]:
    from ssa_course.quads.peephole import window_peephole

    return window_peephole


add_quads_pass("lvn", "local value numbering", _lvn)
add_quads_pass("dce", "dead-code elimination on quads", _dce)
add_quads_pass("window", "fixed-window peephole", _window)
