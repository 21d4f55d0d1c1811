"""One data-flow solver, plain (lesson 03; in the spirit of Bril's ``examples/df.py``).

A data-flow analysis computes a *fact* at every point of a function: the variables live
there, the definitions that reach it, the variables certainly assigned, ... Every such
analysis is the same four choices (Kildall 1973):

* a **direction**: facts flow *forward* along the edges (what happened before) or
  *backward* against them (what will happen after);
* a **merge** (the *meet*): how the facts of several edges combine where they join --
  union for *may* questions ("on some path"), intersection for *must* questions;
* a **transfer**: how one block changes the fact;
* an **init** every point starts from (and a **boundary** where the flow starts: the
  entry, or the exits; the init unless told).

:func:`solve` finds the fixed point over a graph of blocks with a worklist. The layer of
:mod:`ssa_course.quads.flow` runs it on a quads CFG, with facts at every instruction, the
exception-edge rule and the gen/kill summaries; the analyses themselves are rows of a
table in :mod:`ssa_course.quads.analyses`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

F = TypeVar("F")  # the type of a fact (a set of names, a bit mask, ...)
K = TypeVar("K", bound=Hashable)  # how blocks are named


@dataclass(frozen=True, slots=True)
class Analysis(Generic[K, F]):
    """The four choices, and two that are seldom needed: ``boundary`` (None: ``init``),
    and ``edge(src, dst, fact)``, a fact as it crosses an edge (a phi reads its argument
    on the edge it names)."""

    forward: bool
    init: F
    merge: Callable[..., F]  # merge(f1, f2, ...): the facts of several edges as one
    transfer: Callable[[K, F], F]  # a block's fact on its far side, from its near side
    boundary: F | None = None
    edge: Callable[[K, K, F], F] | None = None


@dataclass(slots=True)
class Solution(Generic[K, F]):
    top: dict[K, F]  # the fact before each block (in program order)
    bottom: dict[K, F]  # ... and after it
    visits: int  # blocks taken off the worklist (a measure of work)


def solve(succs: Mapping[K, Sequence[K]], a: Analysis[K, F], entry: K) -> Solution[K, F]:
    """The fixed point of ``a`` on the blocks ``succs`` (block -> its successors, in
    layout order) entered at ``entry``."""
    preds: dict[K, list[K]] = {b: [] for b in succs}
    for b, targets in succs.items():
        for t in targets:
            preds[t].append(b)
    # Facts flow in along ``ins`` and out along ``outs``: the edges, or the edges reversed.
    ins, outs = (preds, succs) if a.forward else (succs, preds)
    near = {b: a.init for b in succs}  # where the flow enters a block (top when forward)
    far = {b: a.init for b in succs}  # ... and leaves it
    boundary = a.init if a.boundary is None else a.boundary
    # Every block starts on the list, in layout order (most predecessors come first), for
    # a backward problem in reverse (most successors first).
    work = deque(succs if a.forward else reversed(list(succs)))
    queued = set(work)
    visits = 0
    while work:
        b = work.popleft()
        queued.discard(b)
        visits += 1
        # the near side: the merge of what flows in (the boundary where the flow starts)
        facts = [far[o] if a.edge is None else
                 a.edge(o, b, far[o]) if a.forward else a.edge(b, o, far[o]) for o in ins[b]]
        if b == entry if a.forward else not succs[b]:
            facts.insert(0, boundary)
        near[b] = a.init if not facts else facts[0] if len(facts) == 1 else a.merge(*facts)
        new = a.transfer(b, near[b])  # the far side: through the block
        if new == far[b]:
            continue
        far[b] = new
        for o in outs[b]:  # whatever reads this block's result must look again
            if o not in queued:
                queued.add(o)
                work.append(o)
    return Solution(near, far, visits) if a.forward else Solution(far, near, visits)
