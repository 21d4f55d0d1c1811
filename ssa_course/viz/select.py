"""Drawing less, on purpose: the region around a node, a node budget, constants at users.

Every producer describes its whole graph as :class:`~ssa_course.viz.dot.GraphNode`\\ s and
:class:`~ssa_course.viz.dot.GraphEdge`\\ s with a ``kind`` each; :func:`reduce_graph` then
applies a :class:`~ssa_course.viz.options.DrawOptions`:

1. ``around``: keep the nodes at most ``radius`` edges (either direction) from one node;
2. ``budget``: keep the control spine first, then the nodes nearest to it (a breadth-first
   walk from the control nodes, in drawing order) -- or, when the spine alone would take
   more than half the budget, a prefix of the program: each control node with the data
   within two edges of it -- and say in a caption what was left out;
3. leaves (constants, parameters): each is drawn as a small copy next to every user that
   is shown, instead of one node with an edge from Start to it and edges to every user;
4. edge weights: control edges heavy (the spine stays straight), memory edges thin or
   hidden.

Leaves are not counted against the budget: their copies hang off one node each and cost
Graphviz nothing to place.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterable
from dataclasses import dataclass, replace

from ssa_course.errors import UsageError
from ssa_course.viz.dot import GraphEdge, GraphNode
from ssa_course.viz.options import BOUNDED_FROM, BOUNDED_LAYOUT, DrawOptions

LEAF_KINDS = frozenset({"constant", "param"})
SPINE_WEIGHT = 8
THIN = "0.5"


@dataclass(slots=True)
class Reduced:
    """What is left to draw, the caption saying what was left out (or None), and the
    graph attributes that bound the layout (empty for a small graph)."""

    nodes: list[GraphNode]
    edges: list[GraphEdge]
    caption: str | None
    graph_attrs: dict[str, str]


@dataclass(slots=True)
class Choice:
    """Which nodes to draw: ``keep`` (None: all), the ``around`` node's id (its leaf is
    drawn whole, not inlined), and the caption naming what was left out."""

    keep: set[str] | None
    center: str | None
    caption: str | None


def _adjacency(pairs: Iterable[tuple[str, str]], skip: set[str]) -> dict[str, list[str]]:
    adj: dict[str, list[str]] = {}
    for src, dst in pairs:
        if src in skip or dst in skip:
            continue
        adj.setdefault(src, []).append(dst)
        adj.setdefault(dst, []).append(src)
    return adj


def find_center(ids: list[str], around: str, prefix: str = "") -> str:
    """The id of the node ``around`` names (``12``, ``%12``, ``#12`` or a block name,
    after ``prefix``); a :class:`UsageError` when there is none."""
    known = set(ids)
    for name in (around, around.lstrip("%#")):
        if prefix + name in known:
            return prefix + name
    some = ", ".join(i[len(prefix):] for i in ids[:6] if i.startswith(prefix))
    raise UsageError(f"around={around!r}: no such node in this drawing "
                     f"(its nodes are named like {some}, ...)")


def region(adj: dict[str, list[str]], center: str, radius: int) -> set[str]:
    """Ids at most ``radius`` edges from ``center`` in ``adj`` (edges either way)."""
    seen = {center: 0}
    queue = deque([center])
    while queue:
        node = queue.popleft()
        if seen[node] == radius:
            continue
        for other in adj.get(node, ()):
            if other not in seen:
                seen[other] = seen[node] + 1
                queue.append(other)
    return set(seen)


def relevance_order(ids: list[str], kinds: dict[str, str], adj: dict[str, list[str]],
                    budget: int | None = None) -> list[str]:
    """Ids most relevant first. When the control nodes take at most half the budget: the
    whole control spine in drawing order, then a breadth-first walk outwards from it.
    Otherwise (a long function) a prefix of the program stays readable instead: each
    control node in drawing order followed by the data within two edges of it. Whatever
    no walk reaches comes last, in drawing order."""
    spine = [i for i in ids if kinds.get(i) == "control"]
    seen = set(spine)
    if budget is not None and len(spine) > budget // 2:
        order: list[str] = []
        for c in spine:
            order.append(c)
            near = [c]
            for _ in range(2):
                ring = []
                for x in near:
                    for other in adj.get(x, ()):
                        if other not in seen:
                            seen.add(other)
                            ring.append(other)
                order += ring
                near = ring
    else:
        order = list(spine)
    queue = deque(order)
    while queue:
        for other in adj.get(queue.popleft(), ()):
            if other not in seen:
                seen.add(other)
                order.append(other)
                queue.append(other)
    order += [i for i in ids if i not in seen]
    return order


def choose(ids: list[str], kinds: dict[str, str], pairs: list[tuple[str, str]],
           options: DrawOptions, *, prefix: str = "", hint: str = "") -> Choice:
    """Which of the nodes ``ids`` (in drawing order; ``kinds`` by id; ``pairs`` the edges)
    ``options`` draws: the region ``around`` one node, then at most ``budget`` nodes not
    counting leaves (constants and parameters, when they are drawn at their users)."""
    hint = hint or "use function= or around=, or a larger budget="
    captions = []
    keep: set[str] | None = None
    center = None
    if options.around is not None:
        center = find_center(ids, options.around, prefix)
        keep = region(_adjacency(pairs, set()), center, options.radius)
        ids = [i for i in ids if i in keep]
        captions.append(f"around {options.around}, radius {options.radius}")
    leaves = {i for i in ids if kinds.get(i) in LEAF_KINDS and i != center} \
        if options.inline_leaves else set()
    counted = len(ids) - len(leaves)
    if options.budget is not None and counted > options.budget:
        inside = keep
        adj = _adjacency(((a, b) for a, b in pairs if inside is None
                          or (a in inside and b in inside)), leaves)
        order = [i for i in relevance_order(ids, kinds, adj, options.budget)
                 if i not in leaves]
        keep = set(order[:options.budget]) | leaves
        left = [kinds.get(i, "") for i in order[options.budget:]]
        captions.append(_caption(options.budget, left, hint))
    return Choice(keep, center, "; ".join(captions) or None)


_PLURAL = {"block": "blocks", "constant": "constants", "param": "parameters", "phi": "phis"}


def _caption(kept: int, left: list[str], hint: str) -> str:
    kinds = Counter(_PLURAL.get(kind, kind or "other") for kind in left)
    parts = ", ".join(f"{count} {kind}" for kind, count in sorted(
        kinds.items(), key=lambda kv: (-kv[1], kv[0])))
    total = kept + len(left)
    return (f"{kept} of {total} nodes shown; {len(left)} left out ({parts}): "
            f"{hint}")


def _inline_leaves(nodes: list[GraphNode], edges: list[GraphEdge], keep_whole: set[str]
                   ) -> tuple[list[GraphNode], list[GraphEdge]]:
    """Each leaf node replaced by a small copy per edge to a user that is shown."""
    leaves = {n.id: n for n in nodes if n.kind in LEAF_KINDS and n.id not in keep_whole}
    if not leaves:
        return nodes, edges
    shown = {n.id for n in nodes}
    copies: dict[str, list[GraphNode]] = {}
    out_edges: list[GraphEdge] = []
    for e in edges:
        if e.dst in leaves:
            continue  # Start -> constant: the copy stands for it
        leaf = leaves.get(e.src)
        if leaf is None:
            out_edges.append(e)
            continue
        if e.dst not in shown:
            continue
        copy_id = f"{e.src}>{e.dst}.{e.label or len(copies.get(e.dst, ()))}"
        copies.setdefault(e.dst, []).append(  # the value alone: "0", "Parm n"
            GraphNode(copy_id, leaf.header, (), "box", False, leaf.fill, None, leaf.kind, True))
        out_edges.append(replace(e, src=copy_id, style="solid", color="#999999",
                                 kind="leaf"))
    out_nodes: list[GraphNode] = []
    for n in nodes:
        if n.id in leaves:
            continue
        # copies go right before their user: same cluster, laid out next to it
        out_nodes += [replace(c, cluster=n.cluster) for c in copies.get(n.id, ())]
        out_nodes.append(n)
    return out_nodes, out_edges


def _weigh(edges: list[GraphEdge], memory: str) -> list[GraphEdge]:
    out = []
    for e in edges:
        if e.kind == "control" and e.constraint:
            e = replace(e, weight=SPINE_WEIGHT)
        elif e.kind == "memory":
            if memory == "hidden":
                continue
            if memory == "thin":
                e = replace(e, penwidth=THIN, weight=0)
        out.append(e)
    return out


def reduce_graph(nodes: list[GraphNode], edges: list[GraphEdge], options: DrawOptions,
                 *, prefix: str = "", hint: str = "", chosen: Choice | None = None) -> Reduced:
    """Apply ``options`` to a whole graph (see the module docstring). ``prefix`` is put in
    front of ``options.around`` to find its node; ``hint`` ends the caption (what to do
    to see the rest); ``chosen`` is a :func:`choose` the caller made already (on a
    cheaper graph of its own)."""
    if chosen is None:
        chosen = choose([n.id for n in nodes], {n.id: n.kind for n in nodes},
                        [(e.src, e.dst) for e in edges], options, prefix=prefix, hint=hint)
    keep = chosen.keep
    if keep is not None:
        nodes = [n for n in nodes if n.id in keep]
        edges = [e for e in edges if e.src in keep and e.dst in keep]
    if options.inline_leaves:
        nodes, edges = _inline_leaves(nodes, edges,
                                      set() if chosen.center is None else {chosen.center})
    edges = _weigh(edges, options.memory)
    attrs = dict(BOUNDED_LAYOUT) if options.bounded and len(nodes) >= BOUNDED_FROM else {}
    return Reduced(nodes, edges, chosen.caption, attrs)


def with_caption(title: str | None, caption: str | None) -> str | None:
    """``title`` with ``caption`` on a line of its own below it."""
    if not caption:
        return title
    return f"{title}\n{caption}" if title else caption


def functions_to_dot(graphs: dict, sizes: dict[str, int], title: str | None,
                     options: DrawOptions, *, cluster_title, prefix, name: str,
                     around_prefix=None) -> str:
    """DOT of a program drawn one framed cluster per function: ``graphs`` maps a function
    name to a ``build(prefix, cluster) -> (nodes, edges)``; ``options`` picks the functions
    (by ``sizes``: nodes per function) and reduces the picture, whose caption says what
    was left out. ``cluster_title(fn)`` frames a function, ``prefix(fn)`` keeps ids apart,
    ``around_prefix(fn)`` (default: ``prefix``) is what ``around=`` names are read after."""
    from ssa_course.viz.dot import graph_to_dot

    names = options.pick_functions(list(graphs), sizes)
    nodes: list[GraphNode] = []
    edges: list[GraphEdge] = []
    for fn in names:
        more_nodes, more_edges = graphs[fn](prefix(fn), fn)
        nodes.extend(more_nodes)
        edges.extend(more_edges)
    reduced = reduce_graph(nodes, edges, options, prefix=(around_prefix or prefix)(names[0]))
    notes = [reduced.caption] if reduced.caption else []
    others = [n for n in graphs if n not in names]
    if others:
        notes.insert(0, f"function {', '.join(names)} (not drawn: {', '.join(others)}; "
                        "pick one with function=)")
    return graph_to_dot(reduced.nodes, reduced.edges,
                        title=with_caption(title, "; ".join(notes)),
                        clusters={fn: cluster_title(fn) for fn in names}, name=name,
                        graph_attrs=reduced.graph_attrs)
