"""Constant folding and algebraic identities for quads, with Tiny's exact semantics.

Both peephole passes (the fixed window and local value numbering) share these rules, so
they differ only in *what they can see*, which is the point of lesson 02. Folding never
turns a division by zero into a compile-time crash: ``div x 0`` is left alone to fail at
run time, as the program says it should.

Every fact comes from the opcode table (:mod:`ssa_course.opcodes`): an operator's meaning,
whether it is commutative or may trap, and its identities (``x+0 = x``, ``x*0 = 0``,
``x-x = 0``, ...). An operator added to the table is folded here with no edit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ssa_course import opcodes


class _Facts:
    """The ops with one property, read from the opcode table at each test (an operator
    registered later belongs at once): ``op in PURE``."""

    __slots__ = ("test", "extra")

    def __init__(self, test: Callable[[opcodes.Opcode], bool], extra: frozenset[str]):
        self.test = test
        self.extra = extra

    def __contains__(self, op: object) -> bool:
        if op in self.extra:
            return True
        value_op = opcodes.get(op) if isinstance(op, str) else None
        return value_op is not None and self.test(value_op)


COMMUTATIVE = _Facts(lambda v: v.commutative, frozenset())
# no effect, cannot fail: may be removed when unused, merged with a twin, moved
PURE = _Facts(lambda v: v.pure and not v.may_trap, frozenset({"const", "id"}))
# pure unless an operand is zero (then the instruction must stay, to fail at run time)
DIVISION = _Facts(lambda v: v.pure and v.may_trap, frozenset())


def fold(op: str, values: Sequence[object]) -> object | None:
    """The result of ``op`` on constant operands, or None when it must not be folded."""
    if op == "id":
        return values[0]
    value_op = opcodes.get(op)
    if value_op is None or len(values) != value_op.arity:
        return None
    return value_op.fold(values)


def _is(c: object, value: object) -> bool:
    """Is the known constant ``c`` exactly ``value`` (``0`` is not ``False``)?"""
    return c is not None and value is not None and type(c) is type(value) and c == value


def identity(op: str, args: list[str], consts: Sequence[object | None]
             ) -> tuple[str, object] | None:
    """An algebraic identity: ``("copy", var)`` or ``("const", value)``, or None.

    ``consts[i]`` is the known constant of ``args[i]`` (None when unknown). The rules are
    the table's: ``x op e = x`` (right identity, e.g. ``x+0``, ``x-0``, ``x*1``, ``x/1``,
    ``b and true``, ``b or false``), ``e op x = x`` (left identity), ``x op z = z op x = z``
    (absorbing, ``x*0``), and ``x op x`` (``x-x = 0``, ``x == x``, ``x <= x`` true,
    ``x < x`` false), tried in that order.
    """
    value_op = opcodes.get(op)
    if len(args) != 2 or value_op is None:
        return None
    a, b = args
    ca, cb = consts
    if _is(cb, value_op.right_identity):
        return ("copy", a)
    if _is(ca, value_op.left_identity):
        return ("copy", b)
    if _is(cb, value_op.zero) or _is(ca, value_op.zero):
        return ("const", value_op.zero)
    if a == b and value_op.same is not None:
        return ("const", value_op.same)
    return None
