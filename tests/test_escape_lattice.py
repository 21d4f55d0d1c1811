"""The escape lattice's laws, property by property (hypothesis), and its glyphs."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ssa_course.analysis.escape_lattice import (
    ALIAS_NONE,
    ALIAS_UNKNOWN,
    ALL_ESCAPE,
    ELEMENTS,
    FIELDS,
    NO_ESCAPE,
    NOT_ANALYZED,
    AliasInfo,
    EscapeInfo,
)

SITES = st.frozensets(st.integers(1, 6), max_size=3)
NAMES = st.frozensets(st.sampled_from(["%1", "%2", "%3", "p"]), max_size=3)
ALIASES = st.one_of(
    st.just(ALIAS_NONE), st.just(ALIAS_UNKNOWN),
    NAMES.map(lambda e: AliasInfo(ELEMENTS, elements=e)),
    st.dictionaries(st.sampled_from(["x", "y", "v"]), NAMES, max_size=2).map(
        lambda d: AliasInfo(FIELDS, fields=frozenset(d.items()))))
INFOS = st.builds(EscapeInfo, st.booleans(), SITES, SITES, st.frozensets(st.integers(1, 3),
                                                                        max_size=2),
                  st.booleans(), ALIASES)


@given(INFOS, INFOS)
def test_join_is_commutative(a, b):
    assert a.join(b) == b.join(a)


@given(INFOS, INFOS, INFOS)
def test_join_is_associative(a, b, c):
    assert a.join(b).join(c) == a.join(b.join(c))


@given(INFOS)
def test_join_is_idempotent_and_has_a_bottom(a):
    assert a.join(a) == a
    assert NOT_ANALYZED.join(a) == a
    assert NOT_ANALYZED.leq(a)


@given(INFOS, INFOS)
def test_join_is_an_upper_bound_and_the_order_is_antisymmetric(a, b):
    j = a.join(b)
    assert a.leq(j) and b.leq(j)
    if a.leq(b) and b.leq(a):
        assert a == b


@given(INFOS, INFOS, INFOS)
def test_join_is_least_and_the_order_transitive(a, b, c):
    if a.leq(c) and b.leq(c):
        assert a.join(b).leq(c)
    if a.leq(b) and b.leq(c):
        assert a.leq(c)


@given(INFOS, INFOS)
def test_each_property_joins_on_its_own(a, b):
    j = a.join(b)
    assert j.returns == a.returns | b.returns
    assert j.thrown == a.thrown | b.thrown
    assert j.args == a.args | b.args
    assert j.everywhere == (a.everywhere or b.everywhere)
    assert j.alias == a.alias.join(b.alias)


def test_alias_fields_join_per_field_and_mixed_shapes_go_to_unknown():
    a = AliasInfo(FIELDS, fields=frozenset({("x", frozenset({"%1"}))}))
    b = AliasInfo(FIELDS, fields=frozenset({("x", frozenset({"%2"})), ("y", frozenset())}))
    assert a.join(b).field_map() == {"x": frozenset({"%1", "%2"}), "y": frozenset()}
    assert a.join(AliasInfo(ELEMENTS)) == ALIAS_UNKNOWN


def test_glyphs():
    assert NOT_ANALYZED.glyph() == "◌"
    assert NO_ESCAPE.glyph() == "✓"
    assert EscapeInfo(True, returns=frozenset({3})).glyph() == "↑"
    assert EscapeInfo(True, returns=frozenset({3}), args=frozenset({1})).glyph() == "*"
    assert EscapeInfo(True, thrown=frozenset({2})).glyph() == "*"
    assert ALL_ESCAPE.join(EscapeInfo(True, returns=frozenset({1}))).glyph() == "X"
    assert EscapeInfo(True, alias=AliasInfo(ELEMENTS)).glyph() == "✓′"
    assert NO_ESCAPE.has_no_escape() and not ALL_ESCAPE.has_no_escape()
    assert not NOT_ANALYZED.has_no_escape()
