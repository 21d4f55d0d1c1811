"""The registry of views: every representation's *print* and *draw* faces by name.

``ssa-course show FILE --as NAME`` and the notebooks' ``show()`` look views up here.
A view has a text face (stable text) and, where it makes sense, a DOT face; SVG and PNG
are rendered from the DOT by Graphviz (or a matplotlib fallback). Later lessons add
their representations by calling :func:`register_view`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass

from ssa_course.errors import UsageError
from ssa_course.pipeline import Compilation

FORMATS = ("text", "dot", "svg", "png")


@dataclass(frozen=True, slots=True)
class View:
    name: str
    description: str
    text: Callable[[Compilation], str]
    dot: Callable[[Compilation], str] | None = None
    tiny_only: bool = False
    face: str = "text"  # the face shown by default: "text" or "draw"
    # a one-line summary for the explorer's stats line ("23 nodes, 7 constants found")
    stats: Callable[[Compilation], str] | None = None


_VIEWS: dict[str, View] = {}


def register_view(name: str, description: str, text: Callable[[Compilation], str],
                  dot: Callable[[Compilation], str] | None = None, *,
                  tiny_only: bool = False, face: str = "text",
                  stats: Callable[[Compilation], str] | None = None) -> None:
    """Add a representation: its text face, its DOT face (optional), its default face,
    and optionally a one-line summary the explorer shows above it."""
    if name in _VIEWS:
        raise ValueError(f"view {name!r} registered twice")
    _VIEWS[name] = View(name, description, text, dot, tiny_only, face, stats)


def _load_more_views() -> None:
    # Later lessons' modules register their views when imported.
    from ssa_course.son import stages as son_stages  # noqa: F401
    from ssa_course.ssa import stages  # noqa: F401


def all_views() -> list[View]:
    _load_more_views()
    return list(_VIEWS.values())


def get_view(name: str) -> View:
    _load_more_views()
    if name not in _VIEWS:
        raise UsageError(f"unknown representation '{name}' (known: {', '.join(_VIEWS)})")
    return _VIEWS[name]


def render(comp: Compilation, name: str, fmt: str = "text",
           options=None) -> str | bytes:  # noqa: ANN001 (a viz DrawOptions)
    """The ``fmt`` face of view ``name`` for ``comp``: text/dot as str, svg as str, png as
    bytes; ``options`` (:class:`~ssa_course.viz.options.DrawOptions`) say what to draw."""
    view = get_view(name)
    if fmt not in FORMATS:
        raise UsageError(f"unknown format '{fmt}' (known: {', '.join(FORMATS)})")
    if view.tiny_only and comp.kind != "tiny":
        raise UsageError(f"'{name}' needs a Tiny program; {comp.filename} is {comp.kind}")
    if fmt == "text":
        return view.text(comp)
    if view.dot is None:
        raise UsageError(f"'{name}' has no drawing; use --format text")
    dot = view.dot(comp, options=options)
    if fmt == "dot":
        return dot
    from ssa_course.viz.dot import Drawing

    drawing = Drawing(dot, timeout=options.timeout if options is not None else None)
    return drawing.svg() if fmt == "svg" else drawing.png()


# ---------------------------------------------------------------- built-in views


def _ast_text(comp: Compilation) -> str:
    from ssa_course.tiny.printer import format_ast

    return format_ast(comp.ast)


def _ast_dot(comp: Compilation, options=None) -> str:  # noqa: ANN001
    from ssa_course.viz.astdot import ast_to_dot

    return ast_to_dot(comp.ast, options)


def _quads_text(comp: Compilation) -> str:
    from ssa_course.quads.bril import to_bril_text

    return to_bril_text(comp.quads_as_written)  # what the quads stage runs (phis and all)


def _cfgs(comp: Compilation):
    from ssa_course.quads.cfg import build_cfg

    return comp.cached("cfgs", lambda: {n: build_cfg(f) for n, f in comp.quads.functions.items()})


def _cfg_text(comp: Compilation) -> str:
    from ssa_course.quads.bril import format_instr

    lines: list[str] = []
    for name, cfg in _cfgs(comp).items():
        lines.append(f"@{name}: entry {cfg.entry}")
        for block in cfg.blocks.values():
            preds = ", ".join(block.preds) or "-"
            succs = ", ".join(block.succs) or "-"
            lines.append(f"  {block.name}:  preds [{preds}]  succs [{succs}]")
            for instr in block.instrs:
                lines.append(f"    {format_instr(instr)}")
        lines.append("")
    return "\n".join(lines)


def _cfg_dot(comp: Compilation, options=None) -> str:  # noqa: ANN001
    from ssa_course.viz.dot import program_cfg_dot

    return program_cfg_dot(_cfgs(comp), title=os.path.basename(comp.filename),
                           options=options)


def _bril_json(comp: Compilation) -> str:
    from ssa_course.quads.bril import to_bril_json

    return json.dumps(to_bril_json(comp.quads), indent=2, sort_keys=True) + "\n"


register_view("ast", "the checked Tiny syntax tree", _ast_text, _ast_dot, tiny_only=True)
register_view("quads", "three-address code (Bril text)", _quads_text, _cfg_dot)
register_view("cfg", "basic blocks and control-flow edges", _cfg_text, _cfg_dot, face="draw")
register_view("bril", "Bril text", _quads_text, _cfg_dot)
register_view("bril-json", "canonical Bril JSON", _bril_json, None)
