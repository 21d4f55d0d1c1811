"""The heart of one Chaitin-Briggs round: coalesce, simplify, select.

:class:`Colourer` works on a copy of an :class:`~ssa_course.codegen.interference.
InterferenceGraph`: copies are merged with the conservative tests (Briggs for two virtual
registers, George when one side is precoloured), then nodes of degree < K are removed
(simplified) onto a stack, a potential spill is pushed when none is left, and select pops
the stack giving each node a register its neighbours do not have. What the round decided
is read back from ``members`` (the values merged into each node), ``alias`` and the
colours :meth:`Colourer.select` returns. :mod:`ssa_course.codegen.regalloc` drives rounds.
"""

from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass

from ssa_course.codegen.interference import InterferenceGraph, node_key
from ssa_course.codegen.mir import PReg, Reg, VReg

# The cost of a spill temporary: it already lives one instruction long, so spilling it
# would only make another just like it -- it must never be chosen.
INFINITE = float("inf")
COALESCE_PASSES = 4  # passes over the copies; each pass after the first retries refusals

def spill_cost(weight: float, degree: int) -> float:
    """``(uses + defs) * 10**loop_depth / degree``: ``weight`` is the numerator (each
    occurrence counted ``10**depth``), ``degree`` the node's neighbours left."""
    # Chaitin's heuristic: the numerator estimates the loads/stores a spill adds (a loop
    # runs "about ten times"), the degree how much removing the node helps its neighbours.
    # max(.., 1): a node with no neighbours left is never a candidate, but must not divide by 0.
    return weight / max(degree, 1)

@dataclass(frozen=True, slots=True)
class SpillChoice:
    """A potential spill as the lesson shows it: ``cost = weight / degree``, ``weight``
    the (uses + defs) of its values counted ``10**loop_depth`` each, ``degree`` its
    neighbours still in the graph when it was chosen."""

    weight: float
    degree: int
    cost: float

class Colourer:
    """One round's coalesce, simplify and select over a copy of ``graph``."""

    def __init__(self, graph: InterferenceGraph, registers: tuple[str, ...],
                 temps: set[VReg], coalesce: bool):
        self.graph = graph
        self.registers = registers
        self.k = len(registers)
        self.temps = temps
        self.do_coalesce = coalesce
        # A private copy of the adjacency: coalescing rewrites it, and the round's graph must
        # stay as built: the lesson draws it (Allocation.dot) with this round's colours.
        self.adj: dict[Reg, set[Reg]] = {n: set(s) for n, s in graph.adj.items()}
        # Coalesced nodes form a union-find: `alias` points a merged node at its keeper.
        self.alias: dict[Reg, Reg] = {}
        self.members: dict[Reg, list[VReg]] = {
            n: ([n] if isinstance(n, VReg) else []) for n in self.adj}
        self.work = 0

    def find(self, r: Reg) -> Reg:
        root = r
        while root in self.alias:
            root = self.alias[root]
        while r in self.alias and self.alias[r] is not root:  # path compression
            self.alias[r], r = root, self.alias[r]
        return root

    # -- coalescing
    # The tests only look at *significant* neighbours (degree >= K, or precoloured), so
    # each node keeps the set of those (``sig``), updated when a degree crosses K: a test
    # then costs O(K) instead of O(degree), and a long-lived value that interferes with
    # thousands of short temporaries is not rescanned for every copy.
    def _init_significant(self) -> None:
        k = self.k
        self.deg = {n: len(s) for n, s in self.adj.items() if isinstance(n, VReg)}
        self.sig = {n: {t for t in s if isinstance(t, PReg) or self.deg[t] >= k}
                    for n, s in self.adj.items() if isinstance(n, VReg)}

    # Only a crossing of K changes anyone's `sig`, so most degree changes cost O(1).
    def _set_degree(self, x: VReg, new: int) -> None:
        old = self.deg[x]
        self.deg[x] = new
        if (old >= self.k) != (new >= self.k):
            for y in self.adj[x]:
                self.work += 1
                if isinstance(y, VReg):
                    if new >= self.k:
                        self.sig[y].add(x)
                    else:
                        self.sig[y].discard(x)

    def _george(self, p: Reg, v: VReg) -> bool:
        """Every significant neighbour of ``v`` already interferes with ``p``."""
        # Why it is safe: an insignificant neighbour (< K) will simplify away whatever
        # happens, and a significant one already avoids p's colour; so merging v into p adds
        # no constraint any neighbour did not have. Precoloured neighbours conflict with p
        # by construction (two machine registers are always distinct), so they are skipped.
        for t in self.sig[v]:
            self.work += 1
            if isinstance(t, VReg) and p not in self.adj[t]:
                return False
        return True

    def _briggs(self, a: VReg, b: VReg) -> bool:
        """The merged node would have fewer than K significant neighbours."""
        # Why it is safe: a node with < K significant neighbours is itself simplified once
        # those insignificant ones are gone, so the merge cannot make the graph uncolourable.
        significant = 0
        adj_a, adj_b, sig_a = self.adj[a], self.adj[b], self.sig[a]
        for t in (*sig_a, *(t for t in self.sig[b] if t not in sig_a)):
            self.work += 1
            if isinstance(t, VReg) and t in adj_a and t in adj_b \
                    and self.deg[t] - 1 < self.k:
                continue  # it loses one neighbour in the merge and stops being significant
            significant += 1
            if significant >= self.k:
                return False
        return True

    # `gone`'s edges move to `keep`; a neighbour of both loses one edge (it now sees one
    # node where it saw two). Degrees and `sig` are maintained incrementally so the next
    # Briggs/George test sees the merged graph exactly.
    def _merge(self, keep: Reg, gone: VReg) -> None:
        self.alias[gone] = keep
        self.members[keep].extend(self.members.pop(gone))
        keep_adj = self.adj[keep]
        kv = keep if isinstance(keep, VReg) else None  # a register keeps no degree
        del self.deg[gone], self.sig[gone]
        for t in self.adj.pop(gone):
            self.work += 1
            self.adj[t].discard(gone)
            tv = t if isinstance(t, VReg) else None
            if tv is not None:
                self.sig[tv].discard(gone)
            if t in keep_adj:
                if tv is not None:
                    self._set_degree(tv, self.deg[tv] - 1)
            # Two machine registers need no edge between them: they are distinct anyway.
            elif kv is not None or tv is not None:
                self.adj[t].add(keep)
                keep_adj.add(t)
                if tv is not None and (kv is None or self.deg[kv] >= self.k):
                    self.sig[tv].add(keep)
                if kv is not None and (tv is None or self.deg[tv] >= self.k):
                    self.sig[kv].add(t)
        if kv is not None:
            self._set_degree(kv, len(keep_adj))  # it only grew

    def coalesce(self) -> list[tuple[Reg, Reg]]:
        pairs: list[tuple[Reg, Reg]] = []
        if not self.do_coalesce:
            return pairs
        self._init_significant()
        # Heaviest copies first (weight = 10**loop depth): when two merges exclude each
        # other, the one removing a copy from an inner loop should win.
        pending = sorted(self.graph.moves, key=lambda m: -m.weight)
        for _ in range(COALESCE_PASSES):
            rest = []
            for m in pending:
                self.work += 1
                a, b = self.find(m.dst), self.find(m.src)
                if a == b or isinstance(a, PReg) and isinstance(b, PReg) or b in self.adj[a]:
                    continue  # already one node, or constrained for good
                # A physical register is always the keeper: its name is its colour, and George's
                # test is the one that applies (Briggs needs degrees a register does not have).
                if isinstance(b, PReg):
                    a, b = b, a
                assert isinstance(b, VReg)  # two registers were skipped above
                if isinstance(a, PReg):
                    ok = self._george(a, b)
                else:
                    ok = self._briggs(a, b)
                    if ok and self.deg[a] < self.deg[b]:
                        a, b = b, a  # keep the bigger node: fewer neighbours to move
                if ok:
                    self._merge(a, b)
                    pairs.append((a, b))
                else:
                    rest.append(m)
            if len(rest) == len(pending):
                break  # a pass without merges: nothing more will merge
            pending = rest  # a copy refused early may pass now that its neighbours merged
        return pairs

    # -- simplify and select
    def _cost(self, n: VReg, weight: float, degree: int) -> float:
        # One temporary in a coalesced class makes the whole class unspillable: the class
        # is spilled as one, and that would spill the temporary too.
        if any(v in self.temps for v in self.members[n]):
            return INFINITE
        return spill_cost(weight, degree)

    def simplify(self) -> tuple[list[VReg], dict[VReg, SpillChoice]]:
        # Two queues: `low` (degree < K, trivially colourable, FIFO) and a heap of the rest by
        # spill cost. Sorting by node_key first makes the order, and so the allocation and
        # the lesson's listing, the same in every run.
        reps = sorted((n for n in self.adj if isinstance(n, VReg)), key=node_key)
        weight = {n: sum(self.graph.weights.get(v, 0) for v in self.members[n]) for n in reps}
        degree = {n: len(self.adj[n]) for n in reps}
        low = deque(n for n in reps if degree[n] < self.k)
        heap = [(self._cost(n, weight[n], degree[n]), i, n, degree[n])
                for i, n in enumerate(reps) if degree[n] >= self.k]
        heapq.heapify(heap)
        order = {n: i for i, n in enumerate(reps)}
        removed: set[VReg] = set()
        stack: list[VReg] = []
        potential: dict[VReg, SpillChoice] = {}
        while len(stack) < len(reps):
            self.work += 1
            # Prefer a low-degree node: removing it can never cause a spill. Only when none is
            # left does the cheapest high-degree node go, *optimistically* (Briggs): it is
            # merely a potential spill, since its neighbours may end up sharing colours.
            if low:
                n = low.popleft()
                if n in removed:
                    continue
            else:
                cost, _, n, seen = heapq.heappop(heap)
                if n in removed:
                    continue
                if seen != degree[n]:  # degrees only fall, so costs only rise: re-queue
                    heapq.heappush(heap, (self._cost(n, weight[n], degree[n]), order[n], n,
                                          degree[n]))
                    continue
                potential[n] = SpillChoice(weight[n], degree[n], cost)
            # Entries are never deleted from the heap or the deque; `removed` makes stale ones
            # skip (lazy deletion), cheaper than finding them.
            removed.add(n)
            stack.append(n)
            for t in self.adj[n]:
                self.work += 1
                if isinstance(t, VReg) and t not in removed:
                    degree[t] -= 1
                    if degree[t] == self.k - 1:  # just became colourable: move it over
                        low.append(t)
        return stack, potential

    def select(self, stack: list[VReg]) -> tuple[dict[Reg, str], list[VReg]]:
        # Precoloured nodes start coloured; copy partners that were not coalesced (the tests
        # refused) still bias the choice, so many of their copies vanish anyway.
        colour: dict[Reg, str] = {n: n.name for n in self.adj if isinstance(n, PReg)}
        partners: dict[Reg, list[Reg]] = {}
        for m in sorted(self.graph.moves, key=lambda m: -m.weight):
            a, b = self.find(m.dst), self.find(m.src)
            if a != b:
                partners.setdefault(a, []).append(b)
                partners.setdefault(b, []).append(a)
        failed: list[VReg] = []
        # Reverse order of removal: when n was pushed it had < K neighbours still in the graph
        # (or was a potential spill), and exactly those are coloured before it now.
        while stack:
            n = stack.pop()
            used = {colour[t] for t in self.adj[n] if t in colour}
            self.work += len(self.adj[n]) + 1
            preferred = [colour[p] for p in partners.get(n, ()) if p in colour]
            choice = choose_register(used, self.registers, preferred)
            if choice is None:  # an actual spill: leave it uncoloured, the next round spills it
                failed.append(n)
            else:
                colour[n] = choice
        return colour, failed


def choose_register(taken: set[str], registers: tuple[str, ...],
                    preferred: list[str] | tuple[str, ...] = ()) -> str | None:
    """Select's rule for one node: the first ``preferred`` register (a copy partner's)
    that no coloured neighbour has (``taken``), else the first free one in ``registers``
    order (caller-saved first, so callee-saved ones are used only when needed), else None
    -- an actual spill."""
    for r in preferred:
        if r not in taken and r in registers:
            return r
    return next((r for r in registers if r not in taken), None)
