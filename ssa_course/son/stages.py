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


def build_program(comp: Compilation, optimize: bool = True):  # noqa: ANN201
    """A fresh (uncached) sea of nodes: Tiny parsed straight into it, Bril through SSA."""
    if comp.kind == "tiny":
        from ssa_course.son.build import build_graphs

        return build_graphs(comp.ast, optimize)
    from ssa_course.son.from_ssa import graphs_from_quads

    return graphs_from_quads(comp.quads, optimize)


def son_program(comp: Compilation, optimize: bool = True):  # noqa: ANN201
    """The verified sea of nodes of a compilation (raw or pessimistic), cached."""
    from ssa_course.son.verify import verify_graphs

    def build():  # noqa: ANN202
        program = build_program(comp, optimize)
        verify_graphs(program)
        return program

    return comp.cached("son" if optimize else "son-raw", build)


def compare_modes(comp: Compilation, mode: str, fmt: str,
                  options=None) -> tuple[str, str]:  # noqa: ANN001 (a viz DrawOptions)
    """The pessimistic graph drawn (``fmt`` "dot") or printed ("text") with the types of
    ``mode`` ("pessimistic" or "optimistic"); returns (rendering, summary line)."""
    from ssa_course.son.printer import compare, compare_dot, compare_summary, compare_text

    program = son_program(comp, True)
    table = comp.cached("son-compare", lambda: compare(program))  # SCCP once for both modes
    summary_line = compare_summary(program, table)
    if fmt == "dot":
        return compare_dot(program, mode, table=table, options=options), summary_line
    return compare_text(program, mode, table), summary_line


def optimistic_program(comp: Compilation):  # noqa: ANN201
    """A fresh pessimistic graph, then SCCP (lesson 07), verified; cached."""
    from ssa_course.son.sccp import apply_to_program
    from ssa_course.son.verify import verify_graphs

    def build():  # noqa: ANN202
        program = build_program(comp, True)
        apply_to_program(program)
        verify_graphs(program)
        return program

    return comp.cached("son-opt", build)


@register("son-raw", "sea of nodes straight from the parser, peepholes off")
def run_son_raw(comp: Compilation, args: list[object], out: Output, limits: Limits) -> int:
    from ssa_course.son.interp import run_graphs

    return run_graphs(son_program(comp, optimize=False), args, out, limits)


@register("son", "sea of nodes with pessimistic peepholes while parsing (folding, GVN)")
def run_son(comp: Compilation, args: list[object], out: Output, limits: Limits) -> int:
    from ssa_course.son.interp import run_graphs

    return run_graphs(son_program(comp, optimize=True), args, out, limits)


@register("son-opt", "sea of nodes after SCCP: optimistic constants and dead code removed")
def run_son_opt(comp: Compilation, args: list[object], out: Output, limits: Limits) -> int:
    from ssa_course.son.interp import run_graphs

    return run_graphs(optimistic_program(comp), args, out, limits)


# ---------------------------------------------------------------- views (show --as ...)


def _register_views() -> None:
    import os

    from ssa_course.son.printer import (
        format_graphs,
        graphs_to_dot,
        select_compose_dot,
        summary,
    )
    from ssa_course.views import register_view

    for name, optimize, description in (
        ("son-raw", False, "sea of nodes straight from the parser (peepholes off)"),
        ("son", True, "sea of nodes with pessimistic peepholes (folding, GVN, rewrites)"),
    ):
        def text(comp: Compilation, optimize: bool = optimize) -> str:
            return format_graphs(son_program(comp, optimize))

        def dot(comp: Compilation, optimize: bool = optimize, name: str = name,
                options=None) -> str:  # noqa: ANN001 (a viz DrawOptions)
            program = son_program(comp, optimize)
            title = f"{os.path.basename(comp.filename)} as {name}: {summary(program)}"
            return graphs_to_dot(program, title, options)

        def stats(comp: Compilation, optimize: bool = optimize) -> str:
            return summary(son_program(comp, optimize))

        register_view(name, description, text, dot, face="draw", stats=stats)

    def opt_text(comp: Compilation) -> str:
        return format_graphs(optimistic_program(comp))

    def opt_dot(comp: Compilation, options=None) -> str:  # noqa: ANN001
        program = optimistic_program(comp)
        title = f"{os.path.basename(comp.filename)} as son-opt: {summary(program)}"
        return graphs_to_dot(program, title, options)

    register_view("son-opt", "sea of nodes after SCCP (optimistic constants, dead code "
                  "removed)", opt_text, opt_dot, face="draw",
                  stats=lambda comp: summary(optimistic_program(comp)))

    def sc_text(comp: Compilation) -> str:
        return format_graphs(son_program(comp, False), select_compose=True)

    def sc_dot(comp: Compilation, options=None) -> str:  # noqa: ANN001
        title = f"{os.path.basename(comp.filename)}: each Phi as Selects + a Compose"
        return select_compose_dot(son_program(comp, False), title, options)

    register_view("son-select", "the raw graph with every Phi split into Select + Compose "
                  "(the paper's stepping stone to Region + Phi)", sc_text, sc_dot, face="draw")


_register_views()


# ---------------------------------------------------------------- back to blocks (lesson 08)


def scheduled_quads(comp: Compilation):  # noqa: ANN201
    """The optimistic graph scheduled by GCM and brought out of SSA: quads, cached."""
    from ssa_course.son.to_quads import graph_to_quads

    return comp.cached("scheduled-quads",
                       lambda: graph_to_quads(optimistic_program(comp), comp.quads.structs))


def scheduled_ssa_quads(comp: Compilation):  # noqa: ANN201
    from ssa_course.son.to_quads import scheduled_ssa

    return comp.cached("scheduled-ssa", lambda: scheduled_ssa(optimistic_program(comp),
                                                              comp.quads.structs)[0])


def scheduled_ircode(comp: Compilation) -> dict:
    """The scheduled program as verified, compacted Julia-style IRCode."""
    from ssa_course.ssa.irverify import verify_ir
    from ssa_course.ssa.julia import program_ircode

    def build() -> dict:
        program = program_ircode(scheduled_quads(comp))
        for ir in program.values():
            verify_ir(ir)
        return program

    return comp.cached("scheduled-ircode", build)


@register("scheduled", "SCCP'd graph scheduled by global code motion, run as IRCode")
def run_scheduled(comp: Compilation, args: list[object], out: Output, limits: Limits) -> int:
    from ssa_course.ssa.irinterp import run_ircode

    return run_ircode(scheduled_ircode(comp), args, out, limits, comp.quads.structs)


def _register_schedule_views() -> None:
    import os

    from ssa_course.quads.bril import to_bril_text
    from ssa_course.quads.cfg import build_cfg
    from ssa_course.ssa.julia import format_ir
    from ssa_course.views import register_view
    from ssa_course.viz.dot import program_cfg_dot

    def text(comp: Compilation) -> str:
        return "\n".join(format_ir(ir) for ir in scheduled_ircode(comp).values())

    def dot(comp: Compilation, options=None) -> str:  # noqa: ANN001
        program = scheduled_ssa_quads(comp)
        cfgs = {n: build_cfg(f) for n, f in program.functions.items()}
        return program_cfg_dot(cfgs, title=f"{os.path.basename(comp.filename)}: "
                               "the graph scheduled into blocks (SSA)", options=options)

    register_view("scheduled", "the optimized graph scheduled back into blocks (GCM), "
                  "as Julia-style IR", text, dot)
    register_view("scheduled-bril", "the optimized program as Bril (out of SSA)",
                  lambda comp: to_bril_text(scheduled_quads(comp)), dot)


_register_schedule_views()


def optimized_quads(comp: Compilation):  # noqa: ANN201
    """The default ``ssa-course opt`` pipeline's result, as quads; cached."""
    from ssa_course.passes import DEFAULT_PIPELINE, finish_as_quads, run_pipeline

    return comp.cached("optimized", lambda: finish_as_quads(run_pipeline(comp,
                                                                         DEFAULT_PIPELINE)))


@register("optimized", "the whole default 'ssa-course opt' pipeline (parse, SCCP, GCM, "
          "out of SSA, coalescing, layout), run as quads")
def run_optimized(comp: Compilation, args: list[object], out: Output, limits: Limits) -> int:
    from ssa_course.quads.interp import run_quads

    return run_quads(optimized_quads(comp), args, out, limits)
