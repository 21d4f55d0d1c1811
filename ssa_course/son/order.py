"""Putting nodes in an order their edges allow (used by the interpreter and by GCM).

Inside one block (or at one control node) the nodes must run after their inputs, and a
load must run before a store (or print) that consumes the same memory state: the store
would otherwise overwrite what the load should read -- an *anti-dependence*, the one
ordering the graph's edges do not spell out. Ties go to the lower node id, i.e. to the
order in which the program made the nodes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ssa_course.son.graph import Node
from ssa_course.son.memory import Load, LoadField, Print, Store, StoreField


def anti_dependences(members: Iterable[Node]) -> Callable[[Node], list[Node]]:
    """For each effect among ``members``, the loads among them that read the memory state
    it consumes (and so must come first)."""
    # Loads grouped by the memory state they read: an effect consuming that same state
    # overwrites it, so those loads come first.
    loads_of: dict[Node, list[Node]] = {}
    for m in members:
        if isinstance(m, (Load, LoadField)):
            loads_of.setdefault(m.operand(1), []).append(m)

    def loads_before(n: Node) -> list[Node]:
        # Print too, though it writes no heap slot: every effect gets the loads of the state
        # it consumes before it (for Print not needed, only kept uniform).
        if isinstance(n, (Store, StoreField, Print)) and n.inputs[1] is not None:
            return [x for x in loads_of.get(n.inputs[1], []) if x is not n]
        return []

    return loads_before


def dependency_order(members: list[Node],
                     waits_for: Callable[[Node], Iterable[Node | None]],
                     walk_through: Callable[[Node], bool] | None = None) -> list[Node]:
    """``members`` with every node after what it ``waits_for`` (depth-first, roots in id
    order; a None among them, an absent input, is skipped). Nodes outside ``members`` for
    which ``walk_through`` says yes are followed (a floating expression between two
    effects) but not listed."""
    member_set = set(members)
    out: list[Node] = []
    done: set[Node] = set()
    explored: set[Node] = set()
    # Roots in id order, so ties keep the order the program made the nodes in (a stable,
    # readable listing).
    for root in sorted(members, key=lambda n: n.id):
        stack: list[tuple[Node, bool]] = [(root, False)]
        while stack:
            n, ready = stack.pop()
            if n in done:
                continue
            # Second visit: everything it waits for is out, so it may go now (post-order by an
            # explicit stack: deep chains would overflow Python's).
            if ready:
                done.add(n)
                if n in member_set:
                    out.append(n)
                continue
            # Explored but not done: met again on a path from itself. The graph inside a block has
            # no cycles, so this only skips a node already on the stack.
            if n in explored:
                continue
            explored.add(n)
            stack.append((n, True))
            # Reversed so that the first dependency is taken first (the stack pops the last).
            for d in reversed(list(waits_for(n))):
                if d is not None and d not in done and (
                        d in member_set or (walk_through is not None and walk_through(d))):
                    stack.append((d, False))
    return out
