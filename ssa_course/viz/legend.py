"""What the colours and line styles of a drawing mean: a legend read off the drawing itself.

Each family of drawings (block graphs such as the CFG, SSA and Julia IR; the sea of nodes;
the syntax tree) has a list of :class:`LegendEntry`\\ s. :func:`legend_entries` keeps only
the entries whose fill colour or edge style actually occurs in a given DOT text, so the
legend never explains something the picture does not show, and :func:`legend_html`
draws them as small swatches (a filled square for a node colour, a short line in the
edge's style for an edge).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from ssa_course.viz.dot import UNREACHABLE_FILL
from ssa_course.viz.palette import (
    CHANGED_FILL,
    CONSTANT_FILL,
    CONTROL_COLOR,
    CONTROL_FILL,
    DEAD_FILL,
    MEMORY_COLOR,
    MEMORY_FILL,
    NEW_FILL,
    PHI_FILL,
    REMOVED_FILL,
)

FAMILIES = ("blocks", "son", "ast")
PLAIN = "#000000"  # an edge drawn without a colour attribute


@dataclass(frozen=True, slots=True)
class LegendEntry:
    """One line of a legend: a node fill (``style`` is "fill"), a thick node border
    ("border"), or an edge drawn in ``style`` ("solid", "dashed", "dotted", "bold")."""

    style: str
    color: str
    text: str


_ENTRIES: dict[str, tuple[LegendEntry, ...]] = {
    "blocks": (
        LegendEntry("border", PLAIN, "entry block (thick border)"),
        LegendEntry("fill", UNREACHABLE_FILL, "unreachable block (no path from the entry)"),
        LegendEntry("solid", PLAIN, "control flow (T / F: the branch's true / false side)"),
        LegendEntry("dashed", PLAIN, "to the exception handler (catch)"),
        LegendEntry("dotted", PLAIN, "where a throw goes"),
    ),
    "son": (
        LegendEntry("fill", CONTROL_FILL, "control node (Start, If, Region, Loop, Return, ...)"),
        LegendEntry("fill", PHI_FILL, "Phi of a value"),
        LegendEntry("fill", MEMORY_FILL, "memory operation, or a Phi of memory"),
        LegendEntry("fill", CONSTANT_FILL, "constant"),
        LegendEntry("fill", CHANGED_FILL, "typed differently by the parser and by SCCP"),
        LegendEntry("fill", DEAD_FILL, "dead: SCCP proves control never reaches it"),
        LegendEntry("fill", NEW_FILL, "made by the optimistic pass (not in son)"),
        LegendEntry("fill", REMOVED_FILL, "in son, removed by the optimistic pass"),
        LegendEntry("bold", CONTROL_COLOR, "control edge"),
        LegendEntry("dashed", MEMORY_COLOR, "memory edge"),
        LegendEntry("solid", PLAIN, "data edge (its label: the input slot it fills)"),
        LegendEntry("dotted", CONTROL_COLOR, "a Phi's Region (input 0)"),
        LegendEntry("dotted", "#999999", "a constant or parameter hangs off Start"),
    ),
    "ast": (
        LegendEntry("fill", "lightyellow", "a function"),
        LegendEntry("solid", PLAIN, "parent to child (label: the child's role)"),
    ),
}


def family_of(view: str) -> str:
    """The drawing family of a view name (``son-opt`` -> "son", ``cfg`` -> "blocks")."""
    if view == "ast":
        return "ast"
    if view.startswith("son"):
        return "son"
    return "blocks"


_FILL = re.compile(r'fillcolor="?([^",\]\s]+)')
_STYLE = re.compile(r'\bstyle="?(\w+)')
_COLOR = re.compile(r'(?<![a-z])color="?([^",\]\s]+)')


def _used_styles(dot: str) -> tuple[set[str], set[tuple[str, str]], bool]:
    """Fill colours, (edge style, colour) pairs, and whether a thick border occurs."""
    fills: set[str] = set()
    edges: set[tuple[str, str]] = set()
    border = False
    for line in dot.splitlines():
        # attributes run from the first "[" to the end of the statement (a label may
        # itself hold brackets, e.g. a Bril type "[int]")
        start = line.find("[")
        if start < 0:
            if line.lstrip().startswith('"') and "->" in line:  # an edge, no attributes
                edges.add(("solid", PLAIN))
            continue
        attrs = line[start:]
        if "->" in line[:start]:
            style = _STYLE.search(attrs)
            color = _COLOR.search(attrs)
            edges.add((style.group(1) if style else "solid",
                       color.group(1).lower() if color else PLAIN))
            continue
        fill = _FILL.search(attrs)
        if fill:
            fills.add(fill.group(1).lower())
        border = border or "penwidth" in attrs
    return fills, edges, border


def legend_entries(dot: str, family: str) -> list[LegendEntry]:
    """The entries of ``family`` (one of :data:`FAMILIES`) that ``dot`` uses, in order."""
    if family not in _ENTRIES:
        raise ValueError(f"unknown drawing family {family!r} (one of {', '.join(FAMILIES)})")
    fills, edges, border = _used_styles(dot)
    out = []
    for entry in _ENTRIES[family]:
        if entry.style == "fill":
            used = entry.color.lower() in fills
        elif entry.style == "border":
            used = border
        else:
            used = (entry.style, entry.color.lower()) in edges
        if used:
            out.append(entry)
    return out


def _swatch(entry: LegendEntry) -> str:
    if entry.style == "fill":
        return (f"<span style='display:inline-block;width:1.6em;height:0.9em;"
                f"background:{entry.color};border:1px solid #888;vertical-align:middle'>"
                "</span>")
    if entry.style == "border":
        return ("<span style='display:inline-block;width:1.6em;height:0.9em;"
                "border:2px solid #000;vertical-align:middle'></span>")
    width = {"bold": 3, "solid": 1.2}.get(entry.style, 1.2)
    dash = {"dashed": " stroke-dasharray='5,3'", "dotted": " stroke-dasharray='1.5,2.5'"}
    return (f"<svg width='28' height='10' style='vertical-align:middle'>"
            f"<line x1='0' y1='5' x2='28' y2='5' stroke='{entry.color}' "
            f"stroke-width='{width}'{dash.get(entry.style, '')}/></svg>")


def legend_html(entries: list[LegendEntry]) -> str:
    """The entries as one wrapped line of swatches with their meaning (empty: no legend)."""
    if not entries:
        return ""
    items = [f"<span style='margin-right:1.2em;white-space:nowrap'>{_swatch(e)} "
             f"{html.escape(e.text)}</span>" for e in entries]
    return f"<div style='font-size:85%;line-height:1.8'>{''.join(items)}</div>"


def legend_text(entries: list[LegendEntry]) -> str:
    """The entries as plain text, one per line (for a terminal or a test)."""
    return "\n".join(f"{e.style:6} {e.color:12} {e.text}" for e in entries)
