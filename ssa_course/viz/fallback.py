"""The picture drawn without Graphviz: networkx lays the graph out in layers, matplotlib
draws it (a PNG). :mod:`ssa_course.viz.render` uses it when no Graphviz is at hand."""

from __future__ import annotations

import io
from collections import deque
from dataclasses import dataclass, field

# ---------------------------------------------------------------- reading DOT back


@dataclass(slots=True)
class _Shape:
    """What the fallback needs of a graph: boxes of text lines and labelled edges."""

    nodes: dict[str, list[str]] = field(default_factory=dict)  # id -> lines, in DOT order
    edges: list[tuple[str, str, str, str]] = field(default_factory=list)  # src dst label style


def unescape_label(label: str) -> list[str]:
    """The text lines a DOT (or record) label shows: ``\\l``/``\\n``/``\\r`` break lines,
    ``|`` separates record fields, braces group them, ``\\x`` is a literal ``x``."""
    if len(label) >= 2 and label[0] == label[-1] == '"':
        label = label[1:-1]
    lines: list[str] = []
    current: list[str] = []
    i = 0
    while i < len(label):
        c = label[i]
        if c == "\\" and i + 1 < len(label):
            nxt = label[i + 1]
            if nxt in "lnr":
                lines.append("".join(current))
                current = []
            else:
                current.append(nxt)
            i += 2
            continue
        if c == "|":
            lines.append("".join(current))
            current = []
        elif c not in "{}":
            current.append(c)
        i += 1
    lines.append("".join(current))
    return [line.rstrip() for line in lines if line.strip()] or [""]


def _read_dot(dot: str) -> _Shape:
    import pydot

    shape = _Shape()
    stack: list[pydot.Graph] = list(reversed(pydot.graph_from_dot_data(dot) or []))
    while stack:
        graph = stack.pop()
        for node in graph.get_nodes():
            name = node.get_name().strip('"')
            if name in ("node", "edge", "graph"):
                continue
            label = node.get("label")
            shape.nodes[name] = unescape_label(label) if label is not None else [name]
        for edge in graph.get_edges():
            src, dst = str(edge.get_source()).strip('"'), str(edge.get_destination()).strip('"')
            label = edge.get("label")
            text = " ".join(unescape_label(label)) if label is not None else ""
            style = (edge.get("style") or "solid").strip('"')
            shape.edges.append((src, dst, text, style))
            shape.nodes.setdefault(src, [src])
            shape.nodes.setdefault(dst, [dst])
        stack.extend(reversed(graph.get_subgraphs()))
    return shape


# ---------------------------------------------------------------- the fallback picture


def layered_layout(nodes: dict[str, list[str]], edges: list[tuple[str, str]]
                   ) -> dict[str, tuple[float, float]]:
    """Rows by breadth-first distance from the first node not yet placed.

    Coordinates are in characters (x) and text lines (y, downwards negative); each value
    is the top-centre of the node's box, so the caller can size the figure to fit.
    """
    succs: dict[str, list[str]] = {n: [] for n in nodes}
    for src, dst in edges:
        succs[src].append(dst)
    depth: dict[str, int] = {}
    for start in nodes:
        if start in depth:
            continue
        depth[start] = max(depth.values(), default=-1) + 1
        queue = deque([start])
        while queue:
            node = queue.popleft()
            for succ in succs[node]:
                if succ not in depth:
                    depth[succ] = depth[node] + 1
                    queue.append(succ)
    rows: dict[int, list[str]] = {}
    for node in nodes:
        rows.setdefault(depth[node], []).append(node)
    pos: dict[str, tuple[float, float]] = {}
    y = 0.0
    for d in sorted(rows):
        x = 0.0
        for node in rows[d]:
            w = max(len(line) for line in nodes[node]) + 2
            pos[node] = (x + w / 2, y)
            x += w + 4
        y -= max(len(nodes[n]) for n in rows[d]) + 4
    return pos


FONT_POINTS = 8.0
MAX_INCHES = (40.0, 60.0)  # a huge graph gets a smaller font rather than a huge image


def fallback_png(dot: str) -> bytes:
    """Draw DOT text with networkx's graph model and matplotlib (no Graphviz needed).

    Geometry is computed in characters and lines of a monospace font; the figure is sized
    so that one data unit is one character wide and one line tall.
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    import networkx as nx

    shape = _read_dot(dot)
    g = nx.DiGraph()
    g.add_nodes_from(shape.nodes)
    g.add_edges_from((src, dst) for src, dst, _, _ in shape.edges)
    pos = layered_layout(shape.nodes, list(g.edges))
    half = {n: max(len(s) for s in lines) / 2 + 1 for n, lines in shape.nodes.items()}
    tall = {n: len(lines) + 1 for n, lines in shape.nodes.items()}
    width = max((x + half[n] for n, (x, _) in pos.items()), default=1.0) + 2
    depth = max((-y + tall[n] for n, (_, y) in pos.items()), default=1.0) + 2
    char_in, line_in = 0.6 / 72, 1.25 / 72  # inches per point of font size
    points = min(FONT_POINTS, MAX_INCHES[0] / (width * char_in),
                 MAX_INCHES[1] / (depth * line_in))
    fig = plt.figure(figsize=(width * char_in * points, depth * line_in * points))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(-1, width - 1)
    ax.set_ylim(-depth + 1, 1)
    ax.axis("off")
    for src, dst, label, style in shape.edges:
        (x1, y1), (x2, y2) = pos[src], pos[dst]
        line = "--" if style in ("dashed", "dotted") else "-"
        if y2 >= y1:  # a back edge (or a self loop): leave and enter on the right side
            start = (x1 + half[src], y1 - tall[src] / 2)
            end = (x2 + half[dst], y2 - tall[dst] / 2)
            bend = "arc3,rad=0.6" if src != dst else "arc3,rad=2.5"
        else:
            start, end, bend = (x1, y1 - tall[src]), (x2, y2), "arc3"
        ax.annotate("", xy=end, xytext=start,
                    arrowprops={"arrowstyle": "->", "color": "dimgray", "lw": 0.8,
                                "linestyle": line, "connectionstyle": bend,
                                "shrinkA": 0, "shrinkB": 0})
        if label:
            ax.text((start[0] + end[0]) / 2, (start[1] + end[1]) / 2, label,
                    fontsize=points * 0.9, family="monospace", color="dimgray",
                    ha="center", va="center",
                    bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none"})
    for name, (x, y) in pos.items():
        ax.text(x, y - tall[name] / 2, "\n".join(shape.nodes[name]), ha="center",
                va="center", family="monospace", fontsize=points, multialignment="left",
                linespacing=1.25,
                bbox={"boxstyle": "square,pad=0.4", "fc": "lightyellow", "ec": "gray"})
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    plt.close(fig)
    return buf.getvalue()
