"""The stages of lessons 00-01: the AST reference interpreter, quads, the CFG, Bril.

Each stage builds its representation from the previous one (cached on the
:class:`~ssa_course.pipeline.Compilation`) and runs it with that representation's own
executor. The round-trip stages (``cfg``, ``bril``, ``bril-json``) make the printers
and readers part of every differential test: a program must survive them unchanged.
"""

from __future__ import annotations

from ssa_course.pipeline import Compilation
from ssa_course.quads import ir
from ssa_course.runtime import Limits, Output
from ssa_course.stages import register


@register("ast", "the tree-walking reference interpreter of the checked Tiny AST",
          tiny_only=True)
def run_ast_stage(comp: Compilation, args: list[object], out: Output, limits: Limits) -> int:
    from ssa_course.tiny.interp import run_ast

    return run_ast(comp.ast, args, out, limits)


@register("quads", "three-address code (Bril-compatible quads), run by the quads interpreter")
def run_quads_stage(comp: Compilation, args: list[object], out: Output, limits: Limits) -> int:
    from ssa_course.quads.interp import run_quads

    return run_quads(comp.quads_as_written, args, out, limits)


def cfg_program(comp: Compilation) -> ir.Program:
    """Quads rebuilt from their CFGs (basic blocks, unreachable blocks removed)."""
    from ssa_course.quads.cfg import build_cfg, remove_unreachable

    def build() -> ir.Program:
        functions = {}
        for name, fn in comp.quads.functions.items():
            cfg = build_cfg(fn)
            remove_unreachable(cfg)
            functions[name] = cfg.to_function()
        return ir.Program(functions, comp.quads.structs)

    return comp.cached("cfg-program", build)


@register("cfg", "quads split into basic blocks, unreachable blocks removed, laid out again")
def run_cfg_stage(comp: Compilation, args: list[object], out: Output, limits: Limits) -> int:
    from ssa_course.quads.interp import run_quads

    return run_quads(cfg_program(comp), args, out, limits)


@register("bril", "quads printed as Bril text and read back")
def run_bril_text_stage(comp: Compilation, args: list[object], out: Output,
                        limits: Limits) -> int:
    from ssa_course.quads import bril
    from ssa_course.quads.interp import run_quads

    def build() -> ir.Program:
        return bril.parse_bril_text(bril.to_bril_text(comp.quads), comp.filename,
                                    typecheck=False)

    return run_quads(comp.cached("bril-roundtrip", build), args, out, limits)


@register("bril-json", "quads written as Bril JSON and read back")
def run_bril_json_stage(comp: Compilation, args: list[object], out: Output,
                        limits: Limits) -> int:
    from ssa_course.quads import bril
    from ssa_course.quads.interp import run_quads

    def build() -> ir.Program:
        return bril.parse_bril_json(bril.to_bril_json(comp.quads), comp.filename,
                                    typecheck=False)

    return run_quads(comp.cached("bril-json-roundtrip", build), args, out, limits)


def peephole_program(comp: Compilation, which: str) -> ir.Program:
    """Quads after a local cleanup: ``window``, ``lvn`` or ``lvn-dce``."""
    from ssa_course.quads.peephole import (
        dead_code,
        local_value_numbering,
        on_program,
        window_peephole,
    )

    def build() -> ir.Program:
        if which == "window":
            return on_program(window_peephole, comp.quads)
        program = on_program(local_value_numbering, comp.quads)
        return on_program(dead_code, program) if which == "lvn-dce" else program

    return comp.cached(f"peephole-{which}", build)


@register("window", "quads after a fixed-window peephole pass (lesson 02)")
def run_window_stage(comp: Compilation, args: list[object], out: Output,
                     limits: Limits) -> int:
    from ssa_course.quads.interp import run_quads

    return run_quads(peephole_program(comp, "window"), args, out, limits)


@register("lvn", "quads after local value numbering (lesson 02)")
def run_lvn_stage(comp: Compilation, args: list[object], out: Output, limits: Limits) -> int:
    from ssa_course.quads.interp import run_quads

    return run_quads(peephole_program(comp, "lvn"), args, out, limits)


@register("lvn-dce", "local value numbering, then dead-code elimination")
def run_lvn_dce_stage(comp: Compilation, args: list[object], out: Output,
                      limits: Limits) -> int:
    from ssa_course.quads.interp import run_quads

    return run_quads(peephole_program(comp, "lvn-dce"), args, out, limits)
