"""The generic peephole driver: compute, constant, GVN, idealize, dead code (lesson 06).

For every node the parser makes (in topological order, so its inputs are already final):

1. compute its type; types only ever move *down* the lattice;
2. a node whose type is a constant becomes a Constant node;
3. look it up in the GVN table (opcode + inputs): an equal node already exists? use it;
4. ask the node to ``idealize()`` itself, and peephole the replacement again;
5. whatever lost its last user is deleted.

The driver knows nothing about any particular opcode. With ``enabled=False`` it only
computes types: the parser then builds the *raw* graph, for comparison. Control nodes are
not idealized here (their paths and phis are still being built); once the graph is
finished, :mod:`ssa_course.son.iterate` runs the same steps over the whole graph to a fixed
point, control included.

Step 4 is a loop, not a recursion, and it is bounded: a rewrite must make a node simpler,
so a chain of more than :attr:`Peephole.max_chain` rewrites of one node, a rewrite back to
a node it replaced, or more than :attr:`Peephole.per_node` rewrites per node over a whole
function is a broken ``idealize()`` -- :class:`RewriteError` names the node and the chain
(a learner's rule that swaps ``a + b`` into ``b + a`` forever used to crash Python).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

from ssa_course.errors import SsaCourseError, VerifyError
from ssa_course.son.data import Constant
from ssa_course.son.graph import Node


class RewriteError(SsaCourseError):
    """An ``idealize()`` (or GVN key) that breaks the driver's rules: it keeps rewriting,
    rewrites in a cycle, or returns something that is not a live node of the graph."""

    exit_status = 3  # like VerifyError: the engine's own rules are broken


@dataclass(slots=True)
class PeepholeStats:
    """What the driver did: the numbers the lessons print."""

    constants_found: int = 0  # nodes replaced by a Constant
    gvn_hits: int = 0  # nodes replaced by an equal, older node
    idealized: int = 0  # algebraic rewrites applied
    dead_branches: int = 0  # If nodes with a constant predicate (one side never built)
    killed: int = 0  # nodes deleted because nobody used them any more


_KEEP, _USE, _AGAIN = 0, 1, 2  # what one step decided: keep the node, use an old one, retry


class Peephole:
    """``key`` replaces ``Node.key`` as the GVN key (the exercises plug theirs in)."""

    max_chain = 50  # rewrites of one new node before it must have settled
    per_node = 10  # rewrites per node handed to the driver, over one function
    slack = 1000  # ... plus this many

    def __init__(self, start: Node, enabled: bool = True,
                 key: Callable[[Node], tuple | None] | None = None):
        self.start = start
        self.enabled = enabled
        self.gvn: dict[tuple, Node] = {}
        self.stats = PeepholeStats()
        self.key = _guarded(key) if key is not None else (lambda node: node.key())
        self.calls = 0  # nodes handed to the driver
        self.rewrites = 0  # steps that made a new node to peephole again

    @property
    def constants_found(self) -> int:
        return self.stats.constants_found

    def __call__(self, node: Node) -> Node:
        """Optimize a freshly made node; returns the node to use instead (maybe itself)."""
        self.calls += 1
        chain: list[Node] = []  # nodes replaced along the way, oldest first
        current = node
        while True:
            verdict, target = self._step(current)
            if verdict == _KEEP:
                break
            chain.append(current)
            if verdict == _USE:
                if any(target is old for old in chain):
                    raise RewriteError(_cycle_message(chain, target))
                current = target
                break
            self.rewrites += 1
            self._check_budget(chain, target)
            current = target
        # Innermost first, as a recursive driver would: each replaced node's users move to
        # the final node, then the replaced node goes if nobody reads it any more.
        for old in reversed(chain):
            self._replace(old, current)
        return current

    def _step(self, node: Node) -> tuple[int, Node]:
        """One round of steps 1-4 on ``node``: keep it, use an existing node, or peephole a
        new one again."""
        new_type = node.compute()
        old = node.type
        if old != new_type and old.kind != "top" and not new_type.isa(old):
            raise VerifyError("types only move down the lattice", repr(node),
                              f"{old} -> {new_type}")
        node.type = new_type
        if not self.enabled:
            return _KEEP, node
        if new_type.is_constant() and not isinstance(node, Constant) and not node.is_control:
            self.stats.constants_found += 1
            return _AGAIN, Constant(node.graph, self.start, new_type)
        key = self.key(node)
        if key is not None:
            twin = self.gvn.get(key)
            if twin is not None and twin is not node and twin.id in twin.graph.nodes:
                self.stats.gvn_hits += 1
                return _USE, twin
        # Control is still being built while parsing (a Region's paths and phis come one
        # by one; the builder never builds a dead branch): control nodes are idealized
        # only by the iterative peepholes, on a finished graph.
        better = None if node.is_control else guarded_idealize(node)
        if better is not None and better is not node:
            check_result(node, better)
            self.stats.idealized += 1
            if better.id < node.id:  # an existing node: already optimized, use it as is
                return _USE, better
            return _AGAIN, better
        if key is not None:
            self.gvn[key] = node
        return _KEEP, node

    def _check_budget(self, chain: list[Node], target: Node) -> None:
        if len(chain) > self.max_chain:
            raise RewriteError(
                f"idealize() keeps rewriting {describe(chain[0])}: "
                f"{_chain_text(chain + [target])} (stopped after {len(chain)} rewrites; "
                "each rewrite must make the node simpler, until idealize() returns None)")
        if self.rewrites > self.per_node * self.calls + self.slack:
            raise RewriteError(
                f"idealize() made {self.rewrites} rewrites for {self.calls} nodes: "
                f"rewrites keep making new work (the last one: {_chain_text(chain + [target])})")

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


# -- reporting a broken rewrite ---------------------------------------------------------


def describe(node: Node) -> str:
    """``#7 Add(n, 3)``: the node's engine class and its inputs, for error messages."""
    return f"#{node.id} {_shape(node)}"


def _shape(node: Node) -> str:
    return f"{_class_name(node)}({', '.join(_operand(i) for i in node.inputs[1:])})"


def _operand(node: Node | None) -> str:
    if node is None:
        return "-"
    if node.inputs and node.inputs[0] is node.graph.start:
        return str(node.label)  # a constant's value, a parameter's name
    return f"#{node.id}"


def _class_name(node: Node) -> str:
    """The engine class a node is (``Add`` for an exercise's subclass of Add)."""
    for cls in type(node).__mro__:
        if cls.__module__.startswith("ssa_course.son."):
            return cls.__name__
    return type(node).__name__


def _chain_text(chain: list[Node], limit: int = 6) -> str:
    shown = [_shape(n) for n in chain[:limit]]
    return " → ".join(shown) + (" → ..." if len(chain) > limit else "")


def _cycle_message(chain: list[Node], target: Node) -> str:
    return (f"idealize() rewrites in a circle: {_chain_text(chain + [target])} "
            f"returns {describe(target)}, a node it had already rewritten")


def check_result(node: Node, better: object) -> None:
    """What ``idealize()`` returns must be a live node of the same graph."""
    if not isinstance(better, Node):
        raise RewriteError(f"idealize() of {describe(node)} returned {better!r} "
                           f"(a {type(better).__name__}); it must return a node or None")
    if better.graph is not node.graph or better.id not in node.graph.nodes:
        raise RewriteError(f"idealize() of {describe(node)} returned {better!r}, a node that "
                           "is not (or no longer) in this graph")


# -- code from outside the engine -------------------------------------------------------

# The parser runs under a raised recursion limit (deep expressions are deep trees), and
# with a million frames allowed a runaway recursion through C code overflows the C stack
# and kills the process. A rewrite or key from outside the engine (a learner's) therefore
# runs with only Python's usual head-room above the current depth.
_HEADROOM = 1000


def guarded_idealize(node: Node) -> Node | None:
    """``node.idealize()``; a rule from outside the engine runs with bounded recursion."""
    method = type(node).idealize
    if method.__module__.startswith("ssa_course.son."):
        return node.idealize()
    return _with_headroom(node.idealize)


def _guarded(fn: Callable[[Node], tuple | None]) -> Callable[[Node], tuple | None]:
    module = getattr(fn, "__module__", None) or ""
    if module.startswith("ssa_course.son."):
        return fn
    return lambda node: _with_headroom(fn, node)


def _with_headroom(fn: Callable, *args: object) -> object:
    saved = sys.getrecursionlimit()
    limit = min(saved, _depth() + _HEADROOM)
    if limit == saved:
        return fn(*args)
    sys.setrecursionlimit(limit)
    try:
        return fn(*args)
    finally:
        sys.setrecursionlimit(saved)


def _depth() -> int:
    frame, depth = sys._getframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth
