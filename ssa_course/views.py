"""Printing and drawing any representation (``ssa-course show FILE --as NAME``).

A view is a representation's text face or its dot face, looked up in the one registry
(:mod:`ssa_course.registry`); SVG and PNG are rendered from the DOT by Graphviz (or a
matplotlib fallback).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Literal, overload

from ssa_course import registry
from ssa_course.compilation import Compilation
from ssa_course.errors import UsageError

if TYPE_CHECKING:
    from ssa_course.viz.options import DrawOptions

FORMATS = ("text", "dot", "svg", "png")


@overload
def render(comp: Compilation, name: str, fmt: Literal["text", "dot", "svg"] = "text",
           options: DrawOptions | None = None) -> str: ...


@overload
def render(comp: Compilation, name: str, fmt: str,
           options: DrawOptions | None = None) -> str | bytes: ...


def render(comp: Compilation, name: str, fmt: str = "text",
           options: DrawOptions | None = None) -> str | bytes:
    """The ``fmt`` face of representation ``name``: text/dot/svg as str, png as bytes.
    ``options`` (drawing options) shape the dot face."""
    rep = registry.representation(name)
    if fmt not in FORMATS:
        raise UsageError(f"unknown format '{fmt}' (known: {', '.join(FORMATS)})")
    artifact = registry.build(comp, rep.name)
    if fmt == "text":
        return rep.text(artifact)
    dot = rep.dot(artifact, os.path.basename(comp.filename), options)
    if fmt == "dot":
        return dot
    from ssa_course.viz.dot import Drawing

    drawing = Drawing(dot, timeout=options.timeout if options is not None else None)
    return drawing.svg() if fmt == "svg" else drawing.png()


def stats(comp: Compilation, name: str) -> str | None:
    """The representation's one-line summary, if it has one (the explorer shows it)."""
    rep = registry.representation(name)
    return rep.stats(registry.build(comp, rep.name)) if rep.stats else None
