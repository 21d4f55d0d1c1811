"""Register allocation by graph colouring (Chaitin-Briggs) with conservative coalescing.

One *round* is:

1. **build** -- liveness, then the interference graph (:mod:`interference`);
2. **coalesce** -- merge the two sides of a copy when they do not interfere and the merge
   cannot make the graph harder to colour: *Briggs*' test for two virtual registers (the
   merged node has fewer than K neighbours of degree >= K), *George*'s test when one side
   is a physical register ``p`` (every neighbour of the virtual one already interferes
   with ``p`` or has degree < K). Heavier copies (inside loops) are tried first;
3. **simplify** -- repeatedly remove a node with fewer than K neighbours (it can always be
   coloured later) and push it on a stack;
4. **potential spill** -- when every node left has >= K neighbours, push the one with the
   lowest spill cost ``cost = (uses + defs) * 10**loop_depth / degree``, every use or def
   counted ``10**depth`` of its block, degree = its neighbours still in the graph: rarely
   used values with many neighbours go first. Spill temporaries cost infinity;
5. **select** -- pop the stack and give each node the first register its coloured
   neighbours do not use (preferring the register of a copy partner, so more copies
   vanish); a potential spill that still finds no register is an *actual spill*.

Actual spills live in stack slots (:mod:`spill`) and the round starts again, until none is
left. Values live into a ``handler`` block are spilled before the first round: a throw
arrives there with every register clobbered. Calls list the caller-saved registers in
their defs, so a value live across a call ends up in a callee-saved register or a slot.

:func:`allocate` then renames every virtual register to its physical one, deletes copies
whose two sides got the same register and records ``fn.used_callee_saved``.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from ssa_course.codegen.interference import InterferenceGraph, build_interference, node_key
from ssa_course.codegen.liveness import Liveness, loop_depths
from ssa_course.codegen.mir import ALLOCATABLE, CALLEE_SAVED, MFunction, PReg, Reg, Slot, VReg
from ssa_course.codegen.spill import Spiller, SpillError, vregs_of

INFINITE = float("inf")
COALESCE_PASSES = 4  # passes over the copies; each pass after the first retries refusals


class AllocationError(ValueError):
    """The function cannot be allocated; the message says why and where."""


def spill_cost(weight: float, degree: int) -> float:
    """``(uses + defs) * 10**loop_depth / degree``: ``weight`` is the numerator (each
    occurrence counted ``10**depth``), ``degree`` the node's neighbours left."""
    return weight / max(degree, 1)


@dataclass(frozen=True, slots=True)
class SpillChoice:
    """A potential spill as the lesson shows it: ``cost = weight / degree``, ``weight``
    the (uses + defs) of its values counted ``10**loop_depth`` each, ``degree`` its
    neighbours still in the graph when it was chosen."""

    weight: float
    degree: int
    cost: float


@dataclass(slots=True)
class Round:
    """What one build-coalesce-simplify-select round did (the lesson shows each)."""

    graph: InterferenceGraph
    colouring: dict[VReg, str]  # every vreg that got a register this round
    coalesced: list[tuple[Reg, Reg]]  # (kept, merged into it), in the order merged
    potential_spills: dict[VReg, SpillChoice]  # node (class representative) -> its cost
    spilled: dict[VReg, float]  # actual spills of this round: vreg -> its class's cost


@dataclass(slots=True)
class Allocation:
    """The result of :func:`allocate` (or :func:`colour`): the final colouring (vreg ->
    register name, spill temporaries included), the last round's coalesced pairs, every
    spilled vreg with its spill cost (``inf``: live into a handler) and its slot, the
    number of rounds, the copies removed, and ``work`` (basic steps, for scaling tests)."""

    colouring: dict[VReg, str]
    coalesced: list[tuple[Reg, Reg]]
    spilled: dict[VReg, float]
    slots: dict[VReg, Slot]
    rounds: int
    history: list[Round]
    temps: set[VReg] = field(default_factory=set)
    copies_removed: int = 0
    work: int = 0

    @property
    def graph(self) -> InterferenceGraph:
        """The first round's interference graph (before any spill code)."""
        return self.history[0].graph


class _Colourer:
    """One round's coalesce, simplify and select over a copy of ``graph``."""

    def __init__(self, graph: InterferenceGraph, registers: tuple[str, ...],
                 temps: set[VReg], coalesce: bool):
        self.graph = graph
        self.registers = registers
        self.k = len(registers)
        self.temps = temps
        self.do_coalesce = coalesce
        self.adj: dict[Reg, set[Reg]] = {n: set(s) for n, s in graph.adj.items()}
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
        for t in self.sig[v]:
            self.work += 1
            if isinstance(t, VReg) and p not in self.adj[t]:
                return False
        return True

    def _briggs(self, a: VReg, b: VReg) -> bool:
        """The merged node would have fewer than K significant neighbours."""
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

    def _merge(self, keep: Reg, gone: VReg) -> None:
        self.alias[gone] = keep
        self.members[keep].extend(self.members.pop(gone))
        keep_adj = self.adj[keep]
        keep_is_vreg = isinstance(keep, VReg)
        del self.deg[gone], self.sig[gone]
        for t in self.adj.pop(gone):
            self.work += 1
            self.adj[t].discard(gone)
            t_is_vreg = isinstance(t, VReg)
            if t_is_vreg:
                self.sig[t].discard(gone)
            if t in keep_adj:
                if t_is_vreg:
                    self._set_degree(t, self.deg[t] - 1)
            elif keep_is_vreg or t_is_vreg:
                self.adj[t].add(keep)
                keep_adj.add(t)
                if t_is_vreg and (not keep_is_vreg or self.deg[keep] >= self.k):
                    self.sig[t].add(keep)
                if keep_is_vreg and (not t_is_vreg or self.deg[t] >= self.k):
                    self.sig[keep].add(t)
        if keep_is_vreg:
            self._set_degree(keep, len(keep_adj))  # it only grew

    def coalesce(self) -> list[tuple[Reg, Reg]]:
        pairs: list[tuple[Reg, Reg]] = []
        if not self.do_coalesce:
            return pairs
        self._init_significant()
        pending = sorted(self.graph.moves, key=lambda m: -m.weight)
        for _ in range(COALESCE_PASSES):
            rest = []
            for m in pending:
                self.work += 1
                a, b = self.find(m.dst), self.find(m.src)
                if a == b or isinstance(a, PReg) and isinstance(b, PReg) or b in self.adj[a]:
                    continue  # already one node, or constrained for good
                if isinstance(b, PReg):
                    a, b = b, a
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
        if any(v in self.temps for v in self.members[n]):
            return INFINITE
        return spill_cost(weight, degree)

    def simplify(self) -> tuple[list[VReg], dict[VReg, SpillChoice]]:
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
            removed.add(n)
            stack.append(n)
            for t in self.adj[n]:
                self.work += 1
                if isinstance(t, VReg) and t not in removed:
                    degree[t] -= 1
                    if degree[t] == self.k - 1:
                        low.append(t)
        return stack, potential

    def select(self, stack: list[VReg]) -> tuple[dict[Reg, str], list[VReg]]:
        colour: dict[Reg, str] = {n: n.name for n in self.adj if isinstance(n, PReg)}
        partners: dict[Reg, list[Reg]] = {}
        for m in sorted(self.graph.moves, key=lambda m: -m.weight):
            a, b = self.find(m.dst), self.find(m.src)
            if a != b:
                partners.setdefault(a, []).append(b)
                partners.setdefault(b, []).append(a)
        failed: list[VReg] = []
        while stack:
            n = stack.pop()
            used = {colour[t] for t in self.adj[n] if t in colour}
            self.work += len(self.adj[n]) + 1
            choice = next((colour[p] for p in partners.get(n, ()) if p in colour
                           and colour[p] not in used and colour[p] in self.registers), None)
            if choice is None:
                choice = next((r for r in self.registers if r not in used), None)
            if choice is None:
                failed.append(n)
            else:
                colour[n] = choice
        return colour, failed


def _check_registers(registers: Iterable[str]) -> tuple[str, ...]:
    regs = tuple(registers)
    if not regs:
        raise AllocationError("register allocation needs at least one register")
    unknown = [r for r in regs if r not in ALLOCATABLE]
    if unknown:
        raise AllocationError(f"not an allocatable register: {', '.join(unknown)} "
                              f"(choose from {', '.join(ALLOCATABLE)})")
    if len(set(regs)) != len(regs):
        raise AllocationError("a register is listed twice")
    return regs


def colour(fn: MFunction, registers: Iterable[str] = ALLOCATABLE) -> Allocation:
    """Rounds of Chaitin-Briggs until every virtual register has a register; spill code
    is written into ``fn`` (slots, temporaries), virtual registers are left in place.
    :func:`assign` finishes the job; :func:`allocate` does both."""
    regs = _check_registers(registers)
    spiller = Spiller(fn)
    depths = loop_depths(fn)  # spill code adds no blocks: the loops stay the same
    history: list[Round] = []
    spilled: dict[VReg, float] = {}
    coalesce, work, rounds = True, 0, 0
    limit = spiller.next_id + 3  # every round with spills retires a value for good
    liveness = Liveness(fn)
    work += liveness.steps
    if fn.blocks:
        early = [r for r in liveness.live_in[fn.blocks[0].label] if isinstance(r, VReg)]
        if early:
            names = ", ".join(str(r) for r in sorted(early, key=node_key))
            raise AllocationError(f"{fn.name}: {names} used before any definition "
                                  "(live into the entry block)")
    caught = sorted({r for b in fn.blocks if b.handler for r in liveness.live_in[b.label]
                     if isinstance(r, VReg)}, key=node_key)
    if caught:  # a throw clobbers every register: these live in slots from the start
        _spill(spiller, [[v] for v in caught], fn)
        spilled.update((v, INFINITE) for v in caught)
        liveness = Liveness(fn)
        work += liveness.steps
    while True:
        rounds += 1
        if rounds > limit:
            raise AllocationError(f"{fn.name}: register allocation does not converge")
        graph = build_interference(fn, regs, liveness, depths)
        work += graph.edge_steps
        colourer = _Colourer(graph, regs, spiller.temps, coalesce)
        pairs = colourer.coalesce()
        stack, potential = colourer.simplify()
        colours, failed = colourer.select(stack)
        work += colourer.work
        round_colouring = {v: colours[rep] for rep in colours
                           for v in colourer.members.get(rep, ()) if isinstance(v, VReg)}
        round_spilled = {v: _cost_of(potential, n) for n in failed
                         for v in colourer.members[n]}
        history.append(Round(graph, round_colouring, pairs, potential, round_spilled))
        if not failed:
            break
        groups = []
        for n in failed:
            plain = [v for v in colourer.members[n] if v not in spiller.temps]
            if len(plain) < len(colourer.members[n]):
                if not coalesce and not plain:
                    names = ", ".join(str(v) for v in colourer.members[n])
                    raise AllocationError(
                        f"{fn.name}: an instruction needs more registers at once than the "
                        f"{len(regs)} allocatable ones ({names})")
                coalesce = False  # a spill temporary was merged too eagerly: retry plainly
            if plain:
                groups.append(plain)
                spilled.update((v, _cost_of(potential, n)) for v in plain)
        _spill(spiller, groups, fn)
        liveness = Liveness(fn)
        work += liveness.steps
    last = history[-1]
    return Allocation(last.colouring, last.coalesced, spilled, dict(spiller.slots), rounds,
                      history, set(spiller.temps), spiller.deleted, work)


def _cost_of(potential: dict[VReg, SpillChoice], n: VReg) -> float:
    choice = potential.get(n)
    return INFINITE if choice is None else choice.cost


def _spill(spiller: Spiller, groups: list[list[VReg]], fn: MFunction) -> None:
    try:
        spiller.spill(groups)
    except SpillError as e:
        raise AllocationError(str(e)) from None


def assign(fn: MFunction, allocation: Allocation) -> None:
    """Rename every virtual register of ``fn`` to its register, delete copies whose two
    sides got the same register and record ``fn.used_callee_saved``."""
    pregs: dict[str, PReg] = {}
    touched: set[str] = set()
    for block in fn.blocks:
        kept = []
        for instr in block.instrs:
            for v in vregs_of(instr):
                name = allocation.colouring.get(v)
                if name is None:
                    raise AllocationError(f"{fn.name}: {v} in `{instr.op}` has no register "
                                          "(is it missing from the instruction's defs/uses?)")
                instr.replace_reg(v, pregs.setdefault(name, PReg(name)))
            if instr.is_copy() and instr.operands[0] == instr.operands[1]:
                allocation.copies_removed += 1
                continue
            touched.update(r.name for r in (*instr.defs, *instr.uses) if isinstance(r, PReg))
            kept.append(instr)
        block.instrs = kept
    fn.used_callee_saved = [r for r in CALLEE_SAVED if r in touched]


def allocate(fn: MFunction, registers: Iterable[str] = ALLOCATABLE) -> Allocation:
    """Allocate registers for ``fn`` in place (see the module docstring) and say how."""
    allocation = colour(fn, registers)
    assign(fn, allocation)
    return allocation
