"""Lesson 05 adds the sea of nodes as the parser builds it, every peephole off
(``son-raw``), and the same graph with each Phi shown as Selects plus a Compose, the paper's
stepping stone to Region + Phi (``son-select``: a way of printing and drawing the raw graph,
which runs as the raw graph does)."""

from __future__ import annotations

from ssa_course.compilation import Compilation, compile_source
from ssa_course.lessons.faces import add_graphs, fresh_graphs
from ssa_course.registry import add_pass, build


def son_program(comp: Compilation, optimize: bool = True) -> object:
    """The verified sea of nodes of a compilation (raw or pessimistic), cached."""
    return build(comp, "son" if optimize else "son-raw")


def sea_of_nodes(source: object, optimize: bool = True, options: object = None) -> object:
    """The graphs of a Tiny program (source text or Compilation), verified."""
    from ssa_course.son.build import build_graphs

    comp = source if isinstance(source, Compilation) else compile_source(source)
    program = build_graphs(comp.ast, optimize, options)
    program.verify()
    return program


def _select_text(program: object) -> str:
    from ssa_course.son.printer import format_graphs

    return format_graphs(program, select_compose=True)  # type: ignore[arg-type]


def _select_dot(program: object, title: str, options: object = None) -> str:
    from ssa_course.son.printer import select_compose_dot

    return select_compose_dot(program, f"{title}: each Phi as Selects + a Compose",  # type: ignore
                              options)


def _select_lines(program: object) -> object:
    from ssa_course.lessons.lines_faces import select_lines

    return select_lines(program)


add_graphs("son-raw", "sea of nodes straight from the parser, peepholes off",
           lambda comp: fresh_graphs(comp, False))
add_graphs("son-select", "the raw graph with every Phi shown as Select + Compose (the "
           "paper's stepping stone to Region + Phi); runs as son-raw",
           lambda comp: son_program(comp, False), text=_select_text, dot=_select_dot,
           lines=_select_lines)


@add_pass("parse-raw", "parse into the sea of nodes with peepholes off", ("source",), "graph")
def _parse_raw(state) -> None:
    state.graph = fresh_graphs(state.comp, False)
