"""Constant folding and algebraic identities for quads, with Tiny's exact semantics.

Both peephole passes (the fixed window and local value numbering) share these rules, so
they differ only in *what they can see*, which is the point of lesson 02. Folding never
turns a division by zero into a compile-time crash: ``div x 0`` is left alone to fail at
run time, as the program says it should.
"""

from __future__ import annotations

from ssa_course.runtime import tiny_div, tiny_rem, wrap

COMMUTATIVE = frozenset({"add", "mul", "eq", "and", "or"})
PURE = frozenset({"const", "id", "add", "sub", "mul", "eq", "lt", "gt", "le", "ge", "not",
                  "and", "or"})
# pure unless the divisor is zero (then the instruction must stay, to fail at run time)
DIVISION = frozenset({"div", "rem"})


def fold(op: str, values: list[object]) -> object | None:
    """The result of ``op`` on constant operands, or None when it must not be folded."""
    if op == "add":
        return wrap(values[0] + values[1])
    if op == "sub":
        return wrap(values[0] - values[1])
    if op == "mul":
        return wrap(values[0] * values[1])
    if op in DIVISION:
        if values[1] == 0:
            return None  # keep the runtime error where the program has it
        return tiny_div(values[0], values[1]) if op == "div" else tiny_rem(values[0], values[1])
    if op == "eq":
        return values[0] == values[1]
    if op == "lt":
        return values[0] < values[1]
    if op == "gt":
        return values[0] > values[1]
    if op == "le":
        return values[0] <= values[1]
    if op == "ge":
        return values[0] >= values[1]
    if op == "not":
        return not values[0]
    if op == "and":
        return bool(values[0] and values[1])
    if op == "or":
        return bool(values[0] or values[1])
    if op == "id":
        return values[0]
    return None


def identity(op: str, args: list[str], consts: list[object | None]) -> tuple[str, object] | None:
    """An algebraic identity: ``("copy", var)`` or ``("const", value)``, or None.

    ``consts[i]`` is the known constant of ``args[i]`` (None when unknown). Rules:
    ``x+0 = 0+x = x``, ``x-0 = x``, ``x*1 = 1*x = x``, ``x*0 = 0*x = 0``, ``x-x = 0``,
    ``x/1 = x``, ``x == x`` (ints) and ``x <= x``, ``x >= x`` are true, ``x < x``/``x > x``
    false, ``b and true = b``, ``b or false = b``.
    """
    if len(args) != 2:
        return None
    a, b = args
    ca, cb = consts
    if op == "add":
        if cb == 0 and cb is not False:
            return ("copy", a)
        if ca == 0 and ca is not False:
            return ("copy", b)
    if op == "sub":
        if cb == 0 and cb is not False:
            return ("copy", a)
        if a == b:
            return ("const", 0)
    if op == "mul":
        if cb == 1 and cb is not True:
            return ("copy", a)
        if ca == 1 and ca is not True:
            return ("copy", b)
        if (cb == 0 and cb is not False) or (ca == 0 and ca is not False):
            return ("const", 0)
    if op == "div" and cb == 1 and cb is not True:
        return ("copy", a)
    if a == b and op in ("eq", "le", "ge"):
        return ("const", True)
    if a == b and op in ("lt", "gt"):
        return ("const", False)
    if op == "and" and cb is True:
        return ("copy", a)
    if op == "or" and cb is False:
        return ("copy", a)
    return None
