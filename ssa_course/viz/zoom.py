"""Fitting a Graphviz SVG into a panel: scaled to the panel's width, or zoomed.

Graphviz writes the picture's natural size on the root element (``width="620pt"
height="1400pt"``) next to a ``viewBox``. :func:`scaled_svg` replaces that fixed size by
a CSS width -- the natural width capped at the panel's width ("fit"), or the natural
width times a zoom factor -- and lets the height follow (the ``viewBox`` keeps the
proportions), so a large graph fits the panel instead of spilling out of it, and a
small one is not blown up.
"""

from __future__ import annotations

import re

ZOOMS = ("fit", "25%", "50%", "75%", "100%", "150%", "200%", "300%")

_ROOT = re.compile(r"<svg\b[^>]*>", re.S)
_SIZE = re.compile(r'\s(width|height)="([0-9.]+)(pt|px)?"')
_VIEWBOX = re.compile(r'\sviewBox="[^"]*"')
_PROLOG = re.compile(r"<\?xml[^>]*\?>|<!DOCTYPE[^>]*>", re.S)


def zoom_factor(choice: str) -> float | None:
    """``"fit"`` -> None; ``"150%"`` -> 1.5. Raises ValueError for anything else."""
    if choice == "fit":
        return None
    if not re.fullmatch(r"[0-9]{1,4}%", choice) or int(choice[:-1]) == 0:
        raise ValueError(f"a zoom is 'fit' or a percentage such as '150%', not {choice!r}")
    return int(choice[:-1]) / 100


def natural_size(svg: str) -> tuple[float, float] | None:
    """(width, height) in points written on the root element, if both are there."""
    root = _ROOT.search(svg)
    if root is None:
        return None
    sizes = {name: float(value) * (0.75 if unit == "px" else 1.0)
             for name, value, unit in _SIZE.findall(root.group(0))}
    if "width" not in sizes or "height" not in sizes:
        return None
    return sizes["width"], sizes["height"]


def scaled_svg(svg: str, zoom: float | None = None) -> str:
    """``svg`` ready to sit in an HTML panel: no XML prolog, and a root element that is
    ``min(natural width, 100%)`` wide when ``zoom`` is None, else ``zoom`` times its
    natural width (the panel scrolls). An SVG without a root size is returned unscaled."""
    svg = _PROLOG.sub("", svg).lstrip()
    size = natural_size(svg)
    root = _ROOT.search(svg)
    if size is None or root is None:
        return svg
    width, height = size
    tag = _SIZE.sub("", root.group(0))
    if not _VIEWBOX.search(tag):
        tag = tag.replace("<svg", f'<svg viewBox="0 0 {width:g} {height:g}"', 1)
    if zoom is None:
        style = f"width:{width:g}pt;max-width:100%;height:auto"
    else:
        style = f"width:{width * zoom:g}pt;max-width:none;height:auto"
    tag = tag.replace("<svg", f'<svg style="{style}"', 1)
    return svg[:root.start()] + tag + svg[root.end():]
