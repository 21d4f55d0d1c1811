"""Iterative peepholes: simplify a finished graph until nothing changes (lessons 06-07).

While parsing, each node is optimized once, when it is made: its inputs are final, its
users do not exist yet. A later transform changes the picture -- SCCP proves that ``z`` is
always 0, so ``x + z`` is now ``x + 0`` -- and the peepholes must run again, on the whole
graph, until no rule applies (Simple's ``IterPeeps``). The driver keeps one invariant:
*every node that might simplify is on the worklist*. It starts with every node; a node
leaves it when it is looked at, and comes back when something it depends on changes:

* its **type changed**: its users (their types come from it), and the nodes whose rules
  read their inputs (``Node.dependents()``: a Region's phis count only its live paths);
* it was **replaced**: its old users (they have a new input, and rules such as
  ``(x + 1) + 2`` look two steps up, so their users too), the new node and its inputs;
* it **lost a user**: it may be dead now.

One look at a node is the parser's peephole, in the same order: its type (never less
precise than what is known: SCCP's optimistic types stay), a constant type makes a
Constant, an equal node already in the graph (GVN) replaces it, then ``idealize()``; a node
nobody uses is deleted. The rules for control live in the control nodes, as for data: the
live side of a decided ``If`` is the If's own control, a Region drops the paths control
never takes (with their values in its phis), a Loop whose back edge is dead is a Region,
Stop drops the exits control never reaches. A sweep from Stop finally removes the dead
cycles that reference counting cannot see (a loop behind a dead branch).

The rewrite budget and :class:`~ssa_course.son.peephole.RewriteError` are the parser's:
a rule that keeps making new work is stopped and named.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

from ssa_course.runtime import paused_gc
from ssa_course.son.control import Region
from ssa_course.son.data import Constant
from ssa_course.son.emit import sweep
from ssa_course.son.graph import Graph, Node
from ssa_course.son.peephole import Peephole, RewriteError, check_result, describe, guarded_idealize
from ssa_course.son.types import CTRL, TOP, XCTRL, Type


@dataclass(slots=True)
class IterStats:
    """What one run of the iterative peepholes did."""

    visits: int = 0  # nodes taken off the worklist
    constants: int = 0  # nodes replaced by a Constant
    gvn_hits: int = 0  # nodes replaced by an equal node
    idealized: int = 0  # idealize() rewrites (in place or by another node)
    killed: int = 0  # nodes deleted because nobody used them (the final sweep included)

    @property
    def rewrites(self) -> int:
        return self.constants + self.gvn_hits + self.idealized


class _Worklist:
    """First in, first out, each node at most once."""

    def __init__(self, nodes: Iterable[Node]):
        self.queue: deque[Node] = deque()
        self.on: set[int] = set()
        self.push_all(nodes)

    def push(self, node: Node | None) -> None:
        if node is not None and node.id not in self.on:
            self.on.add(node.id)
            self.queue.append(node)

    def push_all(self, nodes: Iterable[Node | None]) -> None:
        for n in nodes:
            self.push(n)

    def pop(self) -> Node | None:
        if not self.queue:
            return None
        node = self.queue.popleft()
        self.on.discard(node.id)
        return node


class IterativePeepholes:
    """The worklist driver over one function graph (see the module docstring)."""

    visits_per_node = 50  # looks at one node, on average, before it must have settled

    def __init__(self, graph: Graph):
        assert graph.start is not None and graph.stop is not None, "an unfinished graph"
        self.g = graph
        self.start = graph.start
        self.stop = graph.stop
        self.gvn: dict[tuple, Node] = {}
        self.stats = IterStats()
        nodes = graph.live_nodes()
        self.budget = Peephole.per_node * len(nodes) + Peephole.slack
        self.work = _Worklist(nodes)

    def run(self) -> IterStats:
        while True:
            while (n := self.work.pop()) is not None:
                if n.id not in self.g.nodes:
                    continue  # deleted while it waited
                self.stats.visits += 1
                if self.stats.visits > self.visits_per_node * self.budget:
                    raise RewriteError(f"the iterative peepholes looked at {describe(n)} "
                                       f"and {self.stats.visits - 1} other nodes without "
                                       "settling")
                self._visit(n)
            if not self._unreachable_merges_are_dead():
                break
        before = len(self.g.nodes)
        sweep(self.g, live_loops_only=True)
        self.stats.killed += before - len(self.g.nodes)
        return self.stats

    def _unreachable_merges_are_dead(self) -> bool:
        """A merge that control cannot reach from Start is dead, even when its type says
        live: types only move forward, and a loop whose entry died keeps itself "live"
        through its own back edge (the loop then reaches Stop through its Never exit, so
        the sweep keeps it too -- a fuzz finding). Such merges get the dead type and their
        users are looked at again; True when there were any."""
        reached: set[int] = set()
        work: list[Node] = [self.start]
        while work:
            n = work.pop()
            if n.id in reached:
                continue
            reached.add(n.id)
            for u in n.outputs:
                if u.is_control and u.id not in reached and (
                        isinstance(u, Region) or (u.inputs and u.inputs[0] is n)):
                    work.append(u)
        dead = [n for n in self.g.nodes.values() if isinstance(n, Region)
                and n.id not in reached and n.type == CTRL]
        for region in dead:
            region.type = XCTRL
            self.work.push(region)
            self.work.push_all(region.outputs)
            for u in region.outputs:
                self.work.push_all(u.outputs)
                self.work.push_all(u.dependents())
        return bool(dead)

    # -- one look at one node ---------------------------------------------------------

    def _visit(self, n: Node) -> None:
        if self._unused(n):
            self._kill(n)
            return
        self._retype(n)
        t = n.type
        if t.is_constant() and not n.is_control and not isinstance(n, Constant):
            self.stats.constants += 1
            self._replace(n, self._constant(t))
            return
        key = n.key()
        if key is not None:
            twin = self.gvn.get(key)
            if twin is not None and twin is not n and self._current(twin, key):
                self.stats.gvn_hits += 1
                self._replace(n, twin)
                return
            self.gvn[key] = n
        before = list(n.inputs)
        better = guarded_idealize(n)
        if better is None:
            return
        if better is n and n.inputs == before:
            # a rule answered the node itself without changing it: ``x + 0`` where x is
            # the node (a dead cycle, e.g. an unreachable loop's ``i = i + 0``) -- nothing
            # to do, and requeuing it would loop (a fuzz finding)
            return
        if better is not n:
            check_result(n, better)
        self.stats.idealized += 1
        self._count_rewrite(n, better)
        if better is n:  # changed in place (a Region lost a path): look at it again
            self.work.push(n)
            self.work.push_all(n.outputs)
            self.work.push_all(n.dependents())
            self.work.push_all(x for x in before if x is not None and x not in n.inputs)
            return
        self._replace(n, better)

    def _retype(self, n: Node) -> None:
        """Recompute the type; both the old type and the new one are true of every value
        the node can have, so keep what both say (SCCP's optimistic facts stay)."""
        old, new = n.type, n.compute()
        if old.kind != "top":
            both = old.join(new)
            if both.kind != "top" or new.kind == "top":
                new = both
        if new == old:
            return
        n.type = new
        for u in n.outputs:
            self.work.push(u)
            self.work.push_all(u.dependents())

    def _constant(self, t: Type) -> Node:
        key = ("Constant", str(t))
        c = self.gvn.get(key)
        if c is None or not self._current(c, key):
            c = Constant(self.g, self.start, t)
            self.gvn[key] = c
        return c

    def _current(self, node: Node, key: tuple) -> bool:
        """``node`` is alive and still has ``key`` (its inputs may have changed since)."""
        return node.id in self.g.nodes and node.key() == key

    # -- changing the graph -------------------------------------------------------------

    def _replace(self, old: Node, new: Node) -> None:
        if new.type == TOP:  # a node idealize() just made: its users need its type now
            new.type = new.compute()
        users = list(dict.fromkeys(old.outputs))
        for u in users:
            self._forget(u)  # its key is about to change
        old.replace_with(new)
        self.work.push(new)
        self.work.push_all(new.inputs)
        for u in users:
            self.work.push(u)
            self.work.push_all(u.outputs)
            self.work.push_all(u.dependents())
        if self._unused(old):
            self._kill(old)

    def _kill(self, n: Node) -> None:
        self._forget(n)
        inputs = [x for x in n.inputs if x is not None]
        n.kill()
        self.stats.killed += 1
        self.work.push_all(inputs)  # they lost a user

    def _forget(self, n: Node) -> None:
        key = n.key()
        if key is not None and self.gvn.get(key) is n:
            del self.gvn[key]

    def _unused(self, n: Node) -> bool:
        """Nobody reads ``n`` and it is not a root (Start, Stop, Start's projections)."""
        if n.outputs or n is self.start or n is self.stop:
            return False
        return isinstance(n, Constant) or not (n.inputs and n.inputs[0] is self.start)

    def _count_rewrite(self, n: Node, better: Node) -> None:
        if self.stats.rewrites > self.budget:
            raise RewriteError(
                f"the iterative peepholes made {self.stats.rewrites} rewrites on a graph of "
                f"{len(self.g.nodes)} nodes: rewrites keep making new work (the last one: "
                f"{describe(n)} → {describe(better)})")


def iterate(graph: Graph) -> IterStats:
    """Run the peepholes on a finished graph to a fixed point; returns what they did.
    Raises :class:`RewriteError` for a rule that keeps rewriting."""
    with paused_gc():  # a big graph is a big heap the collector would rescan
        return IterativePeepholes(graph).run()
