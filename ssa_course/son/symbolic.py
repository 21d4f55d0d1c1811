"""Symbolic bounds: ``i <= len(a) - 1`` (lesson 09).

A range says what numbers a value can be; a bounds check needs more: the index below
*this* array's length, whatever that length is. A symbolic bound ``x <= L + d`` says it
for a node ``L`` (an array's length, mostly). Bounds come from the facts that hold where
``x`` is used (``i < len(a)`` gives ``i <= len(a) - 1``), through ``+``/``-`` of
constants that cannot wrap (``i - 1 <= len(a) - 2``), and for phis from a fixed point of
their own, found optimistically like the ranges: a phi has every bound until its inputs
say otherwise, the bound it keeps is the loosest its inputs give, one that keeps
loosening is dropped (``j = len(a) - 1`` counting down keeps ``j <= len(a) - 1``).

:func:`same_length` says when two lengths are one: the same node, or ``len`` of a row
read twice from the same array, index and memory.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ssa_course.son.control import Phi, Proj, Region, Start
from ssa_course.son.edge_facts import peel
from ssa_course.son.graph import Node
from ssa_course.son.intervals import fits
from ssa_course.son.memory import Len, Load, Print, Store, StoreField
from ssa_course.son.types import IntType

if TYPE_CHECKING:
    from ssa_course.son.range_facts import RangeAnalysis

SYMBOLIC_ROUNDS = 8  # rounds of the phis' bounds before giving up on them

Bounds = dict[int, tuple[Node, int]]  # L's id -> (L, d): the value is <= L + d


class Symbols:
    """The symbolic bounds of one analysed graph: ``sym`` (phi id -> its bounds) and the
    query :meth:`upper`."""

    def __init__(self, ra: RangeAnalysis):
        self.ra = ra
        self.sym: dict[int, Bounds | None] = {}
        # (node id, loop head) -> _invariant's answer: it reads only the graph and the
        # dominator tree, which do not change while the bounds are solved and asked
        self._invariants: dict[tuple[int, str], bool] = {}

    def upper(self, n: Node, block: str | None) -> Bounds | None:
        """Bounds ``n <= L + d`` that hold in ``block`` (None: "every bound", a phi not
        reached yet while the phis' bounds are being solved)."""
        base, k = peel(n)
        # Every value is bounded by itself (``x <= x + 0``): the bound that lets ``i < n`` read
        # as ``i <= n - 1`` when ``n`` is the length asked about.
        out: Bounds = {n.id: (n, 0)}
        r = self.ra.in_block(base, block)
        # ``base + k`` may wrap: a bound on ``base`` says nothing about ``n``.
        if base is not n and not fits(r, k):
            return out
        if isinstance(base, Phi) and base.id in self.sym:
            own = self.sym[base.id]
            # A phi not reached yet in the optimistic rounds: "every bound" (the caller reads None
            # as the top of this lattice).
            if own is None:
                return None
            for _lid, (node, d) in own.items():
                _tighten(out, node, d + k)
        if base is not n:
            _tighten(out, base, k)
        for fact in self.ra.facts.holding(base, block):
            if fact.other is None or not fits(r, fact.offset):
                continue
            # Only facts that bound from above; ``x < y`` is ``x <= y - 1`` for integers.
            slack = {"<": -1, "<=": 0, "==": 0}.get(fact.op)
            if slack is None:
                continue
            for node, d in _bound_nodes(self.ra, fact.other, block):
                _tighten(out, node, d + slack - fact.offset + k)
        return out

    def solve(self) -> None:
        """Symbolic upper bounds of phis: optimistic rounds; a bound that keeps loosening
        is dropped; no fixed point after :data:`SYMBOLIC_ROUNDS`: no bounds at all."""
        phis = [n for n in self.ra.nodes if isinstance(n, Phi)]
        # Optimism: every phi starts with every bound (None) and keeps only what all of its
        # paths give, as the ranges start empty.
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
                            # A bound that keeps loosening round a loop has no fixed point worth
                            # waiting for: drop it (the symbolic form of widening).
                            if loosened[key] > 2:
                                del new[lid]
                if new != old:
                    self.sym[phi.id] = new
                    changed = True
            if not changed:
                return
        # No fixed point in time: claim nothing (an empty set of bounds is always true).
        self.sym = {p.id: {} for p in phis}

    def _invariant(self, node: Node, head: str) -> bool:
        """``node``'s value is the same all round the loop headed by ``head``: nothing it
        is computed from is a phi or a pinned node in a block the head dominates."""
        key = (node.id, head)
        found = self._invariants.get(key)
        if found is None:
            found = self._invariants[key] = self._walk_invariant(node, head)
        return found

    def _walk_invariant(self, node: Node, head: str, limit: int = 64) -> bool:
        facts = self.ra.facts
        seen: set[int] = set()
        work = [node]
        while work:
            n = work.pop()
            if n.id in seen:
                continue
            seen.add(n.id)
            if len(seen) > limit:
                return False  # too far to look: assume it changes
            # A phi, a call's result or a pinned node inside the loop may change from one trip to
            # the next; pure nodes are as invariant as their inputs, so the walk goes through them.
            if isinstance(n, Phi):
                where = facts.cfg.owner.get(n.operand(0).id)
            elif isinstance(n, Proj):  # a parameter (always the same), a call's result
                if isinstance(n.inputs[0], Start):
                    continue
                where = facts.block_of(n.inputs[0])
            elif n.is_pinned() or n.is_control:
                where = facts.block_of(n.inputs[0] if n.inputs[0] is not None else n)
            else:
                work.extend(x for x in n.inputs[1:] if x is not None)
                continue
            if where is None or where not in facts.dom.pre or facts.dom.dominates(head, where):
                return False
            if not isinstance(n, Phi):
                work.extend(x for x in n.inputs[1:] if x is not None)
        return True

    def _phi_bounds(self, phi: Phi) -> Bounds | None:
        region = phi.operand(0)
        per_path: list[tuple[Bounds, IntType]] = []
        for k, value in enumerate(phi.inputs[1:], start=1):
            path = region.in_(k) if isinstance(region, Region) else None
            if value is None or path is None:
                continue
            block = self.ra.facts.block_of(path)
            b = self.upper(value, block)
            if b is not None:
                # A phi bounded by itself says nothing: that trivial bound goes.
                b = {i: nd for i, nd in b.items() if i != phi.id}
                per_path.append((b, self.ra.in_block(value, block)))
        if not per_path:
            return None
        keys: dict[int, Node] = {}
        for b, _ in per_path:
            for lid, (node, _d) in b.items():
                keys[lid] = node
        head = self.ra.facts.cfg.owner.get(region.id)
        if head in self.ra.facts.loop_heads:
            # round a loop, a bound only carries over to the next iteration when what it
            # names is the same value there: not a phi of this loop, nor anything computed
            # from one or read inside the loop (``len(a)`` of an array the loop replaces)
            keys = {lid: node for lid, node in keys.items() if self._invariant(node, head)}
        out: Bounds = {}
        # The merge keeps a bound only if every path gives one, and then the loosest (a bound
        # must hold whichever path came in).
        for lid, node in keys.items():
            worst = -(1 << 70)
            lo = self.ra.range_of(node).lo
            for b, r in per_path:
                if lid in b:
                    d = b[lid][1]
                elif isinstance(node, Len) and r.lo <= r.hi:
                    d = r.hi - lo  # a number below a length: r.hi <= L.lo + d <= L + d
                else:
                    break  # a path with no bound on it: none after the merge
                worst = max(worst, d)
            else:
                out[lid] = (node, worst)
        return out


def _tighten(out: Bounds, node: Node, d: int) -> None:
    old = out.get(node.id)
    # Several bounds on the same ``L`` are all true: keep the tightest.
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
    return _array_key(a.operand(1)) == _array_key(b.operand(1))


def _array_key(n: Node) -> tuple[Any, ...]:
    # A row loaded twice from the same place is the same array even as two Load nodes.
    if isinstance(n, Load):
        return ("load", _memory_for(n).id, n.operand(2).id, n.operand(3).id)
    return ("node", n.id)


def _memory_for(load: Load, limit: int = 64) -> Node:
    """The oldest memory state the load would read the same slot from: back along the
    memory chain past ``print``, field stores and stores into arrays of another type
    (a store into an ``[int]`` never changes a ``[[int]]``'s slots)."""
    mem = load.operand(1)
    own = load.operand(2).type
    for _ in range(limit):
        # Effects that cannot change the row: a load past them reads the same slot's value.
        if isinstance(mem, (Print, StoreField)) or isinstance(mem, Store) \
                and mem.operand(2).type != own and own.kind != "bottom":
            mem = mem.operand(1)
        else:
            break
    return mem

