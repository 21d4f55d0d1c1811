"""Sea-of-nodes nodes: each class owns its semantics (lesson 05-06).

A node has ordered *inputs* (use-def edges: the values it reads, input 0 being its control
when it has one) and *outputs* (def-use edges: who reads it), kept mirror images of each
other by :meth:`Node.set_input`. Each node class knows

* ``compute()`` -- its type from its inputs' types (the transfer function);
* ``idealize()`` -- a cheaper equivalent node, or None (algebraic rewrites);
* ``key()`` -- what global value numbering hashes (opcode + inputs, commutative inputs
  sorted), or None for nodes that must never be merged (control, effects).

The peephole driver (:mod:`ssa_course.son.peephole`) is generic over these three methods:
adding an opcode never edits the driver.
"""

from __future__ import annotations

from ssa_course.runtime import tiny_div, tiny_rem, wrap
from ssa_course.son.types import (
    BOOL_BOTTOM,
    BOOL_TOP,
    BOTTOM,
    CTRL,
    FALSE,
    INT_BOTTOM,
    INT_TOP,
    TOP,
    TRUE,
    XCTRL,
    BoolType,
    IntType,
    Type,
    int_const,
    tuple_of,
)


class Graph:
    """Owns the node ids (so printing and drawing are deterministic)."""

    def __init__(self) -> None:
        self.next_id = 0
        self.nodes: dict[int, Node] = {}

    def register(self, node: Node) -> None:
        node.id = self.next_id
        self.next_id += 1
        self.nodes[node.id] = node


class Node:
    """Base node. ``label`` is how drawings name it."""

    label = "?"
    commutative = False
    is_control = False

    def __init__(self, graph: Graph, *inputs: Node | None):
        self.graph = graph
        self.id = -1
        self.inputs: list[Node | None] = []
        self.outputs: list[Node] = []
        self.type: Type = TOP
        graph.register(self)
        for n in inputs:
            self.add_input(n)

    # -- edges ------------------------------------------------------------------

    def add_input(self, n: Node | None) -> None:
        self.inputs.append(n)
        if n is not None:
            n.outputs.append(self)

    def set_input(self, i: int, n: Node | None) -> None:
        old = self.inputs[i]
        if old is n:
            return
        if old is not None:
            old.outputs.remove(self)
        self.inputs[i] = n
        if n is not None:
            n.outputs.append(self)

    def in_(self, i: int) -> Node | None:
        return self.inputs[i] if i < len(self.inputs) else None

    def kill(self) -> None:
        """Disconnect a node nobody uses (and drop it from the graph)."""
        assert not self.outputs, f"{self} still has users"
        for i in range(len(self.inputs)):
            self.set_input(i, None)
        self.graph.nodes.pop(self.id, None)

    def replace_with(self, other: Node) -> None:
        """Every user of ``self`` reads ``other`` instead."""
        for user in list(self.outputs):
            for i, n in enumerate(user.inputs):
                if n is self:
                    user.set_input(i, other)

    # -- semantics (overridden) -------------------------------------------------

    def compute(self) -> Type:
        return BOTTOM

    def idealize(self) -> Node | None:
        return None

    def key(self) -> tuple | None:
        ids = [n.id if n is not None else -1 for n in self.inputs]
        if self.commutative:
            ids = [ids[0], *sorted(ids[1:])]
        return (type(self).__name__, *ids)

    def __repr__(self) -> str:
        return f"{self.label}#{self.id}"


# ---------------------------------------------------------------- control


class Start(Node):
    label = "Start"
    is_control = True

    def __init__(self, graph: Graph, arg_types: list[Type]):
        super().__init__(graph)
        self.arg_types = arg_types

    def compute(self) -> Type:
        return tuple_of(CTRL, *self.arg_types)

    def key(self) -> None:
        return None


class Proj(Node):
    """Reads element ``index`` of a multi-valued node (Start, If)."""

    def __init__(self, graph: Graph, ctrl: Node, index: int, label: str):
        super().__init__(graph, ctrl)
        self.index = index
        self.label = label
        self.is_control = index == 0 or isinstance(ctrl, If)

    def compute(self) -> Type:
        t = self.inputs[0].type
        if t.kind == "tuple" and self.index < len(t.types):
            return t.types[self.index]
        return TOP if t == TOP else BOTTOM

    def key(self) -> tuple:
        return ("Proj", self.inputs[0].id, self.index)


class If(Node):
    label = "If"
    is_control = True

    def compute(self) -> Type:
        ctrl, pred = self.inputs[0].type, self.inputs[1].type
        if ctrl in (XCTRL, TOP):
            return tuple_of(XCTRL, XCTRL)
        if pred == TRUE:
            return tuple_of(CTRL, XCTRL)
        if pred == FALSE:
            return tuple_of(XCTRL, CTRL)
        if pred in (BOOL_TOP, TOP):
            return tuple_of(XCTRL, XCTRL)
        return tuple_of(CTRL, CTRL)

    def key(self) -> None:
        return None


class Region(Node):
    """Merges control: input 0 is unused (itself, by convention None), 1.. the paths."""

    label = "Region"
    is_control = True

    def compute(self) -> Type:
        t: Type = XCTRL
        for n in self.inputs[1:]:
            if n is not None:
                t = t.meet(n.type)
        return t

    def key(self) -> None:
        return None


class Phi(Node):
    """Input 0 is its Region; input ``i`` is the value when control came from path ``i``."""

    label = "Phi"

    def compute(self) -> Type:
        region = self.inputs[0]
        t: Type = TOP
        for i, n in enumerate(self.inputs[1:], start=1):
            path = region.in_(i) if region is not None else None
            if path is not None and path.type == XCTRL:
                continue  # a dead path contributes nothing
            if n is not None:
                t = t.meet(n.type)
        return t

    def idealize(self) -> Node | None:
        values = {id(n): n for n in self.inputs[1:] if n is not None and n is not self}
        if len(values) == 1:  # every live path gives the same value
            return next(iter(values.values()))
        return None

    def key(self) -> tuple:
        return ("Phi", *(n.id if n is not None else -1 for n in self.inputs))


# ---------------------------------------------------------------- data


class Constant(Node):
    """A constant; its only input is Start (so it is reachable from the graph's root)."""

    def __init__(self, graph: Graph, start: Node, value: Type):
        super().__init__(graph, start)
        self.value = value
        self.type = value  # a constant's type is known the moment it is made
        self.label = str(value)

    def compute(self) -> Type:
        return self.value

    def key(self) -> tuple:
        return ("Constant", str(self.value))


def _int_binary(node: Node, fn) -> Type:  # noqa: ANN001
    a, b = node.inputs[1].type, node.inputs[2].type
    if a in (TOP, INT_TOP) or b in (TOP, INT_TOP):
        return INT_TOP
    if isinstance(a, IntType) and isinstance(b, IntType) and a.is_constant() \
            and b.is_constant():
        value = fn(a.lo, b.lo)
        return INT_BOTTOM if value is None else (
            TRUE if value is True else FALSE if value is False else int_const(value))
    return INT_BOTTOM


class Arith(Node):
    """Binary integer operation; input 0 is control only for trapping ones (div, rem)."""

    op = "?"

    def __init__(self, graph: Graph, ctrl: Node | None, left: Node, right: Node):
        super().__init__(graph, ctrl, left, right)
        self.label = self.op


class Add(Arith):
    op = "+"
    commutative = True

    def compute(self) -> Type:
        return _int_binary(self, lambda a, b: wrap(a + b))

    def idealize(self) -> Node | None:
        left, right = self.inputs[1], self.inputs[2]
        if right.type == int_const(0):
            return left
        if left.type == int_const(0):
            return right
        # (x + c1) + c2  ->  x + (c1 + c2): constants gather on the right
        if isinstance(left, Add) and left.inputs[2].type.is_constant() \
                and right.type.is_constant():
            c = Constant(self.graph, _start_of(self), int_const(
                wrap(left.inputs[2].type.lo + right.type.lo)))
            return Add(self.graph, None, left.inputs[1], c)
        if left.type.is_constant() and not right.type.is_constant():
            return Add(self.graph, None, right, left)
        return None


class Sub(Arith):
    op = "-"

    def compute(self) -> Type:
        return _int_binary(self, lambda a, b: wrap(a - b))

    def idealize(self) -> Node | None:
        left, right = self.inputs[1], self.inputs[2]
        if left is right:
            return Constant(self.graph, _start_of(self), int_const(0))
        if right.type == int_const(0):
            return left
        return None


class Mul(Arith):
    op = "*"
    commutative = True

    def compute(self) -> Type:
        return _int_binary(self, lambda a, b: wrap(a * b))

    def idealize(self) -> Node | None:
        left, right = self.inputs[1], self.inputs[2]
        if right.type == int_const(1):
            return left
        if left.type == int_const(1):
            return right
        return None


class Div(Arith):
    op = "/"

    def compute(self) -> Type:
        return _int_binary(self, lambda a, b: None if b == 0 else tiny_div(a, b))

    def key(self) -> None:  # can trap: stays where the program has it
        return None


class Rem(Arith):
    op = "%"

    def compute(self) -> Type:
        return _int_binary(self, lambda a, b: None if b == 0 else tiny_rem(a, b))

    def key(self) -> None:
        return None


class Compare(Arith):
    """``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=`` on ints (and ``==``/``!=`` on bools)."""

    _FN = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
           "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}

    def __init__(self, graph: Graph, op: str, left: Node, right: Node):
        self.op = op
        self.commutative = op in ("==", "!=")
        super().__init__(graph, None, left, right)

    def compute(self) -> Type:
        a, b = self.inputs[1].type, self.inputs[2].type
        if TOP in (a, b) or INT_TOP in (a, b) or BOOL_TOP in (a, b):
            return BOOL_TOP
        if a.is_constant() and b.is_constant():
            va = a.lo if isinstance(a, IntType) else a.value
            vb = b.lo if isinstance(b, IntType) else b.value
            return TRUE if self._FN[self.op](va, vb) else FALSE
        if self.inputs[1] is self.inputs[2]:
            return TRUE if self.op in ("==", "<=", ">=") else FALSE
        return BOOL_BOTTOM

    def key(self) -> tuple:
        return (*super().key(), self.op)


class Not(Node):
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


def _start_of(node: Node) -> Node:
    """The graph's Start node (constants hang off it)."""
    return next(n for n in node.graph.nodes.values() if isinstance(n, Start))
