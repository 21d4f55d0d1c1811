"""Floats: Bril's float extension, as every stage of ssa_course runs it (a base module).

Floats are IEEE 754 doubles (Python's ``float``); ``+ - * /`` round as IEEE says and a
division by zero gives an infinity or NaN, never an error. The pieces every stage shares:

* :func:`format_float` prints a float digit for digit as Bril's reference interpreter
  (brili) does: ``toFixed(17)``, or ``toExponential(17)`` when the value is not zero and
  ``|log10 |x|| >= 10``; ``-0.0`` as ``-0.00000000000000000``; ``Infinity``,
  ``-Infinity``, ``NaN``. JavaScript rounds an exact tie away from zero (the larger
  magnitude), so the digits come from the exact binary value with ``ROUND_HALF_UP``.
* :func:`float_to_int` is Tiny's ``int(x)``: truncation toward zero, an error on NaN, an
  infinity or a value outside the 64-bit range.
* :func:`foldable` says whether a constant a compiler computed may stand in the program:
  only finite floats (Bril's text and JSON cannot spell NaN or an infinity, so those are
  left to the run; the operation stays).
* :func:`const_key` keys a constant for value numbering: ``0.0`` and ``-0.0`` are equal
  in Python but are different constants.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Context, Decimal

FLOAT_TO_INT_TRAP = "float to int conversion out of range"
TWO_63 = 9223372036854775808.0  # 2**63: the first float above the 64-bit range

# Exact decimal arithmetic on a double needs at most ~1100 significant digits.
_EXACT = Context(prec=1200, rounding=ROUND_HALF_UP)


def format_float(x: float) -> str:
    """``x`` as brili's ``print`` writes it."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0.0:
        return "-0.00000000000000000" if math.copysign(1.0, x) < 0 else "0.00000000000000000"
    if abs(math.log10(abs(x))) >= 10:
        return _to_exponential(x, 17)
    return _to_fixed(x, 17)


def _to_fixed(x: float, digits: int) -> str:
    """JavaScript's ``x.toFixed(digits)`` for finite ``x`` below 1e21 in magnitude."""
    d = Decimal(abs(x)).quantize(Decimal(1).scaleb(-digits), context=_EXACT)
    text = format(d, "f")
    return "-" + text if x < 0 else text


def _to_exponential(x: float, digits: int) -> str:
    """JavaScript's ``x.toExponential(digits)`` for finite non-zero ``x``."""
    d = Decimal(abs(x))
    e = d.adjusted()
    n = d.scaleb(digits - e, context=_EXACT).quantize(Decimal(1), context=_EXACT)
    if n >= Decimal(10) ** (digits + 1):  # rounded up to the next power of ten
        e += 1
        n = d.scaleb(digits - e, context=_EXACT).quantize(Decimal(1), context=_EXACT)
    s = str(int(n))
    sign = "-" if x < 0 else ""
    return f"{sign}{s[0]}.{s[1:]}e{'+' if e >= 0 else '-'}{abs(e)}"


def float_to_int(x: float) -> int | None:
    """``int(x)`` truncated toward zero, or None when it has no 64-bit answer."""
    if math.isnan(x) or math.isinf(x) or not -TWO_63 <= x < TWO_63:
        return None
    return int(x)


def ieee_div(a: float, b: float) -> float:
    """``a / b`` as IEEE 754 says (Python raises on a zero divisor)."""
    if b != 0.0:
        return a / b
    if math.isnan(a) or a == 0.0:
        return math.nan
    negative = (math.copysign(1.0, a) < 0) != (math.copysign(1.0, b) < 0)
    return -math.inf if negative else math.inf


def foldable(value: object) -> bool:
    """May a compiler put this computed constant in the program (not NaN, not infinite)?"""
    return not isinstance(value, float) or math.isfinite(value)


def const_key(value: object) -> tuple[str, object]:
    """A key telling constants apart: by type, and floats by their exact bits' text
    (``0.0 == -0.0`` in Python, but they print differently)."""
    if isinstance(value, float):
        return ("float", repr(value))
    return (type(value).__name__, value)


def float_literal_text(value: float) -> str:
    """A finite float as Tiny and Bril text write it back (``repr``: it reads back exactly;
    an integral value keeps its ``.0`` so that it reads as a float)."""
    assert math.isfinite(value), value
    return repr(value)
