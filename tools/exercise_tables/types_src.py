"""Lattice types written as the Python source the notebooks use (TOP, int_const(5), ...)."""
from ssa_course.son.types import (
    BOOL_BOTTOM,
    BOOL_TOP,
    BOTTOM,
    CTRL,
    FALSE,
    INT_BOTTOM,
    INT_MAX,
    INT_MIN,
    INT_TOP,
    TOP,
    TRUE,
    XCTRL,
    IntType,
    TupleType,
)

NAMES = {TOP: "TOP", BOTTOM: "BOTTOM", INT_TOP: "INT_TOP", INT_BOTTOM: "INT_BOTTOM",
         BOOL_TOP: "BOOL_TOP", BOOL_BOTTOM: "BOOL_BOTTOM", TRUE: "TRUE", FALSE: "FALSE",
         CTRL: "CTRL", XCTRL: "XCTRL"}
def num(v):
    return {INT_MIN: "INT_MIN", INT_MAX: "INT_MAX"}.get(v, repr(v))
def tsrc(t):
    if t in NAMES:
        return NAMES[t]
    if isinstance(t, IntType):
        if t.is_constant():
            return f"int_const({num(t.lo)})"
        return f"IntType('int', {num(t.lo)}, {num(t.hi)})"
    if isinstance(t, TupleType):
        return "tuple_of(" + ", ".join(tsrc(x) for x in t.types) + ")"
    raise ValueError(t)
