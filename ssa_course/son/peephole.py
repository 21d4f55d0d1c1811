"""The generic peephole driver: compute, constant, GVN, idealize, dead code (lesson 06).

For every node the parser makes (in topological order, so its inputs are already final):

1. compute its type; types only ever move *down* the lattice;
2. a node whose type is a constant becomes a Constant node;
3. look it up in the GVN table (opcode + inputs): an equal node already exists? use it;
4. ask the node to ``idealize()`` itself, and peephole the replacement again;
5. whatever lost its last user is deleted.

The driver knows nothing about any particular opcode. With ``enabled=False`` it only
computes types: the parser then builds the *raw* graph, for comparison.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ssa_course.errors import VerifyError
from ssa_course.son.data import Constant
from ssa_course.son.graph import Node


@dataclass(slots=True)
class PeepholeStats:
    """What the driver did: the numbers the lessons print."""

    constants_found: int = 0  # nodes replaced by a Constant
    gvn_hits: int = 0  # nodes replaced by an equal, older node
    idealized: int = 0  # algebraic rewrites applied
    dead_branches: int = 0  # If nodes with a constant predicate (one side never built)
    killed: int = 0  # nodes deleted because nobody used them any more


class Peephole:
    """``key`` replaces ``Node.key`` as the GVN key (the exercises plug theirs in)."""

    def __init__(self, start: Node, enabled: bool = True,
                 key: Callable[[Node], tuple | None] | None = None):
        self.start = start
        self.enabled = enabled
        self.gvn: dict[tuple, Node] = {}
        self.stats = PeepholeStats()
        self.key = key or (lambda node: node.key())

    @property
    def constants_found(self) -> int:
        return self.stats.constants_found

    def __call__(self, node: Node) -> Node:
        """Optimize a freshly made node; returns the node to use instead (maybe itself)."""
        new_type = node.compute()
        old = node.type
        if old != new_type and old.kind != "top" and not new_type.isa(old):
            raise VerifyError("types only move down the lattice", repr(node),
                              f"{old} -> {new_type}")
        node.type = new_type
        if not self.enabled:
            return node
        if new_type.is_constant() and not isinstance(node, Constant) and not node.is_control:
            self.stats.constants_found += 1
            return self._replace(node, self(Constant(node.graph, self.start, new_type)))
        key = self.key(node)
        if key is not None:
            twin = self.gvn.get(key)
            if twin is not None and twin is not node and twin.id in twin.graph.nodes:
                self.stats.gvn_hits += 1
                return self._replace(node, twin)
        better = node.idealize()
        if better is not None and better is not node:
            self.stats.idealized += 1
            if better.id < node.id:  # an existing node: already optimized, use it as is
                return self._replace(node, better)
            return self._replace(node, self(better))
        if key is not None:
            self.gvn[key] = node
        return node

    def _replace(self, old: Node, new: Node) -> Node:
        old.replace_with(new)
        self.discard(old)
        return new

    def forget(self, node: Node) -> None:
        """Drop ``node`` from the GVN table (its inputs are about to change)."""
        key = self.key(node)
        if key is not None and self.gvn.get(key) is node:
            del self.gvn[key]

    def discard(self, node: Node) -> None:
        """Delete ``node`` if nobody uses it.

        Only the node itself: its inputs may be values the parser still holds in hand
        (the left operand while it parses the right one), so nodes that merely *became*
        unused are left for the sweep at the end of the function.
        """
        if node.outputs or node is self.start or node.id not in node.graph.nodes:
            return
        if node.inputs and node.inputs[0] is self.start and not isinstance(node, Constant):
            return  # Start's projections (control, memory, parameters) stay
        self.forget(node)
        node.kill()
        self.stats.killed += 1
