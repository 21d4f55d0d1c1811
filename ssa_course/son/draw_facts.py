"""The range analysis drawn on the graph (lesson 09).

The sea of nodes as :mod:`~ssa_course.son.draw` draws it, before the checks go, with
what the analysis found written on it: every integer node shows its range, the control
edge out of each branch's projection carries the facts that hold on that side
(``i#17 < len#20``), and a bounds check the facts prove -- its If, its failing side and
its Trap -- is greyed, with the reason; a check that stays says why it stays.
"""

from __future__ import annotations

from dataclasses import replace

from ssa_course.son.bce import BceResult, trap_of
from ssa_course.son.control import If, Proj
from ssa_course.son.draw import graph_parts, program_dot
from ssa_course.son.program import FunctionGraph, SeaOfNodes
from ssa_course.son.types import INT_TOP
from ssa_course.viz.dot import GraphEdge, GraphNode
from ssa_course.viz.options import DrawOptions
from ssa_course.viz.palette import DEAD_FILL

KEPT_FILL = "#ffb347"  # a check that stays (it may fail)


def facts_summary(results: dict[str, BceResult]) -> str:
    removed = sum(len(r.removed()) for r in results.values())
    total = sum(len(r.checks) for r in results.values())
    return f"bounds checks: {total} before, {total - removed} after"


def facts_dot(program: SeaOfNodes, results: dict[str, BceResult], title: str | None = None,
              options: DrawOptions | None = None) -> str:
    """``program`` (the graph before the checks were removed) with ranges on the integer
    nodes, facts on the branch edges and the checks greyed (removed) or orange (kept)."""

    def parts(fg: FunctionGraph, prefix: str, cluster: str | None,
              only: set[str] | None = None) -> tuple[list[GraphNode], list[GraphEdge]]:
        result = results.get(fg.name)
        nodes, edges = graph_parts(fg, prefix, cluster, only)
        if result is None:
            return nodes, edges
        ra = result.analysis
        grey: dict[int, str] = {}  # node id -> fill
        reasons: dict[int, str] = {}  # If id -> why the check goes or stays
        # The check's whole failing path is coloured -- the If, its false projection and the
        # Trap -- since all three go together when the check is removed.
        for d in result.checks.values():
            iff = d.iff
            trap = trap_of(iff)
            side = trap.inputs[0] if trap is not None else None
            mark = "removed: " if d.proven else "kept: "
            for n in (iff, side, trap):
                if n is not None:
                    grey[n.id] = (DEAD_FILL if d.proven else KEPT_FILL)
            reasons[iff.id] = mark + d.why
        by_id = {n.id: n for n in fg.nodes()}
        shown = []
        for gn in nodes:
            node = by_id[int(gn.id[len(prefix):])]
            lines = gn.lines
            r = ra.ranges.get(node.id)
            # An empty range (TOP) means no value reaches the node: nothing worth writing on it.
            if r is not None and not node.is_control and r != INT_TOP:
                lines = (*lines, str(r))
            if isinstance(node, If) and node.id in reasons:
                lines = (*lines, reasons[node.id])
            fill = grey.get(node.id, gn.fill)
            shown.append(replace(gn, lines=lines, fill=fill))
        labelled = []
        for e in edges:
            src = by_id.get(int(e.src[len(prefix):]))
            facts = ra.facts.by_proj.get(src.id, []) if isinstance(src, Proj) else []
            # Facts are drawn on the control edge leaving the projection: that edge is where they
            # start to hold.
            if facts and e.kind == "control":
                text = "\n".join(f.describe() for f in facts)
                e = replace(e, label=text, at_head=False)
            labelled.append(e)
        return shown, labelled

    return program_dot(program, parts, title or facts_summary(results), options)
