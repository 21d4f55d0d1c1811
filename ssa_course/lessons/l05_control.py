"""Lesson 05 adds the sea of nodes as the parser builds it, every peephole off
(``son-raw``), and the same graph with each Phi shown as Selects plus a Compose, the paper's
stepping stone to Region + Phi (``son-select``: a way of printing and drawing the raw graph,
which runs as the raw graph does)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ssa_course.compilation import Compilation, compile_source
from ssa_course.lessons.faces import add_graphs, fresh_graphs
from ssa_course.registry import add_pass, build_as

if TYPE_CHECKING:  # the faces import their modules when called: a lesson loads cheaply
    from ssa_course.passes import PassState
    from ssa_course.son.emit import BuildOptions
    from ssa_course.son.program import SeaOfNodes
    from ssa_course.srclines import Lines
    from ssa_course.viz.options import DrawOptions


def son_program(comp: Compilation, optimize: bool = True) -> SeaOfNodes:
    """The verified sea of nodes of a compilation (raw or pessimistic), cached."""
    from ssa_course.son.program import SeaOfNodes

    return build_as(comp, "son" if optimize else "son-raw", SeaOfNodes)


def sea_of_nodes(source: str | Compilation, optimize: bool = True,
                 options: BuildOptions | None = None) -> SeaOfNodes:
    """The graphs of a Tiny program (source text or Compilation), verified."""
    from ssa_course.son.build import build_graphs

    comp = source if isinstance(source, Compilation) else compile_source(source)
    program = build_graphs(comp.ast, optimize, options)
    program.verify()
    return program


def _select_text(program: SeaOfNodes) -> str:
    from ssa_course.son.printer import format_graphs

    return format_graphs(program, select_compose=True)


def _select_dot(program: SeaOfNodes, title: str, options: DrawOptions | None = None) -> str:
    from ssa_course.son.printer import select_compose_dot

    return select_compose_dot(program, f"{title}: each Phi as Selects + a Compose", options)


def _select_lines(program: SeaOfNodes) -> Lines:
    from ssa_course.lessons.lines_faces import select_lines

    return select_lines(program)


add_graphs("son-raw", "sea of nodes straight from the parser, peepholes off",
           lambda comp: fresh_graphs(comp, False))
add_graphs("son-select", "the raw graph with every Phi shown as Select + Compose (the "
           "paper's stepping stone to Region + Phi); runs as son-raw",
           lambda comp: son_program(comp, False), text=_select_text, dot=_select_dot,
           lines=_select_lines)


@add_pass("parse-raw", "parse into the sea of nodes with peepholes off", ("source",), "graph")
def _parse_raw(state: PassState) -> None:
    state.graph = fresh_graphs(state.comp, False)
