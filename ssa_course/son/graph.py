"""The sea-of-nodes graph and its base node (lesson 05).

A node has ordered *inputs* (use-def edges: the values it reads; input 0 is its control
when it has one) and *outputs* (def-use edges: who reads it). :meth:`Node.set_input` keeps
the two mirror images of each other, so every pass can walk the graph either way.

Each node class owns its semantics:

* ``compute()`` -- its type from its inputs' types (the transfer function);
* ``idealize()`` -- a cheaper equivalent node, or None (algebraic rewrites);
* ``key()`` -- what global value numbering hashes (opcode + inputs, commutative inputs
  sorted), or None for nodes that must never be merged (control, effects, allocation);
* ``evaluate(args)`` -- what the graph interpreter computes from its inputs' values.

The peephole driver (:mod:`ssa_course.son.peephole`) and the interpreter
(:mod:`ssa_course.son.interp`) are generic over these methods: adding an opcode never edits
them.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ssa_course.son.types import BOTTOM, TOP, Type

if TYPE_CHECKING:
    from ssa_course.runtime import Heap, Output, Value
    from ssa_course.son.dominance import ControlDominance
    from ssa_course.son.iterate import Settled


class RunState(Protocol):
    """What a node's ``evaluate`` reads besides its inputs' values: the heap it allocates
    in and the output ``print`` writes to (the graph interpreter's state)."""

    heap: Heap
    out: Output


class Graph:
    """One function's graph: owns the node ids (so printing and drawing are deterministic)."""

    def __init__(self, name: str = "main") -> None:
        self.name = name
        self.next_id = 0
        self.nodes: dict[int, Node] = {}
        self.start: Node | None = None
        self.stop: Node | None = None
        # The source line each node was made for (the builder sets ``line`` statement by
        # statement; 0: none): the machine-code listing quotes it (lesson 11).
        self.line = 0
        self.lines: dict[int, int] = {}
        # Loads and stores whose bounds check lesson 09's analysis removed: their index
        # is in bounds (machine code may skip the test the operation itself makes)
        self.in_bounds: set[int] = set()
        # Distant dependencies (Simple's ``addDep``): node id -> the nodes whose
        # ``idealize()`` looked at it without being one of its users; when it changes, the
        # iterative peepholes look at them again (:meth:`Node.dep_read`, :meth:`take_deps`).
        self.deps: dict[int, dict[int, Node]] = {}
        # Bumped whenever a control node's inputs change (the dominator tree of a finished
        # graph may then be out of date), and the tree the iterative peepholes installed
        # for the rules that ask about dominating tests (None: walk up, bounded).
        self.control_version = 0
        self.dom: ControlDominance | None = None
        # Bumped by every edge change (an input set, added or dropped) and every node
        # dropped: with ``next_id`` and the types, it tells whether the graph is still as
        # the iterative peepholes' last run left it (``settled``, set by that run when it
        # ended at a fixed point: son/iterate.py's ``Settled``).
        self.edits = 0
        self.settled: Settled | None = None
        # phi id -> how often the iterative peepholes narrowed its integer range
        # (son/iterate.py's ``kept_type``: after a few, a bound narrows only from the end
        # of the integers, so a loop cannot narrow itself one step per look for ever)
        self.narrowings: dict[int, int] = {}
        # producer id -> where in its user list the last removal far from the end found its
        # user (``_remove_last``): removals from a long list come in runs at about one place
        # (the constants GVN merges, one inlined copy after another, all sit about N places
        # into Start's list of 4N), so the next search starts there (issue #39)
        self.fingers: dict[int, int] = {}

    def take_deps(self, node: Node) -> list[Node]:
        """The nodes that asked to be revisited when ``node`` changes (now forgotten)."""
        found = self.deps.pop(node.id, None)
        return list(found.values()) if found else []

    def register(self, node: Node) -> None:
        node.id = self.next_id
        self.next_id += 1
        self.nodes[node.id] = node
        if self.line:
            self.lines[node.id] = self.line

    def live_nodes(self) -> list[Node]:
        """The nodes in id order (builder scaffolding excluded). ``nodes`` is already in
        that order: ids only grow, and a node enters the dictionary once, when it is made."""
        return [n for n in self.nodes.values() if not n.scaffolding]

    def edge_count(self) -> int:
        return sum(1 for n in self.live_nodes() for i in n.inputs if i is not None)


# what ``Node.dep_read`` hands back: the node it was given, with its own type
_N = TypeVar("_N", bound="Node | None")


class Node:
    """Base node. ``label`` is how drawings and the printer name it.

    Nodes have no ``__dict__``: every subclass declares the attributes it adds in its own
    ``__slots__`` (a big graph has hundreds of thousands of nodes). A class whose label is
    the same for every node says so with a class attribute (``label = "If"``); one whose
    label depends on the node (a constant's value, a projection's name) sets ``self.label``
    and keeps no class attribute of that name.

    Edges change only through the methods below (:meth:`add_input`, :meth:`set_input`,
    :meth:`remove_input`, :meth:`truncate_inputs`, :meth:`replace_with`, :meth:`kill`):
    they keep ``inputs`` and ``outputs`` mirror images of each other. A test scans the other
    modules for list surgery on either list.
    """

    __slots__ = ("graph", "id", "inputs", "outputs", "type", "_label")

    commutative = False
    is_control = False  # produces control (Start, Region, If, Call, Return...)
    pinned = False  # has effects or may trap: runs where its control input says
    scaffolding = False  # builder-only (the parser's scope): never printed or drawn

    def __init__(self, graph: Graph, *inputs: Node | None):
        self.graph = graph
        self.id = -1
        self.inputs: list[Node | None] = []
        self.outputs: list[Node] = []
        # TOP until someone computes it: the parser's driver computes every new node's type at
        # once, and SCCP starts from TOP on purpose.
        self.type: Type = TOP
        graph.register(self)
        if not inputs:
            return
        if type(self).add_input is not _ADD_INPUT:  # a class that keeps more (the scope)
            for n in inputs:
                self.add_input(n)
            return
        # add_input for each, at once (every node made goes through here: parsing makes
        # 100k nodes for a 10k-statement program)
        self.inputs = list(inputs)
        for n in inputs:
            if n is not None:
                n.outputs.append(self)
        graph.edits += len(inputs)
        if self.is_control:
            graph.control_version += len(inputs)

    # -- edges ------------------------------------------------------------------

    def add_input(self, n: Node | None) -> None:
        # Any change to a control node's inputs may change the dominator tree: the version tells
        # the iterative driver its installed tree is stale.
        graph = self.graph
        graph.edits += 1
        if self.is_control:
            graph.control_version += 1
        self.inputs.append(n)
        if n is not None:
            n.outputs.append(self)

    def set_input(self, i: int, n: Node | None) -> None:
        old = self.inputs[i]
        # No change, no bookkeeping: the control version is not bumped for nothing.
        if old is n:
            return
        graph = self.graph
        graph.edits += 1
        if self.is_control:
            graph.control_version += 1
        # One edge leaves ``old``'s user list for every input slot that named it: a node that
        # reads ``x`` twice is two users of ``x``.
        if old is not None:
            users = old.outputs
            if users and users[-1] is self:  # (_remove_last's first case, without the call)
                del users[-1]
            else:
                _remove_last(users, self, old)
        self.inputs[i] = n
        if n is not None:
            n.outputs.append(self)

    def in_(self, i: int) -> Node | None:
        return self.inputs[i] if i < len(self.inputs) else None

    def operand(self, i: int) -> Node:
        """Input ``i``, which this node's shape always has (an operand, a phi's region, a
        projection's source): ``inputs[i]`` with the guarantee checked, so the type
        checker knows it is a node (``inputs`` also holds the None of a floating node's
        control and of a killed node's edges)."""
        n = self.inputs[i]
        assert n is not None, f"{self} has no input {i}"
        return n

    def kill(self) -> None:
        """Disconnect a node nobody uses (and drop it from the graph)."""
        assert not self.outputs, f"{self} still has users"
        for i in range(len(self.inputs)):
            self.set_input(i, None)
        # Dropping the inputs is what lets the inputs die in turn (the drivers look at them).
        self.graph.nodes.pop(self.id, None)
        self.graph.edits += 1

    def replace_with(self, other: Node) -> None:
        """Every user of ``self`` reads ``other`` instead."""
        users = list(dict.fromkeys(self.outputs))  # each user once, oldest first
        # Every edge into ``self`` goes, so the order of its user list no longer matters:
        # reversed, each removal (which searches from the end) finds its user there at
        # once instead of scanning past all the newer ones (quadratic for a phi with
        # many users). ``other`` still gains the users oldest first.
        self.outputs.reverse()
        for user in users:
            user.replace_input(self, other)

    def replace_input(self, old: Node, new: Node) -> None:
        """Every input that is ``old`` becomes ``new``, found by ``list.index`` (identity
        first, in C); a node with very many inputs (the parser's scope) overrides this to
        find them without scanning."""
        inputs = self.inputs
        i = -1
        # count() first: a failing index() would format the node into its error message
        for _ in range(inputs.count(old)):
            i = inputs.index(old, i + 1)
            self.set_input(i, new)

    def remove_input(self, i: int) -> None:
        """Delete input ``i``; the inputs after it move down one place."""
        # Through set_input first, so the user list of the old input stays a mirror image.
        self.set_input(i, None)
        del self.inputs[i]
        self.graph.edits += 1  # (the inputs after it moved: an edit even if it was None)

    def truncate_inputs(self, n: int) -> None:
        """Keep only the first ``n`` inputs."""
        for i in range(n, len(self.inputs)):
            self.set_input(i, None)
        if n < len(self.inputs):
            del self.inputs[n:]
            self.graph.edits += 1  # (fewer inputs: an edit even if they were all None)

    def dep_read(self, distant: _N) -> _N:
        """``distant``, for a rule of ``self`` that reads a node further away than its own
        inputs (``(x + 1) + 2`` reads the ``1`` inside its left input), where a change would
        not reach it as a user: ``self`` is looked at again when ``distant`` changes
        (Simple's ``addDep``). The read and the registration are one call, so no rule
        reads a distant node and forgets to ask."""
        # A dict keyed by id, not a list: asking twice costs nothing, and take_deps hands each
        # waiting node over once.
        if distant is not None and distant is not self:
            deps = self.graph.deps
            waiting = deps.get(distant.id)
            if waiting is None:  # (no empty dict made for every call, as setdefault would)
                waiting = deps[distant.id] = {}
            waiting[self.id] = self
        return distant

    def dependents(self) -> list[Node]:
        """Nodes besides ``self`` whose ``compute()`` or ``idealize()`` reads the inputs of
        ``self`` (a Phi reads whether its Region's paths are live): when an input of
        ``self`` changes, the iterative peepholes look at them again. None by default."""
        return []

    @property
    def label(self) -> str:
        return getattr(self, "_label", "?")

    @label.setter
    def label(self, text: str) -> None:
        self._label = text

    @property
    def ctrl(self) -> Node | None:
        return self.inputs[0] if self.inputs else None

    def is_pinned(self) -> bool:
        """Pinned nodes run where their control says (effects, loads, guarded division)."""
        # A class that may trap (Div) is pinned only when a guard gave it control; with None,
        # the builder proved it cannot trap and it floats.
        return self.pinned and self.inputs[0] is not None

    # -- semantics (overridden) -------------------------------------------------

    # The defaults are the safe answers: nothing known, no rewrite, and (key) value-numbered
    # by class and inputs -- a class that must not be shared overrides key() with None.
    def compute(self) -> Type:
        return BOTTOM

    def idealize(self) -> Node | None:
        return None

    def key(self) -> tuple[Any, ...] | None:
        ids = [n.id if n is not None else -1 for n in self.inputs]
        # Input 0 (control) stays first; the operands are sorted, so ``a + b`` and ``b + a``
        # get one key and GVN makes them one node.
        if self.commutative:
            ids = [ids[0], *sorted(ids[1:])]
        return (type(self).__name__, *ids)

    def evaluate(self, args: list[Value], state: RunState) -> Value:
        """The node's value given its inputs' values (``state`` gives the heap and output)."""
        raise TypeError(f"{self} has no value of its own")

    def detail(self) -> str:
        """Extra text for printing (a field name, a message); empty by default."""
        return ""

    def __repr__(self) -> str:
        return f"{self.label}#{self.id}"


_ADD_INPUT = Node.add_input


# How far on either side of a list's finger (``Graph.fingers``) a removal looks first.
FINGER = 32


def _remove_last(users: list[Node], node: Node, owner: Node | None = None) -> None:
    """Remove ``node`` from a user list (the last place it holds: the newest edge),
    searching from the end: the users that come and go while parsing are the newest ones,
    and Start may have a very long list (every constant hangs off it), so ``list.remove``
    would make parsing quadratic. ``owner``, the node whose list it is, lets a removal far
    from the end start at the place the last such removal from that list found its user."""
    last = len(users) - 1
    if last >= 0 and users[last] is node:  # most often the newest of all
        del users[last]
        return
    # else usually among the newest few: the last 8, reversed, searched at C speed
    # (``list.index`` compares nodes by identity)
    tail = users[-9:-1]
    if node in tail:
        del users[last - 1 - tail[::-1].index(node)]
        return
    # Far from the end. When ``node`` reads ``owner`` once (its inputs mirror the list), it
    # is in the list once: any place found is the one, so look near the finger first, then
    # from the front (no reversed copy). GVN merging the inlined copies' twin constants
    # removed 3N users from Start's list of 4N at one place, N from the front: each search
    # from the end was O(N), O(N^2) in all (issue #39).
    if owner is not None and node.inputs.count(owner) == 1:
        fingers = node.graph.fingers
        k = -1
        at = fingers.get(owner.id)
        if at is not None:
            with contextlib.suppress(ValueError):
                k = users.index(node, max(0, at - FINGER), at + FINGER)
        if k < 0:
            try:
                k = users.index(node)
            except ValueError:
                raise ValueError(f"{node!r} is not a user") from None
        del users[k]
        fingers[owner.id] = k
        return
    # A user that reads the owner more than once: its last place, from a reversed copy
    # searched at C speed.
    try:
        k = last - users[::-1].index(node)
    except ValueError:
        raise ValueError(f"{node!r} is not a user") from None
    del users[k]


def init_unnumbered(node: Node, graph: Graph) -> None:
    """Give ``node`` empty edge lists without registering it in ``graph`` (no id): builder
    scaffolding whose existence must not shift the ids every printed graph shows."""
    node.graph = graph
    node.id = -1
    node.inputs = []
    node.outputs = []
    node.type = TOP


def unlink_dead(dead: list[Node], live: set[int]) -> list[Node]:
    """Disconnect ``dead`` nodes (none of them in ``live``, a set of node ids) from each other
    and from the live nodes, and drop them from their graph. Each live producer's user list
    is filtered once, so this costs the number of edges touched, however long the lists of
    Start's and the constants' users are (removing the users one by one would not).
    Returns the live producers that lost users."""
    touched: dict[int, Node] = {}
    for n in dead:
        for inp in n.inputs:
            if inp is not None and inp.id in live:
                touched[inp.id] = inp
        # No set_input here: the dead nodes' edges among themselves all go at once.
        n.inputs = [None] * len(n.inputs)
    for producer in touched.values():
        producer.outputs = [u for u in producer.outputs if u.id in live]
    for n in dead:
        n.outputs = []
        n.graph.nodes.pop(n.id, None)
        n.graph.edits += 1  # (edges went without set_input)
        if n.is_control:
            n.graph.control_version += 1  # (edges went without set_input)
    return list(touched.values())


def start_of(node: Node) -> Node:
    """The graph's Start node (constants hang off it)."""
    start = node.graph.start
    assert start is not None, "the graph has no Start yet"
    return start


def typed(node: Node) -> Node:
    """``node`` with its type computed: a node an ``idealize()`` makes as an input of the
    node it returns (the driver computes the type of the returned node, and looks at the
    new inputs next)."""
    # The driver optimizes only the node it is handed; a node made inside a rule and used as
    # an input must already carry its type, or the outer node's compute() would read TOP.
    node.type = node.compute()
    return node
