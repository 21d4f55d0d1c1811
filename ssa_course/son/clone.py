"""An exact copy of a sea of nodes: same node ids, same edge order, same types.

A stage that starts where another one ended (``son-ranges`` starts from ``son-opt``'s
graph: the parser's graph after SCCP) copies that graph instead of building and
optimizing it again -- the copy is what building it again would make, node for node,
and the original (a cached artifact that others print and draw) is left alone.

The copy is iterative (no recursion a deep graph could overflow). A node's slots hold
its graph, its edges (``inputs``, ``outputs``) and plain values (types, names, numbers,
lists of them); every node reference, in a slot or in a list, tuple or dict of one, is
mapped to the copy's node.
"""

from __future__ import annotations

import copy

from ssa_course.son.control import Start, Stop
from ssa_course.son.graph import Graph, Node
from ssa_course.son.program import FunctionGraph, SeaOfNodes

# Nodes have no __dict__ (graph.py): the fields to copy are the slots of the class and
# of its bases, cached per class.
_SLOTS: dict[type, tuple[str, ...]] = {}


def _slots(cls: type) -> tuple[str, ...]:
    """Every slot of ``cls`` and its bases, once each."""
    found = _SLOTS.get(cls)
    if found is None:
        names: dict[str, None] = {}
        for klass in reversed(cls.__mro__):
            slots = klass.__dict__.get("__slots__", ())
            for name in (slots,) if isinstance(slots, str) else slots:
                if name not in ("__dict__", "__weakref__"):
                    names[name] = None
        found = _SLOTS[cls] = tuple(names)
    return found


def _mapped(value: object, nodes: dict[int, Node]) -> object:
    """``value`` with every node of the old graph replaced by its copy (containers are
    copied, one level of nesting inside them too; anything else is immutable or shared)."""
    # Every node reference is mapped, wherever it sits: a copy sharing a node with the
    # original would let an edit of one graph reach the other.
    if isinstance(value, Node):
        return nodes[id(value)]
    if isinstance(value, list):
        return [_mapped(v, nodes) for v in value]
    if isinstance(value, tuple):
        return tuple(_mapped(v, nodes) for v in value)
    if isinstance(value, dict):
        return {k: _mapped(v, nodes) for k, v in value.items()}
    if isinstance(value, set):
        return {_mapped(v, nodes) for v in value}
    return value


def clone_graph(graph: Graph) -> tuple[Graph, dict[int, Node]]:
    """A copy of ``graph`` and the map ``id(old node) -> new node``."""
    new = Graph(graph.name)
    nodes: dict[int, Node] = {}
    olds = list(graph.nodes.values())
    # First make every twin (empty), then fill them: edges can then point at twins that
    # exist, in any order, with no recursion.
    for old in [*olds, graph.start, graph.stop]:
        if old is not None and id(old) not in nodes:
            nodes[id(old)] = object.__new__(type(old))
    # nodes out of the graph's table (killed, but still someone's input, or waiting in
    # ``deps`` to be looked at again) are copied too
    work = [n for old in olds for n in (*old.inputs, *old.outputs) if n is not None]
    work += [n for d in graph.deps.values() for n in d.values()]
    while work:
        n = work.pop()
        if id(n) not in nodes:
            nodes[id(n)] = object.__new__(type(n))
            olds.append(n)
            work.extend(m for m in (*n.inputs, *n.outputs) if m is not None)
    for old in olds:
        twin = nodes[id(old)]
        for name in _slots(type(old)):
            if not hasattr(old, name):
                continue
            value = getattr(old, name)
            # The graph, the edges, the rest: the edge lists keep their order (the same user order
            # is what makes the copy behave exactly as the original).
            if name == "graph":
                value = new if value is graph else value
            elif name == "inputs":
                value = [None if n is None else nodes[id(n)] for n in value]
            elif name == "outputs":
                value = [nodes[id(n)] for n in value]
            else:
                value = _mapped(value, nodes)
            setattr(twin, name, value)
    # The same next id: nodes made in the copy get the ids they would have got in the
    # original, so printed graphs match.
    new.next_id = graph.next_id
    new.nodes = {i: nodes[id(n)] for i, n in graph.nodes.items()}
    new.start = None if graph.start is None else nodes[id(graph.start)]
    new.stop = None if graph.stop is None else nodes[id(graph.stop)]
    new.line = graph.line
    new.lines = dict(graph.lines)
    new.in_bounds = set(graph.in_bounds)
    new.deps = {i: {j: nodes[id(n)] for j, n in d.items()} for i, d in graph.deps.items()}
    # A copy of a settled graph is settled as well (son/iterate.py's ``Settled`` reads the
    # counts, the edit counter and the types, all the same in the copy).
    new.edits = graph.edits
    new.settled = graph.settled
    return new, nodes


def clone_function(fg: FunctionGraph) -> FunctionGraph:
    graph, nodes = clone_graph(fg.graph)
    start, stop = nodes[id(fg.start)], nodes[id(fg.stop)]
    assert isinstance(start, Start) and isinstance(stop, Stop)  # a twin has its class
    return FunctionGraph(fg.name, graph, start, stop, list(fg.params), fg.returns,
                         fg.optimized, copy.copy(fg.stats))


def clone_program(program: SeaOfNodes) -> SeaOfNodes:
    """A copy of a whole program, every function's graph copied; ``facts`` (what a
    drawing of the original would show) is not carried over."""
    return SeaOfNodes({name: clone_function(fg) for name, fg in program.functions.items()},
                      program.source, program.optimized,
                      None if program.sccp_counts is None else dict(program.sccp_counts))


def copy_nodes(olds: list[Node], graph: Graph, fixed: dict[int, Node],
               lines: dict[int, int], line: int = 0) -> dict[int, Node]:
    """Copies of ``olds`` (nodes of another graph, in id order) made in ``graph`` with new
    ids; an edge to a node outside ``olds`` goes to ``fixed[id(node)]`` (the inliner maps
    the callee's Start and its projections to the call and its inputs). Each copy keeps
    its original's source line (``lines``), else gets ``line``. Returns ``id(old) ->
    copy`` (the fixed entries included)."""
    nodes: dict[int, Node] = dict(fixed)
    for old in olds:  # every twin first (in id order: ids stay creation order)
        nodes[id(old)] = object.__new__(type(old))
    for old in olds:
        twin = nodes[id(old)]
        for name in _slots(type(old)):
            if name in ("inputs", "outputs"):  # empty: the edges are added below
                setattr(twin, name, [])
            elif name == "graph":
                setattr(twin, name, graph)
            elif name != "id" and hasattr(old, name):
                setattr(twin, name, _mapped(getattr(old, name), nodes))
        graph.register(twin)
        graph.lines[twin.id] = lines.get(old.id, line)
    for old in olds:  # through Node's own method: inputs and users stay mirror images
        twin = nodes[id(old)]
        for n in old.inputs:
            twin.add_input(None if n is None else nodes[id(n)])
    return nodes
