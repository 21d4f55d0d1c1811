"""Data nodes: constants, arithmetic, comparisons, logic (lesson 06).

Data nodes float: they have no control input (input 0 is None) unless they must stay
where the program put them -- a division whose divisor is not known to be non-zero sits
below the zero test that guards it. Each class owns its type transfer (``compute``), its
algebraic rewrites (``idealize``) and its run-time meaning (``evaluate``).
"""

from __future__ import annotations

from ssa_course.runtime import tiny_div, tiny_rem, wrap
from ssa_course.son.graph import Graph, Node, start_of
from ssa_course.son.types import (
    BOOL_BOTTOM,
    BOOL_TOP,
    BOTTOM,
    FALSE,
    INT_BOTTOM,
    INT_TOP,
    TOP,
    TRUE,
    BoolType,
    IntType,
    Type,
    int_const,
)


def constant_value(t: Type) -> object:
    """The Python value of a constant type (an int or a bool)."""
    if isinstance(t, IntType):
        return t.lo
    if isinstance(t, BoolType):
        return t.value
    raise ValueError(f"{t} is not a constant")


def type_of_value(v: int | bool) -> Type:
    if v is True:
        return TRUE
    if v is False:
        return FALSE
    return int_const(v)


class Constant(Node):
    """A constant; its only input is Start (so it is reachable from the graph's root)."""

    __slots__ = ("value",)

    def __init__(self, graph: Graph, start: Node, value: Type):
        super().__init__(graph, start)
        self.value = value
        self.type = value  # a constant's type is known the moment it is made
        self.label = str(value)

    def compute(self) -> Type:
        return self.value

    def key(self) -> tuple:
        return ("Constant", str(self.value))

    def evaluate(self, args: list[object], state: object) -> object:
        return constant_value(self.value)


def const(node: Node, value: int | bool) -> Constant:
    return Constant(node.graph, start_of(node), type_of_value(value))


def _int_binary(node: Node, fn) -> Type:  # noqa: ANN001
    a, b = node.inputs[1].type, node.inputs[2].type
    if a in (TOP, INT_TOP) or b in (TOP, INT_TOP):
        return INT_TOP
    if isinstance(a, IntType) and isinstance(b, IntType) and a.is_constant() \
            and b.is_constant():
        value = fn(a.lo, b.lo)
        return INT_BOTTOM if value is None else int_const(value)
    return INT_BOTTOM


def _is_const(node: Node, value: int | bool) -> bool:
    return node.type.is_constant() and constant_value(node.type) == value \
        and type(constant_value(node.type)) is type(value)


class Binary(Node):
    """A two-operand node: input 0 is control (None unless pinned), inputs 1 and 2 operands."""

    __slots__ = ()

    op = "?"

    def __init__(self, graph: Graph, ctrl: Node | None, left: Node, right: Node):
        super().__init__(graph, ctrl, left, right)
        self.label = self.op

    def fn(self, a: object, b: object) -> object:
        raise TypeError(self.op)

    def compute(self) -> Type:
        return _int_binary(self, self.fn)

    def evaluate(self, args: list[object], state: object) -> object:
        return self.fn(args[1], args[2])


class Add(Binary):
    __slots__ = ()

    op = "+"
    commutative = True

    def fn(self, a: int, b: int) -> int:
        return wrap(a + b)

    def idealize(self) -> Node | None:
        left, right = self.inputs[1], self.inputs[2]
        if _is_const(right, 0):
            return left
        if _is_const(left, 0):
            return right
        if left is right:  # x + x -> x * 2
            return Mul(self.graph, None, left, const(self, 2))
        # (x + c1) + c2  ->  x + (c1 + c2): constants gather on the right
        if isinstance(left, Add) and left.inputs[2].type.is_constant() \
                and right.type.is_constant():
            c = const(self, wrap(left.inputs[2].type.lo + right.type.lo))
            return Add(self.graph, None, left.inputs[1], c)
        if left.type.is_constant() and not right.type.is_constant():
            return Add(self.graph, None, right, left)
        return None


class Sub(Binary):
    __slots__ = ()

    op = "-"

    def fn(self, a: int, b: int) -> int:
        return wrap(a - b)

    def idealize(self) -> Node | None:
        left, right = self.inputs[1], self.inputs[2]
        if left is right:
            return const(self, 0)
        if _is_const(right, 0):
            return left
        return None


class Mul(Binary):
    __slots__ = ()

    op = "*"
    commutative = True

    def fn(self, a: int, b: int) -> int:
        return wrap(a * b)

    def compute(self) -> Type:
        t = _int_binary(self, self.fn)
        if t == INT_BOTTOM and int_const(0) in (self.inputs[1].type, self.inputs[2].type):
            return int_const(0)  # zero times anything is zero, known or not
        return t

    def idealize(self) -> Node | None:
        left, right = self.inputs[1], self.inputs[2]
        if _is_const(right, 1):
            return left
        if _is_const(left, 1):
            return right
        if left.type.is_constant() and not right.type.is_constant():
            return Mul(self.graph, None, right, left)
        return None


class Div(Binary):
    """``/``; pinned below its zero test unless the divisor is a known non-zero constant."""

    __slots__ = ()

    op = "/"
    pinned = True

    def fn(self, a: int, b: int) -> int | None:
        return None if b == 0 else tiny_div(a, b)

    def idealize(self) -> Node | None:
        return self.inputs[1] if _is_const(self.inputs[2], 1) else None

    def evaluate(self, args: list[object], state: object) -> object:
        return tiny_div(args[1], args[2])


class Rem(Binary):
    __slots__ = ()

    op = "%"
    pinned = True

    def fn(self, a: int, b: int) -> int | None:
        return None if b == 0 else tiny_rem(a, b)

    def evaluate(self, args: list[object], state: object) -> object:
        return tiny_rem(args[1], args[2])


class Neg(Node):
    """Unary minus (input 0 unused)."""

    __slots__ = ()

    label = "neg"

    def compute(self) -> Type:
        t = self.inputs[1].type
        if t in (TOP, INT_TOP):
            return INT_TOP
        if isinstance(t, IntType) and t.is_constant():
            return int_const(wrap(-t.lo))
        return INT_BOTTOM

    def idealize(self) -> Node | None:
        inner = self.inputs[1]
        return inner.inputs[1] if isinstance(inner, Neg) else None

    def evaluate(self, args: list[object], state: object) -> object:
        return wrap(-args[1])


class Compare(Binary):
    """``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=`` on ints; ``==``/``!=`` also on bools and
    references (identity)."""

    __slots__ = ("op", "commutative")

    _FN = {"==": lambda a, b: a is b if _is_ref(a) else a == b,
           "!=": lambda a, b: a is not b if _is_ref(a) else a != b,
           "<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
           ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}
    _SWAP = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}

    def __init__(self, graph: Graph, op: str, left: Node, right: Node):
        self.op = op
        self.commutative = op in ("==", "!=")
        super().__init__(graph, None, left, right)

    def fn(self, a: object, b: object) -> bool:
        return self._FN[self.op](a, b)

    def compute(self) -> Type:
        a, b = self.inputs[1].type, self.inputs[2].type
        if TOP in (a, b) or INT_TOP in (a, b) or BOOL_TOP in (a, b):
            return BOOL_TOP
        if a.is_constant() and b.is_constant():
            return TRUE if self.fn(constant_value(a), constant_value(b)) else FALSE
        if self.inputs[1] is self.inputs[2]:
            return TRUE if self.op in ("==", "<=", ">=") else FALSE
        return BOOL_BOTTOM

    def idealize(self) -> Node | None:
        left, right = self.inputs[1], self.inputs[2]
        # constants on the right: 3 < x  ->  x > 3 (one form, so GVN sees more twins)
        if left.type.is_constant() and not right.type.is_constant():
            return Compare(self.graph, self._SWAP.get(self.op, self.op), right, left)
        return None

    def key(self) -> tuple:
        return (*super().key(), self.op)

    def evaluate(self, args: list[object], state: object) -> object:
        return self.fn(args[1], args[2])


def _is_ref(v: object) -> bool:
    return not isinstance(v, int)


class Not(Node):
    __slots__ = ()

    label = "!"

    def compute(self) -> Type:
        t = self.inputs[1].type
        if isinstance(t, BoolType) and t.is_constant():
            return FALSE if t.value else TRUE
        return BOOL_TOP if t in (TOP, BOOL_TOP) else BOOL_BOTTOM

    def idealize(self) -> Node | None:
        inner = self.inputs[1]
        if isinstance(inner, Not):  # !!x -> x
            return inner.inputs[1]
        return None

    def evaluate(self, args: list[object], state: object) -> object:
        return not args[1]


class Logic(Binary):
    """Bril's ``and``/``or``: both operands evaluated (Tiny's && and || become control)."""

    __slots__ = ("op",)

    commutative = True

    def __init__(self, graph: Graph, op: str, left: Node, right: Node):
        self.op = op
        super().__init__(graph, None, left, right)

    def fn(self, a: bool, b: bool) -> bool:
        return (a and b) if self.op == "and" else (a or b)

    def compute(self) -> Type:
        a, b = self.inputs[1].type, self.inputs[2].type
        if a.is_constant() and b.is_constant():
            return TRUE if self.fn(a.value, b.value) else FALSE
        absorbing = FALSE if self.op == "and" else TRUE
        if absorbing in (a, b):
            return absorbing
        if TOP in (a, b) or BOOL_TOP in (a, b):
            return BOOL_TOP
        return BOOL_BOTTOM

    def idealize(self) -> Node | None:
        left, right = self.inputs[1], self.inputs[2]
        identity = self.op == "and"  # x and true -> x ; x or false -> x
        if _is_const(right, identity):
            return left
        if _is_const(left, identity):
            return right
        return left if left is right else None

    def key(self) -> tuple:
        return (*super().key(), self.op)


class UndefinedValue:
    """What an unassigned Bril variable holds: reading it (not merging it) is an error."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name


class Undefined(Node):
    """A Bril variable on a path where it was never assigned: a Phi may carry it along,
    any other use is a runtime error."""

    __slots__ = ("name",)

    label = "undef"

    def __init__(self, graph: Graph, start: Node, name: str):
        super().__init__(graph, start)
        self.name = name

    def compute(self) -> Type:
        return BOTTOM

    def key(self) -> None:
        return None

    def evaluate(self, args: list[object], state: object) -> object:
        return UndefinedValue(self.name)
