"""Sea-of-nodes nodes and the generic peephole driver, on hand-built graphs."""

from __future__ import annotations

from ssa_course.son.nodes import (
    Add,
    Compare,
    Constant,
    Div,
    Graph,
    If,
    Mul,
    Not,
    Phi,
    Proj,
    Region,
    Start,
    Sub,
)
from ssa_course.son.peephole import Peephole
from ssa_course.son.types import (
    BOOL_BOTTOM,
    CTRL,
    FALSE,
    INT_BOTTOM,
    TRUE,
    XCTRL,
    int_const,
    tuple_of,
)


def setup(enabled=True):
    g = Graph()
    start = Start(g, [INT_BOTTOM])
    peep = Peephole(start, enabled)
    peep(start)
    ctrl = peep(Proj(g, start, 0, "ctrl", control=True))
    arg = peep(Proj(g, start, 2, "n"))  # Start's tuple: control, memory, then arguments
    return g, start, peep, ctrl, arg


def const(g, start, peep, v):
    return peep(Constant(g, start, int_const(v)))


def test_constant_folding_and_wrapping():
    g, start, peep, _, _ = setup()
    a, b = const(g, start, peep, 2**63 - 1), const(g, start, peep, 1)
    s = peep(Add(g, None, a, b))
    assert isinstance(s, Constant) and s.type == int_const(-(2**63))
    assert peep.constants_found == 1


def test_division_by_zero_is_not_folded():
    g, start, peep, ctrl, _ = setup()
    d = peep(Div(g, ctrl, const(g, start, peep, 1), const(g, start, peep, 0)))
    assert isinstance(d, Div) and d.type == INT_BOTTOM


def test_identities_and_reassociation():
    g, start, peep, _, n = setup()
    zero, one = const(g, start, peep, 0), const(g, start, peep, 1)
    assert peep(Add(g, None, n, zero)) is n
    assert peep(Mul(g, None, one, n)) is n
    x_minus_x = peep(Sub(g, None, n, n))
    assert x_minus_x.type == int_const(0)
    two = const(g, start, peep, 2)
    inner = peep(Add(g, None, n, one))
    outer = peep(Add(g, None, inner, two))  # (n + 1) + 2 -> n + 3
    assert isinstance(outer, Add) and outer.inputs[1] is n and outer.inputs[2].type == \
        int_const(3)


def test_gvn_respects_commutativity():
    g, start, peep, _, n = setup()
    three = const(g, start, peep, 3)
    a = peep(Mul(g, None, n, three))
    b = peep(Mul(g, None, three, n))
    assert a is b
    lt1 = peep(Compare(g, "<", n, three))
    lt2 = peep(Compare(g, "<", three, n))
    assert lt1 is not lt2  # < is not commutative


def test_comparisons_of_equal_inputs_and_double_negation():
    g, _, peep, _, n = setup()
    assert peep(Compare(g, "<=", n, n)).type == TRUE
    assert peep(Compare(g, "<", n, n)).type == FALSE
    c = peep(Compare(g, "==", n, peep(Add(g, None, n, n))))
    assert c.type == BOOL_BOTTOM
    assert peep(Not(g, None, peep(Not(g, None, c)))) is c


def test_if_with_constant_predicate_kills_a_projection():
    g, start, peep, ctrl, n = setup()
    iff = peep(If(g, ctrl, peep(Constant(g, start, TRUE))))
    assert iff.type == tuple_of(CTRL, XCTRL)
    t = peep(Proj(g, iff, 0, "True"))
    f = peep(Proj(g, iff, 1, "False"))
    assert t.type == CTRL and f.type == XCTRL
    region = peep(Region(g, None, t, f))
    assert region.type == CTRL
    phi = Phi(g, region, const(g, start, peep, 1), n)
    assert peep(phi).type == int_const(1) or peep(phi).type.is_constant()


def test_phi_of_one_value_disappears():
    g, start, peep, ctrl, n = setup()
    iff = peep(If(g, ctrl, peep(Compare(g, "<", n, const(g, start, peep, 0)))))
    region = peep(Region(g, None, peep(Proj(g, iff, 0, "True")), peep(Proj(g, iff, 1, "False"))))
    assert peep(Phi(g, region, n, n)) is n


def test_edges_mirror_and_dead_nodes_go():
    g, start, peep, _, n = setup()
    one = const(g, start, peep, 1)
    x = peep(Add(g, None, n, one))
    assert x in n.outputs and x in one.outputs
    before = len(g.nodes)
    assert peep(Add(g, None, x, const(g, start, peep, 0))) is x
    assert len(g.nodes) <= before + 1  # the folded Add and its zero did not stay around
    for node in g.nodes.values():
        for i in node.inputs:
            if i is not None:
                assert node in i.outputs


def test_switch_off_keeps_the_raw_graph():
    g, start, peep, _, n = setup(enabled=False)
    s = peep(Add(g, None, const(g, start, peep, 1), const(g, start, peep, 2)))
    assert isinstance(s, Add) and s.type == int_const(3)
