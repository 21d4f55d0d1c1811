"""Data nodes: constants, arithmetic, comparisons, logic (lesson 06).

Data nodes float: they have no control input (input 0 is None) unless they must stay
where the program put them -- a division whose divisor is not known to be non-zero sits
below the zero test that guards it. Each class owns its type transfer (``compute``), its
algebraic rewrites (``idealize``) and its run-time meaning (``evaluate``).

An operator node names its row of the opcode table (:mod:`ssa_course.opcodes`, the
``opcode`` attribute) and takes its meaning from there; the classes below add the
rewrites that are worth a lesson (``x + x`` to ``x * 2``, constants to the right). An
operator with no class of its own is an :class:`Operator` node, whose compute and
idealize read the table's facts (identities, absorbing element, ``x op x``); make one
with :func:`operator_node`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ssa_course import opcodes
from ssa_course.runtime import Value, wrap
from ssa_course.son import intervals
from ssa_course.son.algebra import fold_literals, literal_read, phi_of_constants
from ssa_course.son.graph import Graph, Node, RunState, start_of, typed
from ssa_course.son.types import (
    BOOL_BOTTOM,
    BOOL_TOP,
    BOTTOM,
    FALSE,
    FLOAT_BOTTOM,
    FLOAT_TOP,
    INT_BOTTOM,
    INT_TOP,
    TOP,
    TRUE,
    BoolType,
    FloatType,
    IntType,
    Type,
    float_const,
    int_const,
    int_value,
)


def constant_value(t: Type) -> int | bool | float | None:
    """The Python value of a constant type (an int, a bool or a float; None for the bool
    type that is not a constant)."""
    # An int constant is the range [v, v]: its value is either end.
    if isinstance(t, IntType):
        return t.lo
    if isinstance(t, BoolType):
        return t.value
    if isinstance(t, FloatType) and t.is_constant():
        return t.value
    # Asking for the value of a non-constant type is a bug in the caller: fail loudly.
    raise ValueError(f"{t} is not a constant")


def type_of_value(v: object) -> Type:
    """The constant type of a value the opcode table computes (an int or a bool)."""
    if v is True:
        return TRUE
    if v is False:
        return FALSE
    if isinstance(v, float):
        return float_const(v)
    assert isinstance(v, int), f"{v!r} is not an int or a bool"
    return int_const(v)


class Constant(Node):
    """A constant; its only input is Start (so it is reachable from the graph's root)."""

    __slots__ = ("value",)

    def __init__(self, graph: Graph, start: Node, value: Type):
        # Start as input 0 is what keeps a constant in the graph: every node must reach Start
        # by inputs (the verifier's rule).
        super().__init__(graph, start)
        self.value = value
        self.type = value  # a constant's type is known the moment it is made
        self.label = str(value)

    def compute(self) -> Type:
        return self.value

    def key(self) -> tuple[Any, ...]:
        # GVN makes every use of the same constant share one node; str() keeps 1 and true apart
        # (in Python ``1 == True``).
        return ("Constant", str(self.value))

    def evaluate(self, args: list[Value], state: RunState) -> Value:
        return constant_value(self.value)


# The helper rules use to make a constant: it hangs off the same graph's Start. The
# driver then peepholes it, and GVN finds an older equal Constant if there is one.
def const(node: Node, value: int | bool) -> Constant:
    return Constant(node.graph, start_of(node), type_of_value(value))


def _int_binary(node: Node, fn: Callable[[int, int], object],
                ranges: Callable[[IntType, IntType], Type] | None = None) -> Type:
    """Constants fold exactly (wrapping as the program does); otherwise ``ranges(a, b)``
    (lesson 09's interval transfer, sound under wrapping) or the full range."""
    # The lattice, in order: TOP (nothing known yet -- SCCP's optimism) stays TOP; two
    # constants fold; two ranges give a range; anything else is "some int" (BOTTOM).
    a, b = node.operand(1).type, node.operand(2).type
    if a.__class__ is IntType and b.__class__ is IntType:
        # the usual case, two ranges, answered without the lattice's equality (the same
        # tests as below: ``== INT_TOP`` is [1, 0] of kind "int")
        if a.lo == 1 and a.hi == 0 and a.kind == "int" \
                or b.lo == 1 and b.hi == 0 and b.kind == "int":
            return INT_TOP
    elif a in (TOP, INT_TOP) or b in (TOP, INT_TOP):
        return INT_TOP
    if isinstance(a, IntType) and isinstance(b, IntType) and a.lo == a.hi \
            and b.lo == b.hi:
        # A fold that would trap (division by zero) returns None: the node is not folded, and
        # the trap stays for the program to reach at run time.
        value = fn(a.lo, b.lo)
        # (fn returns None for a fold that would trap: see Binary.fn.)
        if value is None:
            return INT_BOTTOM
        assert isinstance(value, int), f"{node} folded to {value!r}"
        return int_const(value)
    if ranges is not None and isinstance(a, IntType) and isinstance(b, IntType):
        return ranges(a, b)
    return INT_BOTTOM


def _is_const(node: Node, value: object) -> bool:
    # The Python type is compared too: ``true`` is not the identity 1 of a multiplication.
    return node.type.is_constant() and constant_value(node.type) == value \
        and type(constant_value(node.type)) is type(value)


# Click & Paleczny's node shape: input 0 control (None for a floating node), then the
# operands -- so every binary operator shares GVN keys, printing and rewrites.
class Binary(Node):
    """A two-operand node: input 0 is control (None unless pinned), inputs 1 and 2 operands."""

    __slots__ = ()

    op = "?"
    opcode = "?"  # the row of the opcode table (Bril's name)

    def __init__(self, graph: Graph, ctrl: Node | None, left: Node, right: Node):
        super().__init__(graph, ctrl, left, right)
        self.label = self.op

    def fn(self, a: object, b: object) -> object:
        """The folded value of constant operands, or None when it would trap."""
        # The opcode table is the one place an operator's meaning lives (run time and fold
        # time alike): the node never computes a value its own way.
        return _row(self.opcode).fold((a, b))

    # Used by the rules that move an operation (through a phi, across an add): they build
    # the same operation again on other operands, whatever the subclass.
    def remake(self, left: Node, right: Node) -> Node:
        """The same operation on other operands (floating: phi pushing moves it)."""
        return type(self)(self.graph, None, left, right)

    # Used by phi pushing: ``Phi(a + 1, a + 2)`` only becomes ``a + Phi(1, 2)`` when
    # every input is the same operation.
    def same_operation(self, other: Node) -> bool:
        return type(other) is type(self) and other.opcode == self.opcode

    def compute(self) -> Type:
        return _int_binary(self, self.fn)

    def evaluate(self, args: list[Value], state: RunState) -> Value:
        row = opcodes.TABLE.by_name[self.opcode]
        # A row that may trap goes through apply(), which raises the program's runtime
        # error (not Python's ZeroDivisionError) should the divisor be zero after all.
        if not row.may_trap:  # cannot trap: skip apply's test
            return row.evaluate(args[1], args[2])
        return row.apply((args[1], args[2]))


def _row(name: str) -> opcodes.Opcode:
    row = opcodes.get(name)
    if row is None:
        raise TypeError(f"'{name}' is not in the opcode table")
    return row


class Add(Binary):
    __slots__ = ()

    op = "+"
    opcode = "add"
    commutative = True

    def compute(self) -> Type:
        return _int_binary(self, self.fn, intervals.add)

    def idealize(self) -> Node | None:
        left, right = self.operand(1), self.operand(2)
        # x + 0 -> x. Rules return a new (or an existing) node; the driver replaces this one by
        # it, and then optimizes the result in turn, so each rule only takes one step.
        if _is_const(right, 0):
            return left
        if _is_const(left, 0):
            return right
        # ``left is right`` is enough to find ``x + x``: GVN already made equal values one node.
        if left is right:  # x + x -> x * 2
            return Mul(self.graph, None, left, const(self, 2))
        scaled = _scaled_sum(self, left, right)
        if scaled is not None:
            return scaled
        # What a literal is depends on more than this node's inputs (a phi's own inputs), so
        # the rule registers those too: when one changes the Add is looked at again (dep_read).
        left_lit, right_lit = literal_read(self, left), literal_read(self, right)
        if left_lit and not right_lit:  # c + x -> x + c: literals gather on the right
            return Add(self.graph, None, right, left)
        if left_lit:  # Phi(1, 2) + 3 -> Phi(4, 5)
            return _folded_phi(self, left, left, right)
        # Reassociation (Click & Paleczny; Simple's chapter 4): gathering the literals of a chain
        # of adds into one constant, so ``((x + 1) + 2) + 3`` is ``x + 6``.
        if isinstance(left, Add):
            # ``inner`` is an input of an input: a change to it reaches this node by no edge, hence
            # the dependency (Simple's addDep).
            inner = left.operand(2)
            inner_lit = literal_read(self, inner)
            if inner_lit and right_lit:
                c1, c2 = int_value(inner.type), int_value(right.type)
                if c1 is not None and c2 is not None:
                    # (x + c1) + c2  ->  x + (c1 + c2)
                    return Add(self.graph, None, left.operand(1), const(self, wrap(c1 + c2)))
                # (x + Phi(1, 2)) + 3  ->  x + Phi(4, 5)
                folded = _folded_phi(self, left, inner, right)
                return None if folded is None else \
                    Add(self.graph, None, left.operand(1), folded)
            if inner_lit and isinstance(right, Add) and _only_user(left, self) \
                    and _only_user(right, self):
                # (x + c1) + (y + c2) -> (x + y) + (c1 + c2): both literals in one step.
                # One at a time, the right one would stay inside the new ``x + y`` until
                # that is looked at again, and in a chain of such sums each literal left
                # behind climbs the whole chain alone (quadratic: issue #39 item 5).
                other = right.operand(2)
                literal_read(self, other)
                c1, c2 = int_value(inner.type), int_value(other.type)
                if c1 is not None and c2 is not None:
                    return Add(self.graph, None, typed(Add(
                        self.graph, None, left.operand(1), right.operand(1))),
                        const(self, wrap(c1 + c2)))
            if inner_lit and not right_lit and _only_user(left, self):
                # (x + c) + y  ->  (x + y) + c: the literal moves outward (when x + c has
                # no other user: else both sums would stay, one more operation)
                return Add(self.graph, None, typed(Add(self.graph, None, left.operand(1),
                                                       right)), inner)
        if isinstance(right, Add):
            inner = right.operand(2)
            if literal_read(self, inner) and _only_user(right, self):  # x + (y + c) -> (x + y) + c
                return Add(self.graph, None, typed(Add(self.graph, None, left,
                                                       right.operand(1))), inner)
        return None


def _only_user(n: Node, user: Node) -> bool:
    """``user`` is the only node that reads ``n`` (asked again when ``n`` loses one)."""
    # The answer changes when ``n`` gains or loses a user: registered whatever it is now.
    return all(u is user for u in user.dep_read(n).outputs)


def _folded_phi(add: Add, owner: Node, a: Node, b: Node) -> Node | None:
    """``a + b`` (literals, one a phi) as one phi of constants, when ``owner`` (what
    the rewrite replaces besides ``add``) has no other user: else a phi would be added."""
    if any(u is not add for u in owner.outputs):
        return None
    return fold_literals(add, a, b, lambda x, y: wrap(x + y))


def _scaled_sum(add: Add, left: Node, right: Node) -> Node | None:
    """``(x * c) + x -> x * (c + 1)``, ``x + (x * c)`` likewise, and
    ``(x * c1) + (x * c2) -> x * (c1 + c2)``."""
    def factor(n: Node, x: Node) -> int | None:
        if n is x:
            return 1
        if isinstance(n, Mul):
            c = int_value(add.dep_read(n.operand(2)).type)
            if n.inputs[1] is x and c is not None:
                return c
        return None

    # The candidates for ``x``: each operand, and the left operand of each product.
    for x in {id(n): n for n in (left, right, *(
            n.operand(1) for n in (left, right) if isinstance(n, Mul)))}.values():
        a, b = factor(left, x), factor(right, x)
        if a is not None and b is not None and (isinstance(left, Mul) or isinstance(right, Mul)):
            return Mul(add.graph, None, x, const(add, wrap(a + b)))
    return None


class Sub(Binary):
    __slots__ = ()

    op = "-"
    opcode = "sub"

    def compute(self) -> Type:
        return _int_binary(self, self.fn, intervals.sub)

    def idealize(self) -> Node | None:
        left, right = self.operand(1), self.operand(2)
        # x - x is 0 whatever x is (wrapping arithmetic keeps this true).
        if left is right:
            return const(self, 0)
        if _is_const(right, 0):
            return left
        return None


class Mul(Binary):
    __slots__ = ()

    op = "*"
    opcode = "mul"
    commutative = True

    def compute(self) -> Type:
        t = _int_binary(self, self.fn, intervals.mul)
        # The one case where a product of an unknown is known: an absorbing element.
        if t == INT_BOTTOM and int_const(0) in (self.operand(1).type, self.operand(2).type):
            return int_const(0)  # zero times anything is zero, known or not
        return t

    def idealize(self) -> Node | None:
        left, right = self.operand(1), self.operand(2)
        if _is_const(right, 1):
            return left
        if _is_const(left, 1):
            return right
        # c * x -> x * c: constants on the right, where the rules (``x * 1``, the scaled
        # sums of Add) look for them.
        if left.type.is_constant() and not right.type.is_constant():
            return Mul(self.graph, None, right, left)
        # Phi(3, 2) * 3 -> Phi(9, 6): a phi of constants stays one (a literal costs no
        # operation). Phi pushing made ``Phi(f() * 3, g() * 3)`` into ``Phi(f(), g()) * 3``
        # while the calls were calls; once inlined they are constants (issue #36 item 6).
        if right.type.is_constant() and literal_read(self, left) \
                and phi_of_constants(left) and all(u is self for u in left.outputs):
            return fold_literals(self, left, right, lambda x, y: wrap(x * y))
        return None


class Div(Binary):
    """``/``; pinned below its zero test unless the divisor is a known non-zero constant."""

    __slots__ = ()

    op = "/"
    opcode = "div"
    pinned = True

    def compute(self) -> Type:
        return _int_binary(self, self.fn, intervals.div)

    # x / 1 -> x. The pinned Div it replaces is gone; x floats as it did.
    def idealize(self) -> Node | None:
        return self.operand(1) if _is_const(self.operand(2), 1) else None


class Rem(Binary):
    __slots__ = ()

    op = "%"
    opcode = "rem"
    # Like Div: built below its divisor's zero test, it keeps that control input, since a
    # remainder moved above its test could trap.
    pinned = True

    def compute(self) -> Type:
        return _int_binary(self, self.fn, intervals.rem)


class Neg(Node):
    """Unary minus (input 0 unused)."""

    __slots__ = ()

    label = "neg"
    opcode = "neg"

    def compute(self) -> Type:
        t = self.operand(1).type
        if t in (TOP, INT_TOP):
            return INT_TOP
        if isinstance(t, IntType) and t.is_constant():
            return type_of_value(_row(self.opcode).evaluate(t.lo))
        return intervals.neg(t) if isinstance(t, IntType) else INT_BOTTOM

    def idealize(self) -> Node | None:
        inner = self.operand(1)
        # -(-x) -> x holds under wrapping too: -(-MIN) is MIN.
        return inner.operand(1) if isinstance(inner, Neg) else None

    def evaluate(self, args: list[Value], state: RunState) -> Value:
        return _row(self.opcode).apply((args[1],))


class Compare(Binary):
    """``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=`` on ints; ``==``/``!=`` also on bools and
    references (identity)."""

    __slots__ = ("op", "opcode", "commutative")

    def __init__(self, graph: Graph, op: str, left: Node, right: Node):
        # The comparison's row of the opcode table gives its Bril name, whether it commutes
        # (``==``, ``!=``) and its mirror (``<`` and ``>``).
        row = opcodes.tiny_operator(op, 2)
        if row is None or row.precedence != opcodes.CMP_LEVEL:
            raise TypeError(f"'{op}' is not a comparison")
        self.op = op
        self.opcode = row.name
        self.commutative = row.commutative
        super().__init__(graph, None, left, right)

    def fn(self, a: object, b: object) -> object:
        """The comparison's answer (a bool: the table's comparison rows give bools)."""
        return _row(self.opcode).evaluate(a, b)

    def compute(self) -> Type:
        a, b = self.operand(1).type, self.operand(2).type
        # An operand not yet reached (TOP) leaves the answer TOP: SCCP may still prove it
        # constant, and a BOTTOM now could never be taken back (types only fall).
        if TOP in (a, b) or INT_TOP in (a, b) or BOOL_TOP in (a, b):
            return BOOL_TOP
        if a.is_constant() and b.is_constant():
            return TRUE if self.fn(constant_value(a), constant_value(b)) else FALSE
        # Operands that are one node (GVN) are equal whatever their value.
        same = _row(self.opcode).same  # x == x, x <= x are true; x < x is false
        if self.inputs[1] is self.inputs[2] and same is not None:
            return TRUE if same else FALSE
        # Ranges that do not overlap decide a comparison without constants (lesson 09:
        # ``i < n`` when i is in [0, 9] and n in [10, 20]).
        if isinstance(a, IntType) and isinstance(b, IntType):
            return compare_ranges(self.op, a, b)
        return BOOL_BOTTOM

    def idealize(self) -> Node | None:
        left, right = self.operand(1), self.operand(2)
        # constants on the right: 3 < x  ->  x > 3 (one form, so GVN sees more twins)
        if left.type.is_constant() and not right.type.is_constant():
            # Flipped only when the row has a mirror; the driver then looks at the flipped
            # node and GVN finds its twin, if any.
            mirror = _row(self.opcode).mirror
            symbol = None if mirror is None else _row(mirror).symbol
            if symbol is not None:
                return Compare(self.graph, symbol, right, left)
        # a bool compared with a constant bool: b == true -> b, b == false -> !b
        # Booleans only: for ints ``x == 1`` is no simpler than it is.
        if self.op in ("==", "!=") and isinstance(left.type, BoolType) \
                and isinstance(right.type, BoolType) and right.type.is_constant():
            if right.type.value == (self.op == "=="):
                return left
            return Not(self.graph, None, left)
        return None

    def remake(self, left: Node, right: Node) -> Node:
        return Compare(self.graph, self.op, left, right)

    def key(self) -> tuple[Any, ...]:
        inputs = super().key()
        assert inputs is not None  # Node.key: the opcode and the input ids
        # The operator is part of the key: ``a < b`` and ``a == b`` have the same inputs.
        return (*inputs, self.op)

    def evaluate(self, args: list[Value], state: RunState) -> Value:
        return self.fn(args[1], args[2])


def compare_ranges(op: str, a: IntType, b: IntType) -> Type:
    """``a op b`` decided by the ranges alone when they do not overlap the wrong way."""
    # Two cases to write instead of four. For ``<``: true when every a is below every b,
    # false when no a is, else unknown.
    if op in (">", ">="):  # a > b is b < a
        op, a, b = ("<" if op == ">" else "<="), b, a
    if op == "<":
        return TRUE if a.hi < b.lo else FALSE if a.lo >= b.hi else BOOL_BOTTOM
    if op == "<=":
        return TRUE if a.hi <= b.lo else FALSE if a.lo > b.hi else BOOL_BOTTOM
    disjoint = a.hi < b.lo or b.hi < a.lo
    if op == "==":
        return FALSE if disjoint else BOOL_BOTTOM
    if op == "!=":
        return TRUE if disjoint else BOOL_BOTTOM
    return BOOL_BOTTOM


class Not(Node):
    __slots__ = ()

    label = "!"
    opcode = "not"

    def compute(self) -> Type:
        t = self.operand(1).type
        if isinstance(t, BoolType) and t.is_constant():
            return FALSE if t.value else TRUE
        # Same order as everywhere: TOP stays TOP, a constant folds, else any bool.
        return BOOL_TOP if t in (TOP, BOOL_TOP) else BOOL_BOTTOM

    def idealize(self) -> Node | None:
        inner = self.operand(1)
        if isinstance(inner, Not):  # !!x -> x
            return inner.operand(1)
        return None

    def evaluate(self, args: list[Value], state: RunState) -> Value:
        return _row(self.opcode).apply((args[1],))


class Logic(Binary):
    """Bril's ``and``/``or``: both operands evaluated (Tiny's && and || become control)."""

    __slots__ = ("op", "opcode")

    commutative = True

    def __init__(self, graph: Graph, op: str, left: Node, right: Node):
        self.op = op
        self.opcode = op
        super().__init__(graph, None, left, right)

    def compute(self) -> Type:
        a, b = self.operand(1).type, self.operand(2).type
        if isinstance(a, BoolType) and isinstance(b, BoolType) and a.is_constant() \
                and b.is_constant():
            return TRUE if self.fn(a.value, b.value) else FALSE
        # false and x is false whatever x is: known even when x is not (both operands are
        # evaluated, so no side effect is skipped -- Tiny's && is control, not this node).
        absorbing = FALSE if self.op == "and" else TRUE
        if absorbing in (a, b):
            return absorbing
        if TOP in (a, b) or BOOL_TOP in (a, b):
            return BOOL_TOP
        return BOOL_BOTTOM

    def idealize(self) -> Node | None:
        left, right = self.operand(1), self.operand(2)
        identity = self.op == "and"  # x and true -> x ; x or false -> x
        if _is_const(right, identity):
            return left
        if _is_const(left, identity):
            return right
        return left if left is right else None

    def key(self) -> tuple[Any, ...]:
        inputs = super().key()
        assert inputs is not None  # Node.key: the opcode and the input ids
        return (*inputs, self.op)

    def remake(self, left: Node, right: Node) -> Node:
        return Logic(self.graph, self.op, left, right)


def _top_of(kind: str) -> Type:
    return INT_TOP if kind == opcodes.INT else FLOAT_TOP if kind == opcodes.FLOAT else BOOL_TOP


def _bottom_of(kind: str) -> Type:
    return INT_BOTTOM if kind == opcodes.INT else FLOAT_BOTTOM if kind == opcodes.FLOAT \
        else BOOL_BOTTOM


class Operator(Node):
    """Any row of the opcode table without a class of its own: input 0 is control (None
    unless it may trap and is pinned below its check), then one input per operand.

    Its facts are the table's: the type is folded from constant operands (``fold``, so a
    division by zero is never folded), the rewrites are the row's identities
    (``x op e -> x``, ``e op x -> x``, ``z op x -> z``, ``x op x -> c``) and, for a
    commutative row, a constant moved right (``c op x -> x op c``), and GVN keys on
    the row's name (commutative rows sort their operands)."""

    __slots__ = ("row", "opcode", "commutative", "pinned", "label")

    def __init__(self, graph: Graph, ctrl: Node | None, row: opcodes.Opcode,
                 *operands: Node):
        if len(operands) != row.arity:
            raise TypeError(f"'{row.name}' takes {row.arity} operands, not {len(operands)}")
        self.row = row
        self.opcode = row.name
        self.commutative = row.commutative
        self.pinned = row.may_trap
        super().__init__(graph, ctrl, *operands)
        self.label = row.node_label

    def compute(self) -> Type:
        row = self.row
        operands = [self.operand(i) for i in range(1, len(self.inputs))]
        types = [n.type for n in operands]
        # The same order as the classes above: TOP stays TOP, constants fold (unless the fold
        # would trap), then the row's algebra (absorbing element, ``x op x``), else BOTTOM.
        if any(t in (TOP, INT_TOP, BOOL_TOP, FLOAT_TOP) for t in types):
            return _top_of(row.result)
        if all(t.is_constant() for t in types):
            value = row.fold([constant_value(t) for t in types])
            return _bottom_of(row.result) if value is None else type_of_value(value)
        if row.zero is not None and any(_is_const(n, row.zero) for n in operands):
            return type_of_value(row.zero)
        if row.arity == 2 and row.same is not None and self.inputs[1] is self.inputs[2]:
            return type_of_value(row.same)
        return _bottom_of(row.result)

    def idealize(self) -> Node | None:
        row = self.row
        # Unary rows without a class have no rewrite: their facts are only folding.
        if row.arity != 2:
            return None
        left, right = self.operand(1), self.operand(2)
        if row.right_identity is not None and _is_const(right, row.right_identity):
            return left
        if row.left_identity is not None and _is_const(left, row.left_identity):
            return right
        # c op x -> x op c: constants gather on the right, as Add does, so later rewrites
        # and GVN look for them in one place (-1 ^ a and a ^ -1 become one node)
        if row.commutative and left.type.is_constant() and not right.type.is_constant():
            # The control input is carried over: a pinned operator stays pinned.
            return Operator(self.graph, self.inputs[0], row, right, left)
        return None

    def key(self) -> tuple[Any, ...]:
        inputs = super().key()
        assert inputs is not None  # Node.key: the opcode and the input ids
        # Keyed on the row's name: every Operator is the same Python class.
        return (*inputs, self.opcode)

    def evaluate(self, args: list[Value], state: RunState) -> Value:
        return self.row.apply(args[1:])


# The rows that have a class of their own (with the rewrites a lesson shows).
_CLASSES: dict[str, type[Node]] = {"add": Add, "sub": Sub, "mul": Mul, "div": Div,
                                   "rem": Rem, "neg": Neg, "not": Not}


def operator_node(graph: Graph, ctrl: Node | None, name: str, *operands: Node,
                  classes: dict[str, type[Node]] | None = None) -> Node:
    """A node for the opcode table's row ``name`` applied to ``operands``; ``ctrl`` pins
    a row that may trap. ``classes`` maps Tiny symbols to replacement classes (lesson
    06's exercises swap in their own ``Add``)."""
    row = _row(name)
    # An exercise's own class wins over the built-in one, so a learner's rewrite runs in
    # the real builder.
    if classes and row.symbol in classes and row.arity == 2:
        return classes[row.symbol](graph, ctrl, *operands)
    cls = _CLASSES.get(name)
    if cls is not None:
        return cls(graph, ctrl, *operands)
    if row.arity == 2 and row.precedence == opcodes.CMP_LEVEL and row.symbol \
            and not row.may_trap:
        return Compare(graph, row.symbol, *operands)
    # Bril's eager and/or (from a Bril program); Tiny's && and || never get here.
    if name in ("and", "or"):
        return Logic(graph, name, *operands)
    return Operator(graph, ctrl, row, *operands)


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

    # Nothing is known of an undefined value: only a Phi may carry it, and the Phi's type is
    # the meet of its inputs -- bottom, so nothing is folded on its strength.
    def compute(self) -> Type:
        return BOTTOM

    def key(self) -> None:
        return None

    def evaluate(self, args: list[Value], state: RunState) -> Value:
        return UndefinedValue(self.name)
