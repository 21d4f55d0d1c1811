"""Integer ranges with facts along edges: the analysis of lesson 09.

Every integer node gets a range ``[lo, hi]`` true of every value it takes, found
*optimistically* like SCCP (everything starts empty and only grows), with two additions:

* **a phi reads each input where it comes in**: the value on path ``k`` is evaluated in
  the block control leaves for the phi's Region on that path, where the facts of the
  branches dominating that block hold (:mod:`~ssa_course.son.edge_facts`). So in
  ``while (i < len(a)) { ...; i = i + 1; }`` the back edge brings ``i + 1`` with
  ``i <= len(a) - 1``, at most ``MAX_ARRAY_LENGTH``: the ``+ 1`` cannot wrap.
* **widening and narrowing**: a phi whose range keeps growing jumps to the end of the
  64-bit range (:func:`~ssa_course.son.intervals.widen`), so a loop converges in a few
  steps; then a few *narrowing* sweeps intersect every range with what its equations now
  give, which takes back what widening threw away (``[0, INT_MAX]`` to ``[0, 10]``).

The ranges alone cannot say ``i < len(a)``: that needs a *symbolic* bound, which
:mod:`~ssa_course.son.symbolic` finds once the ranges are known (:func:`analyse` runs
both).
"""

from __future__ import annotations

from collections.abc import Callable

from ssa_course.son import intervals
from ssa_course.son.control import Phi, Region
from ssa_course.son.data import Add, Constant, Div, Mul, Neg, Rem, Sub
from ssa_course.son.edge_facts import EdgeFacts, Fact, edge_facts
from ssa_course.son.graph import Node
from ssa_course.son.intervals import fits
from ssa_course.son.memory import Len
from ssa_course.son.program import FunctionGraph
from ssa_course.son.symbolic import Bounds, Symbols
from ssa_course.son.types import INT_BOTTOM, INT_MAX, INT_MIN, INT_TOP, IntType, Type

WIDEN_AFTER = 3  # a loop head's phi may grow this many times before it is widened
SAFETY = 4 * WIDEN_AFTER  # any other phi (an irreducible loop has no head): this many
NARROWING_SWEEPS = 8  # at most; they stop as soon as nothing narrows
DEPTH = 4  # how deep an input is re-evaluated in the block of a phi's path

# the interval transfer of each arithmetic node class (on its two operands' ranges)
_ARITH: dict[type[Node], Callable[[IntType, IntType], IntType]] = {
    Add: intervals.add, Sub: intervals.sub, Mul: intervals.mul, Div: intervals.div,
    Rem: intervals.rem}



def is_int(n: Node) -> bool:
    return isinstance(n.type, IntType)


def _clip(r: IntType, lo: int, hi: int) -> IntType:
    # Clipping to an empty range is meaningful: a fact that contradicts the range says the
    # block is never reached with such a value.
    lo, hi = max(r.lo, lo), min(r.hi, hi)
    return INT_TOP if lo > hi else IntType("int", lo, hi)


class RangeAnalysis:
    """The ranges of one function graph (``ranges``: node id -> IntType) and the queries
    the check eliminator asks: a value's range in a block, its symbolic upper bounds."""

    def __init__(self, fg: FunctionGraph, facts: EdgeFacts | None = None,
                 trace: bool = False):
        self.fg = fg
        # with ``trace``: (phase, node, its new range) for every change -- phase "grow",
        # "widen" (a loop head's phi jumped) or "narrow" (a sweep took some back)
        self.trace: list[tuple[str, Node, IntType]] | None = [] if trace else None
        self.facts = facts or edge_facts(fg)
        self.nodes = [n for n in fg.nodes() if is_int(n)]
        self.ranges: dict[int, IntType] = {n.id: INT_TOP for n in self.nodes}
        self.symbols = Symbols(self)
        self.steps = 0
        self.questions = 0  # calls of in_block (a test checks they grow linearly)
        self._reading: set[int] | None = None  # what the phi being evaluated reads
        self._readers: dict[int, set[int]] = {}  # node id -> phis that read it
        # (node id, block, depth) -> in_block's answer, kept once the ranges are final
        # (after solve: then an answer depends on nothing that changes)
        self._answers: dict[tuple[int, str | None, int], IntType] | None = None

    # -- numbers ------------------------------------------------------------------------

    def range_of(self, n: Node) -> IntType:
        if self._reading is not None:
            self._reading.add(n.id)
        # A node outside the analysis (not an int, or made later) answers with its own type.
        r = self.ranges.get(n.id)
        if r is not None:
            return r
        t = n.type
        return t if isinstance(t, IntType) else INT_BOTTOM

    def transfer(self, n: Node) -> IntType:
        """The range the node's equation gives from the current ranges."""
        if isinstance(n, Constant) and isinstance(n.type, IntType):
            return n.type  # (the analysis looks at integer nodes only)
        # A phi is the one node whose range depends on where its inputs come in: see _phi.
        if isinstance(n, Phi):
            return self._phi(n)
        fn = _ARITH.get(type(n))
        if fn is not None:
            r = fn(self.range_of(n.operand(1)), self.range_of(n.operand(2)))
        elif isinstance(n, Neg):
            r = intervals.neg(self.range_of(n.operand(1)))
        elif isinstance(n, Len):
            r = intervals.LENGTH
        else:
            r = INT_BOTTOM  # a parameter, a load, a call's result: anything
        own = n.type  # what the parser and SCCP proved is true as well
        if isinstance(own, IntType) and own.lo <= own.hi and r.lo <= r.hi:
            both = r.join(own)
            return both if isinstance(both, IntType) else r
        return r

    def _phi(self, phi: Phi) -> IntType:
        region = phi.inputs[0]
        r: Type = INT_TOP
        # Each input is read in the block its path leaves from, so a branch's fact on that path
        # (``i < len(a)`` on the loop's back edge) narrows what the phi receives.
        for k, value in enumerate(phi.inputs[1:], start=1):
            path = region.in_(k) if isinstance(region, Region) else None
            # A missing path brings no value: TOP is the identity of the meet.
            if value is None or path is None:
                continue
            r = r.meet(self.in_block(value, self.facts.block_of(path)))
        return r if isinstance(r, IntType) else INT_BOTTOM

    def in_block(self, n: Node, block: str | None, depth: int = 0) -> IntType:
        """The range of ``n`` where control is in ``block``: its own range, re-derived
        from its inputs there (a few levels deep), narrowed by the facts that hold."""
        self.questions += 1
        answers = self._answers
        # Caching is only sound once the ranges stop changing; while solving an answer may
        # change between two questions.
        if answers is not None:
            key = (n.id, block, depth)
            found = answers.get(key)
            if found is None:
                found = answers[key] = self._in_block(n, block, depth)
            return found
        return self._in_block(n, block, depth)

    def _in_block(self, n: Node, block: str | None, depth: int) -> IntType:
        r = self.range_of(n)
        # Re-deriving from the inputs lets the facts on the inputs count: ``i + 1`` where
        # ``i < n`` holds is below ``n + 1`` even if ``i + 1``'s own range says less. A phi is
        # not re-derived: its inputs are about other blocks.
        if depth < DEPTH and not isinstance(n, Phi):
            fn = _ARITH.get(type(n))
            if fn is not None:
                r = _meet_join(r, fn(self.in_block(n.operand(1), block, depth + 1),
                                     self.in_block(n.operand(2), block, depth + 1)))
            elif isinstance(n, Neg):
                r = _meet_join(r, intervals.neg(self.in_block(n.operand(1), block, depth + 1)))
        for fact in self.facts.holding(n, block):
            r = self._apply(r, fact, block, depth)
        return r

    def _apply(self, r: IntType, fact: Fact, block: str | None, depth: int) -> IntType:
        """Narrow ``r`` (the base's range) by ``base + offset op other``."""
        if r.lo > r.hi or not fits(r, fact.offset):
            return r  # base + offset might wrap: the fact says nothing simple about base
        # The fact reads ``base + k op other``: each case below bounds ``base`` by moving ``k``
        # to the other side (sound because ``fits`` said ``base + k`` does not wrap).
        k = fact.offset
        if fact.other is None:
            o = intervals.interval(0, 0)
        elif depth < DEPTH and fact.other.id in self.facts.by_base:
            # the other side with its own facts, one level only: ``i < n`` uses what is
            # known of ``n`` there, but not what ``n``'s facts say of yet other values
            # (a value compared in many places would make the questions multiply)
            o = self.in_block(fact.other, block, DEPTH)
        elif depth < DEPTH:
            # No fact is about the other side (a constant: ``n != 7``): in_block at DEPTH
            # would answer its own range, so that is asked directly (#22: an else-if chain
            # of 10k tests asked this 160k times, each an entry in the answers' table).
            self.questions += 1
            o = self.range_of(fact.other)
        else:
            o = self.range_of(fact.other)
        if o.lo > o.hi:
            return r
        op = fact.op
        if op == "<":
            return _clip(r, INT_MIN, o.hi - 1 - k)
        if op == "<=":
            return _clip(r, INT_MIN, o.hi - k)
        if op == ">":
            return _clip(r, o.lo + 1 - k, INT_MAX)
        if op == ">=":
            return _clip(r, o.lo - k, INT_MAX)
        if op == "==":
            return _clip(r, o.lo - k, o.hi - k)
        # A range cannot have a hole: ``!=`` helps only when the excluded value is an end.
        if op == "!=" and o.is_constant():  # only trims an end of the range
            if r.lo == o.lo - k:
                return _clip(r, r.lo + 1, INT_MAX)
            if r.hi == o.lo - k:
                return _clip(r, INT_MIN, r.hi - 1)
        return r

    def solve(self) -> None:
        """The optimistic fixed point with widening, then the narrowing sweeps."""
        changes: dict[int, int] = {}
        # Every int node starts on the list at empty (optimism, as SCCP): a range only grows to
        # what its equation gives. Widening trades some of that precision for a quick end;
        # the narrowing sweeps below take part of it back.
        work = list(reversed(self.nodes))  # popped from the end: lowest id first
        queued = {n.id for n in self.nodes}
        while work:
            n = work.pop()
            queued.discard(n.id)
            self.steps += 1
            old = self.ranges[n.id]
            met = old.meet(self._transfer_reading(n))  # ranges only grow while solving
            new = met if isinstance(met, IntType) else INT_BOTTOM
            if new == old:
                continue
            phase = "grow"
            if isinstance(n, Phi):
                changes[n.id] = changes.get(n.id, 0) + 1
                if changes[n.id] > (WIDEN_AFTER if self._at_loop_head(n) else SAFETY):
                    new, phase = intervals.widen(old, new), "widen"
            self.ranges[n.id] = new
            if self.trace is not None:
                self.trace.append((phase, n, new))
            # Users by edge, and the phis that read ``n`` in another block (recorded by
            # _transfer_reading): a change must reach every range computed from it.
            for u in [*n.outputs, *(self.fg.graph.nodes.get(i) for i in
                                    self._readers.get(n.id, ()))]:
                if u is not None and u.id in self.ranges and u.id not in queued:
                    queued.add(u.id)
                    work.append(u)
        # Narrowing may only shrink a range to what its equation gives from ranges already
        # sound, so each sweep keeps every range true; a bounded number of sweeps suffices.
        for _ in range(NARROWING_SWEEPS):
            narrowed = False
            for n in self.nodes:
                old = self.ranges[n.id]
                new = self.ranges[n.id] = intervals.narrow(old, self.transfer(n))
                if new != old:
                    narrowed = True
                    if self.trace is not None:
                        self.trace.append(("narrow", n, new))
            if not narrowed:
                break
        self._answers = {}  # the ranges are final: in_block's answers can be kept

    def _at_loop_head(self, phi: Phi) -> bool:
        """Widening at the loop heads is enough to end every loop's climb (and keeps
        the other phis of a loop -- a value copied around it -- precise)."""
        return self.facts.cfg.owner.get(phi.operand(0).id) in self.facts.loop_heads

    def _transfer_reading(self, n: Node) -> IntType:
        if not isinstance(n, Phi):
            return self.transfer(n)
        # Record every node the phi's transfer read, through in_block's re-derivations too:
        # those are the phi's real inputs for the worklist.
        self._reading = set()
        try:
            r = self.transfer(n)
        finally:
            for i in self._reading:
                self._readers.setdefault(i, set()).add(n.id)
            self._reading = None
        return r

    # -- symbols (ssa_course.son.symbolic) ------------------------------------------------

    def upper(self, n: Node, block: str | None) -> Bounds | None:
        """Bounds ``n <= L + d`` that hold in ``block`` (see :mod:`~ssa_course.son.symbolic`)."""
        return self.symbols.upper(n, block)

    @property
    def sym(self) -> dict[int, Bounds | None]:
        """The symbolic bounds of the phis, by node id."""
        return self.symbols.sym


def _meet_join(a: IntType, b: IntType) -> IntType:
    """Both ranges hold: their intersection (an empty one when they disagree)."""
    if b.lo > b.hi:
        return b
    both = a.join(b)
    return both if isinstance(both, IntType) else a


def analyse(fg: FunctionGraph, trace: bool = False) -> RangeAnalysis:
    """Ranges and symbolic bounds of one function graph (``trace``: record each change)."""
    ra = RangeAnalysis(fg, trace=trace)
    ra.solve()
    # The symbolic bounds build on the numeric ranges (an offset ``d`` is only usable
    # when ``L + d`` cannot wrap), so they come second.
    ra.symbols.solve()
    return ra
