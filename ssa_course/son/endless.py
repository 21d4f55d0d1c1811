"""Loops that became endless get a ``Never`` exit (the parser's rule, applied late).

The parser gives ``while (true) { ... }`` an exit control never takes (:class:`Never`),
so that Stop still reaches the loop and the memory it works on: the sweep keeps only
what Stop reads. A loop can also *become* endless later: SCCP or the range analysis
prove its test always true (``k = 1; while (k < 4) { k = 1; print(n); }``), its exit
dies, and then nothing below Stop reads the loop, the prints inside it, or the prints
before it. Without a Never exit the sweep would delete them all (a program that prints
forever would print nothing). So, after the peepholes settle and before the sweep,
every merge that control reaches from Start but that no longer reaches Stop, and that
is the head of a loop, gets a Never exit with the memory at its head
(:func:`memory_at`). Simple does the same when it builds its loop tree (``forceExit``).
"""

from __future__ import annotations

from ssa_course.son.control import Never, Phi, Proj, Region, Start, Stop, goes_to
from ssa_course.son.graph import Graph, Node
from ssa_course.son.memory import Effect
from ssa_course.son.types import CTRL, MEM, MEM_TOP, TOP, ControlType, TupleType

# Memory as well as control: a loop's effects hang on memory, so a Never exit needs the
# memory state at the loop head, or the sweep would keep the loop but not its prints.
_WALK_LIMIT = 100_000  # control nodes a memory walk may pass (a bound, not a budget)


def _is_memory(n: Node) -> bool:
    return n.type in (MEM, MEM_TOP)


def memory_at(ctrl: Node) -> Node | None:
    """The memory state where control is at ``ctrl``: the last memory effect pinned
    there (a store or print under this control, the memory phi of a merge, a call's
    memory result, Start's memory), else the one above it. None if there is none."""
    c: Node | None = ctrl
    for _ in range(_WALK_LIMIT):
        if c is None:
            return None
        # effects pinned at c, and the merge's memory phi: a chain in memory order
        here = [u for u in c.outputs if _is_memory(u) and u.inputs and u.inputs[0] is c
                and isinstance(u, (Effect, Phi))]
        if here:
            # The last of the chain is the effect no other effect here reads as its memory.
            read = {id(u.inputs[1]) for u in here if isinstance(u, Effect)}
            last = [u for u in here if id(u) not in read]
            return max(last or here, key=lambda u: u.id)
        if isinstance(c, Proj) and c.inputs[0] is not None:
            # below a call (or Start): its memory result is the state here
            source = c.inputs[0]
            mem = next((p for p in source.outputs if isinstance(p, Proj) and _is_memory(p)),
                       None)
            if mem is not None:
                return mem
        # Start's memory is its projection, handled just above: reaching Start itself means no
        # memory state was found.
        if isinstance(c, Start):
            return None
        if isinstance(c, Region):
            # no memory phi: every path brings the same memory state; take a live one
            c = next((p for p in c.inputs[1:] if p is not None and p.type == CTRL),
                     None)
        else:
            c = c.inputs[0] if c.inputs else None
    return None


def _dead(n: Node) -> bool:
    """Control the types say is never taken: a dead (or unreached) control type, or the
    side of a branch or call whose type says that side is dead (before the side's own
    type was looked at again)."""
    # Read from the types only, never from the shape: this runs between peephole rounds,
    # when a dead side may not have been folded away yet.
    t = n.type
    # (live control, the usual case, is told by identity first)
    if t is not CTRL and (isinstance(t, ControlType) and t != CTRL or t == TOP):
        return True
    if not isinstance(n, Proj) or not n.inputs:
        return False
    source = n.inputs[0]
    if source is not None and isinstance(source.type, TupleType) \
            and n.index < len(source.type.types):
        side = source.type.types[n.index]
        return isinstance(side, ControlType) and side != CTRL or side == TOP
    return False


def reaching(exits: list[Node | None], live_only: bool = True) -> set[int]:
    """Control nodes from which some path goes on to one of ``exits`` (walking control
    inputs up: every path of a merge, the control input of anything else); with
    ``live_only``, control the types say is dead stops the walk.

    The one backward control walk: this module asks it after the peepholes, and
    ``son/from_ssa.py`` while it builds (its types are not final yet, so it walks all)."""
    seen: set[int] = set()
    work = list(exits)
    while work:
        n = work.pop()
        if n is None or n.id in seen or not n.is_control or live_only and _dead(n):
            continue
        seen.add(n.id)
        # Backwards along control: a merge from each of its paths, anything else from its
        # control input.
        work.extend(n.inputs[1:] if isinstance(n, Region) else n.inputs[:1])
    return seen


def _successors(n: Node) -> list[Node]:
    """Where live control goes from ``n`` (not into Stop or a Never exit)."""
    return [u for u in n.outputs if goes_to(n, u) and not isinstance(u, (Stop, Never))
            and not _dead(u)]


def _forward(start: Node) -> list[Node]:
    """Live control nodes reached from ``start``, breadth first (dominators come before
    the nodes they dominate, so an outer loop's head before an inner one's)."""
    order = [start]
    seen = {start.id}
    for n in order:  # the list grows while it is walked
        for u in _successors(n):
            if u.id not in seen:
                seen.add(u.id)
                order.append(u)
    return order


def _loop_head(region: Region, lost: set[int]) -> bool:
    """Control that leaves ``region`` comes back to it through nodes of ``lost``."""
    seen = {region.id}
    work: list[Node] = [region]
    while work:
        for u in _successors(work.pop()):
            if u is region:
                return True
            if u.id in lost and u.id not in seen:
                seen.add(u.id)
                work.append(u)
    return False


def _all_reach(g: Graph, to_stop: set[int]) -> bool:
    """Every live control node of ``g`` reaches Stop (is in ``to_stop``). Then so does
    every node the forward walk from Start would reach (it reaches live control nodes
    only, Start among them), so nothing is lost. A scan of the node table: cheaper than
    the forward walk, which looks at every user of every control node (Start's
    constants, the phis of each merge)."""
    for n in g.nodes.values():
        if n.is_control and n.id not in to_stop and not _dead(n) \
                and not isinstance(n, (Stop, Never)):
            return False
    return True


def give_endless_loops_an_exit(g: Graph) -> list[Never]:
    """Add a Never exit to every live loop head that control reaches from Start but that
    no longer reaches Stop; returns the exits added (usually none: one walk back from
    Stop and a scan of the nodes; the walk forward from Start only when some live control
    node is not on the first)."""
    stop, start = g.stop, g.start
    if stop is None or start is None:
        return []  # a graph still being built
    # Two walks: forward from Start (what runs) and backward from Stop (what leads out).
    # A node in the first and not the second can only go round forever. (The forward one
    # only when the cheaper scan finds a live control node off the backward one.)
    to_stop = reaching(list(stop.inputs))
    if _all_reach(g, to_stop):
        return []  # no control node the forward walk could reach is lost: skip that walk
    reached = _forward(start)
    lost = {n.id for n in reached if n.id not in to_stop}
    if not lost:
        return []  # the usual case: every reached control node goes on to Stop
    added: list[Never] = []
    for n in reached:  # outer loops first: an exit for one may give its inner loops one
        # Only a loop head gets the exit: a plain node on the way is inside the loop (or after
        # it), and the head's exit makes it reachable from Stop too.
        if n.id not in lost or not isinstance(n, Region) or n.type != CTRL \
                or not _loop_head(n, lost):
            continue
        mem = memory_at(n)
        if mem is None:
            continue
        never = Never(g, n, mem)
        # Typed by hand (a Never is always live control): it is made outside the driver,
        # which would otherwise have computed its type.
        never.type = CTRL
        stop.add_input(never)
        added.append(never)
        # What the new exit makes reachable from Stop is no longer lost: the loops inside this
        # one need no exit of their own.
        lost -= reaching([never])
    return added
