"""Memory nodes: the heap, ordered by memory edges (lesson 06).

Memory is one more value flowing through the graph: ``Start`` produces the initial memory
state, every store (and ``print``, whose effect on the outside world must keep its order)
takes a memory state and produces the next one, every load reads one. Loads and stores are
*pinned*: their input 0 is the control under which they run, after the tests that guard
them (bounds, zero divisors, unset slots are explicit ``If`` + ``Trap`` in the graph).

Allocation (``NewStruct``) is pinned but needs no memory input: a fresh object cannot alias
anything older. ``new T[n]`` may trap besides (``out of memory``: the run's allocation total,
``Limits.cells``, is state the program changes), so it is ordered like an effect: the
``NewArray`` reads the memory state it comes after, and a ``KeepNew`` in the memory chain
reads the array, so the allocation runs before the next effect and is never dropped as
unused (issue #39: an unread ``new int[50]`` was ``out of memory`` in ``quads`` with
``Limits(cells=100)`` and printed in machine code). Only a constant length 0, which charges
nothing and cannot trap, lets the ``KeepNew`` go. ``Len`` floats freely -- an array's length
never changes.

A load reads what the stores before it wrote: each effect says whether a load may look past
it (``passes_load``), and the loads' ``idealize`` walks the chain (:mod:`ssa_course.son.alias`).
"""

from __future__ import annotations

from typing import Any

from ssa_course.errors import Pos
from ssa_course.runtime import TinyStruct, Value, format_print
from ssa_course.son import intervals
from ssa_course.son.alias import (
    distinct_indices,
    distinct_objects,
    reaching_value,
    split_through_phi,
)
from ssa_course.son.control import Phi, known_inputs
from ssa_course.son.data import const
from ssa_course.son.graph import Graph, Node, RunState
from ssa_course.son.types import (
    BOOL_BOTTOM,
    BOOL_TOP,
    FALSE,
    MEM,
    TOP,
    TRUE,
    IntType,
    Type,
    int_const,
)


class Len(Node):
    """``len(a)``: input 1 the array."""

    __slots__ = ()

    # No control and no memory input: the length is fixed when the array is made, so Len is
    # a pure value -- it floats, and GVN makes every ``len(a)`` of one array one node.
    label = "len"

    def compute(self) -> Type:
        return intervals.length(self.operand(1).type)  # 0..MAX_ARRAY_LENGTH

    def idealize(self) -> Node | None:
        base = self.inputs[1]
        # Safe because the length test ran before the allocation: n is known non-negative here.
        if isinstance(base, NewArray):  # len(new T[n]) -> n
            return base.inputs[1]
        return None

    def evaluate(self, args: list[Value], state: RunState) -> Value:
        return len(args[1].items)


class InBounds(Node):
    """``0 <= i < n``: input 1 the index, input 2 the length."""

    __slots__ = ()

    label = "inbounds"

    def compute(self) -> Type:
        i, n = self.operand(1).type, self.operand(2).type
        # The range test of lesson 09: true when every possible index is inside every possible
        # length, false when none is. Folding it to TRUE is what removes a bounds check.
        if TOP in (i, n):
            return BOOL_TOP
        if isinstance(i, IntType) and isinstance(n, IntType):
            if i.lo >= 0 and i.hi < n.lo:
                return TRUE
            if i.hi < 0 or i.lo >= n.hi:
                return FALSE
        return BOOL_BOTTOM

    def evaluate(self, args: list[Value], state: RunState) -> Value:
        return 0 <= args[1] < args[2]


class IsSet(Node):
    """True when a slot read from an array of references holds an object."""

    __slots__ = ()

    label = "isset"

    # Whether a slot is set is not tracked by the types (a reference type says nothing of
    # null): the test is always made at run time.
    def compute(self) -> Type:
        return BOOL_BOTTOM

    def evaluate(self, args: list[Value], state: RunState) -> Value:
        return args[1] is not None


class NewArray(Node):
    """``new T[n]`` (after its length test): input 0 control, input 1 the length, input 2
    the memory state it comes after (it may trap ``out of memory``: the effects before
    it run first)."""

    __slots__ = ("pos", "zero", "ref_type", "elem")

    # Pinned below its length test. The memory input orders it after the effects before it
    # (the new object is not in that state: no older load reads it); the ``KeepNew`` that
    # follows it in the memory chain orders it before the effects after it.
    pinned = True
    allocates = True  # a fresh object each time (son/alias.py)

    def __init__(self, graph: Graph, ctrl: Node, length: Node, mem: Node, elem_zero: object,
                 ty: Type, elem: str, pos: Pos | None = None):
        super().__init__(graph, ctrl, length, mem)
        self.pos = pos  # where ``new`` is written (the run's allocation total reports there)
        self.zero = elem_zero
        self.ref_type = ty
        self.elem = elem
        self.label = f"new {elem}[]"

    def compute(self) -> Type:
        return self.ref_type

    # No GVN: two ``new`` with equal inputs are still two objects (and that is what lets a
    # fresh object be known distinct from every older one).
    def key(self) -> None:
        return None

    def evaluate(self, args: list[Value], state: RunState) -> Value:
        return state.heap.new_array(args[1], self.zero, self.pos)


class NewStruct(Node):
    """``new S { ... }``: input 0 control, then the field values in declaration order."""

    __slots__ = ("ref_type", "struct", "fields")

    pinned = True
    allocates = True  # a fresh object each time (son/alias.py)

    def __init__(self, graph: Graph, ctrl: Node, values: list[Node], ty: Type, name: str,
                 fields: list[str]):
        super().__init__(graph, ctrl, *values)
        self.ref_type = ty
        self.struct = name
        self.fields = fields
        self.label = f"new {name}"

    def compute(self) -> Type:
        return self.ref_type

    def key(self) -> None:
        return None

    def evaluate(self, args: list[Value], state: RunState) -> Value:
        return TinyStruct(self.struct, dict(zip(self.fields, args[1:], strict=True)))


class Load(Node):
    """``a[i]`` (after its bounds test): control, memory, array, index."""

    __slots__ = ("value_type", "pos")

    # The default key (control, memory, array, index) is right for a load: the same slot
    # read in the same memory state under the same control is the same value, so GVN
    # shares it. A store in between makes a new memory state, and so a different key.
    label = "Load"
    pinned = True

    def __init__(self, graph: Graph, ctrl: Node, mem: Node, base: Node, index: Node,
                 ty: Type, pos: Pos | None = None):
        super().__init__(graph, ctrl, mem, base, index)
        self.value_type = ty
        self.pos = pos  # where ``a[i]`` is written (a backend's load reports errors there)

    def compute(self) -> Type:
        return self.value_type

    def idealize(self) -> Node | None:
        # what the stores before it wrote, or a fresh array's zero (son/alias.py)
        # The walk goes up the memory chain from input 1, asking each effect ``passes_load``;
        # failing that, split_through_phi makes one load per path into a memory merge when
        # that folds (son/alias.py says which paths must give a value).
        return reaching_value(self, self.operand(1)) or split_through_phi(self)

    def initial_value(self, make: bool = True) -> Node | bool | None:
        """The slot's value when nothing wrote it since the array was made: a fresh
        ``int`` or ``bool`` array's zero (a reference slot starts unset). With ``make``
        False, only whether there is one (no constant is made)."""
        # Every allocation the base may be must give the same zero: one value for all paths.
        zeros = {a.zero if isinstance(a, NewArray) else None for a in _objects(self)}
        if len(zeros) != 1 or None in zeros:
            return None
        zero = zeros.pop()
        return const(self, zero) if make else True  # type: ignore[arg-type]

    def moved(self, ctrl: Node, mem: Node) -> Load:
        """This load on one path into a merge (``ctrl``), reading that path's memory."""
        return Load(self.graph, ctrl, mem, self.operand(2), self.operand(3), self.value_type,
                    self.pos)

    def evaluate(self, args: list[Value], state: RunState) -> Value:
        return args[2].items[args[3]]


def _objects(load: Node) -> list[Node]:
    """The allocations a load's base may be: itself, or every input of a phi of them
    (``var v = s; if (c) { v = t; }``); empty when something else may be the base."""
    base = load.operand(2)
    if isinstance(base, Phi):
        # The answer reads the phi's inputs, two edges away: register it (dep_read).
        load.dep_read(base)
        objects = [v for v in base.inputs[1:] if v is not None]
        if not all(getattr(v, "allocates", False) for v in objects):
            return []
        # ...and what each allocation was made with, three edges away: when one of those
        # values changes (``flag || d != c`` folds to the ``true`` the other path made), the
        # load may now read one value on every path (fuzz seed 52601).
        for v in objects:
            load.dep_read(v)
        return objects
    return [base]


def _made_with(obj: Node, field: str) -> Node | None:
    """The value a fresh struct's ``field`` was made with (None: not a struct)."""
    if isinstance(obj, NewStruct):
        return obj.operand(1 + obj.fields.index(field))
    return None


class Effect(Node):
    """A pinned node that takes a memory state and makes the next one (stores, print):
    never merged with another, never folded."""

    __slots__ = ()

    pinned = True

    # An effect's value is the next memory state: nothing more is known of it.
    def compute(self) -> Type:
        return MEM

    # Two equal-looking stores are two writes in order; sharing them would drop one.
    def key(self) -> None:
        return None


class Store(Effect):
    """``a[i] = v`` (after its bounds test): control, memory, array, index, value -> memory."""

    __slots__ = ()

    label = "Store"

    def passes_load(self, load: Node) -> tuple[Node | None, bool]:
        """(the value ``load`` reads here, or None; whether it may look further back)."""
        if not isinstance(load, Load):
            return None, True  # a field is never an element
        arr, idx, base, index = self.operand(2), self.operand(3), load.operand(2), load.operand(3)
        # (their types may sharpen, or they may be replaced: distant inputs of the load)
        arr, idx = load.dep_read(arr), load.dep_read(idx)
        # Same array node and same index node: the slot this store wrote -- its value (a
        # must-alias; ``False``: nothing older matters).
        if arr is base and idx is index:
            return self.inputs[4], False
        # Provably another slot: the load may look past this store.
        if distinct_objects(arr, base) or (arr is base and distinct_indices(idx, index)):
            return None, True
        # May alias: the walk stops, the load stays as it is (always safe).
        return None, False

    def evaluate(self, args: list[Value], state: RunState) -> Value:
        args[2].items[args[3]] = args[4]
        return None


class LoadField(Node):
    """``p.f``: control, memory, struct."""

    __slots__ = ("field", "value_type")

    pinned = True

    def __init__(self, graph: Graph, ctrl: Node, mem: Node, base: Node, field: str,
                 ty: Type):
        super().__init__(graph, ctrl, mem, base)
        self.field = field
        self.value_type = ty
        self.label = f"Load .{field}"

    def compute(self) -> Type:
        return self.value_type

    def idealize(self) -> Node | None:
        # what the stores before it wrote, or a fresh struct's field (son/alias.py)
        return reaching_value(self, self.operand(1)) or split_through_phi(self)

    def initial_value(self, make: bool = True) -> Node | None:
        """The field's value when nothing wrote it since a fresh struct was made."""
        found = {id(v): v for v in (_made_with(b, self.field) for b in _objects(self))}
        return next(iter(found.values())) if len(found) == 1 else None

    def moved(self, ctrl: Node, mem: Node) -> LoadField:
        """This load on one path into a merge (``ctrl``), reading that path's memory."""
        return LoadField(self.graph, ctrl, mem, self.operand(2), self.field, self.value_type)

    def key(self) -> tuple[Any, ...]:
        inputs = super().key()
        assert inputs is not None  # Node.key: the opcode and the input ids
        return (*inputs, self.field)

    def evaluate(self, args: list[Value], state: RunState) -> Value:
        return args[2].fields[self.field]


class StoreField(Effect):
    """``p.f = v``: control, memory, struct, value -> memory."""

    __slots__ = ("field",)

    def __init__(self, graph: Graph, ctrl: Node, mem: Node, base: Node, value: Node,
                 field: str):
        super().__init__(graph, ctrl, mem, base, value)
        self.field = field
        self.label = f"Store .{field}"

    def passes_load(self, load: Node) -> tuple[Node | None, bool]:
        """(the value ``load`` reads here, or None; whether it may look further back)."""
        if not isinstance(load, LoadField):
            return None, True  # an element is never a field
        obj, base = load.dep_read(self.operand(2)), load.operand(2)
        # Another field of any struct is another slot (fields never overlap).
        if load.field != self.field:
            return None, True
        if obj is base:
            return self.inputs[3], False
        # The same field of maybe the same struct: look further only if the objects are
        # provably distinct.
        return None, distinct_objects(obj, base)

    def evaluate(self, args: list[Value], state: RunState) -> Value:
        args[2].fields[self.field] = args[3]
        return None


class KeepNew(Effect):
    """control, memory, a ``new T[n]`` -> memory: the allocation is an effect (it may be
    ``out of memory``), so it stays, in order, even when nothing reads the array. Runs
    nothing itself (no quad)."""

    __slots__ = ()

    label = "keep"

    def passes_load(self, load: Node) -> tuple[Node | None, bool]:
        """Writes no slot: a load looks past it."""
        return None, True

    # A length known to be 0 charges nothing and cannot trap: the allocation may go.
    def idealize(self) -> Node | None:
        new = self.inputs[2]
        length = self.dep_read(new.inputs[1]) if isinstance(new, NewArray) else None
        if length is not None and length.type == int_const(0):
            return self.inputs[1]
        return None

    def evaluate(self, args: list[Value], state: RunState) -> Value:
        return None


class Print(Effect):
    """``print(...)``: control, memory, the values -> memory (output keeps its order)."""

    __slots__ = ()

    label = "Print"

    def passes_load(self, load: Node) -> tuple[Node | None, bool]:
        """Output writes no heap slot: a load looks past it."""
        # Print changes no heap slot, but it stays in the memory chain: its order against the
        # other effects (and so the output's order) is kept by that chain.
        return None, True

    # A value a dominating test proves constant is printed as that constant (the loop-exit
    # fact: past ``while (x != 0) ...``, ``print(x)`` prints 0).
    def idealize(self) -> Node | None:
        return known_inputs(self, 2)

    def evaluate(self, args: list[Value], state: RunState) -> Value:
        state.out.write(format_print(args[2:]))
        return None

