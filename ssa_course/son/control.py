"""Control nodes: control flow as data (lesson 05).

Control is a value like any other: ``Start`` produces it, ``If`` splits it (a tuple read by
its true/false projections), ``Region`` merges it, ``Loop`` is a Region with a back edge,
and ``Return``/``Throw``/``Trap`` hand it to ``Stop``. A ``Phi`` belongs to a Region (its
input 0) and picks the value of the path control came in on. ``Call`` is control too: it
runs the callee and yields a tuple (control, memory, result, and -- inside ``try`` -- the
exceptional control and the thrown value).

Multi-valued nodes (Start, If, Call) are read through :class:`Proj` nodes.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator
from typing import Any

from ssa_course.errors import Pos
from ssa_course.son.graph import Graph, Node
from ssa_course.son.types import (
    BOOL_BOTTOM,
    BOOL_TOP,
    BOTTOM,
    CTRL,
    FALSE,
    INT_BOTTOM,
    MEM,
    TOP,
    TRUE,
    XCTRL,
    TupleType,
    Type,
    tuple_of,
)


class Start(Node):
    """The function's entry: a tuple (control, memory, argument 1, argument 2, ...)."""

    __slots__ = ("arg_types", "arg_names")

    label = "Start"
    is_control = True

    def __init__(self, graph: Graph, arg_types: list[Type], arg_names: list[str] | None = None):
        super().__init__(graph)
        self.arg_types = list(arg_types)
        self.arg_names = list(arg_names or [f"arg{i}" for i in range(len(arg_types))])
        graph.start = self

    # The entry is always reached: live control, the initial memory, and the parameters at
    # their declared types (nothing is known of the caller's arguments).
    def compute(self) -> Type:
        return tuple_of(CTRL, MEM, *self.arg_types)

    # None: no value numbering. There is one Start, and two equal-looking control nodes are
    # still two places in the program (Click & Paleczny: only pure data nodes are shared).
    def key(self) -> None:
        return None


class Proj(Node):
    """Reads element ``index`` of a multi-valued node (Start, If, Call)."""

    __slots__ = ("index", "is_control")

    def __init__(self, graph: Graph, source: Node, index: int, label: str,
                 control: bool = False):
        self.is_control = control  # before the edges: adding them reads it
        super().__init__(graph, source)
        self.index = index
        self.label = label

    # A Proj's type is its element of the source's tuple: an If's dead side is XCTRL, and a
    # Call's result projection has the callee's return type.
    def compute(self) -> Type:
        t = self.operand(0).type
        if isinstance(t, TupleType) and self.index < len(t.types):
            return t.types[self.index]
        # Not a tuple yet: TOP (SCCP has not reached the source, so neither does this), or
        # nothing known at all.
        return TOP if t == TOP else BOTTOM

    def key(self) -> tuple[Any, ...]:
        # Two projections of the same element of the same node are the same value.
        return ("Proj", self.operand(0).id, self.index)

    def idealize(self) -> Node | None:
        # the live side of an If whose other side is dead is no branch: control goes on
        # from above the If (the If and its dead side then lose their last users)
        iff = self.inputs[0]
        if not self.is_control or not isinstance(iff, If) \
                or not isinstance(iff.type, TupleType):
            return None
        sides = iff.type.types
        if sides[self.index] == CTRL and sides[1 - self.index] == XCTRL:
            return iff.inputs[0]
        return None


class Parm(Proj):
    """A function parameter: a projection of Start."""

    __slots__ = ()

    def __init__(self, graph: Graph, start: Start, index: int, name: str):
        super().__init__(graph, start, index, name)


_BY_ID = operator.attrgetter("id")  # (a sort key at C speed)

# An If's four types, made once (types are values; sharing them lets the drivers tell an
# unchanged type by identity)
IF_NEITHER = tuple_of(XCTRL, XCTRL)
IF_TRUE_ONLY = tuple_of(CTRL, XCTRL)
IF_FALSE_ONLY = tuple_of(XCTRL, CTRL)
IF_BOTH = tuple_of(CTRL, CTRL)


class If(Node):
    """Input 0 control, input 1 the predicate; projection 0 is the true path, 1 the false."""

    __slots__ = ()

    label = "If"
    is_control = True

    def compute(self) -> Type:
        ctrl, pred = self.operand(0).type, self.operand(1).type
        # Control never arrives: both sides are dead, whatever the predicate.
        if ctrl is not CTRL and ctrl in (XCTRL, TOP):
            return IF_NEITHER
        if pred is BOOL_BOTTOM:  # (the usual case, told by identity: it is none of the below)
            return IF_BOTH
        if pred == TRUE:
            return IF_TRUE_ONLY
        if pred == FALSE:
            return IF_FALSE_ONLY
        # A predicate still TOP (SCCP's optimistic start) takes neither side yet: they become
        # reachable only once the predicate falls to a constant or to "any bool".
        if pred in (BOOL_TOP, TOP):
            return IF_NEITHER
        return IF_BOTH

    def idealize(self) -> Node | None:
        """A test another If above it already made: ``if (c) { if (c) ... }`` -- along the
        taken edge of the dominating If, ``c`` is known, so this If's predicate becomes
        that constant (in place; its dead side then goes)."""
        pred = self.operand(1)
        if pred.type.is_constant():
            return None
        known = dominating_test(self, pred)
        if known is None:
            return None
        # The If is changed in place (its predicate now a constant), so compute() then kills one
        # side and Proj.idealize above folds the branch away.
        from ssa_course.son.data import const  # data imports this module
        self.set_input(1, const(self, known))
        return self

    def key(self) -> None:
        return None


_DOMINATOR_WALK = 64  # control nodes looked at above an If (a cost bound)


def dominating_test(node: Node, pred: Node) -> bool | None:
    """What ``pred`` is known to be where ``node`` runs: True or False when an If on
    ``pred`` dominates ``node`` along one of its sides, else None. In a finished graph
    the dominator tree answers (:mod:`ssa_course.son.dominance`), else a bounded walk."""
    # Two ways to know the dominators: in a finished graph (iterative peepholes) the tree is
    # computed once per round and asked; while parsing, a short walk up the control inputs,
    # bounded for cost, which answers nothing where it cannot tell (always safe).
    dom = node.graph.dom
    if dom is not None:
        # Watching: when the tree is rebuilt the node is looked at again -- a fact that changed
        # far above it reaches it by no input edge (Simple's addDep, on the whole tree).
        dom.watch(node)
        # (an If on ``pred`` may appear: an equal test replaced by it)
        return dom.test_at(node.dep_read(pred), node.inputs[0])
    for test, value in dominating_facts(node.inputs[0], node):
        if test is pred:
            return value
    return None


def dominating_facts(ctrl: Node | None, watcher: Node) -> Iterator[tuple[Node, bool]]:
    """``(predicate, value)`` of every If that dominates control ``ctrl`` along one of
    its sides, nearest first. Walks up the immediate dominators (:func:`_up`), at most
    ``_DOMINATOR_WALK`` control nodes; every node passed is a distant dependency of
    ``watcher`` (it looks again when one of them changes)."""
    # A list, so the helpers it is passed to spend from the same budget.
    budget = [_DOMINATOR_WALK]
    n = ctrl
    while n is not None:
        watcher.dep_read(n)
        if isinstance(n, Proj) and isinstance(n.inputs[0], If):
            # (an equal predicate may replace this one: GVN, a bounds check's twin)
            test = watcher.dep_read(n.inputs[0].operand(1))
            yield test, n.index == 0
        n = _up(n, watcher, budget)


def strictly_dominates(a: Node, ctrl: Node, watcher: Node) -> bool:
    """The control node ``a`` is one of the immediate dominators of ``ctrl`` (above it),
    found within the walk's budget (False when not found)."""
    budget = [_DOMINATOR_WALK]
    n = _up(ctrl, watcher, budget)
    while n is not None:
        if watcher.dep_read(n) is a:
            return True
        n = _up(n, watcher, budget)
    return False


def may_be_loop_head(region: Node, watcher: Node) -> bool:
    """A Loop, or a Region one of whose paths it dominates itself (a back edge: Bril's
    loop heads are plain Regions); True too when the walk is cut short."""
    if isinstance(region, Loop):
        return True
    dom = region.graph.dom
    if dom is not None:
        dom.watch(watcher)
        return dom.loop_head(region)
    budget = [_DOMINATOR_WALK]
    for path in region.inputs[1:]:
        chain = _chain(path, watcher, budget) if path is not None else None
        if chain is None or any(x is region for x in chain):
            return True
    return False


def _up(n: Node, watcher: Node, budget: list[int]) -> Node | None:
    """The immediate dominator of the control node ``n`` (None: unknown, or the budget
    is spent). A single-input control node's is its input; a finished Loop's its entry;
    a Region's the nearest node that dominates all of its paths."""
    budget[0] -= 1
    if budget[0] < 0 or isinstance(n, Start):
        return None
    # A finished loop's dominator is its entry (the back edge comes from below it); while
    # its body is parsed the walk stops there, answering nothing (always safe).
    if isinstance(n, Loop):
        return None if n.in_progress() else n.inputs[1]
    if isinstance(n, Region):
        if n.in_progress() or any(p is None for p in n.inputs[1:]):
            return None
        chains = [_chain(p, watcher, budget) for p in n.inputs[1:]]
        found = [c for c in chains if c is not None]
        if not chains or len(found) < len(chains):
            return None
        # The immediate dominator of a merge is the nearest node common to all the paths'
        # dominator chains (each chain is ordered nearest first).
        others = [{id(x) for x in c} for c in found[1:]]
        for x in found[0]:
            if all(id(x) in o for o in others):
                return x
        return None
    # Any other control node has one control input, input 0: that is its dominator.
    return n.inputs[0]


def _chain(n: Node | None, watcher: Node, budget: list[int]) -> list[Node] | None:
    """``n`` and its dominators up to Start (None: the budget ran out first)."""
    found: list[Node] = []
    while n is not None:
        found.append(watcher.dep_read(n))
        if isinstance(n, Start):
            return found
        n = _up(n, watcher, budget)
    return None


class Region(Node):
    """Merges control: input 0 is unused (None), inputs 1.. are the incoming paths."""

    __slots__ = ("open",)

    label = "Region"
    is_control = True

    def __init__(self, graph: Graph, *inputs: Node | None):
        self.open = False  # True while some incoming paths are still to be built
        super().__init__(graph, *inputs)

    # While a path is missing no rule may look at the Region: a path that is not built yet
    # might be live, and a phi might yet need a value from it.
    def in_progress(self) -> bool:
        return self.open

    def compute(self) -> Type:
        if self.open:
            # a path still to be built (an irreducible loop's other entry) may be live:
            # pessimistically, the merge is reachable until every path is known
            return CTRL
        # The meet of the paths: live control as soon as one path is live, dead (XCTRL) if none.
        t: Type = XCTRL
        for n in self.inputs[1:]:
            if n is not None:
                t = t.meet(n.type)
        return t

    def key(self) -> None:
        return None

    # Sorted by id so that every walk over a Region's phis is deterministic (printing, GCM).
    def phis(self) -> list[Phi]:
        return sorted((u for u in self.outputs if isinstance(u, Phi)), key=_BY_ID)

    def dependents(self) -> list[Node]:
        return [u for u in self.outputs if isinstance(u, Phi)]  # phis count live paths only

    def idealize(self) -> Node | None:
        """Paths control never takes leave the Region, with their values in its phis
        (changed in place: returns the Region itself); a Region left with one path and no
        phis is just that path."""
        if self.in_progress() or self.type != CTRL:
            return None  # still being built, or itself dead (the sweep takes it)
        # The invariant kept: input i of every phi still belongs to input i of the Region, so a
        # dead path is removed from the Region and every one of its phis together.
        dead = [i for i in range(1, len(self.inputs)) if not _live_path(self.inputs[i])]
        if dead:
            phis = self.phis()
            for i in reversed(dead):
                for phi in phis:
                    phi.remove_input(i)
                self.remove_input(i)
            return self
        # A Region with phis still chooses values: it stays while they do.
        if any(isinstance(u, Phi) for u in self.outputs):
            return None
        if len(self.inputs) == 2:
            if _loops_back(self, self.dep_read):
                # the one path left is this Region's own back edge (a loop whose entry
                # died): answering it would leave a cycle of control with no merge in it,
                # which nothing can find dead; left as it is, the Region is found
                # unreachable and swept (fuzz seed 51819)
                return None
            return self.inputs[1]
        return self._empty_diamond()

    def _empty_diamond(self) -> Node | None:
        """Both sides of one If meet here with nothing on them and no phis to choose a
        value: the branch decides nothing, control goes on from above the If."""
        if len(self.inputs) != 3:
            return None
        a, b = self.inputs[1], self.inputs[2]
        if not (isinstance(a, Proj) and isinstance(b, Proj)) or a.inputs[0] is not b.inputs[0]:
            return None
        iff = a.inputs[0]
        if not isinstance(iff, If):
            return None
        # A side with other users (a node pinned on it) is not empty.
        if a.outputs != [self] or b.outputs != [self]:
            self.dep_read(a)  # not yet: look again when a side loses its other users
            self.dep_read(b)
            return None
        return iff.inputs[0]


class Loop(Region):
    """A Region whose input 1 enters the loop and input 2 is the back edge."""

    __slots__ = ()

    label = "Loop"

    def compute(self) -> Type:
        # control reaches a loop through its entry or not at all: the back edge only
        # comes round if the entry was taken (so a loop behind a dead branch is dead too)
        if self.in_progress():
            return super().compute()
        entry = self.inputs[1]
        return XCTRL.meet(entry.type) if entry is not None else XCTRL

    def idealize(self) -> Node | None:
        """A loop whose back edge is never taken runs its body once: a plain Region with
        the entry as its only path (its phis keep their entry values)."""
        # In progress: the back edge is not known yet, so it may well be live.
        if self.in_progress() or self.type != CTRL or _live_path(self.inputs[2]):
            return None
        for phi in self.phis():
            phi.remove_input(2)
        # A Region, not a Loop: a new node, since a node never changes its class; the driver
        # replaces this Loop by it and the Loop's phis follow (they are users of the old node).
        self.remove_input(2)
        return Region(self.graph, None, self.inputs[1])

    def in_progress(self) -> bool:
        """True while the parser is still inside the loop body (no back edge yet)."""
        return self.open or len(self.inputs) < 3 or self.inputs[2] is None


class Phi(Node):
    """Input 0 is its Region; input ``i`` is the value when control came in on path ``i``.

    ``declared`` is the bottom of the variable's type: what the phi must assume while its
    loop is still being parsed (the back-edge value is not known yet).
    """

    __slots__ = ("declared", "var_name")

    label = "Phi"

    def __init__(self, graph: Graph, region: Node, *values: Node | None,
                 declared: Type = BOTTOM, name: str = ""):
        super().__init__(graph, region, *values)
        self.declared = declared
        self.var_name = name

    # Pessimistic while the loop is parsed (its back value is unknown); afterwards the meet
    # of the live paths, which is what lets SCCP find a loop variable constant.
    def compute(self) -> Type:
        region = self.inputs[0]
        if isinstance(region, Region) and region.in_progress():
            return self.declared
        t: Type = TOP
        inputs = self.inputs
        paths = region.inputs if region is not None else ()
        for i in range(1, len(inputs)):
            path = paths[i] if i < len(paths) else None
            if path is not None:
                pt = path.type
                # (a live path, the usual case, is told by identity first)
                if pt is not CTRL and pt in (XCTRL, TOP):
                    continue  # a dead (or not yet reached) path contributes nothing
            n = inputs[i]
            if n is not None:
                nt = n.type
                # TOP meets a type of another class as that type (Type.meet), asked here
                # without the call: the first live path's value
                t = nt if t is TOP and nt.__class__ is not Type else t.meet(nt)
        return t

    def idealize(self) -> Node | None:
        region = self.inputs[0]
        if isinstance(region, Region) and region.in_progress():
            return None
        # By identity, not equality: GVN has already made equal values the same node.
        values = {id(n): n for n in self.inputs[1:] if n is not None and n is not self}
        if len(values) == 1:  # every path gives the same value (or the phi itself)
            value = next(iter(values.values()))
            # ...unless that value is computed from the phi: then no path enters with a
            # value (a loop whose entry died), and answering it would leave a cycle such
            # as ``i = i + 1`` that algebraic rules rewrite forever; the sweep removes it
            # (the answer depends on the nodes on the way: look again when one changes,
            # fuzz seed 50753)
            if _reads(value, self, self.dep_read) or (
                    isinstance(region, Region) and _loops_back(region, self.dep_read)):
                return None
            return value
        from ssa_course.son.algebra import (  # algebra imports this module
            pull_literal,
            push_through_phi,
        )
        # The first rule that applies wins; it returns a new node, which the driver then
        # optimizes in turn (so a rule only needs to make one step of progress).
        return self._known_on_path() or push_through_phi(self) or pull_literal(self)

    def _known_on_path(self) -> Node | None:
        """An input that a dominating test of its path proves equal to a constant is that
        constant: ``if (c != 0) { r = 0; } else { r = c; }`` merges ``Phi(0, c)``, and on
        the else path ``c == 0`` (the phi then has one value)."""
        region = self.operand(0)
        dom = self.graph.dom
        if dom is not None:
            dom.watch(self)
        for i in range(1, len(self.inputs)):
            v = self.inputs[i]
            if v is None or v is self:
                continue
            known = known_constant(self, v, region.in_(i))
            if known is not None:
                values = list(self.inputs[1:])
                # A new Phi with that input replaced, not a change in place: this one is in the
                # GVN table under its inputs (the driver makes the swap).
                values[i - 1] = known
                return Phi(self.graph, region, *values, declared=self.declared,
                           name=self.var_name)
        return None

    def key(self) -> tuple[Any, ...] | None:
        region = self.inputs[0]
        if isinstance(region, Region) and region.in_progress():
            return None  # its back edge is still to come: not comparable yet
        return ("Phi", *(n.id if n is not None else -1 for n in self.inputs))

    def detail(self) -> str:
        return self.var_name


def _tests_constant(test: Node, v: Node) -> bool:
    """``test`` is ``v == K`` or ``v != K`` with ``K`` constant (what a phi's input can be
    known by on its path: :meth:`Phi._known_on_path`)."""
    return getattr(test, "op", None) in ("==", "!=") and test.inputs[1] is v \
        and test.operand(2).type.is_constant()


def known_constant(watcher: Node, v: Node, ctrl: Node | None) -> Node | None:
    """The constant ``K`` when a test ``v == K`` or ``v != K`` (``K`` constant) that an If
    decided above control ``ctrl`` says ``v`` is ``K`` there (the true side of ``==``, the
    false side of ``!=``: Simple's loop-exit fact), else None. Every node read is a
    distant dependency of ``watcher``."""
    if v.type.is_constant():
        return None
    dom = watcher.graph.dom
    if dom is not None:
        dom.watch(watcher)
    # The value and the operands of the tests are dependencies: GVN or a rewrite may
    # replace one, and a path's fact can change then.
    watcher.dep_read(v)
    if dom is None and not any(_tests_constant(t, v) for t in v.outputs):
        return None  # no test ``v == K`` to find: the walk up could only come back empty
    facts = dominating_facts(ctrl, watcher) if dom is None else _tests_of(watcher, v, ctrl)
    for pred, value in facts:
        op = getattr(pred, "op", None)  # a Compare's operator (data imports us)
        if op in ("==", "!="):
            watcher.dep_read(pred.inputs[1])  # its operands may be replaced
            watcher.dep_read(pred.inputs[2])
        if op in ("==", "!=") and pred.inputs[1] is v \
                and pred.operand(2).type.is_constant() and value == (op == "=="):
            return pred.inputs[2]
    return None


def _tests_of(watcher: Node, v: Node, ctrl: Node | None) -> Iterator[tuple[Node, bool]]:
    """``(test, value)`` for the tests ``v == K`` / ``v != K`` (``K`` constant) that
    the dominator tree says an If decided above ``ctrl`` (a finished graph)."""
    dom = watcher.graph.dom
    assert dom is not None
    # The tests of ``v`` are its users, so the tree need not be walked: ask it of each test.
    for test in v.outputs:
        if getattr(test, "op", None) in ("==", "!=") and test.inputs[1] is v:
            watcher.dep_read(test)  # its operands may be replaced, an If on it appear
            known = dom.test_at(test, ctrl)
            if known is not None:
                yield test, known


def known_inputs(node: Node, first: int) -> Node | None:
    """``node`` (a pinned node no GVN shares: an exit, an output) with each input from
    ``first`` on that a test deciding its control proves equal to a constant replaced, in
    place, by that constant: past ``while (x != 0) ...``, ``return x`` is ``return 0``.
    None when no input changes."""
    changed = False
    for i in range(first, len(node.inputs)):
        v = node.inputs[i]
        if v is None or v is node:
            continue
        known = known_constant(node, v, node.inputs[0])
        if known is not None:
            node.set_input(i, known)
            changed = True
    return node if changed else None


class Return(Node):
    """Input 0 control, input 1 memory, input 2 the result (None for a void function)."""

    __slots__ = ()

    label = "Return"
    is_control = True

    # An exit is live exactly when control reaches it.
    def compute(self) -> Type:
        return self.operand(0).type

    # ``while (x != 0) x = x - 1; return x;`` returns 0: on the loop's exit ``x == 0``.
    def idealize(self) -> Node | None:
        return known_inputs(self, 2)

    def key(self) -> None:
        return None


class Throw(Node):
    """An exception that leaves the function: control, memory, the thrown int."""

    __slots__ = ()

    label = "Throw"
    is_control = True

    def compute(self) -> Type:
        return self.operand(0).type

    def key(self) -> None:
        return None


class Trap(Node):
    """A runtime error (``division by zero at 3:9``): control enters, the program ends.

    Input 1 is the memory state: whatever was printed before the error stays printed, so
    those effects must stay in the graph. Further inputs are the values the failed check
    was about (the array and index, the length): a backend re-creates the failing
    operation from them."""

    # No key: two traps with the same message are still two places a program may stop.
    __slots__ = ("message", "pos")

    label = "Trap"
    is_control = True

    def __init__(self, graph: Graph, ctrl: Node, mem: Node, message: str, pos: Pos | None,
                 witnesses: tuple[Node, ...] = ()):
        super().__init__(graph, ctrl, mem, *witnesses)
        self.message = message
        self.pos = pos

    def compute(self) -> Type:
        return self.operand(0).type

    def key(self) -> None:
        return None

    def detail(self) -> str:
        where = f" at {self.pos.line}:{self.pos.col}" if self.pos is not None else ""
        return self.message + where


class Never(Node):
    """The exit of a loop that never exits: control from its Loop, the memory at its head.

    Control never takes this edge; it is there so that the loop and its effects (what it
    prints) are reachable from Stop like everything else that matters."""

    __slots__ = ()

    label = "Never"
    is_control = True

    def compute(self) -> Type:
        # Always "live": Never is reachable for the liveness of the graph (it keeps the loop's
        # effects alive), while no run ever takes it.
        return CTRL

    def dependents(self) -> list[Node]:
        return list(self.outputs)  # Stop keeps this exit only while its loop is live

    def key(self) -> None:
        return None


class Stop(Node):
    """The function's exits: every Return, Throw, Trap (and Never) is an input."""

    __slots__ = ()

    label = "Stop"
    is_control = True

    def compute(self) -> Type:
        return CTRL

    def idealize(self) -> Node | None:
        """Exits control never reaches leave Stop (changed in place: returns Stop)."""
        # Removing a dead exit is what lets the sweep delete the code that only led to it.
        # An exit's control is an input of an input: Stop asks to be told when it changes
        # (fuzz seed 20700: an exit whose control died after inlining, bce and ranges left
        # Stop with a rewrite in a random worklist order).
        dead = [i for i, e in enumerate(self.inputs)
                if e is None or not _live_path(self.dep_read(e.inputs[0]))]
        for i in reversed(dead):
            self.remove_input(i)
        return self if dead else None

    def key(self) -> None:
        return None


class Call(Node):
    """Inputs: control, memory, the arguments. Projections: 0 control, 1 memory,
    2 the result; inside ``try`` also 3 the exceptional control and 4 the thrown int."""

    __slots__ = ("fn", "ret")

    is_control = True

    def __init__(self, graph: Graph, ctrl: Node, mem: Node, args: list[Node], fn: str,
                 ret: Type):
        super().__init__(graph, ctrl, mem, *args)
        self.fn = fn
        self.ret = ret
        self.label = f"Call {fn}"

    def compute(self) -> Type:
        ctrl = self.operand(0).type
        if ctrl == TOP:
            return TOP  # not reached yet (SCCP's optimistic start)
        # Unreached: every output is dead, but the tuple keeps its shape so the projections
        # still find their element.
        if ctrl == XCTRL:
            return tuple_of(XCTRL, MEM, self.ret, XCTRL, INT_BOTTOM)
        # Both continuations are assumed possible: the callee is not looked into (no
        # interprocedural analysis), so it may return or throw.
        return tuple_of(CTRL, MEM, self.ret, CTRL, INT_BOTTOM)

    def key(self) -> None:
        return None

    def detail(self) -> str:
        return self.fn


def goes_to(n: Node, user: Node) -> bool:
    """Control goes from ``n`` on to ``user`` (one of ``n``'s users): ``user`` is a control
    node whose control input is ``n``, or a Region (every input of a merge is a path in).
    The one rule every walk along control edges follows (GCM's blocks, the interpreter's
    plan, the verifier, the dead-merge check, the Bril builder)."""
    return user.is_control and (isinstance(user, Region) or user.inputs[0] is n)


# One definition of "this path may run", used by every rule that drops dead paths.
def _live_path(ctrl: Node | None) -> bool:
    """Control on this edge may flow (a graph fresh from SCCP leaves unreached nodes TOP)."""
    if ctrl is None:
        return False
    t = ctrl.type
    return t is CTRL or t not in (XCTRL, TOP)  # (live control told by identity first)


def _loops_back(region: Region, watch: Callable[[Node], object], limit: int = 64) -> bool:
    """Is every live path into ``region`` control that left ``region`` itself (straight
    down, with no other merge on the way)? Then no path enters it from Start: a loop
    whose entry died. A bounded walk up each path (control nodes have their control as
    input 0); ``watch`` is given every node it passes, so a change on the way looks again."""
    for path in region.inputs[1:]:
        if not _live_path(path):
            continue
        ctrl: Node | None = path
        # Beyond ``limit`` the answer is "no": the rule that asked then does nothing, which
        # is always safe -- the sweep removes what a bounded search could not prove dead.
        for _ in range(limit):
            if ctrl is None or ctrl is region:
                break
            watch(ctrl)
            if isinstance(ctrl, (Region, Start)) or not ctrl.inputs:
                return False  # another merge, or the function's entry
            ctrl = ctrl.inputs[0]
        if ctrl is not region:
            return False
    return True


def _reads(value: Node, phi: Node, watch: Callable[[Node], object] | None = None,
           limit: int = 64) -> bool:
    """Does ``value`` read ``phi`` through data nodes (not through other phis)? A bounded
    search: a cycle longer than ``limit`` nodes is left to the sweep. ``watch`` is given
    every node the search looks at."""
    seen: set[int] = set()
    work = [value]
    while work and len(seen) < limit:
        n = work.pop()
        if n.id in seen:
            continue
        seen.add(n.id)
        if watch is not None:
            watch(n)
        for x in n.inputs[1:]:
            if x is phi:
                return True
            if x is not None and not x.is_control and not isinstance(x, Phi):
                work.append(x)
    return False
