"""The sea-of-nodes type lattice obeys the lattice laws (property tests)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ssa_course.son.types import (
    BOOL_BOTTOM,
    BOOL_TOP,
    BOTTOM,
    CTRL,
    FALSE,
    INT_BOTTOM,
    INT_TOP,
    MEM,
    MEM_TOP,
    TOP,
    TRUE,
    XCTRL,
    IntType,
    int_const,
    ref,
    tuple_of,
)

SMALL = st.integers(-5, 5)


@st.composite
def ints(draw):
    kind = draw(st.integers(0, 3))
    if kind == 0:
        return int_const(draw(SMALL))
    if kind == 1:
        a, b = sorted((draw(SMALL), draw(SMALL)))
        return IntType("int", a, b)
    return INT_TOP if kind == 2 else INT_BOTTOM


SCALARS = st.one_of(
    ints(), st.sampled_from([TOP, BOTTOM, TRUE, FALSE, BOOL_TOP, BOOL_BOTTOM, CTRL, XCTRL,
                             MEM, MEM_TOP, ref("[int]")]))
TYPES = st.one_of(SCALARS, st.builds(lambda a, b: tuple_of(a, b), SCALARS, SCALARS))

LAWS = settings(max_examples=600, deadline=None)


@LAWS
@given(TYPES, TYPES)
def test_commutative(a, b):
    assert a.meet(b) == b.meet(a)
    assert a.join(b) == b.join(a)


@LAWS
@given(TYPES, TYPES, TYPES)
def test_associative(a, b, c):
    assert a.meet(b).meet(c) == a.meet(b.meet(c))
    assert a.join(b).join(c) == a.join(b.join(c))


@LAWS
@given(TYPES)
def test_idempotent_and_identities(a):
    assert a.meet(a) == a and a.join(a) == a
    assert a.meet(TOP) == a and a.join(BOTTOM) == a
    assert a.meet(BOTTOM) == BOTTOM and a.join(TOP) == TOP


@LAWS
@given(TYPES, TYPES)
def test_meet_goes_down(a, b):
    m = a.meet(b)
    assert m.isa(a) and m.isa(b)


def test_examples():
    assert int_const(1).meet(int_const(3)) == IntType("int", 1, 3)
    assert int_const(1).join(int_const(3)) == INT_TOP
    assert IntType("int", 0, 10).join(IntType("int", 5, 20)) == IntType("int", 5, 10)
    assert TRUE.meet(FALSE) == BOOL_BOTTOM and TRUE.join(FALSE) == BOOL_TOP
    assert int_const(1).meet(TRUE) == BOTTOM and int_const(1).join(TRUE) == TOP
    assert XCTRL.meet(CTRL) == CTRL
    assert str(int_const(7)) == "7" and str(INT_BOTTOM) == "int" and str(TRUE) == "true"
    assert tuple_of(CTRL, int_const(1)).meet(tuple_of(XCTRL, int_const(2))) == \
        tuple_of(CTRL, IntType("int", 1, 2))


def _int_binary_as_first_written(a, b, fn, ranges):
    """``data._int_binary`` before its fast path for two ranges (r62, #22)."""
    if a in (TOP, INT_TOP) or b in (TOP, INT_TOP):
        return INT_TOP
    if isinstance(a, IntType) and isinstance(b, IntType) and a.is_constant() \
            and b.is_constant():
        value = fn(a.lo, b.lo)
        return INT_BOTTOM if value is None else int_const(value)
    if ranges is not None and isinstance(a, IntType) and isinstance(b, IntType):
        return ranges(a, b)
    return INT_BOTTOM


class _Operands:
    def __init__(self, a, b):
        self.types = (None, a, b)

    def operand(self, i):
        return _Typed(self.types[i])


class _Typed:
    def __init__(self, t):
        self.type = t


_SOME_TYPES = st.one_of(
    st.sampled_from([TOP, BOTTOM, IntType("int", 1, 0), IntType("int", 5, 2),
                     IntType("int"), TRUE, BOOL_BOTTOM, BOOL_TOP]),
    st.builds(lambda lo, d: IntType("int", lo, lo + d), st.integers(-5, 5), st.integers(-2, 4)))


@given(_SOME_TYPES, _SOME_TYPES)
def test_int_binary_fast_path_answers_as_the_lattice(a, b):
    """Two ranges are told apart from TOP and the empty range without ``==`` of the
    lattice: the same answer as the general test, for every pair of types."""
    from ssa_course.son import data, intervals

    def fn(x, y):
        return x + y if y != 3 else None  # a fold that would trap: None

    for ranges in (intervals.add, None):
        assert data._int_binary(_Operands(a, b), fn, ranges) == \
            _int_binary_as_first_written(a, b, fn, ranges)
