"""What the optimistic pipeline changed: ``son-opt`` against the pessimistic ``son`` graph
(lesson 07, the explorer's pessimistic/optimistic switch).

``son-opt`` is the parser's graph rebuilt the same way (so a node the rewrites left alone
has the same id in both), then rewritten: small calls inlined, SCCP's types installed, the
iterative peepholes run to a fixed point. :func:`diff` matches the two graphs by node id:

* **removed** -- in ``son``, not live in ``son-opt`` (folded to a constant, replaced by an
  equal node, a dead side cut, a call replaced by its callee's body);
* **new** -- in ``son-opt`` only (a constant SCCP proved, a node a rewrite made: a pushed
  phi, a reassociated sum, an inlined copy);
* **retyped** -- in both, typed differently (SCCP knows more than the parser).

:func:`diff_summary` is one line (the counts of nodes, phis, loads and calls before and
after, and the rewrites that fired), :func:`diff_text` the ``son-opt`` listing with those
marks and the removed nodes' ``son`` lines, :func:`diff_dot` the drawing: new nodes in
:data:`NEW_FILL`, retyped ones in :data:`CHANGED_FILL`, the removed ones as
:data:`REMOVED_FILL` boxes without edges beside the graph (when the whole graph is
drawn; at most :data:`GHOSTS` per function).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ssa_course.son.control import Call, Phi
from ssa_course.son.draw import graph_parts, program_dot
from ssa_course.son.graph import Node
from ssa_course.son.memory import Load, LoadField
from ssa_course.son.printer import _graph_header, _node_line
from ssa_course.son.program import FunctionGraph, SeaOfNodes
from ssa_course.viz.dot import GraphEdge, GraphNode
from ssa_course.viz.options import DrawOptions
from ssa_course.viz.palette import CHANGED_FILL, NEW_FILL, REMOVED_FILL

GHOSTS = 16  # removed nodes drawn per function (the others are counted in the frame)
COUNTED = (("nodes", Node), ("phis", Phi), ("loads", (Load, LoadField)), ("calls", Call))


@dataclass(slots=True)
class FunctionDiff:
    """One function: the nodes ``son-opt`` lost, made and retyped (ids in id order)."""

    name: str
    removed: list[Node]  # the pessimistic graph's nodes
    new: set[int]
    retyped: set[int]


def _count(program: SeaOfNodes, kind: type | tuple[type, ...]) -> int:
    return sum(isinstance(n, kind) for fg in program.functions.values() for n in fg.nodes())


def diff(pessimistic: SeaOfNodes, optimistic: SeaOfNodes) -> dict[str, FunctionDiff]:
    """Each function of ``optimistic`` against the same function of ``pessimistic``."""
    out = {}
    for name, fg in optimistic.functions.items():
        before = pessimistic.functions.get(name)
        old = {n.id: n for n in before.nodes()} if before is not None else {}
        now = {n.id: n for n in fg.nodes()}
        out[name] = FunctionDiff(
            name, [n for i, n in old.items() if i not in now],
            {i for i in now if i not in old},
            # a control node's type says only live or dead: not a difference worth a mark
            {i for i, n in now.items() if i in old and not n.is_control
             and str(n.type) != str(old[i].type)})
    return out


def _counted(k: int, label: str) -> str:
    """``3 dead branches``, ``1 dead branch``: the label's first word is the plural."""
    if k != 1:
        return f"{k} {label}"
    word, _, rest = label.partition(" ")
    one = word[:-2] if word.endswith(("ches", "shes")) else word[:-1]
    return f"1 {one} {rest}".rstrip()


def fired(optimistic: SeaOfNodes) -> str:
    """The rewrites the optimistic pipeline made, by kind (only the kinds that fired)."""
    counts = optimistic.sccp_counts or {}
    names = (("inlined", "calls inlined"), ("dead branches", "branches cut"),
             ("dead paths", "paths cut"), ("constants", "constants"),
             ("gvn", "hits of GVN"), ("idealized", "idealizations"))
    parts = [_counted(counts[key], label) for key, label in names if counts.get(key)]
    return ", ".join(parts) if parts else "none"


def diff_summary(pessimistic: SeaOfNodes, optimistic: SeaOfNodes,
                 table: dict[str, FunctionDiff] | None = None) -> str:
    """One line: counts before -> after, what was removed and made, the rewrites."""
    table = table if table is not None else diff(pessimistic, optimistic)
    counts = ", ".join(f"{word} {_count(pessimistic, kind)} → {_count(optimistic, kind)}"
                       for word, kind in COUNTED)
    removed = sum(len(d.removed) for d in table.values())
    new = sum(len(d.new) for d in table.values())
    return (f"son-opt (inlining, SCCP, peepholes) against son: {counts}; {removed} removed, "
            f"{new} new; rewrites: {fired(optimistic)}")


def diff_text(pessimistic: SeaOfNodes, optimistic: SeaOfNodes,
              table: dict[str, FunctionDiff] | None = None) -> str:
    """``son-opt``'s listing, ``new`` and ``*`` (retyped) marking its lines, then per
    function the ``son`` lines of the nodes it removed."""
    table = table if table is not None else diff(pessimistic, optimistic)
    lines = [f"// {diff_summary(pessimistic, optimistic, table)}",
             "// marks: 'new' made by the optimistic pass, '*' typed differently than in son"]
    for name, fg in optimistic.functions.items():
        d = table[name]
        lines += ["", _graph_header(fg)]
        for node in fg.nodes():
            mark = " new" if node.id in d.new else (" *" if node.id in d.retyped else "")
            lines.append(_node_line(node) + mark)
        if d.removed:
            lines.append(f"  // removed from son ({len(d.removed)}):")
            lines += [f"  //{_node_line(n)}" for n in d.removed]
    return "\n".join(lines) + "\n"


def _name(node: Node) -> str:
    return f"Phi {node.var_name}" if isinstance(node, Phi) and node.var_name else node.label


def _ghosts(d: FunctionDiff, prefix: str, cluster: str | None) -> list[GraphNode]:
    shown = [GraphNode(f"{prefix}gone{n.id}", _name(n), (f"#{n.id} removed",), "box",
                       fill=REMOVED_FILL, cluster=cluster, kind="removed")
             for n in d.removed[:GHOSTS]]
    if len(d.removed) > GHOSTS:
        shown.append(GraphNode(f"{prefix}gone", "...", (f"{len(d.removed) - GHOSTS} more",),
                               "box", fill=REMOVED_FILL, cluster=cluster, kind="removed"))
    return shown


def diff_dot(pessimistic: SeaOfNodes, optimistic: SeaOfNodes,
             table: dict[str, FunctionDiff] | None = None,
             options: DrawOptions | None = None) -> str:
    """The drawing of ``son-opt`` with the marks; returns the DOT text."""
    table = table if table is not None else diff(pessimistic, optimistic)

    def parts(fg: FunctionGraph, prefix: str, cluster: str | None,
              only: set[str] | None = None) -> tuple[list[GraphNode], list[GraphEdge]]:
        d = table[fg.name]
        part_nodes, part_edges = graph_parts(fg, prefix, cluster, only)
        shown = []
        for gn in part_nodes:
            nid = int(gn.id[len(prefix):])
            fill = NEW_FILL if nid in d.new else CHANGED_FILL if nid in d.retyped else gn.fill
            shown.append(gn if fill == gn.fill else replace(gn, fill=fill))
        if only is None and d.removed:  # a reduced drawing shows a part: no frame
            shown += _ghosts(d, prefix, cluster)
        return shown, part_edges

    title = f"optimistic: {diff_summary(pessimistic, optimistic, table)}"
    return program_dot(optimistic, parts, title, options)
