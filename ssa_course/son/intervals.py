"""Integer ranges with 64-bit wrapping: the transfer functions of lesson 09.

An integer type ``[lo, hi]`` (:class:`~ssa_course.son.types.IntType`) says every value the
node can take lies between ``lo`` and ``hi``. Tiny's ``+ - *`` wrap around at 64 bits, so
the exact bounds of ``[lo1, hi1] + [lo2, hi2]`` are only the answer when *no* pair of
operands overflows; when some pair may wrap, the result can be anywhere and the answer is
the full range -- never a "wrapped" narrower one (``INT_MAX + 1`` is ``INT_MIN``).

Each function takes and returns lattice types: an empty range (the integer top, "no value
yet") in gives an empty range out, anything that is not an integer range gives the full
range. :func:`widen` and :func:`narrow` are the two operators that make a loop's ranges
converge quickly (see :mod:`~ssa_course.son.range_facts`).
"""

from __future__ import annotations

from ssa_course.runtime import MAX_ARRAY_LENGTH
from ssa_course.son.types import INT_BOTTOM, INT_MAX, INT_MIN, INT_TOP, TOP, IntType, Type

# What ``len(a)`` can be: an array holds at most MAX_ARRAY_LENGTH elements.
LENGTH = IntType("int", 0, MAX_ARRAY_LENGTH)


def interval(lo: int, hi: int) -> IntType:
    """``[lo, hi]`` when it fits in 64 bits, the full range otherwise (a wrap)."""
    # Python's ints do not wrap, so an exact bound past 64 bits is how a possible wrap
    # shows: then any value may come out.
    if lo < INT_MIN or hi > INT_MAX:
        return INT_BOTTOM
    return IntType("int", lo, hi)


def as_range(t: Type) -> IntType | None:
    """The integer range of ``t``; None when nothing is known yet (TOP or empty)."""
    # TOP and the empty range both mean "no value yet": a transfer returns empty for them,
    # so a node is not given a range before its inputs have one.
    if t.__class__ is IntType:  # (the usual case, without asking ``t == TOP`` first)
        return None if t.lo > t.hi else t
    if t == TOP:
        return None
    if isinstance(t, IntType):
        return None if t.lo > t.hi else t
    return INT_BOTTOM


def fits(r: IntType, offset: int) -> bool:
    """``x + offset`` cannot wrap for any ``x`` in ``r``."""
    return r.lo + offset >= INT_MIN and r.hi + offset <= INT_MAX


def add(a: Type, b: Type) -> IntType:
    x, y = as_range(a), as_range(b)
    if x is None or y is None:
        return INT_TOP
    # Addition is monotone in both operands: the extreme results come from the extreme
    # operands.
    return interval(x.lo + y.lo, x.hi + y.hi)


def sub(a: Type, b: Type) -> IntType:
    x, y = as_range(a), as_range(b)
    if x is None or y is None:
        return INT_TOP
    # Subtraction falls as ``b`` grows: the low end pairs the low ``a`` with the high ``b``.
    return interval(x.lo - y.hi, x.hi - y.lo)


def mul(a: Type, b: Type) -> IntType:
    x, y = as_range(a), as_range(b)
    if x is None or y is None:
        return INT_TOP
    # With signs mixed any corner may be the extreme; the four corners cover every case.
    corners = [x.lo * y.lo, x.lo * y.hi, x.hi * y.lo, x.hi * y.hi]
    return interval(min(corners), max(corners))


def neg(a: Type) -> IntType:
    x = as_range(a)
    if x is None:
        return INT_TOP
    return interval(-x.hi, -x.lo)  # -INT_MIN wraps: full range


def div(a: Type, b: Type) -> IntType:
    """``/`` truncating toward zero, for the divisors other than 0 (a zero divisor traps;
    ``INT_MIN / -1`` wraps to ``INT_MIN``)."""
    x, y = as_range(a), as_range(b)
    if x is None or y is None:
        return INT_TOP
    # The quotient is most extreme at the ends of the divisor range or at the divisors of
    # smallest magnitude (-1 and 1) when the range crosses zero.
    divisors = [d for d in (y.lo, y.hi, -1, 1) if y.lo <= d <= y.hi and d != 0]
    if not divisors:
        return INT_TOP  # always divides by zero: no value ever comes out
    values = [_tdiv(n, d) for n in (x.lo, x.hi) for d in divisors]
    # A dividend of 0 gives 0, which the corners may miss.
    if x.lo <= 0 <= x.hi:
        values.append(0)
    if x.lo == INT_MIN and y.lo <= -1 <= y.hi:
        return INT_BOTTOM  # INT_MIN / -1 wraps around
    return interval(min(values), max(values))


def _tdiv(n: int, d: int) -> int:
    q = abs(n) // abs(d)
    return q if (n >= 0) == (d > 0) else -q


def rem(a: Type, b: Type) -> IntType:
    """``%`` with the sign of the dividend: ``|x % d| < |d|`` and ``|x % d| <= |x|``."""
    x, y = as_range(a), as_range(b)
    if x is None or y is None:
        return INT_TOP
    if y.lo == y.hi == 0:
        return INT_TOP
    m = max(abs(y.lo), abs(y.hi)) - 1  # the largest |remainder|
    # The remainder takes the dividend's sign and is smaller than both |x| and |d|.
    lo = 0 if x.lo >= 0 else max(x.lo, -m)
    hi = 0 if x.hi <= 0 else min(x.hi, m)
    return interval(lo, hi)


def length(t: Type) -> IntType:
    """What ``len`` of an array can be (its own type says nothing more)."""
    return INT_TOP if t == TOP else LENGTH


def widen(old: IntType, new: IntType) -> IntType:
    """A bound that moved jumps to the end of the 64-bit range, so a loop's range stops
    changing after one more step (``[0, 1]`` then ``[0, 2]`` becomes ``[0, INT_MAX]``)."""
    if old.lo > old.hi:
        return new
    if new.lo > new.hi:
        return old
    # Each end separately: a loop counting up keeps its exact lower bound.
    lo = old.lo if new.lo >= old.lo else INT_MIN
    hi = old.hi if new.hi <= old.hi else INT_MAX
    return IntType("int", lo, hi)


def narrow(old: IntType, new: IntType) -> IntType:
    """After widening: keep what both the current range and the one its equation now
    gives say (their intersection). Starting from ranges that cover every value, each
    such step still covers every value, and takes back what widening threw away
    (``[0, INT_MAX]`` becomes ``[0, 10]``). An empty answer keeps ``old``."""
    if new.lo > new.hi:
        return old
    # Both ranges cover every value, so their intersection does too; it is never wider
    # than ``old``, so narrowing steps can only shrink and stop.
    lo, hi = max(old.lo, new.lo), min(old.hi, new.hi)
    return old if lo > hi else IntType("int", lo, hi)
