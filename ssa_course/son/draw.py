"""The sea of nodes as a DOT drawing (lessons 05-07).

The style readers know from the literature -- control nodes are yellow boxes joined by
bold red control edges (a heavy spine), memory edges blue, dashed and thin, data edges
plain; each input slot's index sits at the arrow head, nodes carry their id, and the
program's source is a comment at the top of the DOT text. What is drawn follows a
:class:`~ssa_course.viz.options.DrawOptions`: one function, the region around a node, a
node budget, constants and parameters at their users, frames for GCM's blocks.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Protocol

from ssa_course.son.control import Never, Phi, Proj, Region, Start, Stop
from ssa_course.son.data import Constant
from ssa_course.son.graph import Node
from ssa_course.son.program import FunctionGraph, SeaOfNodes
from ssa_course.tiny.lexer import split_lines
from ssa_course.viz.dot import GraphEdge, GraphNode, graph_to_dot
from ssa_course.viz.options import DrawOptions, options_or_default
from ssa_course.viz.palette import (
    CHANGED_FILL,
    CONSTANT_FILL,
    CONTROL_COLOR,
    CONTROL_FILL,
    DEAD_FILL,
    MEMORY_COLOR,
    MEMORY_FILL,
    PHI_FILL,
)
from ssa_course.viz.select import Choice, choose, reduce_graph, with_caption


def _is_memory(node: Node) -> bool:
    return node.type.kind == "mem"


def _style(node: Node) -> tuple[str, str | None, bool]:
    """(shape, fill, emphasis) of a node."""
    # Boxes for what runs where it is (control, pinned effects), ellipses for values that
    # float: the drawing shows at a glance what scheduling may move.
    if isinstance(node, (Start, Stop)):
        return "box", CONTROL_FILL, True
    if node.is_control:
        # A Never exit is emphasised: an edge that exists only so the loop stays reachable.
        return "box", CONTROL_FILL, isinstance(node, Never)
    if isinstance(node, Phi):
        return "ellipse", MEMORY_FILL if _is_memory(node) else PHI_FILL, False
    if isinstance(node, Constant):
        return "ellipse", CONSTANT_FILL, False
    if node.is_pinned() or _is_memory(node):
        return "box", MEMORY_FILL, False
    return "ellipse", None, False


def _label(node: Node) -> str:
    # Start's elements 2.. are the parameters: labelled by their names.
    if isinstance(node, Proj) and not node.is_control and isinstance(node.inputs[0], Start) \
            and node.index >= 2:
        return f"Parm {node.label}"
    if isinstance(node, Phi) and node.var_name:
        return f"Phi {node.var_name}"
    detail = node.detail() if not isinstance(node, Phi) else ""
    if detail and detail not in node.label:
        return f"{node.label} {detail}"
    return node.label


def _kind(node: Node) -> str:
    """The node's family for the drawing options (viz.select): what a budget keeps
    first, what is drawn at its users."""
    if node.is_control:
        return "control"
    if isinstance(node, Constant):
        return "constant"
    if isinstance(node, Proj) and isinstance(node.inputs[0], Start) and node.index >= 2 \
            and not _is_memory(node):
        return "param"
    if isinstance(node, Phi):
        return "memory" if _is_memory(node) else "phi"
    if node.is_pinned() or _is_memory(node):
        return "memory"
    return "data"


def graph_parts(fg: FunctionGraph, prefix: str = "", cluster: str | None = None,
                only: set[str] | None = None) -> tuple[list[GraphNode], list[GraphEdge]]:
    """The drawing's nodes and edges for ``fg`` (ids ``prefix`` + node id), or for the
    nodes whose ids are in ``only``."""
    nodes: list[GraphNode] = []
    edges: list[GraphEdge] = []
    for node in fg.nodes():
        if only is not None and f"{prefix}{node.id}" not in only:
            continue
        shape, fill, emphasis = _style(node)
        nodes.append(GraphNode(f"{prefix}{node.id}", _label(node), (f"#{node.id}",),
                               shape, emphasis, fill, cluster, _kind(node)))
        # One edge per input slot, labelled with the slot's index at the arrow head: the order
        # of inputs is meaning (a Phi's input i belongs to its Region's path i).
        for i, inp in enumerate(node.inputs):
            if inp is None or only is not None and f"{prefix}{inp.id}" not in only:
                continue
            if isinstance(node, Constant) or isinstance(node, Proj) and not node.is_control \
                    and isinstance(inp, Start) and node.type.kind != "mem":
                style, color, kind = "dotted", "#999999", "leaf"  # hangs off Start
            elif isinstance(node, Phi) and i == 0:
                style, color, kind = "dotted", CONTROL_COLOR, "region"  # a phi's region
            elif inp.is_control and (i == 0 or isinstance(node, (Region, Stop))):
                # control into control is the spine (weighed heavy); into a pinned
                # node (a store, an allocation) it is not: dozens can fan out of one
                style, color = "bold", CONTROL_COLOR
                kind = "control" if node.is_control else "pin"
            elif _is_memory(inp):
                style, color, kind = "dashed", MEMORY_COLOR, "memory"
            else:
                style, color, kind = "solid", None, "data"
            # a loop phi's back-edge input does not push the phi below the loop body
            back = isinstance(node, Phi) and i > 0 and isinstance(node.inputs[0], Region) \
                and inp.id > node.id
            # A later node as input (ids are creation order) can only be a loop's back value: not
            # letting it constrain the layout keeps the loop body below its head.
            edges.append(GraphEdge(f"{prefix}{inp.id}", f"{prefix}{node.id}", str(i), style,
                                   color, constraint=not back, kind=kind, at_head=True))
    return nodes, edges


def _block_clusters(fg: FunctionGraph, prefix: str, nodes: list[GraphNode],
                    fn_label: str) -> tuple[list[GraphNode], dict[str, str]]:
    """``nodes`` framed by the block global code motion puts them in (a Select of a
    split Phi goes with its Phi); Stop and never-scheduled nodes stay outside."""
    from ssa_course.son.gcm import schedule

    sched = schedule(fg)
    where: dict[int, str] = dict(sched.block_of)
    for node in fg.nodes():
        if node.is_control and node.id not in where and not isinstance(node, Stop):
            head: Node | None = node  # a branch's projection heads a block: walk up to it
            while head is not None and head.id not in sched.owner:
                head = head.inputs[0] if head.inputs else None
            if head is not None:
                where[node.id] = sched.owner[head.id]
    out, titles = [], {}
    for gn in nodes:
        # A Select's id is its Phi's id with a suffix: it is framed with its Phi.
        node_id = gn.id[len(prefix):].split(".", 1)[0]
        block = where.get(int(node_id)) if node_id.isdigit() else None
        if block is None:
            out.append(gn)
            continue
        key = f"{prefix}{block}"
        titles[key] = f"{fn_label}{block}"
        out.append(replace(gn, cluster=key))
    return out, titles


def _choose_in(fg: FunctionGraph, options: DrawOptions) -> Choice:
    """viz.select's choice of what to draw, made on ``fg``'s nodes and inputs."""
    nodes = fg.nodes()
    ids = [str(n.id) for n in nodes]
    kinds = {str(n.id): _kind(n) for n in nodes}
    pairs = [(str(i.id), str(n.id)) for n in nodes for i in n.inputs if i is not None]
    return choose(ids, kinds, pairs, options)


class Parts(Protocol):
    """What :func:`program_dot` draws of one function: ``(nodes, edges)`` with ids
    ``prefix`` + node id, in frame ``cluster``, only the ids in ``only`` (None: all)."""

    def __call__(self, fg: FunctionGraph, prefix: str, cluster: str | None,
                 only: set[str] | None = None) -> tuple[list[GraphNode], list[GraphEdge]]:
        ...


def program_dot(program: SeaOfNodes, parts: Parts, title: str | None,
                options: DrawOptions | None = None) -> str:
    """One drawing of the functions ``options`` picks, each drawn by
    ``parts(fg, prefix, cluster) -> (nodes, edges)``: a frame per function when there are
    several (node ids prefixed by its name), reduced as ``options`` says (viz.select)."""
    options = options_or_default(options)
    names = options.pick_functions(list(program.functions),  # sizes: no need to sort
                                   {n: len(fg.graph.nodes) for n, fg in program.functions.items()})
    several = len(names) > 1
    chosen = None
    if not several:  # choose on the graph itself: cheaper than on a thousand GraphNodes
        chosen = _choose_in(program.functions[names[0]], options)
    nodes: list[GraphNode] = []
    edges: list[GraphEdge] = []
    clusters: dict[str, str] = {}
    for name in names:
        fg = program.functions[name]
        prefix = f"{name}." if several else ""
        part_nodes, part_edges = parts(fg, prefix, name if several else None,
                                       only=chosen.keep if chosen else None)
        if options.blocks:
            part_nodes, titles = _block_clusters(fg, prefix, part_nodes,
                                                 f"fn {name}: " if several else "")
            clusters.update(titles)
        nodes += part_nodes
        edges += part_edges
        if several:
            clusters[name] = f"fn {name}"
    # The choice was made on the graph; the drawing's own nodes may differ (a split Phi's
    # Selects), so the edges are filtered to what is actually drawn.
    if chosen is not None and chosen.keep is not None:
        shown = {n.id for n in nodes}  # a Select's path or value may be left out
        edges = [e for e in edges if e.src in shown and e.dst in shown]
        chosen = Choice(None, chosen.center, chosen.caption)
    reduced = reduce_graph(nodes, edges, options, chosen=chosen)
    notes = [reduced.caption] if reduced.caption else []
    others = [n for n in program.functions if n not in names]
    if others:
        notes.insert(0, f"function {', '.join(names)} (not drawn: {', '.join(others)}; "
                        "pick one with function=)")
    return graph_to_dot(reduced.nodes, reduced.edges,
                        title=with_caption(title, "; ".join(notes)), clusters=clusters,
                        graph_attrs=reduced.graph_attrs)


def graphs_to_dot(program: SeaOfNodes, title: str | None = None,
                  options: DrawOptions | None = None) -> str:
    """One drawing for the program (by default ``main`` alone when the whole program is
    over the node budget): a frame per function when there are several."""
    from ssa_course.son.printer import summary  # the text half imports this module

    dot = program_dot(program, graph_parts, title or summary(program), options)
    # The source in the DOT text: a drawing saved on its own still says what it is of.
    comment = "".join(f"// {line}\n" for line in split_lines(program.source.rstrip()))
    return comment + dot


# ------------------------------------------------ the stepping stone: Select + Compose


def select_compose_parts(fg: FunctionGraph, prefix: str = "", cluster: str | None = None,
                         only: set[str] | None = None
                         ) -> tuple[list[GraphNode], list[GraphEdge]]:
    """The graph with every Phi split as the paper's first step did: one ``Select`` per
    incoming path (its control and the value on that path: the value, or *no value* when
    that path did not run) and a ``Compose`` passing on whichever Select has a value."""
    nodes, edges = graph_parts(fg, prefix, cluster, only)
    phis = {f"{prefix}{n.id}": n for n in fg.nodes() if isinstance(n, Phi)
            and (only is None or f"{prefix}{n.id}" in only)}
    nodes = [n for n in nodes if n.id not in phis]
    edges = [e for e in edges if e.dst not in phis]
    for pid, phi in phis.items():
        name = phi.var_name or ""
        nodes.append(GraphNode(pid, f"Compose {name}".strip(), (f"#{phi.id}",), "ellipse",
                               False, PHI_FILL, cluster, "phi"))
        region = phi.operand(0)
        for i, value in enumerate(phi.inputs[1:], start=1):
            path = region.inputs[i] if i < len(region.inputs) else None
            if value is None or path is None:
                continue
            sid = f"{pid}.sel{i}"
            nodes.append(GraphNode(sid, "Select", (f"#{phi.id}.{i}",), "ellipse", False,
                                   PHI_FILL, cluster, "phi"))
            # Each Select reads its path's control (slot 0) and that path's value (slot 1).
            edges.append(GraphEdge(f"{prefix}{path.id}", sid, "0", "bold", CONTROL_COLOR,
                                   kind="control", at_head=True))
            edges.append(GraphEdge(f"{prefix}{value.id}", sid, "1",
                                   "dashed" if _is_memory(value) else "solid",
                                   MEMORY_COLOR if _is_memory(value) else None,
                                   constraint=value.id < phi.id,
                                   kind="memory" if _is_memory(value) else "data",
                                   at_head=True))
            edges.append(GraphEdge(sid, pid, str(i), kind="data", at_head=True))
    return nodes, edges


def select_compose_dot(program: SeaOfNodes, title: str | None = None,
                       options: DrawOptions | None = None) -> str:
    return program_dot(program, select_compose_parts, title, options)


# ------------------------------------------------ pessimistic vs optimistic (lesson 07)


def compare_dot(program: SeaOfNodes, mode: str, title: str | None = None,
                table: dict[Any, Any] | None = None, options: DrawOptions | None = None) -> str:
    """The drawing with types of ``mode`` under each label; nodes the two modes type
    differently are orange, nodes SCCP proves dead grey (in both pictures: the
    pessimistic one shows what SCCP will remove)."""
    from ssa_course.son.printer import compare, compare_summary

    table = table or compare(program)

    def parts(fg: FunctionGraph, prefix: str, cluster: str | None,
              only: set[str] | None = None) -> tuple[list[GraphNode], list[GraphEdge]]:
        result, changed, dead = table[fg.name]
        part_nodes, part_edges = graph_parts(fg, prefix, cluster, only)
        by_id = {n.id: n for n in fg.nodes()}
        shown = []
        for gn in part_nodes:
            node = by_id[int(gn.id[len(prefix):])]
            t = result.types.get(node.id) if mode == "optimistic" else node.type
            fill = CHANGED_FILL if node.id in changed else gn.fill
            if node.id in dead:
                fill = DEAD_FILL
            # A control node's type says only live or dead: not worth a line of its own.
            lines = gn.lines if node.is_control else (*gn.lines, str(t))
            shown.append(replace(gn, lines=lines, fill=fill))
        return shown, part_edges

    # The summary already names both modes ("pessimistic: ... | optimistic (SCCP): ..."):
    # the title says which one's types the nodes show, then each half of the summary on a
    # line of its own.
    summary = compare_summary(program, table).replace(" | ", "\n")
    shown = f"types of the {mode} analysis\n{summary}"
    return program_dot(program, parts, title or shown, options)
