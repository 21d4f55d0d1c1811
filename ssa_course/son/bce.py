"""Checks the facts prove, and their removal (lesson 09).

Every Tiny array access carries a bounds check: ``If(InBounds(i, len(a)))`` whose false
side is a ``Trap`` "index out of bounds". The range analysis
(:mod:`~ssa_course.son.range_facts`) knows, in the block of each check, the range of
``i`` and its symbolic upper bounds; the check goes when they prove ``0 <= i`` and
``i < len(a)`` (a number below the length's smallest value, or a bound ``i <= L + d``
with ``L`` that very length and ``d <= -1``). Its If then gets the constant ``true`` as
predicate and the iterative peepholes do the rest: the Trap loses its control, the
access's projection becomes the If's own control, what only the check needed goes.

A check that can fail stays, so a program that traps still traps at the same place with
the same output before it. Only the bounds half of an access goes: the "unset element"
test of an array of references is another If on ``IsSet`` and is never touched.

:func:`decide_branches` does the same for other branches on an integer comparison (the
``ranges`` pass): a test the facts decide becomes a constant.

One analysis for both passes (#22): ``ranges`` runs right before ``bce`` in the default
pipeline, and the analysis it solves also decides the bounds checks (cheap, next to the
solve). It hands ``bce`` the checks it proved (:data:`Proven`); ``bce`` takes a check as
proven when it is still there with the same test, and solves again only when some check
is left undecided -- then it keeps the union of both answers. Why a proof made on the
graph before ``ranges``' peepholes still holds after them: a peephole replaces a node only
by one of equal value and changes a control node in place only to drop paths control
never takes, so whenever the If runs in the new graph its test has the value it had in the
old one, which the analysis proved true.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ssa_course.son.control import If, Proj, Trap
from ssa_course.son.data import Compare, Not, compare_ranges, const
from ssa_course.son.edge_facts import EdgeFacts, blocks_of, peel
from ssa_course.son.graph import Node
from ssa_course.son.intervals import fits
from ssa_course.son.iterate import iterate
from ssa_course.son.memory import InBounds, Len, Load, NewArray, Store
from ssa_course.son.program import FunctionGraph
from ssa_course.son.range_facts import RangeAnalysis, analyse, is_int
from ssa_course.son.symbolic import same_length
from ssa_course.son.types import FALSE, TRUE, BoolType, IntType

BOUNDS_TRAP = "index out of bounds"

# Checks a range analysis proved: If id -> the id of its InBounds test (what
# :func:`decide_branches` hands :func:`eliminate_bounds_checks`)
Proven = Mapping[int, int]


@dataclass
class Decision:
    """What the analysis says about one check or branch: ``proven`` True (always passes),
    False (never), None (it depends); ``why`` in a few words for the lesson."""

    iff: If
    proven: bool | None
    why: str


@dataclass
class BceResult:
    """One function: the analysis, the decision on every bounds check (by If id)."""

    analysis: RangeAnalysis
    checks: dict[int, Decision] = field(default_factory=dict)

    def removed(self) -> list[Decision]:
        return [d for d in self.checks.values() if d.proven]


def trap_of(iff: If) -> Trap | None:
    """The Trap on the false side of a check (None for an ordinary branch)."""
    for proj in iff.outputs:
        if isinstance(proj, Proj) and proj.is_control and proj.index == 1:
            for u in proj.outputs:
                if isinstance(u, Trap) and u.inputs[0] is proj:
                    return u
    return None


def bounds_checks(fg: FunctionGraph) -> list[If]:
    """The Ifs that guard an array access (an ``InBounds`` test, "index out of bounds")."""
    out = []
    for n in fg.nodes():
        if isinstance(n, If) and isinstance(n.inputs[1], InBounds):
            trap = trap_of(n)
            if trap is not None and trap.message == BOUNDS_TRAP:
                out.append(n)
    return out


def below(ra: RangeAnalysis, x: Node, n: Node, block: str | None) -> str | None:
    """Why ``x < n`` holds in ``block`` (None: not proven)."""
    # First by numbers alone: every value x may have is below every value n may have.
    rx, rn = ra.in_block(x, block), ra.in_block(n, block)
    if rx.lo <= rx.hi and rn.lo <= rn.hi and rx.hi < rn.lo:
        return f"{rx} < {rn}"
    # Then symbolically: a known bound ``x <= L + d`` with ``L`` the length itself (or ``n``
    # peeled of a constant, ``n = L + k``) proves ``x < n`` when ``d <= k - 1``.
    bounds = ra.upper(x, block) or {}
    n_base, kn = peel(n)
    targets = [(n, 0)]
    if n_base is not n and fits(ra.in_block(n_base, block), kn):
        # Peeling is only sound when ``L + k`` cannot wrap: ``fits`` checks that on L's range.
        targets.append((n_base, kn))
    for node, d in bounds.values():
        for target, k in targets:
            if d <= k - 1 and same_length(node, target):
                return f"<= {target.label}#{target.id}{d - k:+d}"  # d - k <= -1
    return None


def decide_check(ra: RangeAnalysis, iff: If) -> Decision:
    """Is the bounds check ``iff`` proven (``0 <= i`` and ``i < len`` in its block)?"""
    pred = iff.inputs[1]
    assert isinstance(pred, InBounds)
    block = ra.facts.block_of(iff)
    x, n = pred.operand(1), pred.operand(2)
    rx = ra.in_block(x, block)
    # An empty range: no value reaches the check (dead code the peepholes will remove);
    # deciding nothing is the safe answer.
    if rx.lo > rx.hi:
        return Decision(iff, None, "never reached with a value")
    if rx.lo < 0:
        return Decision(iff, None, f"index in {rx}: may be negative")
    # Both halves must hold; each "None" decision keeps the check, so a program that can
    # trap still traps at the same place.
    why = below(ra, x, n, block)
    if why is None:
        return Decision(iff, None, f"index in {rx}: may reach the length")
    return Decision(iff, True, f"index in {rx}, {why}")


def decide_compare(ra: RangeAnalysis, iff: If) -> bool | None:
    """An If on an integer comparison (possibly negated) the facts decide."""
    pred, negated = iff.operand(1), False
    # ``!(a < b)`` is decided like ``a < b``, with the answer flipped per Not.
    while isinstance(pred, Not):
        pred, negated = pred.operand(1), not negated
    if not isinstance(pred, Compare) or not (is_int(pred.operand(1))
                                             and is_int(pred.operand(2))):
        return None
    block = ra.facts.block_of(iff)
    a, b = pred.operand(1), pred.operand(2)
    ra_, rb = ra.in_block(a, block), ra.in_block(b, block)
    if ra_.lo > ra_.hi or rb.lo > rb.hi:
        return None
    t = compare_ranges(pred.op, ra_, rb)
    answer = t.value if isinstance(t, BoolType) else None
    # A symbolic bound decides ``<`` (true) and its negation ``>=`` (false); the mirrored
    # pair below swaps the operands.
    if answer is None and pred.op in ("<", ">="):
        answer = True if below(ra, a, b, block) is not None else None
        if answer is not None and pred.op == ">=":
            answer = False
    if answer is None and pred.op in (">", "<="):
        answer = True if below(ra, b, a, block) is not None else None
        if answer is not None and pred.op == "<=":
            answer = False
    return None if answer is None else answer != negated


def _set_predicate(iff: If, value: bool) -> None:
    # The predicate becomes a constant and nothing else changes here: removing the dead side
    # (and the Trap) is the iterative peepholes' work, the same rules as everywhere.
    iff.set_input(1, const(iff, value))
    iff.type = iff.compute()  # its dead side shows at once (son/endless.py reads it)


def decide_checks(fg: FunctionGraph) -> BceResult:
    """Analyse ``fg`` and decide every bounds check (the graph is not changed)."""
    ra = analyse(fg)
    result = BceResult(ra)
    for iff in bounds_checks(fg):
        result.checks[iff.id] = decide_check(ra, iff)
    return result


def mark_accesses(fg: FunctionGraph, facts: EdgeFacts, removed: list[If]) -> None:
    """Record on the graph, for the back end, the loads and stores in bounds: those at the
    array and index of a proven check (``removed``; ``facts`` gives the graph's blocks and
    dominators), below its true side (there the index is the value the check tested, and
    that test always passes -- an access the parser let share an earlier check counts
    too)."""
    by_index: dict[int, list[Node]] = {}
    for n in fg.nodes():
        if isinstance(n, (Load, Store)) and n.inputs[0] is not None:
            by_index.setdefault(n.operand(3).id, []).append(n)
    for iff in removed:
        pred = iff.operand(1)
        proj = next((p for p in iff.outputs if isinstance(p, Proj) and p.is_control
                     and p.index == 0), None)
        here = facts.cfg.owner.get(proj.id) if proj is not None else None
        if here is None:
            continue
        # An access is in bounds when it reads the checked index of the checked array in a
        # block the check's true side dominates: there the proven test has passed.
        for u in by_index.get(pred.operand(1).id, ()):
            where = facts.block_of(u.inputs[0])
            if where is not None and where in facts.dom.pre \
                    and facts.dom.dominates(here, where) \
                    and _length_of(pred.operand(2), u.operand(2)):
                fg.graph.in_bounds.add(u.id)


def _length_of(length: Node, array: Node) -> bool:
    if isinstance(length, Len):
        return length.inputs[1] is array
    return isinstance(array, NewArray) and array.inputs[1] is length


def eliminate_bounds_checks(fg: FunctionGraph, proven: Proven | None = None
                            ) -> tuple[dict[int, Decision], int, int]:
    """Remove the bounds checks the facts prove; (the decision on each check by If id,
    checks before, after). ``proven``: the checks the ``ranges`` pass proved on this
    graph just before (see the module's docstring); a check still there with the same
    test needs no new analysis, and the function is analysed again only when some check
    is not among them."""
    checks = bounds_checks(fg)
    decisions: dict[int, Decision] = {}
    facts: EdgeFacts | None = None
    if proven:
        for iff in checks:
            if proven.get(iff.id) == iff.operand(1).id:
                decisions[iff.id] = Decision(iff, True, "proven by the ranges pass")
    if len(decisions) < len(checks):
        # Some check is undecided: the analysis of this graph decides it. (The graph the
        # peepholes left may have narrower types: this analysis may prove a check the
        # first did not; a check either proves is proven.)
        result = decide_checks(fg)
        facts = result.analysis.facts
        for key, d in result.checks.items():
            decisions.setdefault(key, d)
    else:
        facts = blocks_of(fg)  # the marks below need only the blocks and dominators
    removed = [iff for iff in checks if decisions[iff.id].proven]  # in the graph's order
    # Marked before the checks go: afterwards the Ifs that tell which access they guarded
    # are gone.
    mark_accesses(fg, facts, removed)
    for iff in removed:
        _set_predicate(iff, True)
    if removed:
        iterate(fg.graph)
    return decisions, len(checks), len(bounds_checks(fg))


def decide_branches(fg: FunctionGraph, proven: dict[int, int] | None = None
                    ) -> tuple[RangeAnalysis, int]:
    """The ``ranges`` pass on one graph: install the ranges as node types (each is true of
    every value) and make constant the comparisons the facts decide; returns the analysis
    and how many branches were decided. ``proven``: filled with the bounds checks the
    same analysis proves (:data:`Proven`, for :func:`eliminate_bounds_checks`), decided
    before anything here changes the graph."""
    ra = analyse(fg)
    if proven is not None:
        for iff in bounds_checks(fg):
            if decide_check(ra, iff).proven:
                proven[iff.id] = iff.operand(1).id
    decided = 0
    for iff in [n for n in fg.nodes() if isinstance(n, If)]:
        answer = decide_compare(ra, iff)
        # Already constant: the peepholes will (or did) fold it; counting it would inflate the
        # lesson's number.
        if answer is not None and iff.operand(1).type not in (TRUE, FALSE):
            _set_predicate(iff, answer)
            decided += 1
    # The ranges become types so the peepholes fold with them too (a ``%`` whose operand is
    # known small, a comparison inside the loop body).
    install_ranges(fg, ra)
    iterate(fg.graph)
    return ra, decided


def install_ranges(fg: FunctionGraph, ra: RangeAnalysis) -> bool:
    """Make the ranges the nodes' types, where they say more than the types do -- but only
    when no node's own transfer would narrow them further: the iterative peepholes narrow
    a type whenever ``compute()`` says more, and around a loop that could go on one step
    at a time (the facts the analysis used are not in ``compute()``). False: nothing
    installed."""
    saved = {n.id: n.type for n in ra.nodes}
    # The join of two true facts is true: a node's type and its range both hold of every
    # value it has, so the type may become their intersection.
    for n in ra.nodes:
        r = ra.ranges.get(n.id)
        if r is not None and r.lo <= r.hi:
            both = n.type.join(r)
            if isinstance(both, IntType) and both.lo <= both.hi:
                n.type = both
    for n in ra.nodes:
        # A type compute() could still narrow would start the peepholes narrowing one loop trip
        # at a time: then install nothing at all (all or nothing keeps the types consistent).
        if n.type.join(n.compute()) != n.type:
            for m in ra.nodes:
                m.type = saved[m.id]
            return False
    return True
