"""Pictures of dominance (lesson 03): a CFG coloured by what one block dominates.

:func:`frontier_dot` draws a CFG with its dominator tree and dominance frontiers on top:

* the chosen block is blue, the blocks it strictly dominates green, and its frontier --
  the first blocks where its dominance stops -- orange;
* ordinary CFG edges are grey; a dashed blue edge goes from each block's immediate
  dominator to the block (the dominator tree); a bold orange edge labelled DF goes from the
  chosen block to each block of its frontier (from every block, when none is chosen);
* each box lists the block's frontier, so the picture can be read without the colours.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ssa_course.ssa.dom import dominates
from ssa_course.viz.dot import GraphEdge, GraphNode, graph_to_dot

# One colour per role, the same in every drawing and its caption: the chosen block, what
# it dominates, its frontier; grey CFG edges, blue idom edges, orange frontier edges.
CHOSEN_FILL = "#9ecae1"
DOMINATED_FILL = "#d9f0d3"
FRONTIER_FILL = "#fdae6b"
CFG_COLOR = "#888888"
IDOM_COLOR = "#1f5fbf"
FRONTIER_COLOR = "#e6550d"


def _fill(name: str, block: str | None, idom: Mapping[str, str],
          frontier: set[str]) -> str | None:
    if block is None:
        return None  # no block chosen: plain boxes, only the DF lines and edges
    if name == block:
        return CHOSEN_FILL
    if name in frontier:
        return FRONTIER_FILL  # a loop header can be both; the frontier is the point here
    if dominates(idom, block, name):
        return DOMINATED_FILL
    return None


def frontier_dot(succs: Mapping[str, Sequence[str]], idom: Mapping[str, str],
                 df: Mapping[str, set[str]], block: str | None = None,
                 title: str | None = None) -> str:
    """DOT of the CFG ``succs`` with the dominator tree ``idom`` and the frontiers ``df``
    (as :mod:`ssa_course.ssa.dom` computes them); ``block`` picks the block whose
    dominance is coloured. Blocks no path reaches (absent from ``idom``) are left out."""
    if block is not None and block not in idom:
        raise ValueError(f"no reachable block named {block!r}")
    frontier = set(df.get(block, ())) if block is not None else set()
    names = [n for n in succs if n in idom]  # (in the CFG's order: stable drawings)
    # each box lists its frontier, so the table is readable without the colours
    nodes = [GraphNode(n, header=n, lines=(f"DF: {', '.join(sorted(df.get(n, ()))) or '-'}",),
                       emphasis=n == block, fill=_fill(n, block, idom, frontier))
             for n in names]
    edges = [GraphEdge(n, s, color=CFG_COLOR) for n in names for s in succs[n] if s in idom]
    # tree and frontier edges do not constrain the layout: the CFG's shape decides where
    # boxes go, the other edges are drawn over it
    edges += [GraphEdge(d, n, style="dashed", color=IDOM_COLOR, constraint=False)
              for n, d in idom.items() if d != n and n in succs]
    sources = [block] if block is not None else names  # one block's frontier, or all
    edges += [GraphEdge(src, f, "DF", "bold", FRONTIER_COLOR, constraint=False)
              for src in sources for f in sorted(df.get(src, ()))]
    if title is None:
        title = ("dominance frontiers" if block is None else
                 f"DF({block}) = {{{', '.join(sorted(frontier))}}}\nblue: {block}, green: "
                 "what it dominates, orange: its frontier")
        title += "\ngrey: CFG edges, dashed blue: idom -> block, orange DF: frontier edges"
    return graph_to_dot(nodes, edges, title=title, name="dominance")
