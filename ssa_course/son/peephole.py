"""The generic peephole driver: compute, constant, GVN, idealize, dead code (lesson 06).

For every node the parser makes (in topological order, so its inputs are already final):

1. compute its type; types only ever move *down* the lattice;
2. a node whose type is a constant becomes a Constant node;
3. look it up in the GVN table (opcode + inputs): an equal node already exists? use it;
4. ask the node to ``idealize()`` itself, and peephole the replacement again;
5. whatever lost its last user is deleted.

Steps 1-4 are :func:`peephole`, the one look at one node that both drivers take (Simple's
``Node.peephole``): this parser-time driver, and the iterative one after SCCP
(:mod:`ssa_course.son.iterate`, Simple's ``IterPeeps``). They differ only in the type rule
(here a type may only fall: a rise is a broken ``compute()``; there, SCCP's optimistic type
is joined with the new one), in whether control is idealized, and in what they do with the
answer. The driver knows nothing about any particular opcode. With ``enabled=False`` it
only computes types: the parser then builds the *raw* graph, for comparison. Control nodes
are not idealized here (their paths and phis are still being built); once the graph is
finished, :mod:`ssa_course.son.iterate` runs the same steps over the whole graph to a fixed
point, control included.

Step 4 is a loop, not a recursion, and it is bounded: a rewrite must make a node simpler,
so a chain of more than :attr:`Peephole.max_chain` rewrites of one node, a rewrite back to
a node it replaced, or more than :attr:`Peephole.per_node` rewrites per node over a whole
function is a broken ``idealize()`` -- :class:`RewriteError` names the node and the chain
(a learner's rule that swaps ``a + b`` into ``b + a`` forever used to crash Python).
"""

from __future__ import annotations

import operator
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType
from typing import Any, TypeVar

from ssa_course.errors import SsaCourseError, VerifyError
from ssa_course.son.data import Constant
from ssa_course.son.graph import Node
from ssa_course.son.types import Type


class RewriteError(SsaCourseError):
    """An ``idealize()`` (or GVN key) that breaks the driver's rules: it keeps rewriting,
    rewrites in a cycle, or returns something that is not a live node of the graph."""

    exit_status = 3  # like VerifyError: the engine's own rules are broken


class Tally:
    """Counting what :func:`peephole` found, in a driver's own statistics: ``FIELDS``
    names the counter of each finding."""

    __slots__ = ()
    FIELDS: dict[str, str] = {}

    def count(self, what: str) -> None:
        field = self.FIELDS[what]
        setattr(self, field, getattr(self, field) + 1)


@dataclass(slots=True)
class PeepholeStats(Tally):
    """What the driver did: the numbers the lessons print."""

    constants_found: int = 0  # nodes replaced by a Constant
    gvn_hits: int = 0  # nodes replaced by an equal, older node
    idealized: int = 0  # algebraic rewrites applied
    dead_branches: int = 0  # If nodes with a constant predicate (one side never built)
    killed: int = 0  # nodes deleted because nobody used them any more

    FIELDS = {"constant": "constants_found", "gvn": "gvn_hits", "idealized": "idealized"}


_KEEP, _USE, _AGAIN = 0, 1, 2  # what one step decided: keep the node, use an old one, retry

# What :func:`peephole` found (the drivers count them): a constant type, an equal node
# already in the graph, a rule of the node's own ``idealize()``.
CONSTANT, GVN, IDEALIZED = "constant", "gvn", "idealized"


class Gvn:
    """A global value numbering table: a node's key (opcode, inputs, ...) -> the node that
    represents it. Only a node that is still alive and still has that key counts (its
    inputs may have changed since it was entered)."""

    __slots__ = ("table", "key")

    def __init__(self, key: Callable[[Node], tuple[Any, ...] | None]) -> None:
        self.table: dict[tuple[Any, ...], Node] = {}
        self.key = key

    def get(self, key: tuple[Any, ...]) -> Node | None:
        node = self.table.get(key)
        # A stale entry (the node died, or its inputs changed under it) is no twin: checking
        # here, on lookup, saves every edit from having to find and update the table.
        if node is None or node.id not in node.graph.nodes or self.key(node) != key:
            return None
        return node

    def put(self, key: tuple[Any, ...], node: Node) -> None:
        self.table[key] = node

    def forget(self, node: Node) -> None:
        """Drop ``node`` (its inputs are about to change, or it dies)."""
        key = self.key(node)
        if key is not None and self.table.get(key) is node:
            del self.table[key]


@dataclass(frozen=True, slots=True)
class Rewrite:
    """One rewrite :func:`peephole` found (the step-through viewer shows each): the node
    (its function, ``#7 Add(n, 3)`` before), what applied (``constant``, ``gvn`` or
    ``idealized``, with the node's class) and what is used instead (the node itself,
    changed, for a rule that rewrote it in place). Reported when found, before the driver
    replaces the node."""

    function: str
    node: int
    rule: str
    before: str
    after: str


# Who hears of each rewrite (:func:`recording_rewrites`); None, the rule: the drivers then
# pay one global read per look, and nothing they do depends on it.
_RECORD: Callable[[Rewrite], None] | None = None


@contextmanager
def recording_rewrites(sink: Callable[[Rewrite], None]) -> Iterator[None]:
    """Within the block, every rewrite :func:`peephole` finds is handed to ``sink`` (both
    drivers: the parser's and the iterative one). Only descriptions are made: the rewrites
    themselves, their order and the graph are the same as without it."""
    global _RECORD
    outer, _RECORD = _RECORD, sink
    try:
        yield
    finally:
        _RECORD = outer


def _heard(node: Node, gvn: Gvn, retype: Callable[[Node], None],
           constant: Callable[[Type], Node], control: bool) -> tuple[str, Node] | None:
    """:func:`peephole` with a listener: the same look (the listener off meanwhile, so the
    look itself is the one without it), then what it found, reported."""
    global _RECORD
    sink, _RECORD = _RECORD, None
    assert sink is not None
    try:
        before = describe(node)
        found = peephole(node, gvn, retype, constant, control)
    finally:
        _RECORD = sink
    if found is not None:
        sink(Rewrite(node.graph.name, node.id, f"{found[0]} {_class_name(node)}", before,
                     describe(found[1])))
    return found


def peephole(node: Node, gvn: Gvn, retype: Callable[[Node], None],
             constant: Callable[[Type], Node], control: bool) -> tuple[str, Node] | None:
    """One look at one node: None when nothing applies (the node is then entered in the
    GVN table), else what applied and the node to use instead -- the node itself when a
    rule changed it in place. ``retype`` is the driver's type rule, ``constant`` makes
    the Constant of a type; control nodes are idealized only when ``control``."""
    if _RECORD is not None:  # the step-through viewer listens (one global read if not)
        return _heard(node, gvn, retype, constant, control)
    # The order is Click & Paleczny's: the type first (it is what folds), a constant next
    # (cheapest and best), then GVN (an equal node already optimized), then the node's own
    # rules. Each step may end the look; none undoes what an earlier one found.
    retype(node)  # 1. its type, by the driver's rule
    t = node.type
    # Not for control: a control node's type (a decided If) is acted on by its rules, since
    # a Constant cannot stand for control.
    if t.is_constant() and not node.is_control and not isinstance(node, Constant):
        return CONSTANT, constant(t)  # 2. a constant type: a Constant node instead
    key = gvn.key(node)
    if key is not None:
        twin = gvn.get(key)  # 3. an equal node already in the graph: use it instead
        if twin is not None and twin is not node:
            return GVN, twin
    # The inputs are remembered: a rule may change the node in place (a Region dropping
    # a path) and answer the node itself; only a real change counts as progress.
    if control or not node.is_control:
        before = list(node.inputs)
        better = guarded_idealize(node)  # 4. the node's own rules
        # (a rule answering the node itself unchanged -- ``x + 0`` where x is the node,
        # in a dead cycle -- is no progress)
        if better is not None and not (better is node and node.inputs == before):
            if better is not node:
                check_result(node, better)
            return IDEALIZED, better
    if key is not None:
        gvn.put(key, node)  # settled: the representative of its key
    return None


# ``lambda node: node.key()`` at C speed: every look asks it (the GVN table's key).
_node_key = operator.methodcaller("key")


class Peephole:
    """``key`` replaces ``Node.key`` as the GVN key (the exercises plug theirs in)."""

    max_chain = 50  # rewrites of one new node before it must have settled
    per_node = 10  # rewrites per node handed to the driver, over one function
    slack = 1000  # ... plus this many

    def __init__(self, start: Node, enabled: bool = True,
                 key: Callable[[Node], tuple[Any, ...] | None] | None = None):
        self.start = start
        self.enabled = enabled
        self.gvn = Gvn(_guarded(key) if key is not None else _node_key)
        self.stats = PeepholeStats()
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
            # The chain is a loop, not a recursion: a learner's rule that rewrites forever is
            # stopped by the budget with a message, not by Python's stack.
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
            # Simple's habit: what a rule makes is optimized before it is used, so the node that
            # goes round again sees settled inputs.
            self._settle_inputs(target, current.id)
            current = target
        # Innermost first, as a recursive driver would: each replaced node's users move to
        # the final node, then the replaced node goes if nobody reads it any more.
        for old in reversed(chain):
            self.replace(old, current)
        return current

    def _settle_inputs(self, node: Node, made_after: int) -> None:
        """The inputs a rule made along with ``node`` (ids above ``made_after``: the
        ``x + y`` of ``(x + c) + y -> (x + y) + c``, a pushed phi and its constants) are
        optimized first, innermost first, as Simple's rules call ``peephole()`` on the
        nodes they make: the new node is then looked at with settled inputs."""
        for inp in list(node.inputs):
            if inp is not None and inp.id > made_after and inp is not node \
                    and inp.id in node.graph.nodes:
                # Recursion depth is bounded by the depth of what one rule made (a few nodes).
                self._settle_inputs(inp, made_after)
                self(inp)

    def _step(self, node: Node) -> tuple[int, Node]:
        """One round of steps 1-4 on ``node``: keep it, use an existing node, or peephole a
        new one again."""
        if not self.enabled:
            self._lower_only(node)
            return _KEEP, node
        # Control is still being built while parsing (a Region's paths and phis come one
        # by one; the builder never builds a dead branch): control nodes are idealized
        # only by the iterative peepholes, on a finished graph.
        found = peephole(node, self.gvn, self._lower_only, self._constant, control=False)
        if found is None:
            return _KEEP, node
        what, target = found
        # Counting happens only for a replacement, so the lesson's numbers count real steps.
        if target is node:  # a rule changed the node in place: it is kept as it is now
            return _KEEP, node
        self.stats.count(what)
        # an existing node is already optimized: use it as is; a new one goes round again
        return (_USE, target) if target.id < node.id else (_AGAIN, target)

    def _lower_only(self, node: Node) -> None:
        """The parser's type rule: a node's type only ever moves down the lattice."""
        new_type = node.compute()
        old = node.type
        # Inputs are final while parsing, so recomputing a type can only lower it (or keep
        # it): a rise means a compute() that is not monotone.
        # (a new node's TOP first: the common case, without the lattice's equality)
        if old.kind != "top" and old != new_type and not new_type.isa(old):
            raise VerifyError("types only move down the lattice", repr(node),
                              f"{old} -> {new_type}")
        node.type = new_type

    def _constant(self, t: Type) -> Node:
        # A new Constant each time: the driver then looks at it like any node, and GVN turns it
        # into the older Constant of the same value if there is one.
        return Constant(self.start.graph, self.start, t)  # (GVN finds an older twin next)

    def _check_budget(self, chain: list[Node], target: Node) -> None:
        # Two budgets: a chain too long for one node (a rule that never settles), and too many
        # rewrites over the whole function (rules that keep making work for each other).
        if len(chain) > self.max_chain:
            raise RewriteError(
                f"idealize() keeps rewriting {describe(chain[0])}: "
                f"{_chain_text(chain + [target])} (stopped after {len(chain)} rewrites; "
                "each rewrite must make the node simpler, until idealize() returns None)")
        if self.rewrites > self.per_node * self.calls + self.slack:
            raise RewriteError(
                f"idealize() made {self.rewrites} rewrites for {self.calls} nodes: "
                f"rewrites keep making new work (the last one: {_chain_text(chain + [target])})")

    def replace(self, old: Node, new: Node) -> Node:
        """Every user of ``old`` reads ``new``; ``old`` goes if nobody reads it now."""
        old.replace_with(new)
        self.discard(old)
        return new

    def forget(self, node: Node) -> None:
        """Drop ``node`` from the GVN table (its inputs are about to change)."""
        self.gvn.forget(node)

    def discard(self, node: Node) -> None:
        """Delete ``node`` if nobody uses it.

        Only the node itself: its inputs may be values the parser still holds in hand
        (the left operand while it parses the right one), so nodes that merely *became*
        unused are left for the sweep at the end of the function.
        """
        if node.outputs or node is self.start or node.id not in node.graph.nodes:
            return
        # The same rule as the iterative driver's ``unused``: Start's projections are roots.
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


# Error messages name the engine's class, so a learner's subclass reads as the node it
# stands for.
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
_T = TypeVar("_T")


def guarded_idealize(node: Node) -> Node | None:
    """``node.idealize()``; a rule from outside the engine runs with bounded recursion."""
    # The engine's own rules are trusted (and hot): only code from elsewhere pays for the
    # recursion guard.
    method = type(node).idealize
    if method.__module__.startswith("ssa_course.son."):
        return node.idealize()
    return _with_headroom(node.idealize)


GvnKey = Callable[[Node], tuple[Any, ...] | None]


def _guarded(fn: GvnKey) -> GvnKey:
    module = getattr(fn, "__module__", None) or ""
    if module.startswith("ssa_course.son."):
        return fn
    return lambda node: _with_headroom(fn, node)


def _with_headroom(fn: Callable[..., _T], *args: object) -> _T:
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
    frame: FrameType | None = sys._getframe()
    depth = 0
    # Walking the frames costs the depth, paid only around a learner's code.
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth
