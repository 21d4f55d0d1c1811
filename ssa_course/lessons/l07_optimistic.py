"""Lesson 07 adds optimistic analysis: sparse conditional constant propagation on the
pessimistic graph, then constants and dead control removed (``son-opt`` and the ``sccp``
pass), and the side-by-side of what each analysis proves."""

from __future__ import annotations

from ssa_course.compilation import Compilation
from ssa_course.lessons.faces import add_graphs, fresh_graphs
from ssa_course.registry import add_pass, build


def optimistic_program(comp: Compilation) -> object:
    """A fresh pessimistic graph after SCCP, verified; cached."""
    return build(comp, "son-opt")


def _build(comp: Compilation) -> object:
    from ssa_course.son.sccp import apply_to_program

    program = fresh_graphs(comp, True)
    apply_to_program(program)
    return program


def compare_modes(comp: Compilation, mode: str, fmt: str,
                  options: object = None) -> tuple[str, str]:
    """The pessimistic graph drawn (``fmt`` "dot") or printed ("text") with the types of
    ``mode`` ("pessimistic" or "optimistic"); returns (rendering, summary line)."""
    from ssa_course.son.printer import compare, compare_dot, compare_summary, compare_text

    program = build(comp, "son")
    table = comp.cached("sccp-compare", lambda: compare(program))  # SCCP once for both
    summary_line = compare_summary(program, table)
    if fmt == "dot":
        return compare_dot(program, mode, table=table, options=options), summary_line
    return compare_text(program, mode, table), summary_line


add_graphs("son-opt", "sea of nodes after SCCP: optimistic constants and dead code removed",
           _build)


@add_pass("sccp", "sparse conditional constant propagation (optimistic), then constants "
          "and dead control removed", ("graph",), "graph")
def _sccp(state) -> None:
    from ssa_course.son.sccp import apply_to_program

    apply_to_program(state.graph)
