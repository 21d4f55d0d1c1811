"""The type lattice the sea of nodes computes over (lesson 06).

A *type* here is what the compiler knows about a value at compile time. Types form a
lattice: ``TOP`` ("no value has been seen yet" -- the optimistic start) above everything,
``BOTTOM`` ("could be anything") below everything, and in between, per kind:

* integers: a constant ``[c, c]``, or a range ``[lo, hi]``; the integer bottom is the full
  64-bit range, the integer top is the empty range;
* booleans: ``true``, ``false``, any bool (bottom), no bool yet (top);
* floats: one (finite) constant, any float (bottom), no float yet (top);
* control: live (``CTRL``) or dead (``XCTRL``, above it);
* tuples (what ``Start`` and ``If`` produce), element by element;
* memory and references, each just top or bottom for now.

``meet`` goes *down* (what is true of either value: the union, widened to a range);
``join`` goes *up* (what is true of both: the intersection). Kinds that differ meet at
``BOTTOM`` and join at ``TOP``. Property tests check the lattice laws.
"""

from __future__ import annotations

from dataclasses import dataclass

# Tiny's ints are 64-bit and wrap: the full range is the integer bottom.
INT_MIN = -(1 << 63)
INT_MAX = (1 << 63) - 1


# Frozen: a type is a value. Nodes share type objects freely, compare them with ``==``
# and build GVN keys from them (a Constant's key is made from its type).
@dataclass(frozen=True, slots=True)
class Type:
    """Base class; ``TOP`` and ``BOTTOM`` are instances of it with kind "top"/"bottom"."""

    kind: str

    def meet(self, other: Type) -> Type:
        # The laws every transfer relies on: meet is commutative, associative and idempotent,
        # TOP is its identity and BOTTOM absorbs. SCCP's termination rests on them: a type only
        # falls, and each kind has a finite height (ranges by widening).
        # (identity first: the usual case, and cheap; then equality, which for types of
        # different classes is always False -- the generated ``__eq__`` compares only
        # instances of one class -- so it is asked only of the same class)
        if self is other or self.__class__ is other.__class__ and self == other:
            return self
        if self.kind == "top":
            return other
        if other.kind == "top":
            return self
        # An int meeting a bool is a type error the checker has ruled out; BOTTOM is still the
        # safe answer.
        if self.kind == "bottom" or other.kind == "bottom" or self.kind != other.kind:
            return BOTTOM
        return self._meet_same(other)

    def join(self, other: Type) -> Type:
        if self is other or self.__class__ is other.__class__ and self == other:
            return self
        # join is meet upside down. The iterative peepholes join a node's old type with its new
        # one: both are true, so their join is, and it is at least as precise as each.
        if self.kind == "bottom":
            return other
        if other.kind == "bottom":
            return self
        if self.kind == "top" or other.kind == "top" or self.kind != other.kind:
            return TOP
        return self._join_same(other)

    # Kinds without inner structure: equal or not at all (the subclasses refine this).
    def _meet_same(self, other: Type) -> Type:
        return BOTTOM if self != other else self

    def _join_same(self, other: Type) -> Type:
        return TOP if self != other else self

    def is_constant(self) -> bool:
        return False

    def isa(self, other: Type) -> bool:
        """``self ⊑ other``: ``self`` is at or below ``other`` (meeting changes nothing)."""
        return self.meet(other) == self

    def __str__(self) -> str:
        return self.kind.upper() if self.kind in ("top", "bottom") else self.kind


TOP = Type("top")
BOTTOM = Type("bottom")


@dataclass(frozen=True, slots=True)
class IntType(Type):
    """Integers in ``[lo, hi]``; ``lo > hi`` is the empty range (the integer top)."""

    lo: int = INT_MIN
    hi: int = INT_MAX

    def _empty(self) -> bool:
        return self.lo > self.hi

    def _meet_same(self, other: Type) -> Type:
        assert isinstance(other, IntType)
        # The empty range is the integer top: meeting with it changes nothing.
        if self._empty():
            return other
        if other._empty():
            return self
        # The smallest range holding both: not a set union (``[0,0]`` meet ``[5,5]`` is
        # ``[0,5]``), which keeps the lattice small enough to compute with.
        return IntType("int", min(self.lo, other.lo), max(self.hi, other.hi))

    def _join_same(self, other: Type) -> Type:
        assert isinstance(other, IntType)
        # Intersection: disjoint ranges join at the (canonical) empty range.
        lo, hi = max(self.lo, other.lo), min(self.hi, other.hi)
        return INT_TOP if lo > hi else IntType("int", lo, hi)

    def is_constant(self) -> bool:
        return self.lo == self.hi

    def __str__(self) -> str:
        if self.lo == self.hi:  # a constant, the most printed (GVN keys Constants by it)
            return str(self.lo)
        if self._empty():
            return "int:TOP"
        if self.lo == INT_MIN and self.hi == INT_MAX:
            return "int"
        return f"int[{self.lo}..{self.hi}]"


def int_const(value: int) -> IntType:
    return IntType("int", value, value)


def int_value(t: Type) -> int | None:
    """The integer a constant integer type stands for; None for any other type."""
    return t.lo if isinstance(t, IntType) and t.lo == t.hi else None


# Every empty range stands for the same top, but only this one compares equal to
# INT_TOP: _join_same returns it rather than whatever ``lo > hi`` it found.
INT_TOP = IntType("int", 1, 0)  # canonical empty range
INT_BOTTOM = IntType("int")


@dataclass(frozen=True, slots=True)
class BoolType(Type):
    """``value`` is True, False, or None (any bool); ``top`` marks "no bool yet"."""

    value: bool | None = None
    top: bool = False

    def _meet_same(self, other: Type) -> Type:
        assert isinstance(other, BoolType)
        # Below "no bool yet" sit true and false; below both, "any bool". So two different
        # constants meet at BOOL_BOTTOM, and a constant meets TOP as itself.
        if self.top:
            return other
        if other.top:
            return self
        return BOOL_BOTTOM

    def _join_same(self, other: Type) -> Type:
        assert isinstance(other, BoolType)
        # BOOL_BOTTOM is the identity of join; two different constants join at BOOL_TOP.
        if self.value is None and not self.top:
            return other
        if other.value is None and not other.top:
            return self
        return BOOL_TOP

    def is_constant(self) -> bool:
        return self.value is not None

    def __str__(self) -> str:
        if self.top:
            return "bool:TOP"
        return "bool" if self.value is None else ("true" if self.value else "false")


BOOL_TOP = BoolType("bool", None, True)
BOOL_BOTTOM = BoolType("bool")
TRUE = BoolType("bool", True)
FALSE = BoolType("bool", False)


@dataclass(frozen=True, slots=True)
class FloatType(Type):
    """IEEE doubles: one constant, any float (bottom), or no float yet (top).

    A constant is kept as its text (``repr``), not as a Python float: ``0.0 == -0.0`` in
    Python, and a lattice (and GVN, which keys Constants by their type) that took them for
    one value would print ``0.0`` where the program prints ``-0.0``. NaN and the infinities
    are never constants (no Bril constant spells them; folding leaves such operations to
    the run), so every constant equals itself."""

    text: str | None = None  # repr of the constant; None: any float (or TOP with ``top``)
    top: bool = False

    def _meet_same(self, other: Type) -> Type:
        assert isinstance(other, FloatType)
        if self.top:
            return other
        if other.top:
            return self
        return FLOAT_BOTTOM  # two different constants (equal ones were caught in meet)

    def _join_same(self, other: Type) -> Type:
        assert isinstance(other, FloatType)
        if self.text is None and not self.top:
            return other
        if other.text is None and not other.top:
            return self
        return FLOAT_TOP

    def is_constant(self) -> bool:
        return self.text is not None

    @property
    def value(self) -> float:
        assert self.text is not None, "not a constant"
        return float(self.text)

    def __str__(self) -> str:
        if self.top:
            return "float:TOP"
        return "float" if self.text is None else self.text


FLOAT_TOP = FloatType("float", None, True)
FLOAT_BOTTOM = FloatType("float")


def float_const(value: float) -> FloatType:
    return FloatType("float", repr(float(value)))


@dataclass(frozen=True, slots=True)
class ControlType(Type):
    """Control: ``live`` (reachable) is below dead (``XCTRL``, unreachable)."""

    # Dead is above live: the optimistic start is "nothing reachable", and a path falls
    # to live once SCCP finds control can flow there.
    live: bool = True

    def _meet_same(self, other: Type) -> Type:
        return CTRL

    def _join_same(self, other: Type) -> Type:
        return XCTRL

    def __str__(self) -> str:
        return "ctrl" if self.live else "~ctrl"


CTRL = ControlType("ctrl", True)
XCTRL = ControlType("ctrl", False)


@dataclass(frozen=True, slots=True)
class TupleType(Type):
    """Several values at once (``Start``, ``If``); met element by element."""

    types: tuple[Type, ...] = ()

    def _meet_same(self, other: Type) -> Type:
        assert isinstance(other, TupleType)
        # Tuples of different shapes come from different nodes: nothing in common.
        if len(self.types) != len(other.types):
            return BOTTOM
        return TupleType("tuple", tuple(a.meet(b) for a, b in zip(self.types, other.types,
                                                                 strict=True)))

    def _join_same(self, other: Type) -> Type:
        assert isinstance(other, TupleType)
        if len(self.types) != len(other.types):
            return TOP
        return TupleType("tuple", tuple(a.join(b) for a, b in zip(self.types, other.types,
                                                                 strict=True)))

    def __str__(self) -> str:
        return "[" + ", ".join(str(t) for t in self.types) + "]"


def tuple_of(*types: Type) -> TupleType:
    return TupleType("tuple", tuple(types))


@dataclass(frozen=True, slots=True)
class SimpleType(Type):
    """Kinds with just a top and a bottom (memory, references to one type)."""

    # Nothing is tracked about memory or references (yet): a memory state is just "some
    # state", and the lattice only needs an optimistic top above it.
    top: bool = False

    def _meet_same(self, other: Type) -> Type:
        return self if not self.top else other

    def _join_same(self, other: Type) -> Type:
        return self if self.top else other

    def __str__(self) -> str:
        return f"{self.kind}:TOP" if self.top else self.kind


MEM = SimpleType("mem")
MEM_TOP = SimpleType("mem", True)


def ref(name: str) -> SimpleType:
    """A reference to an array or struct type (never null in Tiny)."""
    return SimpleType(f"ref {name}")
