"""Bril's memory and char extensions in the sea of nodes: one conservative memory class.

Bril's pointers (``alloc``, ``load``, ``store``, ``free``, ``ptradd``) live on the same
memory edges as Tiny's arrays and structs (:mod:`ssa_course.son.memory`), with *one*
alias class for all of them: no load looks past a Bril store or free, and no Tiny load
looks past one either (``passes_load`` always stops the walk). Alias classes per
allocation would let loads fold through stores; this first version does not.

Three node kinds:

* :class:`BrilPure` -- ``ptradd``, the char comparisons, ``char2int`` and char constants:
  floating values with no effect (GVN shares equal ones);
* :class:`BrilValue` -- ``alloc``, ``load``, ``int2char``: pinned under their control and
  reading a memory state, they make a value and may stop the program (brili's errors);
* :class:`BrilEffect` -- ``store``, ``free``, and ``keep``: take a memory state and make
  the next one. ``keep v`` follows every :class:`BrilValue`: it threads the value into the
  memory chain, so an unused ``alloc`` or ``load`` is never swept away (its error, or the
  leak check at the end, is the program's behaviour) and later effects stay after it.
"""

from __future__ import annotations

from typing import Any

from ssa_course.errors import Pos
from ssa_course.quads import memory
from ssa_course.runtime import Value
from ssa_course.son.graph import Graph, Node, RunState
from ssa_course.son.memory import Effect
from ssa_course.son.types import Type


def bril_memory(state: RunState) -> memory.Memory:
    """The run's Bril heap (made on first use, checked for leaks when ``main`` returns)."""
    mem = getattr(state, "bril", None)
    if mem is None:
        mem = memory.Memory()
        state.bril = mem  # type: ignore[attr-defined]
    return mem


class BrilPure(Node):
    """A pure Bril operation (``op``) of its inputs 1...; ``const``: a char constant
    (input 0 is Start, like a Constant's)."""

    __slots__ = ("op", "value_type", "value")

    def __init__(self, graph: Graph, ctrl: Node | None, op: str, args: list[Node],
                 ty: Type, value: str | None = None):
        super().__init__(graph, ctrl, *args)
        self.op = op
        self.value_type = ty
        self.value = value
        self.label = f"'{value}'" if op == "const" else op

    def compute(self) -> Type:
        return self.value_type

    def key(self) -> tuple[Any, ...] | None:
        inputs = super().key()
        assert inputs is not None
        return (*inputs, self.op, self.value)

    def evaluate(self, args: list[Value], state: RunState) -> Value:
        op = self.op
        if op == "const":
            return self.value
        if op == "ptradd":
            return memory.ptradd(args[1], args[2])
        if op == "char2int":
            return ord(args[1])
        return memory.char_compare(op, args[1], args[2])


class BrilValue(Node):
    """``alloc``, ``load`` or ``int2char``: control, memory, the operands -> a value;
    ``pos`` is where the operation is written (its runtime error reports there)."""

    __slots__ = ("op", "value_type", "pos")

    pinned = True

    def __init__(self, graph: Graph, ctrl: Node, mem: Node, op: str, args: list[Node],
                 ty: Type, pos: Pos | None = None):
        super().__init__(graph, ctrl, mem, *args)
        self.op = op
        self.value_type = ty
        self.pos = pos
        self.label = op

    def compute(self) -> Type:
        return self.value_type

    # each one allocates, or reads a memory state that may change: never shared
    def key(self) -> None:
        return None

    def evaluate(self, args: list[Value], state: RunState) -> Value:
        if self.op == "alloc":
            return bril_memory(state).alloc(args[2], self.pos)
        if self.op == "load":
            return bril_memory(state).load(args[2], self.pos)
        return memory.int2char(args[2], self.pos)


class BrilEffect(Effect):
    """``store p v``, ``free p`` or ``keep v``: control, memory, operands -> memory;
    ``pos`` as :class:`BrilValue`'s."""

    __slots__ = ("op", "pos")

    def __init__(self, graph: Graph, ctrl: Node, mem: Node, op: str, args: list[Node],
                 pos: Pos | None = None):
        super().__init__(graph, ctrl, mem, *args)
        self.op = op
        self.pos = pos
        self.label = op

    def passes_load(self, load: Node) -> tuple[Node | None, bool]:
        """One alias class: no load looks past a Bril effect (always safe)."""
        return None, False

    def evaluate(self, args: list[Value], state: RunState) -> Value:
        if self.op == "store":
            bril_memory(state).store(args[2], args[3], self.pos)
        elif self.op == "free":
            bril_memory(state).free(args[2], self.pos)
        return None
