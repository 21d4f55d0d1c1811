"""A picture of a type lattice (lesson 06), drawn from the types' own ``meet``.

:func:`lattice_dot` takes any collection of types and draws its Hasse diagram: an edge
from ``a`` down to ``b`` when ``b`` is strictly below ``a`` (``b.isa(a)``: meeting them
gives ``b``) and no other type of the collection lies strictly between. ``TOP`` ends up at
the top and ``BOTTOM`` at the bottom because the order comes from ``meet`` itself, so the
picture shows the lattice the code implements, not a hand-drawn one.
"""

from __future__ import annotations

from collections.abc import Sequence

from ssa_course.son.types import (
    BOOL_BOTTOM,
    BOOL_TOP,
    BOTTOM,
    CTRL,
    FALSE,
    INT_BOTTOM,
    INT_TOP,
    TOP,
    TRUE,
    XCTRL,
    Type,
    int_const,
)
from ssa_course.viz.dot import GraphEdge, GraphNode, graph_to_dot

# The lesson's sample: the top and bottom of everything, of ints, of bools and of control.
LESSON_TYPES: tuple[Type, ...] = (
    TOP, INT_TOP, BOOL_TOP, XCTRL, int_const(3), int_const(4),
    int_const(3).meet(int_const(4)), INT_BOTTOM, TRUE, FALSE, BOOL_BOTTOM, CTRL, BOTTOM,
)


def strictly_below(b: Type, a: Type) -> bool:
    """``b ⊏ a``: ``b`` is below ``a`` and not equal to it."""
    return b != a and b.isa(a)


def hasse_edges(types: Sequence[Type]) -> list[tuple[Type, Type]]:
    """(upper, lower) pairs with nothing of ``types`` strictly between them."""
    # Types are frozen values: equal ones are one point of the picture, in first-seen order.
    distinct = list(dict.fromkeys(types))
    edges = []
    for a in distinct:
        for b in distinct:
            if not strictly_below(b, a):
                continue
            # A Hasse diagram leaves out what transitivity implies: only the covering pairs are
            # drawn (cubic in the number of types: a lesson's dozen, not a program's).
            if any(strictly_below(b, c) and strictly_below(c, a) for c in distinct):
                continue
            edges.append((a, b))
    return edges


def lattice_dot(types: Sequence[Type] = LESSON_TYPES, title: str | None = None) -> str:
    """DOT of the Hasse diagram of ``types``: ``TOP`` ("no value yet") at the top, and
    each step down knows less about the value, down to ``BOTTOM`` ("could be anything")."""
    distinct = list(dict.fromkeys(types))
    ids = {t: f"t{i}" for i, t in enumerate(distinct)}
    # The lattice's ends are emphasised: everything the analyses compute lies between them.
    nodes = [GraphNode(ids[t], header=str(t), shape="box",
                       emphasis=t in (TOP, BOTTOM)) for t in distinct]
    edges = [GraphEdge(ids[a], ids[b]) for a, b in hasse_edges(distinct)]
    return graph_to_dot(nodes, edges, name="lattice",
                        title=title or "the type lattice: meet goes down, join goes up")
