"""Graphs as DOT text (built with pydot): the neutral graph model every drawing uses.

The generic part is two small dataclasses and one function: describe a graph as
:class:`GraphNode`\\ s and :class:`GraphEdge`\\ s in the order you want them laid out, and
:func:`graph_to_dot` gives DOT text that is byte-for-byte the same for the same graph;
:func:`graph_drawing` wraps it in a :class:`~ssa_course.viz.render.Drawing` for notebooks.
Every representation (CFGs in :mod:`ssa_course.quads.cfg_dot`, IRCode, the sea of nodes)
describes its graph this way; nothing here knows an IR.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ssa_course.viz.render import Drawing, RenderError, dot_available

__all__ = [
    "Drawing", "GraphEdge", "GraphNode", "RenderError", "dot_available", "graph_drawing",
    "graph_to_dot",
]

if TYPE_CHECKING:
    import pydot

UNREACHABLE_FILL = "#e8e8e8"


@dataclass(frozen=True, slots=True)
class GraphNode:
    """One box. With ``shape="record"`` the header is a field of its own above the lines."""

    id: str
    header: str = ""  # e.g. the block name; centred
    lines: tuple[str, ...] = ()  # one left-aligned line each
    shape: str = "record"  # or any Graphviz shape ("box", "ellipse", ...)
    emphasis: bool = False  # a thicker border (the entry block, a start node)
    fill: str | None = None  # background colour
    cluster: str | None = None  # key into graph_to_dot's ``clusters`` (a frame around nodes)
    # what the node is, for viz.select ("control", "data", "memory", "phi", "constant",
    # "param", ...): the budget keeps control first, constants and parameters can be
    # drawn at their users
    kind: str = ""
    small: bool = False  # a small label (a constant drawn next to its user)


@dataclass(frozen=True, slots=True)
class GraphEdge:
    """One arrow from ``src`` to ``dst`` (node ids)."""

    src: str
    dst: str
    label: str = ""
    style: str = "solid"  # "solid", "dashed", "dotted" or "bold"
    color: str | None = None
    constraint: bool = True  # False: the edge does not push dst below src in the layout
    kind: str = ""  # "control", "memory", "data", ...: viz.select weighs and thins by it
    weight: int = 1  # Graphviz keeps heavy edges short and straight (the control spine)
    penwidth: str | None = None  # line width; None: Graphviz's default
    # the label at the arrow head (``headlabel``): where a node's input slots are, and
    # much cheaper to lay out than a mid-edge label, which Graphviz places as a node
    at_head: bool = False


# ---------------------------------------------------------------- generic graphs

_RECORD_SPECIALS = set('\\{}|<>"')


def _quote(text: str) -> str:
    """A DOT double-quoted string (pydot leaves an already quoted value alone)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _record_text(text: str) -> str:
    # In a record, braces, bars and angle brackets need a backslash; so does a space that
    # is not a lone separator between words (Graphviz would squeeze a run of spaces).
    out = []
    last = len(text) - 1
    for i, c in enumerate(text):
        if c in _RECORD_SPECIALS:
            out.append("\\" + c)
        elif c == " " and (i in (0, last) or text[i - 1] == " " or text[i + 1] == " "):
            out.append("\\ ")
        else:
            out.append(c)
    return "".join(out)


def _plain_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def node_label(node: GraphNode, vertical: bool = True) -> str:
    """The quoted DOT label of ``node`` (header centred, lines left-aligned)."""
    if node.shape == "record":
        fields = []
        if node.header:
            fields.append(_record_text(node.header))
        if node.lines:
            fields.append("".join(_record_text(line) + "\\l" for line in node.lines))
        body = "|".join(fields)
        return '"' + ("{" + body + "}" if vertical else body) + '"'
    parts = [_plain_text(node.header) + ("\\n" if node.lines else "")] if node.header else []
    parts.extend(_plain_text(line) + "\\l" for line in node.lines)
    return '"' + "".join(parts) + '"'


def _cluster_id(key: str, number: int) -> str:
    """``fn_main`` for key ``main``; the number keeps ids unique when keys differ only in
    punctuation (``a.b`` and ``a_b``)."""
    word = "".join(c if c.isalnum() else "_" for c in key)
    return f"fn_{word}" if word == key else f"fn{number}_{word}"


def graph_to_dot(nodes: Iterable[GraphNode], edges: Iterable[GraphEdge], *,
                 title: str | None = None, clusters: Mapping[str, str] | None = None,
                 rankdir: str = "TB", name: str = "g",
                 graph_attrs: Mapping[str, str] | None = None) -> str:
    """Deterministic DOT text: nodes in the given order (group them by cluster, in order of
    first appearance), edges stably sorted by their source's position. ``clusters`` maps
    a node's ``cluster`` key to the frame's title; ``graph_attrs`` are more graph
    attributes (e.g. :data:`~ssa_course.viz.options.BOUNDED_LAYOUT`). Unknown edge ends
    raise ValueError."""
    nodes = list(nodes)
    index = {node.id: i for i, node in enumerate(nodes)}
    if len(index) != len(nodes):
        raise ValueError("two graph nodes share an id")
    edges = list(edges)
    for edge in edges:
        for end in (edge.src, edge.dst):
            if end not in index:
                raise ValueError(f"edge {edge.src} -> {edge.dst} names an unknown node {end}")
    edges.sort(key=lambda e: index[e.src])

    import pydot  # here, not at the top: importing the drawing layer needs no pydot

    graph = pydot.Dot(name, graph_type="digraph")
    graph.set("rankdir", rankdir)
    graph.set("fontname", "monospace")
    graph.set_node_defaults(fontname="monospace", fontsize="10")
    if any(edge.at_head for edge in edges):  # input slots: a little off the arrow head
        graph.set_edge_defaults(fontname="monospace", fontsize="9", labeldistance="1.6",
                                labelfontcolor='"#555555"')
    else:
        graph.set_edge_defaults(fontname="monospace", fontsize="9")
    if title:
        graph.set("label", _quote(title))
        graph.set("labelloc", "t")
    for key, value in (graph_attrs or {}).items():
        graph.set(key, value)
    vertical = rankdir in ("TB", "BT")
    frames: dict[str, pydot.Cluster] = {}
    for node in nodes:
        parent: pydot.Graph = graph
        if node.cluster is not None:
            if node.cluster not in frames:
                title_text = (clusters or {}).get(node.cluster, node.cluster)
                frames[node.cluster] = pydot.Cluster(
                    _cluster_id(node.cluster, len(frames)), label=_quote(title_text))
                # (pydot types the argument as a Subgraph; a Cluster is what it documents)
                graph.add_subgraph(frames[node.cluster])  # type: ignore[arg-type]
            parent = frames[node.cluster]
        # (pydot's attributes are typed Any: a str here, or it reads ``obj_dict`` as one)
        attrs: dict[str, Any] = {"label": node_label(node, vertical), "shape": node.shape}
        if node.emphasis:
            attrs["penwidth"] = "2"
        if node.fill:
            attrs["style"] = "filled"
            attrs["fillcolor"] = _quote(node.fill)
        if node.small:
            attrs.update(fontsize="8", height="0.2", width="0.3", margin="0.03")
        parent.add_node(pydot.Node(_quote(node.id), **attrs))
    for edge in edges:
        attrs = {}  # (the same dict type as the nodes')
        if edge.label:
            attrs["headlabel" if edge.at_head else "label"] = _quote(edge.label)
        if edge.style != "solid":
            attrs["style"] = edge.style
        if edge.color:
            attrs["color"] = _quote(edge.color)
        if not edge.constraint:
            attrs["constraint"] = "false"
        if edge.weight != 1:
            attrs["weight"] = str(edge.weight)
        if edge.penwidth is not None:
            attrs["penwidth"] = edge.penwidth
        graph.add_edge(pydot.Edge(_quote(edge.src), _quote(edge.dst), **attrs))
    return graph.to_string()


def graph_drawing(nodes: Iterable[GraphNode], edges: Iterable[GraphEdge], **options) -> Drawing:
    """:func:`graph_to_dot` wrapped in a :class:`Drawing` (``options`` as for it)."""
    return Drawing(graph_to_dot(nodes, edges, **options))


# ---------------------------------------------------------------- CFGs


