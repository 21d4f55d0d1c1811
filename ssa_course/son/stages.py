"""The sea-of-nodes stages and views (lessons 05-06).

* ``son-raw`` -- Tiny parsed straight into a graph with every peephole switched off;
* ``son`` -- the same walk with the pessimistic peepholes on (constant folding, GVN,
  algebraic rewrites, unreachable code) while the graph is built.

Both are verified when built and run by the graph interpreter; both are also views
(``ssa-course show --as son``), drawn in the literature's style.
"""

from __future__ import annotations

import ssa_course.ssa.stages  # noqa: F401  (lessons 03-04 come first in the list)
from ssa_course.pipeline import Compilation
from ssa_course.runtime import Limits, Output
from ssa_course.stages import register


def son_program(comp: Compilation, optimize: bool = True):  # noqa: ANN201
    """The verified sea of nodes of a compilation (raw or pessimistic), cached."""
    from ssa_course.son.verify import verify_graphs

    def build():  # noqa: ANN202
        if comp.kind == "tiny":
            from ssa_course.son.build import build_graphs

            program = build_graphs(comp.ast, optimize)
        else:
            from ssa_course.son.from_ssa import graphs_from_quads

            program = graphs_from_quads(comp.quads, optimize)
        verify_graphs(program)
        return program

    return comp.cached("son" if optimize else "son-raw", build)


@register("son-raw", "sea of nodes straight from the parser, peepholes off")
def run_son_raw(comp: Compilation, args: list[object], out: Output, limits: Limits) -> int:
    from ssa_course.son.interp import run_graphs

    return run_graphs(son_program(comp, optimize=False), args, out, limits)


@register("son", "sea of nodes with pessimistic peepholes while parsing (folding, GVN)")
def run_son(comp: Compilation, args: list[object], out: Output, limits: Limits) -> int:
    from ssa_course.son.interp import run_graphs

    return run_graphs(son_program(comp, optimize=True), args, out, limits)
