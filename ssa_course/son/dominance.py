"""Dominance of control nodes, computed once per round of the iterative peepholes (#22).

Two rules read the dominator tree of a finished graph: an ``If`` whose test a dominating
``If`` already made (``if (c) { if (c) ... }``) and a ``Phi`` input that a dominating
``x == K`` proves constant (:mod:`ssa_course.son.control`). While the parser builds a
graph they walk up immediate dominators a bounded number of steps (the graph is still
growing); once it is finished, the iterative driver (:mod:`ssa_course.son.iterate`)
installs a :class:`ControlDominance` on the graph (``graph.dom``) and the same questions
cost two comparisons each: "which If on ``pred`` has a side that dominates here" looks at
the users of ``pred`` (a few), and "does that side dominate here" compares the tree's
pre/post numbers (:class:`ssa_course.quads.domtree.Dominance`, Semi-NCA).

Why one tree per round is sound. Within a round the peepholes only *remove* control
edges (a dead path leaves its Region, a dead exit leaves Stop) or *contract* control
nodes into a node that dominated them (the live side of a decided If becomes the If's
control, a one-path Region its path, an empty diamond the control above its If). Every
path of the new graph is then the image of a path of the old one, so what dominated a
node before still dominates it: a fact the old tree gives is true of the new graph. A
node made during the round (a Loop turned Region) is not in the tree and gets no facts.
The tree may miss facts the changed graph would give: when the worklist runs dry and
control changed (``Graph.control_version``), the driver computes a new tree and looks
again at every node that asked the old one (:attr:`ControlDominance.watchers`), so the
fixed point the driver reaches is one for the tree of the final graph.
"""

from __future__ import annotations

from ssa_course.quads.domtree import Dominance
from ssa_course.son.control import If, Loop, Proj, goes_to
from ssa_course.son.graph import Graph, Node


class ControlDominance:
    """The dominator tree of ``graph``'s control nodes reachable from Start (by id), with
    the nodes that asked it something (looked at again when the tree is replaced)."""

    __slots__ = ("version", "pre", "post", "watchers")

    def __init__(self, graph: Graph):
        start = graph.start
        assert start is not None, "an unfinished graph"
        # The version the tree was made at: the driver compares it with the graph's to know
        # whether control changed since (then a fresh tree may give more facts).
        self.version = graph.control_version
        # The CFG of control nodes, by id, along the one rule every control walk follows
        # (goes_to); only what Start reaches is in it -- an unreachable node gets no facts.
        succs: dict[int, list[int]] = {}
        work = [start]
        seen = {start.id}
        while work:
            n = work.pop()
            kids: list[int] = []
            for u in n.outputs:
                if goes_to(n, u):
                    kids.append(u.id)
                    if u.id not in seen:
                        seen.add(u.id)
                        work.append(u)
            succs[n.id] = kids
        # The quads' dominator code, reused (one idea, one place): it only needs successors.
        tree = Dominance(succs, start.id)
        self.pre: dict[int, int] = tree.pre
        self.post: dict[int, int] = tree.post
        self.watchers: dict[int, Node] = {}

    def watch(self, node: Node) -> None:
        """``node``'s rule read this tree: look at it again when the tree is replaced."""
        self.watchers[node.id] = node

    def dominates(self, a: Node, b: Node) -> bool:
        """Does control node ``a`` dominate ``b``? False when either was not reachable
        (or not there) when the tree was made."""
        pa = self.pre.get(a.id)
        pb = self.pre.get(b.id)
        # Nested intervals: ``a`` dominates ``b`` when ``b`` is visited within ``a``'s subtree,
        # two integer comparisons instead of a walk up the tree.
        return pa is not None and pb is not None and pa <= pb \
            and self.post[b.id] <= self.post[a.id]

    def test_at(self, pred: Node, ctrl: Node | None) -> bool | None:
        """True or False when a side of an If on ``pred`` dominates ``ctrl`` (the nearest
        such side if several do); None when none does."""
        if ctrl is None or ctrl.id not in self.pre:
            return None
        best: Proj | None = None
        for iff in pred.outputs:
            # Only Ifs testing ``pred`` itself: GVN made equal tests one node, so identity is
            # enough, and the users of ``pred`` are few -- no search of the tree.
            if not isinstance(iff, If) or iff.inputs[1] is not pred:
                continue
            # Of several dominating sides the latest in preorder is the nearest: the
            # dominators of one node form a chain, ordered by preorder number.
            for side in iff.outputs:
                if isinstance(side, Proj) and side.index in (0, 1) \
                        and self.dominates(side, ctrl) \
                        and (best is None or self.pre[side.id] > self.pre[best.id]):
                    best = side
        return None if best is None else best.index == 0

    def loop_head(self, region: Node) -> bool:
        """A Loop, or a Region that dominates one of its own paths (a back edge); True
        too when the tree does not know the Region or a path (no claim either way)."""
        # "Maybe a loop head" is the safe answer: a rule that must not run at a loop head
        # then does nothing.
        if isinstance(region, Loop) or region.id not in self.pre:
            return True
        return any(p is None or p.id not in self.pre or self.dominates(region, p)
                   for p in region.inputs[1:])


def install(graph: Graph) -> ControlDominance:
    """Compute the tree for ``graph`` as it is now and let its rules use it."""
    graph.dom = ControlDominance(graph)
    return graph.dom
