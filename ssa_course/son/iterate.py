"""Iterative peepholes: simplify a finished graph until nothing changes (lessons 06-07).

While parsing, each node is optimized once, when it is made: its inputs are final, its
users do not exist yet. A later transform changes the picture -- SCCP proves that ``z`` is
always 0, so ``x + z`` is now ``x + 0`` -- and the peepholes must run again, on the whole
graph, until no rule applies (Simple's ``IterPeeps``). The driver keeps one invariant:
*every node that might simplify is on the worklist*. It starts with every node; a node
leaves it when it is looked at, and comes back when something it depends on changes. What
comes back is decided in one place, :meth:`IterativePeepholes.unlock` (the push rule),
given the node that changed and how: its **users** (their types come from it, they may
have a new input), the nodes whose rules read its inputs (``Node.dependents()``: a
Region's phis count only its live paths), the nodes whose ``idealize()`` read it from
further away than an input (``(x + 1) + 2`` reads the ``1`` inside its left input) with
``Node.dep_read`` (Simple's ``addDep``), and, when it lost a user, itself: it may be dead.

One look at a node is the parser's peephole, the same function
(:func:`ssa_course.son.peephole.peephole`, Simple's ``Node.peephole``): its type (here
never less precise than what is known: SCCP's optimistic types stay), a constant type makes
a Constant, an equal node already in the graph (GVN) replaces it, then ``idealize()``, for
control nodes too; a node nobody uses is deleted. The rules for control live in the control
nodes, as for data: the live side of a decided ``If`` is the If's own control, a Region
drops the paths control never takes (with their values in its phis), a Loop whose back edge
is dead is a Region, Stop drops the exits control never reaches. A node that lost a user
and whose users (transitively, at most ``DEAD_CYCLE_LIMIT``) reach no control node is a
dead cycle and goes with them; a sweep from Stop finally removes the larger dead cycles
that reference counting cannot see (a loop behind a dead branch). Rules that ask about
dominating tests read a dominator tree computed once per round
(:mod:`ssa_course.son.dominance`): when the worklist runs dry after control changed, a new
tree is made and the nodes that asked the old one are looked at again.

The rewrite budget and :class:`~ssa_course.son.peephole.RewriteError` are the parser's:
a rule that keeps making new work is stopped and named.

**Nothing changed, nothing to do** (#22). A run that ends at a fixed point -- its last
drain, merge check, endless-loop check and sweep all changed nothing -- leaves a
:class:`Settled` on the graph: its ``next_id``, its ``edits`` counter (every edge change
and dropped node), and every node's type. A later :func:`iterate` on a graph that still
matches it (``ranges`` after ``sccp``, when the ranges decide no branch and narrow no
type: the else-if chain) would look at every node and find nothing; it is skipped. The
rules read the nodes' inputs, users and types and nothing else that changes, so an
unchanged graph is still a fixed point. A run asked for the progress check is skipped
only when the settled one made that check.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ssa_course.runtime import paused_gc
from ssa_course.son.control import Phi, Region, goes_to
from ssa_course.son.data import Constant
from ssa_course.son.dominance import install
from ssa_course.son.emit import sweep
from ssa_course.son.endless import give_endless_loops_an_exit
from ssa_course.son.graph import Graph, Node, start_of
from ssa_course.son.peephole import (
    CONSTANT,
    GVN,
    IDEALIZED,
    Gvn,
    Peephole,
    RewriteError,
    Tally,
    _node_key,
    describe,
    peephole,
)
from ssa_course.son.types import CTRL, INT_MAX, INT_MIN, TOP, XCTRL, IntType, Type
from ssa_course.son.worklist import Order, Worklist, current_order


@dataclass(slots=True)
class IterStats(Tally):
    """What one run of the iterative peepholes did."""

    visits: int = 0  # nodes taken off the worklist
    constants: int = 0  # nodes replaced by a Constant
    gvn_hits: int = 0  # nodes replaced by an equal node
    idealized: int = 0  # idealize() rewrites (in place or by another node)
    killed: int = 0  # nodes deleted because nobody used them (the final sweep included)
    trees: int = 0  # dominator trees computed (one per round in which control changed)
    sweeps: int = 0  # sweeps that deleted something (dead cycles counting cannot see)

    FIELDS = {CONSTANT: "constants", GVN: "gvn_hits", IDEALIZED: "idealized"}

    @property
    def rewrites(self) -> int:
        return self.constants + self.gvn_hits + self.idealized


@dataclass(frozen=True, slots=True)
class Settled:
    """The graph as a run of the driver left it at a fixed point (see the module
    docstring); ``checked``: that run made the progress check."""

    next_id: int
    edits: int
    size: int
    types: list[Type]
    checked: bool

    def holds(self, graph: Graph) -> bool:
        """``graph`` is still exactly as that run left it (no node made or dropped, no
        edge changed, no type changed)."""
        return (self.next_id == graph.next_id and self.edits == graph.edits
                and self.size == len(graph.nodes)
                and self.types == [n.type for n in graph.nodes.values()])


def settle(graph: Graph, checked: bool) -> None:
    """Record that ``graph`` is at a fixed point of the peepholes as it is now."""
    graph.settled = Settled(graph.next_id, graph.edits, len(graph.nodes),
                            [n.type for n in graph.nodes.values()], checked)


DEAD_CYCLE_LIMIT = 64  # data nodes a dead-cycle search looks at (more: left to the sweep)


# What changed about a node: the cases of the push rule (:meth:`IterativePeepholes.unlock`).
NEW_TYPE = "new type"  # its type changed
CHANGED = "changed"  # a rule of its own changed it in place (a Region dropped a path)
NEW_INPUT = "new input"  # one of its inputs was replaced by another node
MADE = "made"  # it replaces another node (with the nodes a rule made along with it)
NEW_USERS = "new users"  # it gained users (those of the node it replaced)
NEW_INPUT_NODE = "new input node"  # a rule made it an input (it may have a twin)
LOST_USER = "lost a user"  # one of its users went
DIES = "dies"  # it is about to be deleted
SWEPT = "lost users to the sweep"  # a sweep deleted some of its users
DEAD_MERGE = "dead merge"  # control cannot reach the merge: its type became dead


class IterativePeepholes:
    """The worklist driver over one function graph (see the module docstring)."""

    visits_per_node = 50  # looks at one node, on average, before it must have settled

    def __init__(self, graph: Graph, order: Order | None = None):
        assert graph.start is not None and graph.stop is not None, "an unfinished graph"
        self.order = order if order is not None else current_order()
        self.g = graph
        self.start = graph.start
        self.stop = graph.stop
        # A GVN table of its own run; a node is forgotten (_forget) before its inputs change,
        # so the table never holds a node under a key its inputs no longer give.
        self.gvn = Gvn(_node_key)
        self.stats = IterStats()
        nodes = graph.live_nodes()
        self.budget = Peephole.per_node * len(nodes) + Peephole.slack
        self.limit = self.visits_per_node * self.budget
        # Every node starts on the worklist (the invariant: all that might simplify is on it).
        # The order is not meant to matter: the driver stops only when no node has a rule left,
        # whichever order got there; ``make fuzz`` runs seeded random orders, with the
        # progress_left check, to catch a rule whose result depends on it.
        self.work = Worklist(nodes, self.order.seed)
        self.lost: set[int] = set()  # nodes that lost a user since they were looked at

    def run(self) -> IterStats:
        self.g.settled = None  # set again when this run ends at a fixed point
        try:
            stats = self._run()
        finally:
            self.g.dom = None  # the tree is only kept up to date while the driver runs
        if self._clean_end:
            settle(self.g, self.order.check)
        return stats

    _clean_end = False  # the run's last round changed nothing (a fixed point)

    def _run(self) -> IterStats:
        """The driver's loop: look at nodes until none is left, then the checks that only
        a whole graph can make; each puts back on the worklist what it changed."""
        # a loop the types already say is endless (SCCP, the ranges) gets its exit before
        # any peephole runs: the effects before it lose their readers on the dead side
        give_endless_loops_an_exit(self.g)
        while True:
            self._fresh_tree()  # rules about dominating tests ask a tree of the graph as it is
            while (n := self.work.pop()) is not None:
                self.look(n)  # one look, which pushes what its change may unlock
            # Control changed: a new dominator tree, the nodes that asked the old one look
            # again. A merge control cannot reach is dead: its users look again.
            if self._fresh_tree() or self._unreachable_merges_are_dead():
                continue
            # a loop whose exit died must still reach Stop, or the sweep takes its prints
            added = give_endless_loops_an_exit(self.g)
            # What the sweep keeps alive: every node Stop reads, transitively, and every loop
            # whose control is live (an endless loop reaches Stop only through its Never).
            dead, touched = sweep(self.g, live_loops_only=True)
            self.stats.killed += len(dead)
            if not dead:  # a fixed point (unless a new exit no look has seen)
                self._clean_end = not added
                break
            self.stats.sweeps += 1
            for n in dead:  # (the GVN table drops a dead node when asked for it)
                self.unlock(n, DIES)
            for n in touched:
                self.unlock(n, SWEPT)
        # Simple's progress check: one more look at every node must change nothing.
        if self.order.check:
            left = progress_left(self.g)
            if left is not None:
                raise RewriteError(f"the iterative peepholes stopped with progress left: {left}")
        return self.stats

    # -- the push rule ------------------------------------------------------------------

    def unlock(self, n: Node, change: str, made_after: int = 0) -> None:
        """The push rule, whole: after ``change`` to ``n``, put on the worklist every node
        the change may let simplify. Users read a node's type and are its neighbours;
        ``dependents()`` are the nodes whose rules read ``n``'s inputs (a Region's phis);
        ``take_deps`` hands over the nodes whose rules read ``n`` from afar (``dep_read``,
        Simple's ``addDep``)."""
        push, push_all, deps = self.work.push, self.work.push_all, self.g.take_deps
        if change == NEW_TYPE:  # its users' types come from this one
            for u in n.outputs:
                push(u)
                push_all(u.dependents())
            push_all(deps(n))
        elif change in (CHANGED, SWEPT):
            if change == SWEPT:
                self.lost.add(n.id)  # it may be dead now (or a dead cycle)
            push(n)  # a rule may apply again
            push_all(n.outputs)
            push_all(n.dependents())
            push_all(deps(n))
            if change == CHANGED:
                for u in n.outputs:  # its phis lost that path's input too: a rule that read
                    # their inputs from afar looks again (fuzz seed 50449: Add(Phi(_, 5, 1), 5)
                    # once the Phi's dead input went)
                    push_all(deps(u))
        elif change == NEW_INPUT:
            push(n)
            push_all(n.dependents())
            # a rule that read n's inputs from afar (a phi's constants, fuzz seed 50449:
            # Add(Phi(5, p.v), 5) once p.v became 1) must look again
            push_all(deps(n))
        elif change == MADE:
            # n and the inputs of n, and of every input a rule made along with it (ids above
            # ``made_after``: a pushed phi's constants, the inner ``x + y`` of a
            # reassociation), however deep
            push(n)
            todo, seen = [n], {n.id}
            while todo:
                for x in todo.pop().inputs:
                    if x is not None:
                        push(x)
                        if x.id > made_after and x.id not in seen:
                            seen.add(x.id)
                            todo.append(x)
        elif change in (NEW_USERS, DIES):
            # (new users: an If on a test the dominator tree is asked about)
            push_all(deps(n))
        elif change == NEW_INPUT_NODE:
            push(n)
        elif change == LOST_USER:
            self.lost.add(n.id)  # it may be dead now
            push(n)
            if not isinstance(n, Constant):  # a rule counting its users from afar
                # (a Constant never changes, and no rule counts its users; it may have
                # thousands of watchers, woken each time one of its users died: the
                # quadratic part of removing a big dead region)
                push_all(deps(n))
        elif change == DEAD_MERGE:
            push(n)
            push_all(n.outputs)
            for u in n.outputs:  # its phis, and their users
                push_all(u.outputs)
                push_all(u.dependents())
        else:
            raise ValueError(f"no push rule for {change!r}")

    def _fresh_tree(self) -> bool:
        """Install a dominator tree of the graph as it is now, unless the installed one
        is (control has not changed since); the nodes that asked the old tree look
        again. True when a new tree was made."""
        old = self.g.dom
        if old is not None and old.version == self.g.control_version:
            return False
        self.stats.trees += 1
        if old is not None:
            self.work.push_all(n for n in old.watchers.values() if n.id in self.g.nodes)
        install(self.g)
        return True

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
            work.extend(u for u in n.outputs if u.id not in reached and goes_to(n, u))
        dead = [n for n in self.g.nodes.values() if isinstance(n, Region)
                and n.id not in reached and n.type == CTRL]
        for region in dead:
            region.type = XCTRL
            self.unlock(region, DEAD_MERGE)
        return bool(dead)

    # -- one look at one node ---------------------------------------------------------

    def look(self, n: Node) -> None:
        """One look at ``n``: dead, a dead cycle, or the parser's peephole."""
        if n.id not in self.g.nodes:
            return  # deleted while it waited
        self.stats.visits += 1
        if self.stats.visits > self.limit:
            raise RewriteError(f"the iterative peepholes looked at "
                               f"{describe(n)} and {self.stats.visits - 1} "
                               "other nodes without settling")
        # Dead first: no rule is worth running on a node nobody reads.
        if not n.outputs and unused(n):  # (the usual answer, "used", without the call)
            self._kill(n)
            return
        if n.id in self.lost:
            self.lost.discard(n.id)
            if self._dead_cycle(n):
                return
        # Remembered to see afterwards which inputs a rule dropped (they lost a user) or
        # added (they may now have a twin in the GVN table).
        before = list(n.inputs)
        made_from = self.g.next_id  # the ids of what the rule makes start here
        found = peephole(n, self.gvn, self._retype, self._constant, control=True)
        if found is None:
            return  # no rule applies: n stays off the worklist until a neighbour changes
        what, better = found
        self.stats.count(what)
        if what == IDEALIZED:
            self._count_rewrite(n, better)
        if better is not n:
            self._replace(n, better, made_from - 1)
            return
        self.unlock(n, CHANGED)  # changed in place (a Region lost a path): look again
        for x in before:
            if x is not None and x not in n.inputs:
                self.unlock(x, LOST_USER)
        # (an input the rule put in, such as the constant an If's decided test becomes)
        for x in n.inputs:
            if x is not None and x not in before:
                self.unlock(x, NEW_INPUT_NODE)

    def _retype(self, n: Node) -> None:
        """Recompute the type; both the old type and the new one are true of every value
        the node can have, so keep what both say (SCCP's optimistic facts stay)."""
        old, new = n.type, n.compute()
        if new is old or new == old:
            return  # (the join below would give ``old`` back: no change)
        narrowings = self.g.narrowings
        new = kept_type(n, old, new, narrowings)
        if new == old:
            return
        if isinstance(n, Phi) and isinstance(new, IntType) and isinstance(old, IntType):
            narrowings[n.id] = narrowings.get(n.id, 0) + 1
        n.type = new
        self.unlock(n, NEW_TYPE)

    def _constant(self, t: Type) -> Node:
        key = ("Constant", str(t))
        c = self.gvn.get(key)
        if c is None:
            # One Constant per value for the whole run: the table is asked first.
            c = Constant(self.g, self.start, t)
            self.gvn.put(key, c)
        return c

    # -- changing the graph -------------------------------------------------------------

    def _replace(self, old: Node, new: Node, made_after: int | None = None) -> None:
        if new.type == TOP:  # a node idealize() just made: its users need its type now
            new.type = new.compute()
        # Each user once (a node may read ``old`` at two inputs).
        users = list(dict.fromkeys(old.outputs))
        for u in users:
            self.gvn.forget(u)  # its key is about to change
        # Every edge into ``old`` now goes to ``new``; ``old`` is left with no users.
        old.replace_with(new)
        # what the rule made along with ``new`` has ids above the graph's last id before it ran
        # (``made_after``); with the replaced node's id as the bound instead, a chain of
        # reassociated sums was walked down again at every link (quadratic, #39 item 5)
        self.unlock(new, MADE, made_after=old.id if made_after is None else made_after)
        for u in users:
            self.unlock(u, NEW_INPUT)
        self.unlock(old, DIES)  # (it dies below, unless a root)
        self.unlock(new, NEW_USERS)
        if unused(old):
            self._kill(old)

    def _kill(self, n: Node) -> None:
        self.gvn.forget(n)
        # The inputs are kept before the node's edges go: each lost a user and may die too.
        inputs = [x for x in n.inputs if x is not None]
        self.unlock(n, DIES)
        n.kill()
        self.stats.killed += 1
        for x in inputs:
            self.unlock(x, LOST_USER)

    def _dead_cycle(self, n: Node) -> bool:
        """``n`` lost a user, and its users, their users... are a few data nodes that
        read only each other (a loop-carried value nobody reads after all: a phi and
        its ``+ 1``): no path leads to control, so to Stop. Reference counts cannot see
        that; the sweep would, but one loop at a time when such cycles feed each other
        (diamonds at 10k statements: 96 sweeps over the whole graph). Deletes them all
        at once; True when it did."""
        if n.is_control:
            return False
        seen = {n.id: n}
        work = [n]
        while work:
            for u in work.pop().outputs:
                if u.id not in seen:
                    # A path to control may reach Stop: not dead (or too big to tell: the sweep's).
                    if u.is_control or len(seen) >= DEAD_CYCLE_LIMIT:
                        return False
                    seen[u.id] = u
                    work.append(u)
        dead = list(seen.values())
        inputs: dict[int, Node] = {}
        for d in dead:
            self.gvn.forget(d)
            self.unlock(d, DIES)
            for x in d.inputs:
                if x is not None and x.id not in seen:
                    inputs[x.id] = x
        for d in dead:  # first every edge (users inside the set go too), then the nodes
            for i in range(len(d.inputs)):
                d.set_input(i, None)
        for d in dead:
            d.kill()
        self.stats.killed += len(dead)
        for x in inputs.values():
            self.unlock(x, LOST_USER)
        return True

    def _count_rewrite(self, n: Node, better: Node) -> None:
        if self.stats.rewrites > self.budget:
            raise RewriteError(
                f"the iterative peepholes made {self.stats.rewrites} rewrites on a graph of "
                f"{len(self.g.nodes)} nodes: rewrites keep making new work (the last one: "
                f"{describe(n)} → {describe(better)})")


def unused(n: Node) -> bool:
    """Nobody reads ``n`` and it is not a root (Start, Stop, Start's projections)."""
    g = n.graph
    if n.outputs or n is g.start or n is g.stop:
        return False
    # A Constant with no user goes even though Start is its input; other children of Start
    # (its projections, the parameters) stay: they are the function's interface.
    return isinstance(n, Constant) or not (n.inputs and n.inputs[0] is g.start)


# How often a phi's integer range may narrow freely before its bounds narrow only from the
# ends of the integers (``kept_type``): a merge's phi narrows a few times as its inputs
# fold; only a cycle narrows on and on
FREE_NARROWINGS = 8


def kept_type(n: Node, old: Type, new: Type, narrowings: Mapping[int, int]) -> Type:
    """The type the driver gives ``n`` when its rule computes ``new`` and it had ``old``.

    The join, not the compute alone: SCCP's optimistic fact and the local rule are both
    true, so their join (what both say) is true and at least as precise as either. One
    exception keeps the run finite: a phi whose integer range has already narrowed
    ``FREE_NARROWINGS`` times (``narrowings``, kept on the graph) narrows a bound only
    from the end of the integers (a single value is always taken). Around a cycle a
    narrower phi makes a narrower body makes a narrower phi, one step per look:
    ``a = (a + 2) % d`` with ``d`` about 10^18 raised the low bound by 2 a look, some 10^17
    looks (fuzz seed 7814). The kept range is still true (it holds every value the
    narrower one holds): the narrowing operator of interval analysis."""
    if old.kind == "top":
        return new
    both = old.join(new)
    if both.kind == "top" and new.kind != "top":
        return new  # (the rule and the old fact disagree: the rule's answer, as before)
    if isinstance(both, IntType) and isinstance(old, IntType) and both != old \
            and both.lo != both.hi and isinstance(n, Phi) \
            and narrowings.get(n.id, 0) >= FREE_NARROWINGS:
        lo = both.lo if old.lo == INT_MIN else old.lo
        hi = both.hi if old.hi == INT_MAX else old.hi
        return old if (lo, hi) == (old.lo, old.hi) else IntType("int", lo, hi)
    return both


class _Progress(Exception):
    """Raised by the checking type rule: a type would still change."""


def progress_left(graph: Graph) -> str | None:
    """Simple's ``progressOnList`` for a settled graph: the first node on which one more
    look would still change something (its type, a constant, an equal node, a rule of its
    own, or it is unused), described; None when the graph is a true fixed point. Costs a
    peephole per node: a check for tests and fuzzing (:func:`peephole_order`)."""
    gvn = Gvn(_node_key)

    def retype(n: Node) -> None:  # the iterative driver's rule, without changing anything
        old = n.type
        new = kept_type(n, old, n.compute(), graph.narrowings)
        if new != old:
            raise _Progress(f"{describe(n)} would change type {old} -> {new}")

    def stand_in(_t: Type) -> Node:  # what ``peephole`` returns for a constant type: a
        return start_of(n)  # stand-in (the rewrite is reported, no Constant is made)

    # The same ``peephole`` the driver runs, with stand-ins that report instead of change.
    for n in graph.live_nodes():
        if unused(n):
            return f"{describe(n)} is unused"
        try:
            # (a constant type is progress: the Constant itself need not be made)
            found = peephole(n, gvn, retype, stand_in, control=True)
        except _Progress as e:
            return str(e)
        if found is not None:
            what, other = found
            into = "a Constant" if what == CONSTANT else describe(other)
            return f"{describe(n)} still has a rewrite ({what}: {into})"
    return None


def iterate(graph: Graph, order: Order | None = None) -> IterStats:
    """Run the peepholes on a finished graph to a fixed point; returns what they did.
    ``order`` (default: :func:`~ssa_course.son.worklist.current_order`) picks the worklist
    order and the final check. Raises :class:`RewriteError` for a rule that keeps
    rewriting, or, when checking, for a graph left with progress. A graph still as a
    run left it at a fixed point is not looked at again (the module docstring: an empty
    :class:`IterStats`)."""
    settled = graph.settled
    if settled is not None and settled.holds(graph):
        check = (order if order is not None else current_order()).check
        if settled.checked or not check:
            return IterStats()
    with paused_gc():  # a big graph is a big heap the collector would rescan
        return IterativePeepholes(graph, order).run()
