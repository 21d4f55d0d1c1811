"""The worklist of the iterative peepholes, and how it is ordered (lessons 06-07).

A worklist driver is correct in *any* order: every node that might still simplify is on
the list, and the list runs dry only when no rule applies anywhere. Taking nodes first in,
first out is what the lessons show (the same graph every run). Simple's ``IterPeeps`` pops
a *random* node instead, from a seeded generator: a rewrite that only works in one order
-- a rule that forgot to ask to be revisited when a distant node changes -- then shows up
as a different graph, or as progress left at the end. :func:`peephole_order` switches
that on for a block of code (``make fuzz`` runs every program with its own seed), and can
ask the driver to check, when it stops, that no node would still change.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from ssa_course.son.graph import Node


@dataclass(frozen=True, slots=True)
class Order:
    """How the iterative peepholes take nodes off their worklist: ``seed`` None is first
    in, first out; a number pops a random node (that seed's sequence). ``check`` makes
    the driver verify at the end that the graph has no progress left (slow: a debug
    mode for tests and fuzzing)."""

    seed: int | None = None
    check: bool = False


# A context variable rather than an argument: the order reaches every driver run inside
# the block (each pass, each function) without threading a parameter through them.
_ORDER: ContextVar[Order | None] = ContextVar("peephole_order", default=None)


@contextmanager
def peephole_order(seed: int | None = None, check: bool = False) -> Iterator[Order]:
    """Within the block, the iterative peepholes use this :class:`Order`."""
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise TypeError(f"a worklist seed is an int or None, not {seed!r}")
    token = _ORDER.set(Order(seed, check))
    try:
        yield current_order()
    finally:
        _ORDER.reset(token)


def current_order() -> Order:
    """The :class:`Order` in force (first in, first out and no check, unless set)."""
    return _ORDER.get() or Order()


class Worklist:
    """Each node at most once; first in, first out, or a seeded random pick."""

    def __init__(self, nodes: Iterable[Node], seed: int | None = None):
        self.rng = random.Random(seed) if seed is not None else None
        self.queue: deque[Node] = deque()  # first in, first out
        self.bag: list[Node] = []  # random order: pop any element
        # By id: the membership test is what keeps each node on the list at most once, so a
        # node pushed by many neighbours is still looked at once.
        self.on: set[int] = set()
        self.push_all(nodes)

    def push(self, node: Node | None) -> None:
        if node is not None and node.id not in self.on:
            self.on.add(node.id)
            (self.queue if self.rng is None else self.bag).append(node)

    def push_all(self, nodes: Iterable[Node | None]) -> None:
        # push() for each, without the call per node
        on = self.on
        add = (self.queue if self.rng is None else self.bag).append
        for n in nodes:
            if n is not None and n.id not in on:
                on.add(n.id)
                add(n)

    def pop(self) -> Node | None:
        if self.rng is None:
            if not self.queue:
                return None
            node = self.queue.popleft()
        else:
            if not self.bag:
                return None
            # a random element, swapped with the last one so that removing it is O(1)
            k = self.rng.randrange(len(self.bag))
            self.bag[k], self.bag[-1] = self.bag[-1], self.bag[k]
            node = self.bag.pop()
        # Off the list once taken: a change after this look pushes it again.
        self.on.discard(node.id)
        return node

    def __contains__(self, node: Node) -> bool:
        return node.id in self.on
