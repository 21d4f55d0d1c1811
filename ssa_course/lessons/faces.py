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
from ssa_course.runtime import Limits, Output

if TYPE_CHECKING:
    from ssa_course.quads.ir import Function


def run_quads(program: object, args: list[object], out: Output, limits: Limits) -> int:
    from ssa_course.quads.interp import run_quads as run

    return run(program, args, out, limits)  # type: ignore[arg-type]


def verify_quads(program: object) -> None:
    from ssa_course.quads.verify import verify_quads as verify

    verify(program)  # type: ignore[arg-type]


def verify_ssa(program: object) -> None:
    from ssa_course.ssa.verify import verify_ssa_program

    verify_ssa_program(program)  # type: ignore[arg-type]


def bril_text(program: object) -> str:
    from ssa_course.quads.bril import to_bril_text

    return to_bril_text(program)  # type: ignore[arg-type]


def cfg_dot(program: object, title: str, options: object = None) -> str:
    from ssa_course.quads.cfg import build_cfg
    from ssa_course.quads.cfg_dot import program_cfg_dot

    cfgs = {n: build_cfg(f) for n, f in program.functions.items()}  # type: ignore[attr-defined]
    return program_cfg_dot(cfgs, title=title, options=options)  # type: ignore[arg-type]


def add_quads(name: str, description: str, build: Callable[[Compilation], object], *,
              ssa: bool = False, text: Callable[[object], str] = bril_text,
              face: str = "text", checks: tuple[str, ...] = ()) -> None:
    """A representation that is a quads program (with phis when ``ssa``); ``checks``: the
    ``opt`` forms its verifier checks after every pass (see the registry)."""
    add_representation(name, description, build=build, run=run_quads,
                       verify=verify_ssa if ssa else verify_quads, text=text, dot=cfg_dot,
                       face=face, lines=quads_lines if text is bril_text else None,
                       checks=checks)


def quads_lines(program: object) -> object:
    from ssa_course.lessons.lines_faces import quads_lines as lines

    return lines(program)


def graphs_lines(program: object) -> object:
    from ssa_course.lessons.lines_faces import graphs_lines as lines

    return lines(program)


def run_graphs(program: object, args: list[object], out: Output, limits: Limits) -> int:
    from ssa_course.son.interp import run_graphs as run

    return run(program, args, out, limits)  # type: ignore[arg-type]


def verify_graphs(program: object) -> None:
    from ssa_course.son.verify import verify_graphs as verify

    verify(program)  # type: ignore[arg-type]


def graphs_text(program: object) -> str:
    from ssa_course.son.printer import format_graphs

    return format_graphs(program)  # type: ignore[arg-type]


def graphs_dot(program: object, title: str, options: object = None) -> str:
    from ssa_course.son.printer import graphs_to_dot, summary

    return graphs_to_dot(program, f"{title}: {summary(program)}", options)  # type: ignore


def _titled(name: str) -> Callable[[object, str, object], str]:
    def dot(program: object, title: str, options: object = None) -> str:
        return graphs_dot(program, f"{title} as {name}", options)

    return dot


def graphs_stats(program: object) -> str:
    from ssa_course.son.printer import summary

    return summary(program)  # type: ignore[arg-type]


def add_graphs(name: str, description: str, build: Callable[[Compilation], object], *,
               text: Callable[[object], str] = graphs_text,
               dot: Callable[[object, str, object], str] | None = None,
               lines: Callable[[object], object] | None = None,
               checks: tuple[str, ...] = ()) -> None:
    """A representation that is a sea of nodes (one graph per function): its artifact is
    a program in ``opt``'s form ``graph``, so a pipeline's graph is shown by it as it is."""
    add_representation(name, description, build=build, run=run_graphs, verify=verify_graphs,
                       text=text, dot=dot or _titled(name), stats=graphs_stats, face="draw",
                       lines=lines or (graphs_lines if text is graphs_text else None),
                       form="graph", checks=checks)


def fresh_graphs(comp: Compilation, optimize: bool = True) -> object:
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

    def run(state) -> None:
        from ssa_course.quads.peephole import on_program

        state.quads = on_program(load(), state.quads or state.comp.quads)

    add_pass(name, description, ("quads", "source"), "quads")(run)
