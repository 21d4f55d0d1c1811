"""One data-flow solver for every analysis over a quads CFG (lesson 03).

A data-flow analysis computes a *fact* at every point of a function: the variables live
there, the definitions that reach it, the variables certainly assigned, ... Every such
analysis is the same four choices (Kildall 1973; Bril's ``examples/df.py``):

* a **direction**: facts flow *forward* along the edges (what happened before) or
  *backward* against them (what will happen after);
* a **meet**: how the facts of several edges combine where they join -- union for *may*
  questions ("on some path"), intersection for *must* questions ("on every path");
* a **transfer**: how one instruction changes the fact;
* a **boundary**: the fact where the flow starts -- on entry to the function (forward) or
  at its exits (backward) -- and an **init** value every other point starts from.

An :class:`Analysis` holds those choices; :func:`solve` finds the fixed point with a
worklist and returns a :class:`Facts`. The analyses themselves are rows of a table in
:mod:`ssa_course.quads.analyses`.

**The exception-edge rule, written once.** An exceptional edge (``BasicBlock.throws_to``,
added by :mod:`ssa_course.quads.exceptions`) leaves its block *just before the block's last
instruction* -- the ``call`` or ``throw`` that may throw. The handler sees the values as
they were before that instruction: ``x = call f()`` that throws never writes ``x``. So the
solver gives that last instruction a node of its own, and the exceptional edge leaves from
the node before it. A forward fact flows into the handler as it was before the instruction;
a backward fact from the handler joins what the instruction needs on its normal path. The
point *after* a throwing instruction is on its normal path only (what a handler reads is
live *before* the call, not after it). The ``enter`` block's edge to a handler that
exceptional edges reach carries nothing (control never takes it). Change the rule here
and every analysis follows.

Most analyses are *gen/kill* problems (a transfer of the shape ``gen | (fact - kill)``);
for those, the solver summarizes each node once, so a visit costs two set operations
instead of a walk over the node's instructions.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from ssa_course.quads.cfg import CFG
from ssa_course.quads.ir import Instr

F = TypeVar("F")  # the type of a fact (a set of names, a frozenset, a dict, ...)
T = TypeVar("T", bound=Hashable)  # what a gen/kill problem's sets hold (a name, a definition)


@dataclass(frozen=True, slots=True)
class Analysis(Generic[F]):
    """One data-flow problem: direction, meet, transfer, boundary (see the module text).

    ``transfer(instr, fact)`` is the fact on the far side of ``instr``: after it for a
    forward analysis, before it for a backward one. It must not change ``fact``.
    ``edge(src, dst, fact)``, when given, changes a fact as it crosses the edge from block
    ``src`` to block ``dst`` (a phi reads its argument on the edge it names).
    ``gen``/``kill``, when given, say that ``transfer`` is ``gen(i) | (fact - kill(i))``
    on sets: the solver then summarizes each node once (and walks a block in place).
    ``summarize``, when given, is that summary computed directly: ``(gen, kill)`` of a run
    of instructions in program order, the same sets :func:`_summary` composes from
    ``gen``/``kill`` one instruction at a time (liveness has one: it is solved three
    times per run of ``opt``, on every block).
    """

    name: str
    forward: bool
    boundary: F
    init: F
    meet: Callable[..., F]  # meet(f1, f2, ...): the facts of several edges as one
    transfer: Callable[[Instr, F], F]
    edge: Callable[[str, str, F], F] | None = None
    gen: Callable[[Instr], Iterable] | None = None
    kill: Callable[[Instr], Iterable] | None = None
    summarize: Callable[[list[Instr]], tuple[frozenset, frozenset]] | None = None


def gen_kill(name: str, *, forward: bool, may: bool, gen: Callable[[Instr], Iterable[T]],
             kill: Callable[[Instr], Iterable[T]], boundary: frozenset[T] = frozenset(),
             init: frozenset[T] = frozenset(),
             edge: Callable[[str, str, frozenset[T]], frozenset[T]] | None = None,
             summarize: Callable[[list[Instr]], tuple[frozenset, frozenset]] | None = None
             ) -> Analysis[frozenset[T]]:
    """A set problem whose transfer is ``gen | (fact - kill)``: the classic bit-vector
    framework. ``may``: facts meet by union (on some path), else by intersection.
    ``summarize``: see :class:`Analysis`."""

    def transfer(instr: Instr, fact: frozenset[T]) -> frozenset[T]:
        return (fact - frozenset(kill(instr))) | frozenset(gen(instr))

    meet: Callable[..., frozenset[T]] = frozenset.union if may else frozenset.intersection
    return Analysis(name, forward, boundary, init, meet, transfer, edge, gen, kill,
                    summarize)


@dataclass(eq=False, slots=True)
class _Node(Generic[F]):
    """A piece of a block the solver works on: the whole block, or, for a block with an
    exceptional edge, everything but its last instruction (``part`` 0) and that last
    instruction alone (``part`` 1)."""

    block: str
    part: int
    instrs: list[Instr]
    into: F  # the fact on the node's input side (top for forward, ...)
    out: F  # ... and on its output side
    succs: list[tuple[_Node[F], bool]] = field(default_factory=list)  # (node, crosses
    preds: list[tuple[_Node[F], bool]] = field(default_factory=list)  # between blocks?)
    summary: tuple[frozenset, frozenset] | None = None  # (gen, kill) of a gen/kill problem
    queued: bool = True  # on the solver's worklist (every node starts there)


def _nodes(cfg: CFG, init: F
           ) -> tuple[list[_Node[F]], dict[str, _Node[F]], dict[str, _Node[F]]]:
    """The solver's graph: one node per block, two for a block that may throw (the rule
    above), every point at ``init``. Returns the nodes in layout order, each block's first
    and last node."""
    first: dict[str, _Node[F]] = {}
    last: dict[str, _Node[F]] = {}
    order: list[_Node[F]] = []
    thrown_to: set[str] = set()
    blocks = cfg.blocks
    for name, block in blocks.items():
        if block.throws_to is not None:
            thrown_to.add(block.throws_to)
        if block.throws_to is None or not block.instrs:
            node = _Node(name, 0, block.instrs, init, init, [], [])
            first[name] = last[name] = node
            order.append(node)
            continue
        # the throwing instruction gets a node of its own, entered from the rest
        head = _Node(name, 0, block.instrs[:-1], init, init, [], [])
        tail = _Node(name, 1, block.instrs[-1:], init, init, [], [])
        head.succs.append((tail, False))
        tail.preds.append((head, False))
        first[name], last[name] = head, tail
        order += [head, tail]
    for name, block in blocks.items():
        handler = None
        if thrown_to:  # (no exceptional edge anywhere: no ``enter`` edge to skip)
            term = block.instrs[-1] if block.instrs else None  # (the terminator if "enter")
            handler = (term.labels[1] if term is not None and term.op == "enter"
                       and len(term.labels) > 1 and term.labels[1] != term.labels[0]
                       else None)
        throws_to = block.throws_to
        for s in block.succs:
            dst = first.get(s)
            if dst is None:
                continue  # an edge to a block that is gone (e.g. removed as unreachable)
            if s == handler and s in thrown_to:
                # ``enter``'s edge to a handler that throwing instructions' edges reach:
                # control never takes it, their edges carry the facts (fuzz seed 50335:
                # through it a value the handler reads was live round a loop, and the
                # copies out of SSA made read it unset). Without exception edges (Julia's
                # IR) it is the handler's only edge, and stays.
                continue
            # the exceptional edge leaves before the last instruction; the others after it
            src = first[name] if s == throws_to else last[name]
            src.succs.append((dst, True))
            dst.preds.append((src, True))
    return order, first, last


class Facts(Generic[F]):
    """The solution: the fact at the top of every block (``top``) and at its bottom, after
    its last instruction on the normal path (``bottom``); :meth:`points` inside a block."""

    __slots__ = ("analysis", "cfg", "top", "bottom", "visits", "_first", "_last")

    def __init__(self, analysis: Analysis[F], cfg: CFG, first: dict[str, _Node[F]],
                 last: dict[str, _Node[F]]) -> None:
        self.analysis = analysis
        self.cfg = cfg
        self.top: dict[str, F] = {}
        self.bottom: dict[str, F] = {}
        self.visits = 0  # how many nodes the worklist processed (a measure of work)
        self._first = first  # each block's first and last node of the solver's graph
        self._last = last

    def points(self, block: str) -> list[F]:
        """The fact at every point of ``block``, in program order: ``points[k]`` is the fact
        right before instruction ``k`` and ``points[-1]`` the fact after the last one (on
        the normal path). In a block that may throw, the point before the last instruction
        is where the exceptional edge leaves: a backward fact there includes the
        handler's, a forward fact there is what the handler receives."""
        a = self.analysis
        first, last = self._first[block], self._last[block]
        if a.forward:
            fact = first.into
            found = [fact]
            for node in (first, last) if first is not last else (first,):
                fact = node.into  # (for ``last``: the same as ``first``'s out)
                for instr in node.instrs:
                    fact = a.transfer(instr, fact)
                    found.append(fact)
            return found
        found = [last.out]
        if first is not last:  # the point before the throwing instruction: both paths
            found.append(first.out)
        fact = found[-1]
        for instr in reversed(first.instrs):
            fact = a.transfer(instr, fact)
            found.append(fact)
        return found[::-1]

    def from_handler(self, block: str) -> F | None:
        """What flows along ``block``'s exceptional edge (None when it has none): for a
        backward analysis, the handler's fact as it arrives before the throwing
        instruction. (A call runs on both paths: what it *does* -- not what it writes --
        is seen by the handler too; such a question asks for this beside ``points``.)"""
        handler = self.cfg.blocks[block].throws_to
        first = self._first[block]
        if handler is None or first is self._last[block]:
            return None
        a = self.analysis
        fact = self._first[handler].into if not a.forward else first.out
        return a.edge(block, handler, fact) if a.edge is not None and not a.forward else fact

    def walk_backward(self: Facts[frozenset], block: str) -> Iterator[tuple[int, Instr, set]]:
        """For a backward gen/kill analysis: ``(k, instr, fact after instr k)`` from the last
        instruction of ``block`` to the first, with one set changed in place (fast on long
        blocks; copy it to keep it). After a throwing last instruction: its normal path."""
        a = self.analysis
        assert not a.forward and a.gen is not None and a.kill is not None
        first, last = self._first[block], self._last[block]
        instrs = self.cfg.blocks[block].instrs
        fact = set(last.out)
        for k in range(len(instrs) - 1, -1, -1):
            instr = instrs[k]
            yield k, instr, fact
            if first is not last and k == len(instrs) - 1:
                # before the throwing instruction: its normal path met with the handler's
                fact = set(first.out)
                continue
            fact.difference_update(a.kill(instr))
            fact.update(a.gen(instr))


def _summary(a: Analysis[F], node: _Node[F]) -> tuple[frozenset, frozenset]:
    """``(gen, kill)`` of a whole node, composed instruction by instruction in the
    analysis' direction: a later gen survives, an earlier gen is killed by a later kill."""
    gen: set = set()
    kill: set = set()
    assert a.gen is not None and a.kill is not None
    for instr in (node.instrs if a.forward else reversed(node.instrs)):
        k = a.kill(instr)
        gen.difference_update(k)
        gen.update(a.gen(instr))
        kill.update(k)
    return frozenset(gen), frozenset(kill - gen)


def _through(a: Analysis[F], node: _Node[F], fact: F) -> F:
    """The transfer of a whole node: its summary for a gen/kill problem, else each of its
    instructions in turn (in the analysis' direction)."""
    if a.gen is not None:
        if node.summary is None:
            node.summary = _summary(a, node) if a.summarize is None else \
                a.summarize(node.instrs)
        gen, kill = node.summary
        return (fact - kill) | gen  # type: ignore[operator]
    for instr in (node.instrs if a.forward else reversed(node.instrs)):
        fact = a.transfer(instr, fact)
    return fact


def _combine(a: Analysis[F], node: _Node[F], edges: list[tuple[_Node[F], bool]],
             forward: bool, is_start: bool) -> F:
    """The meet of the facts flowing into ``node`` along ``edges`` (its predecessors' outs
    for a forward analysis, its successors' ins for a backward one), with the boundary
    at a start."""
    facts: list[F]
    if a.edge is None:  # (the common case in one comprehension)
        facts = [other.out for other, _ in edges] if forward else \
            [other.into for other, _ in edges]
        if is_start:
            facts.insert(0, a.boundary)
        if not facts:
            return a.init
        return facts[0] if len(facts) == 1 else a.meet(*facts)
    facts = [a.boundary] if is_start else []
    for other, crosses in edges:
        fact = other.out if forward else other.into
        if crosses and a.edge is not None:  # e.g. the phi arguments of this edge
            src, dst = (other, node) if forward else (node, other)
            fact = a.edge(src.block, dst.block, fact)
        facts.append(fact)
    if not facts:
        return a.init  # nothing flows in: never reached
    # one call for all of them (``frozenset.union(a, b, c)`` builds one set, not two)
    return facts[0] if len(facts) == 1 else a.meet(*facts)


def solve(cfg: CFG, analysis: Analysis[F]) -> Facts[F]:
    """Solve ``analysis`` on ``cfg`` (a worklist fixed point; see the module text)."""
    a = analysis
    forward = a.forward
    order, first, last = _nodes(cfg, a.init)  # every point starts from ``init``
    entry = first.get(cfg.entry)
    facts = Facts(a, cfg, first, last)
    # A forward analysis visits blocks in layout order (most predecessors come first), a
    # backward one in reverse; a node is queued again only when its input may have changed.
    work = deque(order if forward else reversed(order))
    # A gen/kill problem's node transfer is ``(fact - kill) | gen`` on its summary (made on
    # the node's first visit): written out here, as :func:`_through` does it.
    gen_kill = a.gen is not None
    summarize = a.summarize
    visits = 0
    while work:
        node = work.popleft()
        node.queued = False
        visits += 1
        if forward:
            # in = meet of the predecessors' outs (and the boundary at the entry)
            fact = node.into = _combine(a, node, node.preds, True, node is entry)
            old = node.out
        else:
            # out = meet of the successors' ins (the boundary where nothing follows)
            fact = node.out = _combine(a, node, node.succs, False, not node.succs)
            old = node.into
        if gen_kill:
            summary = node.summary
            if summary is None:
                summary = node.summary = _summary(a, node) if summarize is None else \
                    summarize(node.instrs)
            new = (fact - summary[1]) | summary[0]  # type: ignore[operator]
        else:
            new = _through(a, node, fact)
        if new == old:
            continue
        if forward:
            node.out = new
            nexts = node.succs
        else:
            node.into = new
            nexts = node.preds
        for other, _ in nexts:  # whatever reads this node's result must look again
            if not other.queued:
                other.queued = True
                work.append(other)
    facts.visits = visits
    # Name the results by block: top of the first node, bottom of the last.
    for name in cfg.blocks:
        facts.top[name] = first[name].into
        facts.bottom[name] = last[name].out
    return facts
