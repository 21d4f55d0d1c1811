"""What both graph builders share: making nodes in order, checks, calls, the finish.

:class:`Emitter` holds one function's graph under construction and the peephole driver
every new node goes through. Its helpers turn one source-level operation into nodes --
a division becomes a zero test (``If`` + ``Trap``) and a pinned ``Div``; an array read
becomes a bounds test, a ``Load`` and, for arrays of references, an unset-slot test. The
Tiny builder (:mod:`ssa_course.son.build`) and the builder from SSA quads
(:mod:`ssa_course.son.from_ssa`) only say where control and memory currently are.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ssa_course import opcodes
from ssa_course.errors import Pos
from ssa_course.floats import FLOAT_TO_INT_TRAP, TWO_63
from ssa_course.runtime import ARRAY_LENGTH_TRAP, MAX_ARRAY_LENGTH
from ssa_course.son.control import (
    IF_FALSE_ONLY,
    IF_TRUE_ONLY,
    Call,
    If,
    Loop,
    Parm,
    Phi,
    Proj,
    Region,
    Start,
    Stop,
    Trap,
)
from ssa_course.son.data import Compare, Constant, constant_value, operator_node
from ssa_course.son.graph import Graph, Node, unlink_dead
from ssa_course.son.memory import (
    InBounds,
    IsSet,
    KeepNew,
    Len,
    Load,
    LoadField,
    NewArray,
    NewStruct,
    Store,
    StoreField,
)
from ssa_course.son.peephole import Peephole
from ssa_course.son.program import FunctionGraph, SeaOfNodes, lattice_type  # noqa: F401
from ssa_course.son.types import (
    CTRL,
    FALSE,
    TRUE,
    Type,
    float_const,
    int_const,
    tuple_of,
)
from ssa_course.tiny import types as tt
from ssa_course.tiny.types import element_zero


@dataclass
class BuildOptions:
    """Ways to swap in other pieces while building (lesson 06's exercises use them):
    ``classes`` maps an operator (``"+"``, ``"-"``, ``"*"``) to the node class to make,
    ``gvn_key`` replaces every node's own GVN key."""

    classes: dict[str, type] = field(default_factory=dict)
    gvn_key: Callable[[Node], tuple[Any, ...] | None] | None = None


class Dead(Exception):
    """Raised when a check always fails: the rest of the straight-line code never runs."""


class Emitter:
    """One function under construction. Subclasses keep ``ctrl`` and ``mem`` current."""

    ctrl: Node | None
    mem: Node

    def __init__(self, name: str, arg_types: list[Type], arg_names: list[str],
                 optimize: bool, options: BuildOptions | None = None):
        self.optimize = optimize
        self.options = options or BuildOptions()
        g = self.g = Graph(name)
        self.start = Start(g, arg_types, arg_names)
        self.peep = Peephole(self.start, optimize, self.options.gvn_key)
        # Start goes through the driver like every node: it gets its type (the tuple of
        # control, memory and the parameters) before anything reads it.
        self.peep(self.start)
        self.exits: list[Node] = []
        # phis to fold once the function is built (trivial ones; other nodes are skipped)
        self.phis_to_clean: list[Node] = []

    def p(self, node: Node) -> Node:
        """Every new node goes through the peephole driver."""
        return self.peep(node)

    def live_ctrl(self) -> Node:
        """The current control, where an operation is being emitted: code is emitted only
        where control may reach (a check that always fails raised :class:`Dead`, and a
        statement after ``return``, ``break`` or ``throw`` is not emitted at all)."""
        ctrl = self.ctrl
        assert ctrl is not None, "an operation emitted where control never reaches"
        return ctrl

    def const(self, value: int | bool | float) -> Node:
        t = TRUE if value is True else FALSE if value is False else \
            float_const(value) if isinstance(value, float) else int_const(value)
        return self.p(Constant(self.g, self.start, t))

    def start_projections(self) -> tuple[Node, Node, list[Node]]:
        """Control, memory and the parameters, read off Start."""
        g = self.g
        ctrl = self.p(Proj(g, self.start, 0, "ctrl", control=True))
        mem = self.p(Proj(g, self.start, 1, "mem"))
        parms = [self.p(Parm(g, self.start, 2 + i, name))
                 for i, name in enumerate(self.start.arg_names)]
        return ctrl, mem, parms

    # -- control ------------------------------------------------------------------

    def branch(self, pred: Node) -> tuple[Node | None, Node | None]:
        """Split the current control on ``pred``: the (true, false) controls; with
        peepholes on, a side that can never run is None and no If is built."""
        # The If is peepholed first: if its predicate is a constant, its type already says
        # which side is dead, and no projection is made for a path that cannot run.
        iff = self.p(If(self.g, self.ctrl, pred))
        if self.optimize and iff.type in (IF_TRUE_ONLY, IF_FALSE_ONLY):
            ctrl = self.ctrl
            self.peep.stats.dead_branches += 1
            live_true = iff.type.types[0] == CTRL
            # The If decided nothing: it goes, and control simply continues (Click & Paleczny's
            # parse-time branch folding).
            self.peep.discard(iff)
            return (ctrl, None) if live_true else (None, ctrl)
        t = self.p(Proj(self.g, iff, 0, "True", control=True))
        f = self.p(Proj(self.g, iff, 1, "False", control=True))
        return t, f

    def guard(self, pred: Node, message: str, pos: Pos | None,
              witnesses: tuple[Node, ...] = ()) -> bool:
        """Continue only where ``pred`` holds; elsewhere the program stops with ``message``.
        Raises :class:`Dead` when the check can never pass. True when no test was needed
        here: the types prove it, or the same test already passed on the way."""
        # The test goes through the driver first: GVN makes it the same node as an equal test
        # made before, which is what lets the walk below recognise it by identity.
        pred = self.p(pred)
        if self.optimize and self._passed_on_this_path(pred):
            return True  # the same test already passed on the way here
        ok, bad = self.branch(pred)
        # The failing side ends the program: a Trap is an exit, with the memory state so the
        # output printed before the error stays in the graph.
        if bad is not None:
            self.exits.append(self.p(Trap(self.g, bad, self.mem, message, pos, witnesses)))
        self.ctrl = ok
        # The check always fails: the code after it would never run, so it is not built.
        if ok is None:
            raise Dead
        return bad is None

    def _passed_on_this_path(self, pred: Node, limit: int = 64) -> bool:
        """Walk control back from here while it has a single way in (up to a Region): is
        there the true side of an If on ``pred``? (GVN made equal tests one node.)"""
        node, steps = self.ctrl, 0
        # The walk stops at a merge: above it the test may have passed on one path only.
        while node is not None and steps < limit and not isinstance(node, (Region, Start)):
            if isinstance(node, Proj) and node.index == 0 and isinstance(node.inputs[0], If) \
                    and node.inputs[0].inputs[1] is pred:
                return True
            node = node.inputs[0] if node.inputs else None
            steps += 1
        return False

    # -- operations that can fail ---------------------------------------------------

    def divide(self, op: str, left: Node, right: Node | None, pos: Pos | None) -> Node:
        """An operator that may trap (``div``, ``rem``, or any row of the opcode table
        with a ``divisor``): a zero test on the divisor guards a pinned node."""
        row = opcodes.get(op)
        assert row is not None and row.may_trap, op
        operands = [left] if right is None else [left, right]
        if row.divisor is None:
            return self.convert(row, operands, pos)
        t = operands[row.divisor].type
        # A nonzero constant divisor: no test, no control input; the node floats and GVN can
        # share it like any pure operator.
        if self.optimize and t.is_constant() and t != int_const(0):
            # cannot trap: floats freely
            return self.p(operator_node(self.g, None, row.name, *operands))
        self.guard(Compare(self.g, "!=", operands[row.divisor], self.const(0)),
                   row.trap or "division by zero", pos)
        # Pinned under the passing side of its test: nothing may move it above the check.
        return self.p(operator_node(self.g, self.ctrl, row.name, *operands))

    def convert(self, row: opcodes.Opcode, operands: list[Node], pos: Pos | None) -> Node:
        """``int(x)`` (``ftoi``): two tests, ``x >= -2^63`` then ``x < 2^63`` (NaN fails
        the first), guard a pinned conversion; with a constant in range, no test."""
        assert row.name == "ftoi", row.name  # the one row whose trap is not a zero operand
        x = operands[0]
        t = x.type
        if self.optimize and t.is_constant() and not row.traps([constant_value(t)]):
            return self.p(operator_node(self.g, None, row.name, x))
        low = self.p(operator_node(self.g, None, "fge", x, self.const(-TWO_63)))
        self.guard(low, row.trap or FLOAT_TO_INT_TRAP, pos)
        high = self.p(operator_node(self.g, None, "flt", x, self.const(TWO_63)))
        self.guard(high, row.trap or FLOAT_TO_INT_TRAP, pos)
        return self.p(operator_node(self.g, self.ctrl, row.name, x))

    def bounds_check(self, base: Node, index: Node, pos: Pos | None) -> bool:
        """The test of ``base[index]``; True when none was needed (see :meth:`guard`)."""
        # Len and InBounds are pure: equal checks of the same array and index are one node,
        # so a repeated access finds its test already passed (guard's walk).
        length = self.p(Len(self.g, None, base))
        return self.guard(InBounds(self.g, None, index, length), "index out of bounds", pos,
                          (base, index))

    def _in_bounds(self, access: Node) -> None:
        """An access whose bounds test was not needed: machine code may leave its own
        test out (lesson 09; ``Graph.in_bounds``)."""
        if isinstance(access, (Load, Store)):
            self.g.in_bounds.add(access.id)

    def load_element(self, base: Node, index: Node, elem: tt.Type, pos: Pos | None) -> Node:
        proven = self.bounds_check(base, index, pos)
        value = self.p(Load(self.g, self.live_ctrl(), self.mem, base, index, lattice_type(elem),
                            pos))
        # Recorded for lesson 09 and the backends: this load's index is known in bounds.
        if proven:
            self._in_bounds(value)
        # A slot of a reference array may be unset (no null in Tiny's values): reading one is
        # a runtime error, tested after the load like a bounds check before it.
        if elem.is_ref():
            self.guard(IsSet(self.g, None, value), "unset element", pos, (base, index))
        return value

    def store_element(self, base: Node, index: Node, value: Node, pos: Pos | None) -> None:
        proven = self.bounds_check(base, index, pos)
        # The store's result is the new memory state: every later load and effect reads it.
        self.mem = self.p(Store(self.g, self.live_ctrl(), self.mem, base, index, value))
        if proven:
            self._in_bounds(self.mem)

    def load_field(self, base: Node, name: str, ty: tt.Type) -> Node:
        return self.p(LoadField(self.g, self.live_ctrl(), self.mem, base, name, lattice_type(ty)))

    def store_field(self, base: Node, name: str, value: Node) -> None:
        self.mem = self.p(StoreField(self.g, self.live_ctrl(), self.mem, base, value, name))

    def new_array(self, length: Node, elem: tt.Type, pos: Pos | None) -> Node:
        # One test for both ends (0 <= n <= MAX_ARRAY_LENGTH); the trap names the end.
        limit = self.const(MAX_ARRAY_LENGTH + 1)
        self.guard(InBounds(self.g, None, length, limit), ARRAY_LENGTH_TRAP, pos, (length,))
        ctrl = self.live_ctrl()
        new = self.p(NewArray(self.g, ctrl, length, self.mem, element_zero(elem),
                              lattice_type(tt.ArrayType(elem)), str(elem), pos))
        # It may be ``out of memory`` (the run's allocation total): an effect, kept in the
        # memory chain even if nothing reads the array (memory.py's KeepNew), unless its
        # length is 0 (nothing charged, no trap).
        self.mem = self.p(KeepNew(self.g, ctrl, self.mem, new))
        return new

    def new_struct(self, name: str, fields: list[str], values: list[Node]) -> Node:
        return self.p(NewStruct(self.g, self.live_ctrl(), values, lattice_type(tt.StructType(name)),
                                name, fields))

    def call(self, fn: str, args: list[Node], ret: tt.Type | None,
             catches: bool) -> tuple[Node | None, Node | None, Node | None]:
        """A Call; control and memory continue after it. Returns the result (or None) and,
        when ``catches``, the exceptional control and the thrown value."""
        g = self.g
        call = self.p(Call(g, self.live_ctrl(), self.mem, args, fn,
                           lattice_type(ret) if ret is not None else tuple_of()))
        # A call may read and write any memory: it takes the memory state and gives a new one,
        # so nothing moves across it.
        ctrl = self.p(Proj(g, call, 0, "ctrl", control=True))
        mem = self.p(Proj(g, call, 1, "mem"))
        result = self.p(Proj(g, call, 2, "result")) if ret is not None else None
        exc = thrown = None
        # Only inside a try: the exceptional projections are made only where a handler
        # takes them, so elsewhere an exception in the callee just leaves the function.
        if catches:
            exc = self.p(Proj(g, call, 3, "exc", control=True))
            thrown = self.p(Proj(g, call, 4, "thrown"))
        self.ctrl, self.mem = ctrl, mem
        return result, exc, thrown

    # -- the end ------------------------------------------------------------------------

    def remove_trivial_phis(self, phis: Sequence[Node]) -> None:
        remove_trivial_phis(self.g, phis, self.peep)

    def finish(self, name: str, params: list[tuple[str, tt.Type]],
               returns: tt.Type | None) -> FunctionGraph:
        # Stop is made last, from every exit collected on the way: it is the root the sweep
        # and every backward walk start from.
        stop = Stop(self.g, *self.exits)
        stop.type = stop.compute()
        self.g.stop = stop
        if self.optimize:
            # The trivial phis once more (later peepholes may have made some), then a sweep
            # of what nobody reads, now that the scaffolding (the scope) is gone.
            self.remove_trivial_phis(self.phis_to_clean)
            sweep(self.g)
        return FunctionGraph(name, self.g, self.start, stop, params, returns,
                             self.optimize, self.peep.stats)


def remove_trivial_phis(g: Graph, phis: Sequence[Node], peep: Peephole) -> None:
    """``phi(x, x)`` and ``phi(x, itself)`` are just ``x`` (repeat: removing one phi can
    make another trivial). The rule is the Phi's own ``idealize()``, the replacement the
    peephole driver's (:meth:`Peephole.replace`); not the whole look (:func:`peephole`):
    a phi typed while its loop was parsed (its declared type) would rise to its inputs'."""
    work = list(phis)
    while work:
        phi = work.pop()
        if not isinstance(phi, Phi) or phi.id not in g.nodes:
            continue  # already folded away
        region = phi.inputs[0]
        # A phi of a loop still being built is not trivial yet: its back edge may differ.
        if not isinstance(region, Region) or region.in_progress():
            continue
        same = phi.idealize()
        if same is None:
            continue
        # Removing one phi can make a phi that read it trivial (nested loops): revisit those.
        work.extend(u for u in phi.outputs if isinstance(u, Phi))
        peep.replace(phi, same)


def sweep(g: Graph, live_loops_only: bool = False) -> tuple[list[Node], list[Node]]:
    """Delete every node that Stop (or a loop) does not (transitively) read; returns the
    deleted nodes and the live ones that lost users to them.

    A loop that never exits does not reach Stop (unless it got a Never exit): loops keep
    themselves alive -- with ``live_loops_only``, only loops whose type is live control."""
    # Mark from the roots along inputs (a mark and sweep, not reference counting): a dead
    # cycle -- a loop behind a dead branch, a phi and its ``+ 1`` -- is found too.
    seen: set[int] = set()
    work = [g.stop, *(n for n in g.nodes.values() if isinstance(n, Loop)
                      and (not live_loops_only or n.type == CTRL))]
    while work:
        n = work.pop()
        if n is None or n.id in seen:
            continue
        seen.add(n.id)
        work.extend(n.inputs)
    dead = [n for n in g.nodes.values() if n.id not in seen]
    return dead, unlink_dead(dead, seen)
