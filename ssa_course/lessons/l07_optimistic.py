"""Lesson 07 adds optimistic analysis: sparse conditional constant propagation on the
pessimistic graph, then constants and dead control removed (``son-opt``, which inlines
small leaf calls first, and the ``son-inline`` and ``sccp`` passes), and the side-by-side
of what each analysis proves."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ssa_course.compilation import Compilation
from ssa_course.lessons.faces import add_graphs, fresh_graphs
from ssa_course.lessons.l05_control import son_program
from ssa_course.registry import add_pass, build_as

if TYPE_CHECKING:  # modules are imported where they are used: a lesson loads cheaply
    from ssa_course.passes import PassState
    from ssa_course.son.program import SeaOfNodes
    from ssa_course.viz.options import DrawOptions


def optimistic_program(comp: Compilation) -> SeaOfNodes:
    """A fresh pessimistic graph after SCCP, verified; cached."""
    from ssa_course.son.program import SeaOfNodes

    return build_as(comp, "son-opt", SeaOfNodes)


def _build(comp: Compilation) -> SeaOfNodes:
    from ssa_course.son.inline import inline_program
    from ssa_course.son.sccp import apply_to_program

    program = fresh_graphs(comp, True)
    inlined = inline_program(program, comp.quads)  # before SCCP: constants flow in
    apply_to_program(program)
    assert program.sccp_counts is not None
    program.sccp_counts["inlined"] = inlined
    return program


def compare_modes(comp: Compilation, mode: str, fmt: str,
                  options: DrawOptions | None = None) -> tuple[str, str]:
    """The explorer's switch, drawn (``fmt`` "dot") or printed ("text"); returns
    (rendering, summary line). "pessimistic": the parser's graph with its own types, the
    nodes SCCP types differently marked, those it proves dead grey. "optimistic": the
    graph after the optimistic pass (``son-opt``), with what changed against the
    parser's graph (:mod:`ssa_course.son.optdiff`: nodes made, retyped, removed)."""
    from ssa_course.son.printer import compare, compare_dot, compare_summary, compare_text

    program = son_program(comp)
    if mode == "optimistic":
        from ssa_course.son import optdiff

        after = optimistic_program(comp)
        changes = comp.cached("son-opt-diff", lambda: optdiff.diff(program, after))
        line = optdiff.diff_summary(program, after, changes)
        if fmt == "dot":
            return optdiff.diff_dot(program, after, changes, options), line
        return optdiff.diff_text(program, after, changes), line
    table = comp.cached("sccp-compare", lambda: compare(program))  # SCCP once for both
    summary_line = compare_summary(program, table)
    if fmt == "dot":
        return compare_dot(program, mode, table=table, options=options), summary_line
    return compare_text(program, mode, table), summary_line


add_graphs("son-opt", "sea of nodes after inlining small leaf calls and SCCP: optimistic "
           "constants and dead code removed", _build)


@add_pass("son-inline", "calls of small leaf functions replaced by a copy of the callee's "
          "graph (the quads inliner's choices)", ("graph",), "graph")
def _son_inline(state: PassState) -> None:
    from ssa_course.son.inline import inline_program

    inline_program(state.graph_program(), state.comp.quads)


@add_pass("sccp", "sparse conditional constant propagation (optimistic), then constants "
          "and dead control removed", ("graph",), "graph")
def _sccp(state: PassState) -> None:
    from ssa_course.son.sccp import apply_to_program

    apply_to_program(state.graph_program())
