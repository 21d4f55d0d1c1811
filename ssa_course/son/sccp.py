"""Sparse conditional constant propagation on the sea of nodes (lesson 07).

The *optimistic* analysis: every node starts at TOP ("no value has reached here yet"),
all code unreachable. A worklist starts at Start; a node is re-examined when one of its
inputs' types falls, its new type (its own ``compute()`` -- the very transfer functions
the pessimistic peepholes use) is recorded, and if it fell, every user is pushed along
the def-use edges. An If only makes a projection live when its predicate allows it, so
code behind a branch that is never taken stays TOP and never pollutes a Phi.

Where the pessimistic parser had to assume the worst about a loop's back edge, SCCP
assumes the best and only gives up what the program proves: ``x = 1; while (...) { x =
2 - x; }`` keeps ``x`` at 1.

:func:`sccp` runs the analysis and records a step-by-step :class:`TraceStep` list (the
lesson replays it with a slider); :func:`apply_sccp` then installs the types and lets the
iterative peepholes rewrite the graph to a fixed point: constant-typed nodes become
Constants, Ifs with one dead side disappear, dead paths leave their Regions, what is no
longer reachable from Stop is swept away, and the rewrites all this unlocks follow.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ssa_course.runtime import paused_gc
from ssa_course.son.control import If, Never, Phi, Region, Stop
from ssa_course.son.data import Constant
from ssa_course.son.graph import Node
from ssa_course.son.intervals import widen
from ssa_course.son.iterate import iterate
from ssa_course.son.program import FunctionGraph, SeaOfNodes
from ssa_course.son.types import CTRL, INT_BOTTOM, TOP, XCTRL, IntType, TupleType, Type

# Without widening a loop counter's range would fall one step per trip round the loop
# (``[0,0]``, ``[0,1]``, ``[0,2]``...): the analysis would take as long as the program.
WIDEN_AFTER = 3  # a phi's range that keeps changing is widened (lesson 09's ``widen``)


@dataclass(slots=True)
class TraceStep:
    """One worklist step: which node, its type before and after, what was pushed."""

    node: int
    label: str
    old: str
    new: str
    pushed: list[int]
    new_type: Type


@dataclass
class SccpResult:
    """The optimistic types of one function graph (by node id) and how they were found."""

    types: dict[int, Type]
    trace: list[TraceStep] = field(default_factory=list)
    steps: int = 0

    def constants(self, fg: FunctionGraph) -> list[Node]:
        """Value nodes proven constant (Constant nodes themselves not counted)."""
        return [n for n in fg.nodes() if not n.is_control and not isinstance(n, Constant)
                and self.types.get(n.id, TOP).is_constant()]

    def dead(self, fg: FunctionGraph) -> list[Node]:
        """Nodes control never reaches (control nodes still TOP or dead) and what hangs
        on them."""
        out = []
        for n in fg.nodes():
            dead_control = n.is_control and not isinstance(n, (Stop, Never)) \
                and self.types.get(n.id, TOP) in (TOP, XCTRL)
            dead_effect = n.is_pinned() and self.types.get(n.operand(0).id, TOP) in (TOP, XCTRL)
            if dead_control or dead_effect:
                out.append(n)
        return out


def users_to_push(n: Node) -> list[Node]:
    """Whom a fallen type concerns: every user (def-use edges), and when ``n`` is control,
    also the phis of the regions it enters (a path that came alive brings its value)."""
    users = dict.fromkeys(n.outputs)  # each once, in order (a dict: no list searches)
    if n.is_control:
        for u in list(users):
            # A path into a Region coming alive changes what each phi meets, though the phi does
            # not read the path's control node: it reads the Region. So the phis are pushed here.
            if isinstance(u, Region):
                for p in u.phis():
                    users.setdefault(p)
    return list(users)


def replay(result: SccpResult, steps: int) -> dict[int, Type]:
    """The types after the first ``steps`` changes of a traced run (a node not changed
    yet is still TOP, and absent here)."""
    types: dict[int, Type] = {}
    for step in result.trace[:steps]:
        types[step.node] = step.new_type
    return types


def _live(t: Type) -> bool:
    # Live control, or a tuple: an If, Call or Start the worklist reached (whether each of
    # its sides is live is in the tuple's elements).
    return t == CTRL or t.kind == "tuple"


def sccp(fg: FunctionGraph, trace: bool = False) -> SccpResult:
    """Analyse one graph optimistically. Node types in the graph are left untouched while
    the analysis runs on a side table; :func:`apply_sccp` installs them."""
    with paused_gc():  # a big graph is a big heap the collector would rescan
        return _sccp(fg, trace)


def _sccp(fg: FunctionGraph, trace: bool) -> SccpResult:
    nodes = fg.nodes()
    # The analysis runs in the nodes' own ``type`` fields, so every ``compute()`` reads the
    # optimistic types of its inputs; the pessimistic ones are restored at the end (finally:
    # even on an error), and only apply_sccp installs the new ones.
    saved = {n.id: n.type for n in nodes}
    for n in nodes:
        # Optimism: every node starts "not reached". Nothing is known to be live until the
        # worklist reaches it from Start.
        n.type = TOP
    changes: dict[int, int] = {}
    result = SccpResult({})
    # One queue, and ``queued`` keeps each node in it at most once: a node is looked at
    # after its inputs changed, however many of them did.
    work: list[Node] = [fg.start]
    queued = {fg.start.id}
    try:
        while work:
            n = work.pop()
            queued.discard(n.id)
            result.steps += 1
            new = n.compute()
            old = n.type
            # No change: nothing downstream can learn anything new from this node.
            if new is old or new == old:
                continue
            new = old.meet(new)  # types only fall, even through a coarse transfer
            if isinstance(new, IntType) and not new.is_constant() and new != INT_BOTTOM \
                    and isinstance(n, Phi):
                # any phi, not just a Loop's: Bril's loops are plain Regions
                changes[n.id] = changes.get(n.id, 0) + 1
                if changes[n.id] >= WIDEN_AFTER and isinstance(old, IntType):
                    new = widen(old, new)  # the bound that moved goes to its end
            # The widened type may be where it was: then again nothing to push.
            if new == old:
                continue
            n.type = new
            # Sparse: only the users of a node whose type fell are looked at again (Wegman &
            # Zadeck, on def-use edges as Click does). The transfers are monotone, so the order
            # work is taken in does not change the fixed point reached -- except where widening,
            # which counts a phi's changes, sets in earlier or later.
            if trace:
                pushed = []
                for u in users_to_push(n):
                    if u.id not in queued:
                        queued.add(u.id)
                        work.append(u)
                        pushed.append(u.id)
                result.trace.append(TraceStep(n.id, n.label, str(old), str(new), pushed, new))
                continue
            for u in (users_to_push(n) if n.is_control else n.outputs):
                # (a value's users are its outputs; one listed twice is queued once)
                if u.id not in queued:
                    queued.add(u.id)
                    work.append(u)
        result.types = {n.id: n.type for n in nodes}
    finally:
        for n in nodes:
            n.type = saved[n.id]
    return result


def apply_sccp(fg: FunctionGraph, result: SccpResult) -> dict[str, int]:
    """Rewrite ``fg`` with what SCCP proved; returns counts for the lesson.

    The types SCCP found are installed, then the iterative peepholes
    (:mod:`~ssa_course.son.iterate`) run to a fixed point: constant-typed values become
    Constants, an If with one dead side disappears, dead paths leave their Regions, exits
    control never reaches leave Stop -- and every rewrite these unlock follows (``x + 0``
    once SCCP found the 0, a compare of a value with itself, a phi whose inputs became
    equal)."""
    types = result.types
    counts = {"constants": 0, "dead branches": 0, "dead paths": 0}
    # SCCP's types are a fixed point of every compute(), so installing them all at once is
    # consistent; the Ifs and Regions are counted on the way for the lesson's table.
    for n in fg.nodes():
        t = n.type = types.get(n.id, TOP)
        if isinstance(n, If) and isinstance(t, TupleType) and t.types[0] != t.types[1]:
            counts["dead branches"] += 1
        elif isinstance(n, Region) and _live(t):
            counts["dead paths"] += sum(1 for p in n.inputs[1:] if p is None
                                        or not _live(types.get(p.id, TOP)))
    # The rewriting itself is the same peephole rules as parsing: a node whose type is now a
    # constant becomes a Constant, a dead side goes, and whatever that unlocks follows.
    stats = iterate(fg.graph)
    counts["constants"] = stats.constants
    counts["rewrites"] = stats.rewrites
    counts["gvn"], counts["idealized"] = stats.gvn_hits, stats.idealized
    return counts


def optimistic(program: SeaOfNodes, trace: bool = False) -> dict[str, SccpResult]:
    """SCCP every function (analysis only)."""
    return {name: sccp(fg, trace) for name, fg in program.functions.items()}


def apply_to_program(program: SeaOfNodes) -> dict[str, int]:
    """Analyse and rewrite every function of ``program`` in place; the totals are kept on
    the program (``program.sccp_counts``)."""
    totals: dict[str, int] = {}
    for fg in program.functions.values():
        for k, v in apply_sccp(fg, sccp(fg)).items():
            totals[k] = totals.get(k, 0) + v
    program.sccp_counts = totals
    return totals
