"""The hot paths of the sea-of-nodes engine answer as the plain code they shortcut (#22,
sixth round): each shortcut (identity before the lattice's equality, a type of another
class told without it, an If's shared types, the inputs linked at once, the newest users
searched at C speed) is checked against the code it replaced, written out here."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ssa_course.son import endless
from ssa_course.son.control import If, Phi, Proj, Region, Start
from ssa_course.son.data import Constant
from ssa_course.son.graph import Graph, Node, _remove_last
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
    ControlType,
    IntType,
    TupleType,
    Type,
    int_const,
    ref,
    tuple_of,
)

SMALL = st.integers(-3, 3)
SCALARS = st.one_of(
    st.builds(int_const, SMALL),
    st.builds(lambda a, d: IntType("int", a, a + d), SMALL, st.integers(0, 3)),
    st.sampled_from([TOP, BOTTOM, TRUE, FALSE, BOOL_TOP, BOOL_BOTTOM, CTRL, XCTRL, INT_TOP,
                     INT_BOTTOM, MEM, MEM_TOP, ref("[int]"),
                     # equal to the shared ones, but other objects: identity is no answer
                     Type("top"), ControlType("ctrl", True), ControlType("ctrl", False)]))
TYPES = st.one_of(SCALARS, st.builds(lambda a, b: tuple_of(a, b), SCALARS, SCALARS))
MANY = settings(max_examples=400, deadline=None)


def _meet_as_first_written(a: Type, b: Type) -> Type:
    if a is b or a == b:
        return a
    if a.kind == "top":
        return b
    if b.kind == "top":
        return a
    if a.kind == "bottom" or b.kind == "bottom" or a.kind != b.kind:
        return BOTTOM
    return a._meet_same(b)


def _join_as_first_written(a: Type, b: Type) -> Type:
    if a is b or a == b:
        return a
    if a.kind == "bottom":
        return b
    if b.kind == "bottom":
        return a
    if a.kind == "top" or b.kind == "top" or a.kind != b.kind:
        return TOP
    return a._join_same(b)


def _same_answer(new: Type, old: Type, a: Type, b: Type) -> bool:
    # equal, of one class, and the very operand whenever the old code gave an operand back
    return new == old and type(new) is type(old) \
        and (new is a) == (old is a) and (new is b) == (old is b)


@MANY
@given(TYPES, TYPES)
def test_meet_and_join_answer_as_first_written(a, b):
    assert _same_answer(a.meet(b), _meet_as_first_written(a, b), a, b)
    assert _same_answer(a.join(b), _join_as_first_written(a, b), a, b)


def _graph_with_start() -> tuple[Graph, Start]:
    g = Graph()
    start = Start(g, [], [])
    g.start = start
    return g, start


def _phi_compute_as_first_written(phi: Phi) -> Type:
    region = phi.inputs[0]
    t: Type = TOP
    for i, n in enumerate(phi.inputs[1:], start=1):
        path = region.in_(i) if region is not None else None
        if path is not None and path.type in (XCTRL, TOP):
            continue
        if n is not None:
            t = t.meet(n.type)
    return t


CONTROL_TYPES = st.sampled_from([CTRL, XCTRL, TOP, ControlType("ctrl", True),
                                 ControlType("ctrl", False), Type("top")])


@MANY
@given(st.lists(st.tuples(st.one_of(st.none(), CONTROL_TYPES), st.one_of(st.none(), SCALARS)),
                min_size=1, max_size=4), st.booleans())
def test_phi_compute_answers_as_first_written(paths, short_region):
    g, start = _graph_with_start()
    ctrls = [None if c is None else Constant(g, start, c) for c, _ in paths]
    values = [None if v is None else Constant(g, start, v) for _, v in paths]
    # (a region with fewer paths than the phi has values: the missing paths read as None)
    region = Region(g, None, *(ctrls[:-1] if short_region else ctrls))
    phi = Phi(g, region, *values)
    new, old = phi.compute(), _phi_compute_as_first_written(phi)
    assert new == old and type(new) is type(old)


@MANY
@given(st.one_of(CONTROL_TYPES, SCALARS), st.one_of(CONTROL_TYPES, SCALARS))
def test_if_compute_answers_as_first_written(ctrl_type, pred_type):
    g, start = _graph_with_start()
    iff = If(g, Constant(g, start, ctrl_type), Constant(g, start, pred_type))
    if ctrl_type in (XCTRL, TOP):
        old = tuple_of(XCTRL, XCTRL)
    elif pred_type == TRUE:
        old = tuple_of(CTRL, XCTRL)
    elif pred_type == FALSE:
        old = tuple_of(XCTRL, CTRL)
    elif pred_type in (BOOL_TOP, TOP):
        old = tuple_of(XCTRL, XCTRL)
    else:
        old = tuple_of(CTRL, CTRL)
    new = iff.compute()
    assert new == old and isinstance(new, TupleType)


@MANY
@given(st.one_of(CONTROL_TYPES, SCALARS), st.one_of(st.none(), TYPES), st.integers(0, 2))
def test_dead_control_answers_as_first_written(own, source_type, index):
    g, start = _graph_with_start()
    if source_type is None:
        n: Node = Constant(g, start, own)
    else:
        n = Proj(g, Constant(g, start, source_type), index, "side", control=True)
        n.type = own
    old = isinstance(n.type, ControlType) and n.type != CTRL or n.type == TOP
    if not old and isinstance(n, Proj):
        source = n.inputs[0]
        if isinstance(source.type, TupleType) and n.index < len(source.type.types):
            side = source.type.types[n.index]
            old = isinstance(side, ControlType) and side != CTRL or side == TOP
    assert endless._dead(n) == old


def _remove_last_as_first_written(users: list, node: object) -> None:
    for k in range(len(users) - 1, -1, -1):
        if users[k] is node:
            del users[k]
            return
    raise ValueError("not a user")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=30), st.data())
def test_remove_last_drops_the_newest_edge(picks, data):
    things = [object() for _ in range(4)]
    users = [things[k] for k in picks]
    node = things[data.draw(st.sampled_from(sorted(set(picks))))]
    expected = list(users)
    _remove_last_as_first_written(expected, node)
    _remove_last(users, node)
    assert users == expected and all(a is b for a, b in zip(users, expected, strict=True))


class _CountingNode(Node):
    """A node class whose ``add_input`` is its own: the constructor must go through it."""

    __slots__ = ()
    seen: list[Node | None] = []

    def add_input(self, n: Node | None) -> None:
        _CountingNode.seen.append(n)
        super().add_input(n)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from([None, 0, 1, 2]), max_size=5), st.booleans())
def test_new_node_links_its_inputs_as_add_input_does(picks, control):
    g, start = _graph_with_start()
    pool = [Constant(g, start, int_const(k)) for k in range(3)]
    inputs = [None if k is None else pool[k] for k in picks]

    class Made(Node):
        __slots__ = ()
        is_control = control

    before = (g.edits, g.control_version)
    node = Made(g, *inputs)
    assert node.inputs == inputs
    # every input lists the node once per edge, as the newest user
    for x in pool:
        assert x.outputs.count(node) == inputs.count(x)
    assert g.edits - before[0] == len(inputs)
    assert g.control_version - before[1] == (len(inputs) if control else 0)
    # a class with its own add_input still gets each input through it
    _CountingNode.seen.clear()
    counted = _CountingNode(g, *inputs)
    assert _CountingNode.seen == inputs and counted.inputs == inputs


@MANY
@given(TYPES)
def test_as_range_answers_as_first_written(t):
    from ssa_course.son.intervals import as_range

    if t == TOP:
        old = None
    elif isinstance(t, IntType):
        old = None if t.lo > t.hi else t
    else:
        old = INT_BOTTOM
    assert as_range(t) is old


def test_region_phis_in_id_order():
    g, start = _graph_with_start()
    region = Region(g, None, start, start)
    phis = [Phi(g, region, start, start) for _ in range(5)]
    region.outputs.reverse()  # (the order users were added in does not matter)
    assert region.phis() == phis
