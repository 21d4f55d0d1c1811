"""Lesson 06 adds the sea of nodes built with the pessimistic peepholes on while parsing
(constant folding, GVN, algebraic rewrites, unreachable code): ``son``, and the ``parse``
pass that starts ``ssa-course opt``'s default pipeline."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ssa_course.lessons.faces import add_graphs, fresh_graphs
from ssa_course.registry import add_pass

if TYPE_CHECKING:
    from ssa_course.passes import PassState

add_graphs("son", "sea of nodes with pessimistic peepholes while parsing (folding, GVN)",
           lambda comp: fresh_graphs(comp, True), checks=("graph",))


@add_pass("parse", "parse straight into the sea of nodes, pessimistic peepholes on "
          "(Bril: from SSA)", ("source",), "graph")
def _parse(state: PassState) -> None:
    state.graph = fresh_graphs(state.comp, True)
