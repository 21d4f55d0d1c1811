"""Lesson 02 adds local cleanups on quads: a fixed-window peephole, local value numbering
and dead-code elimination (representations ``window``, ``lvn``, ``lvn-dce``, and the
passes of the same names for ``ssa-course opt``)."""

from __future__ import annotations

from ssa_course.compilation import Compilation
from ssa_course.lessons.faces import add_quads, add_quads_pass


def peephole_program(comp: Compilation, which: str) -> object:
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

add_quads_pass("lvn", "local value numbering", "ssa_course.quads.peephole",
               "local_value_numbering")
add_quads_pass("dce", "dead-code elimination on quads", "ssa_course.quads.peephole",
               "dead_code")
add_quads_pass("window", "fixed-window peephole", "ssa_course.quads.peephole",
               "window_peephole")
