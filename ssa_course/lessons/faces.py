"""Faces shared by several representations: quads (and SSA quads) and sea-of-nodes graphs.

Every quads-like representation runs on the quads interpreter, prints as Bril text and
draws as one CFG per function; every graph runs on the graph interpreter, prints as the
node listing and draws in the literature's style. The lesson modules pass these to
:func:`ssa_course.registry.add_representation` together with their own ``build``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ssa_course.compilation import Compilation
from ssa_course.registry import add_representation
from ssa_course.runtime import Limits, Output, Value

if TYPE_CHECKING:  # the faces import their modules when called: a lesson loads cheaply
    from ssa_course.passes import PassState
    from ssa_course.quads.ir import Function, Program
    from ssa_course.son.program import SeaOfNodes
    from ssa_course.srclines import Lines
    from ssa_course.viz.options import DrawOptions


def run_quads(program: Program, args: list[Value], out: Output, limits: Limits) -> int:
    from ssa_course.quads.interp import run_quads as run

    return run(program, args, out, limits)


def verify_quads(program: Program) -> None:
    from ssa_course.quads.verify import verify_quads as verify

    verify(program)


def verify_ssa(program: Program) -> None:
    from ssa_course.ssa.verify import verify_ssa_program

    verify_ssa_program(program)


def bril_text(program: Program) -> str:
    from ssa_course.quads.bril import to_bril_text

    return to_bril_text(program)


def cfg_dot(program: Program, title: str, options: DrawOptions | None = None) -> str:
    from ssa_course.quads.cfg import build_cfg
    from ssa_course.quads.cfg_dot import program_cfg_dot

    cfgs = {n: build_cfg(f) for n, f in program.functions.items()}
    return program_cfg_dot(cfgs, title=title, options=options)


def add_quads(name: str, description: str, build: Callable[[Compilation], Program], *,
              ssa: bool = False, text: Callable[[Program], str] = bril_text,
              face: str = "text", checks: tuple[str, ...] = ()) -> None:
    """A representation that is a quads program (with phis when ``ssa``); ``checks``: the
    ``opt`` forms its verifier checks after every pass (see the registry)."""
    add_representation(name, description, build=build, run=run_quads,
                       verify=verify_ssa if ssa else verify_quads, text=text, dot=cfg_dot,
                       face=face, lines=quads_lines if text is bril_text else None,
                       checks=checks)


def quads_lines(program: Program) -> Lines:
    from ssa_course.lessons.lines_faces import quads_lines as lines

    return lines(program)


def graphs_lines(program: SeaOfNodes) -> Lines:
    from ssa_course.lessons.lines_faces import graphs_lines as lines

    return lines(program)


def run_graphs(program: SeaOfNodes, args: list[Value], out: Output, limits: Limits) -> int:
    from ssa_course.son.interp import run_graphs as run

    return run(program, args, out, limits)


def verify_graphs(program: SeaOfNodes) -> None:
    from ssa_course.son.verify import verify_graphs as verify

    verify(program)


def graphs_text(program: SeaOfNodes) -> str:
    from ssa_course.son.printer import format_graphs

    return format_graphs(program)


def graphs_dot(program: SeaOfNodes, title: str, options: DrawOptions | None = None) -> str:
    from ssa_course.son.printer import graphs_to_dot, summary

    return graphs_to_dot(program, f"{title}: {summary(program)}", options)


def _titled(name: str) -> Callable[[SeaOfNodes, str, DrawOptions | None], str]:
    def dot(program: SeaOfNodes, title: str, options: DrawOptions | None = None) -> str:
        return graphs_dot(program, f"{title} as {name}", options)

    return dot


def graphs_stats(program: SeaOfNodes) -> str:
    from ssa_course.son.printer import summary

    return summary(program)


def add_graphs(name: str, description: str, build: Callable[[Compilation], SeaOfNodes], *,
               text: Callable[[SeaOfNodes], str] = graphs_text,
               dot: Callable[[SeaOfNodes, str, DrawOptions | None], str] | None = None,
               lines: Callable[[SeaOfNodes], Lines] | None = None,
               checks: tuple[str, ...] = ()) -> None:
    """A representation that is a sea of nodes (one graph per function): its artifact is
    a program in ``opt``'s form ``graph``, so a pipeline's graph is shown by it as it is."""
    add_representation(name, description, build=build, run=run_graphs, verify=verify_graphs,
                       text=text, dot=dot or _titled(name), stats=graphs_stats, face="draw",
                       lines=lines or (graphs_lines if text is graphs_text else None),
                       form="graph", checks=checks)


def fresh_graphs(comp: Compilation, optimize: bool = True) -> SeaOfNodes:
    """A new (uncached) sea of nodes: Tiny parsed straight into it, Bril through SSA."""
    if comp.kind == "tiny":
        from ssa_course.son.build import build_graphs

        return build_graphs(comp.ast, optimize)
    from ssa_course.son.from_ssa import graphs_from_quads

    return graphs_from_quads(comp.quads, optimize)


def add_quads_pass(name: str, description: str,
                   load: Callable[[], Callable[[Function], Function]]) -> None:
    """Register a quads function pass, applied to every function of a program in quads
    form (not SSA). ``load()`` imports the module that holds the pass and returns its
    function (``fn -> fn``): the lesson's import stays cheap, and grep or an IDE goes from
    the registration straight to the code (xDSL's ``get_all_passes`` does the same)."""
    from ssa_course.registry import add_pass

    def run(state: PassState) -> None:
        from ssa_course.quads.peephole import on_program

        state.quads = on_program(load(), state.quads or state.comp.quads)

    add_pass(name, description, ("quads", "source"), "quads")(run)
