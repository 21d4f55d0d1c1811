"""Graphs as DOT text (built with pydot), and the CFG drawings every lesson shows.

The generic part is two small dataclasses and one function: describe a graph as
:class:`GraphNode`\\ s and :class:`GraphEdge`\\ s in the order you want them laid out, and
:func:`graph_to_dot` gives DOT text that is byte-for-byte the same for the same graph;
:func:`graph_drawing` wraps it in a :class:`~ssa_course.viz.render.Drawing` for notebooks.
Later representations (SSA, the sea of nodes) describe their graphs the same way.

:func:`cfg_to_dot` draws one quads CFG: a box per basic block with the block name as its
header and one instruction per left-aligned line, ``T``/``F`` on the two edges of a
``br``, a dashed edge from an ``enter`` to its handler, and unreachable blocks greyed.
:func:`program_cfg_dot` draws every function of a program, one cluster each.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import pydot

from ssa_course.viz.options import DrawOptions, options_or_default
from ssa_course.viz.render import Drawing, RenderError, dot_available

__all__ = [
    "Drawing", "GraphEdge", "GraphNode", "RenderError", "cfg_graph", "cfg_to_dot",
    "dot_available", "graph_drawing", "graph_to_dot", "program_cfg_dot",
]

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
    frames: dict[str, pydot.Subgraph] = {}
    for node in nodes:
        parent: pydot.Dot | pydot.Subgraph = graph
        if node.cluster is not None:
            if node.cluster not in frames:
                title_text = (clusters or {}).get(node.cluster, node.cluster)
                frames[node.cluster] = pydot.Cluster(
                    _cluster_id(node.cluster, len(frames)), label=_quote(title_text))
                graph.add_subgraph(frames[node.cluster])
            parent = frames[node.cluster]
        attrs = {"label": node_label(node, vertical), "shape": node.shape}
        if node.emphasis:
            attrs["penwidth"] = "2"
        if node.fill:
            attrs["style"] = "filled"
            attrs["fillcolor"] = _quote(node.fill)
        if node.small:
            attrs.update(fontsize="8", height="0.2", width="0.3", margin="0.03")
        parent.add_node(pydot.Node(_quote(node.id), **attrs))
    for edge in edges:
        attrs = {}
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


def _edge_label(term, succ: str) -> tuple[str, str]:
    """(label, style) of the edge from a block ending in ``term`` to ``succ``."""
    if term is None or not term.labels:
        return "", "solid"
    if term.op == "br":
        names = ["T" if succ == term.labels[0] else "", "F" if succ == term.labels[-1] else ""]
        return "/".join(n for n in names if n), "solid"
    if term.op == "enter" and len(term.labels) > 1 and succ == term.labels[1] \
            and succ != term.labels[0]:
        return "handler", "dashed"
    return "", "solid"


def cfg_graph(cfg, prefix: str = "", cluster: str | None = None
              ) -> tuple[list[GraphNode], list[GraphEdge]]:
    """Nodes and edges of one CFG, in layout order (``prefix`` keeps ids unique when
    several functions share a picture)."""
    from ssa_course.quads.bril import format_instr

    live = cfg.reachable()
    nodes = [GraphNode(prefix + block.name, header=f"{block.name}:",
                       lines=tuple(format_instr(instr) for instr in block.instrs),
                       emphasis=block.name == cfg.entry,
                       fill=None if block.name in live else UNREACHABLE_FILL,
                       cluster=cluster, kind="block")
             for block in cfg.blocks.values()]
    edges: list[GraphEdge] = []
    for block in cfg.blocks.values():
        term = block.terminator
        for succ in block.succs:
            label, style = _edge_label(term, succ)
            edges.append(GraphEdge(prefix + block.name, prefix + succ, label, style,
                                   kind="flow"))
        thrown = getattr(block, "throws_to", None)
        if thrown is not None and thrown not in block.succs:
            edges.append(GraphEdge(prefix + block.name, prefix + thrown, "throws", "dotted"))
    return nodes, edges


def cfg_to_dot(cfg, title: str | None = None) -> str:
    """DOT text of one function's CFG (deterministic: blocks in layout order)."""
    nodes, edges = cfg_graph(cfg)
    return graph_to_dot(nodes, edges, title=title or f"@{cfg.function.name}", name="cfg")


def program_cfg_dot(cfgs: Mapping[str, object], title: str | None = None,
                    options: DrawOptions | None = None) -> str:
    """DOT text of the functions' CFGs (name -> CFG) that ``options`` picks (by default
    all of them unless they are over the node budget together, then ``main``), one
    framed cluster per function; ``around`` names a block (``L3``) of that function."""
    from ssa_course.viz.select import reduce_graph, with_caption

    options = options_or_default(options)
    names = options.pick_functions(list(cfgs), {n: len(c.blocks) for n, c in cfgs.items()})
    nodes: list[GraphNode] = []
    edges: list[GraphEdge] = []
    for fn_name in names:
        more_nodes, more_edges = cfg_graph(cfgs[fn_name], prefix=f"@{fn_name}/",
                                           cluster=fn_name)
        nodes.extend(more_nodes)
        edges.extend(more_edges)
    reduced = reduce_graph(nodes, edges, options, prefix=f"@{names[0]}/")
    notes = [reduced.caption] if reduced.caption else []
    others = [n for n in cfgs if n not in names]
    if others:
        notes.insert(0, f"function {', '.join(names)} (not drawn: {', '.join(others)}; "
                        "pick one with function=)")
    clusters = {fn_name: f"@{fn_name}" for fn_name in names}
    return graph_to_dot(reduced.nodes, reduced.edges,
                        title=with_caption(title, "; ".join(notes)), clusters=clusters,
                        name="cfg", graph_attrs=reduced.graph_attrs)
