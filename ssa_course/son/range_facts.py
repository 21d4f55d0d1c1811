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

The ranges alone cannot say ``i < len(a)``: that needs a *symbolic* bound. The second
half keeps, for a value, bounds ``x <= L + d`` for nodes ``L`` (array lengths, mostly):
from the facts that hold where ``x`` is used, through ``+``/``-`` of constants that do not
wrap, and for phis by an optimistic fixed point of their own (``i = len(a) - 1`` counting
down keeps ``i <= len(a) - 1``).
"""

from __future__ import annotations

from ssa_course.son import intervals
from ssa_course.son.control import Phi, Region
from ssa_course.son.data import Add, Constant, Div, Mul, Neg, Rem, Sub
from ssa_course.son.edge_facts import EdgeFacts, Fact, edge_facts, peel
from ssa_course.son.graph import Node
from ssa_course.son.memory import Len, Load, Print, Store, StoreField
from ssa_course.son.program import FunctionGraph
from ssa_course.son.types import INT_BOTTOM, INT_MAX, INT_MIN, INT_TOP, IntType

WIDEN_AFTER = 3  # a loop head's phi may grow this many times before it is widened
SAFETY = 4 * WIDEN_AFTER  # any other phi (an irreducible loop has no head): this many
NARROWING_SWEEPS = 8  # at most; they stop as soon as nothing narrows
DEPTH = 4  # how deep an input is re-evaluated in the block of a phi's path
SYMBOLIC_ROUNDS = 8  # rounds of the phis' symbolic bounds before giving up on them

_ARITH = {Add: intervals.add, Sub: intervals.sub, Mul: intervals.mul, Div: intervals.div,
          Rem: intervals.rem}

Bounds = dict[int, tuple[Node, int]]  # L's id -> (L, d): the value is <= L + d


def is_int(n: Node) -> bool:
    return isinstance(n.type, IntType)


def _clip(r: IntType, lo: int, hi: int) -> IntType:
    lo, hi = max(r.lo, lo), min(r.hi, hi)
    return INT_TOP if lo > hi else IntType("int", lo, hi)


def fits(r: IntType, offset: int) -> bool:
    """``x + offset`` cannot wrap for any ``x`` in ``r``."""
    return r.lo + offset >= INT_MIN and r.hi + offset <= INT_MAX


class RangeAnalysis:
    """The ranges of one function graph (``ranges``: node id -> IntType) and the queries
    the check eliminator asks: a value's range in a block, its symbolic upper bounds."""

    def __init__(self, fg: FunctionGraph, facts: EdgeFacts | None = None):
        self.fg = fg
        self.facts = facts or edge_facts(fg)
        self.nodes = [n for n in fg.nodes() if is_int(n)]
        self.ranges: dict[int, IntType] = {n.id: INT_TOP for n in self.nodes}
        self.sym: dict[int, Bounds | None] = {}
        self.steps = 0
        self._reading: set[int] | None = None  # what the phi being evaluated reads
        self._readers: dict[int, set[int]] = {}  # node id -> phis that read it

    # -- numbers ------------------------------------------------------------------------

    def range_of(self, n: Node) -> IntType:
        if self._reading is not None:
            self._reading.add(n.id)
        r = self.ranges.get(n.id)
        if r is not None:
            return r
        t = n.type
        return t if isinstance(t, IntType) else INT_BOTTOM

    def transfer(self, n: Node) -> IntType:
        """The range the node's equation gives from the current ranges."""
        if isinstance(n, Constant):
            return n.type  # type: ignore[return-value]
        if isinstance(n, Phi):
            return self._phi(n)
        fn = _ARITH.get(type(n))
        if fn is not None:
            r = fn(self.range_of(n.inputs[1]), self.range_of(n.inputs[2]))
        elif isinstance(n, Neg):
            r = intervals.neg(self.range_of(n.inputs[1]))
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
        r = INT_TOP
        for k, value in enumerate(phi.inputs[1:], start=1):
            path = region.in_(k) if isinstance(region, Region) else None
            if value is None or path is None:
                continue
            r = r.meet(self.in_block(value, self.facts.block_of(path)))
        return r if isinstance(r, IntType) else INT_BOTTOM

    def in_block(self, n: Node, block: str | None, depth: int = 0) -> IntType:
        """The range of ``n`` where control is in ``block``: its own range, re-derived
        from its inputs there (a few levels deep), narrowed by the facts that hold."""
        r = self.range_of(n)
        if depth < DEPTH and not isinstance(n, Phi):
            fn = _ARITH.get(type(n))
            if fn is not None:
                r = _meet_join(r, fn(self.in_block(n.inputs[1], block, depth + 1),
                                     self.in_block(n.inputs[2], block, depth + 1)))
            elif isinstance(n, Neg):
                r = _meet_join(r, intervals.neg(self.in_block(n.inputs[1], block, depth + 1)))
        for fact in self.facts.holding(n, block):
            r = self._apply(r, fact, block, depth)
        return r

    def _apply(self, r: IntType, fact: Fact, block: str | None, depth: int) -> IntType:
        """Narrow ``r`` (the base's range) by ``base + offset op other``."""
        if r.lo > r.hi or not fits(r, fact.offset):
            return r  # base + offset might wrap: the fact says nothing simple about base
        k = fact.offset
        if fact.other is None:
            o = intervals.interval(0, 0)
        elif depth < DEPTH:
            o = self.in_block(fact.other, block, depth + 1)
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
        if op == "!=" and o.is_constant():  # only trims an end of the range
            if r.lo == o.lo - k:
                return _clip(r, r.lo + 1, INT_MAX)
            if r.hi == o.lo - k:
                return _clip(r, INT_MIN, r.hi - 1)
        return r

    def solve(self) -> None:
        """The optimistic fixed point with widening, then the narrowing sweeps."""
        changes: dict[int, int] = {}
        work = list(reversed(self.nodes))  # popped from the end: lowest id first
        queued = {n.id for n in self.nodes}
        while work:
            n = work.pop()
            queued.discard(n.id)
            self.steps += 1
            new = self._transfer_reading(n)
            old = self.ranges[n.id]
            new = old.meet(new)  # ranges only grow while solving
            if not isinstance(new, IntType):
                new = INT_BOTTOM
            if new == old:
                continue
            if isinstance(n, Phi):
                changes[n.id] = changes.get(n.id, 0) + 1
                if changes[n.id] > (WIDEN_AFTER if self._at_loop_head(n) else SAFETY):
                    new = intervals.widen(old, new)
            self.ranges[n.id] = new
            for u in [*n.outputs, *(self.fg.graph.nodes.get(i) for i in
                                    self._readers.get(n.id, ()))]:
                if u is not None and u.id in self.ranges and u.id not in queued:
                    queued.add(u.id)
                    work.append(u)
        for _ in range(NARROWING_SWEEPS):
            narrowed = False
            for n in self.nodes:
                old = self.ranges[n.id]
                self.ranges[n.id] = intervals.narrow(old, self.transfer(n))
                narrowed |= self.ranges[n.id] != old
            if not narrowed:
                break

    def _at_loop_head(self, phi: Phi) -> bool:
        """Widening at the loop heads is enough to end every loop's climb (and keeps
        the other phis of a loop -- a value copied around it -- precise)."""
        return self.facts.cfg.owner.get(phi.inputs[0].id) in self.facts.loop_heads

    def _transfer_reading(self, n: Node) -> IntType:
        if not isinstance(n, Phi):
            return self.transfer(n)
        self._reading = set()
        try:
            r = self.transfer(n)
        finally:
            for i in self._reading:
                self._readers.setdefault(i, set()).add(n.id)
            self._reading = None
        return r

    # -- symbols ------------------------------------------------------------------------

    def upper(self, n: Node, block: str | None, depth: int = 0) -> Bounds | None:
        """Bounds ``n <= L + d`` that hold in ``block`` (None: "every bound", a phi not
        reached yet while the phis' bounds are being solved)."""
        base, k = peel(n)
        out: Bounds = {n.id: (n, 0)}
        r = self.in_block(base, block)
        if base is not n and not fits(r, k):
            return out
        if isinstance(base, Phi) and base.id in self.sym:
            own = self.sym[base.id]
            if own is None:
                return None
            for _lid, (node, d) in own.items():
                _tighten(out, node, d + k)
        if base is not n:
            _tighten(out, base, k)
        for fact in self.facts.holding(base, block):
            if fact.other is None or not fits(r, fact.offset):
                continue
            slack = {"<": -1, "<=": 0, "==": 0}.get(fact.op)
            if slack is None:
                continue
            for node, d in _bound_nodes(self, fact.other, block):
                _tighten(out, node, d + slack - fact.offset + k)
        return out

    def solve_symbols(self) -> None:
        """Symbolic upper bounds of phis: optimistic rounds; a bound that keeps loosening
        is dropped; no fixed point after :data:`SYMBOLIC_ROUNDS`: no bounds at all."""
        phis = [n for n in self.nodes if isinstance(n, Phi)]
        self.sym = {p.id: None for p in phis}
        loosened: dict[tuple[int, int], int] = {}
        for _ in range(SYMBOLIC_ROUNDS):
            changed = False
            for phi in phis:
                new = self._phi_bounds(phi)
                old = self.sym[phi.id]
                if old is not None and new is not None:
                    for lid, (_node, d) in list(new.items()):
                        if lid in old and d > old[lid][1]:
                            key = (phi.id, lid)
                            loosened[key] = loosened.get(key, 0) + 1
                            if loosened[key] > 2:
                                del new[lid]
                if new != old:
                    self.sym[phi.id] = new
                    changed = True
            if not changed:
                return
        self.sym = {p.id: {} for p in phis}

    def _phi_bounds(self, phi: Phi) -> Bounds | None:
        region = phi.inputs[0]
        per_path: list[tuple[Bounds, IntType]] = []
        for k, value in enumerate(phi.inputs[1:], start=1):
            path = region.in_(k) if isinstance(region, Region) else None
            if value is None or path is None:
                continue
            block = self.facts.block_of(path)
            b = self.upper(value, block)
            if b is not None:
                b = {i: nd for i, nd in b.items() if i != phi.id}
                per_path.append((b, self.in_block(value, block)))
        if not per_path:
            return None
        keys: dict[int, Node] = {}
        for b, _ in per_path:
            for lid, (node, _d) in b.items():
                keys[lid] = node
        out: Bounds = {}
        for lid, node in keys.items():
            worst: int | None = -(1 << 70)
            lo = self.range_of(node).lo
            for b, r in per_path:
                if lid in b:
                    d = b[lid][1]
                elif isinstance(node, Len) and r.lo <= r.hi:
                    d = r.hi - lo  # a number below a length: r.hi <= L.lo + d <= L + d
                else:
                    worst = None
                    break
                worst = max(worst, d)
            if worst is not None:
                out[lid] = (node, worst)
        return out


def _meet_join(a: IntType, b: IntType) -> IntType:
    """Both ranges hold: their intersection (an empty one when they disagree)."""
    if b.lo > b.hi:
        return b
    both = a.join(b)
    return both if isinstance(both, IntType) else a


def _tighten(out: Bounds, node: Node, d: int) -> None:
    old = out.get(node.id)
    if old is None or d < old[1]:
        out[node.id] = (node, d)


def _bound_nodes(ra: RangeAnalysis, other: Node, block: str | None) -> list[tuple[Node, int]]:
    """``other`` as bounds: itself, and ``L + k`` as ``L`` with ``k`` when that does not
    wrap."""
    out = [(other, 0)]
    base, k = peel(other)
    if base is not other and fits(ra.in_block(base, block), k):
        out.append((base, k))
    return out


def same_length(a: Node, b: Node) -> bool:
    """``a`` and ``b`` are the same length: one node, or ``len`` of arrays read from the
    same array, index and memory state (a row ``a[i]`` read twice)."""
    if a is b:
        return True
    if not (isinstance(a, Len) and isinstance(b, Len)):
        return False
    return _array_key(a.inputs[1]) == _array_key(b.inputs[1])


def _array_key(n: Node) -> tuple:
    if isinstance(n, Load):
        return ("load", _memory_for(n).id, n.inputs[2].id, n.inputs[3].id)
    return ("node", n.id)


def _memory_for(load: Load, limit: int = 64) -> Node:
    """The oldest memory state the load would read the same slot from: back along the
    memory chain past ``print``, field stores and stores into arrays of another type
    (a store into an ``[int]`` never changes a ``[[int]]``'s slots)."""
    mem = load.inputs[1]
    own = load.inputs[2].type
    for _ in range(limit):
        if isinstance(mem, (Print, StoreField)) or isinstance(mem, Store) \
                and mem.inputs[2].type != own and own.kind != "bottom":
            mem = mem.inputs[1]
        else:
            break
    return mem


def analyse(fg: FunctionGraph) -> RangeAnalysis:
    """Ranges and symbolic bounds of one function graph."""
    ra = RangeAnalysis(fg)
    ra.solve()
    ra.solve_symbols()
    return ra
