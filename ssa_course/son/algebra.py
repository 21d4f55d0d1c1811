"""Reassociation and phi pushing: the rewrites that gather constants (lesson 06).

Click's and Simple's peepholes look one node deep; a sum such as ``1 + arg + 2 + arg + 3``
is a chain of nodes, and no single node sees two of its constants. These rules move the
constants of an ``+`` chain *outward* (towards the root of the chain), where the rule
``(x + c1) + c2 -> x + (c1 + c2)`` folds them, and ``arg + arg`` meets inside:
``((arg + 3) + arg) + 3 -> ((arg + arg) + 3) + 3 -> (arg * 2) + 6``.

A *literal* here is a constant or a phi of constants (``Phi(1, 2)``, Simple's "phi
cons"): a value that costs no operation. Each rule moves a literal one level up or folds
two literals into one, so the rules cannot undo one another and every chain settles.

Phi pushing (Simple's idea, our code) lives on the Phi: ``Phi(a + 1, a + 2)`` is
``a + Phi(1, 2)`` -- one operation after the merge instead of one on every path -- and
then the literal ``Phi(1, 2)`` reassociates like a constant:
``(a + 1) + Phi(a + 1, a + 2) -> (a * 2) + Phi(2, 3)``.

The functions here are the bodies of ``Add.idealize`` and ``Phi.idealize``'s pushing
rule; every distant node they read is registered with ``dep_read`` (the settled-graph
check of :func:`ssa_course.son.iterate.progress_left` verifies nothing is left).
"""

from __future__ import annotations

from collections.abc import Callable

from ssa_course.son.control import Phi, Region, may_be_loop_head
from ssa_course.son.graph import Node, typed
from ssa_course.son.types import int_value


def phi_of_constants(n: Node) -> bool:
    """A Phi of a finished merge whose every input is a constant."""
    if not isinstance(n, Phi):
        return False
    region = n.inputs[0]
    # A loop still being parsed has a back input to come: its phi is not a literal yet.
    if not isinstance(region, Region) or region.in_progress():
        return False
    return all(v is not None and v.type.is_constant() for v in n.inputs[1:])


def literal(n: Node) -> bool:
    """A constant, or a phi of constants: a value that costs no operation."""
    return n.type.is_constant() or phi_of_constants(n)


def literal_read(user: Node, n: Node) -> bool:
    """:func:`literal` of ``n``, read by a rule of ``user``: ``user`` looks again when
    ``n`` or (for a phi) one of its inputs changes."""
    if isinstance(user.dep_read(n), Phi):
        for v in n.inputs[1:]:
            user.dep_read(v)
    return literal(n)


def fold_literals(user: Node, a: Node, b: Node,
                  fn: Callable[[int, int], int]) -> Node | None:
    """``fn`` of two literals, one of them a phi, as one phi of constants
    (``Phi(1, 2) + 3 -> Phi(4, 5)``; two phis must share their merge); None when they
    cannot be combined."""
    from ssa_course.son.data import const  # data imports this module

    # Two phis combine path by path only when they choose on the same merge: input i of
    # each belongs to the same path i.
    phis = [x for x in (a, b) if isinstance(x, Phi) and not x.type.is_constant()]
    if not phis or (len(phis) == 2 and phis[0].inputs[0] is not phis[1].inputs[0]):
        return None
    region = phis[0].operand(0)

    def value(x: Node, i: int) -> int:
        c = int_value((x.operand(i) if x in phis else x).type)
        assert c is not None, f"{x} is not an integer literal"
        return c

    # The new phi's inputs are Constants made here, outside the driver; GVN shares them
    # with older equal ones when the driver looks at them.
    values = [const(user, fn(value(a, i), value(b, i))) for i in range(1, len(region.inputs))]
    return typed(Phi(user.graph, region, *values))


def push_through_phi(phi: Phi) -> Node | None:
    """``Phi(op(a, x1), op(a, x2), ...) -> op(a, Phi(x1, x2, ...))`` (or with the shared
    operand on the right): the inputs are one floating operation of the same kind with
    one operand in common -- or with constants on the right, which make a phi of
    constants (``op(Phi(a1, a2), Phi(c1, c2))``), or with nothing in common when every
    input dies and the merge heads no loop (``op(Phi(a1, a2), Phi(b1, b2))``). Only when
    some input is used by this phi alone (no operation is added) -- at a loop head, every
    input (else a value kept for another user is computed twice per iteration) --, never
    on a loop still being parsed, and never when an input reads the phi itself (a loop's
    own counter)."""
    from ssa_course.son.data import Binary  # data imports this module

    region = phi.inputs[0]
    if not isinstance(region, Region) or region.in_progress():
        return None
    # A path without a value (being built): nothing to push.
    if any(v is None for v in phi.inputs[1:]):
        return None
    values = [phi.operand(i) for i in range(1, len(phi.inputs))]
    first = values[0]
    # Only floating operations move: a pinned one (a guarded division) must stay under its
    # test on its own path.
    if not isinstance(first, Binary) or len(values) < 2 or first.inputs[0] is not None:
        return None
    for v in values:
        # ``phi in v.inputs``: a loop counter ``Phi(0, phi + 1)`` would push forever.
        if v is phi or v.inputs[0] is not None or not first.same_operation(v) \
                or phi in v.inputs:
            return None
    for v in values:  # the rule reads their operands and their users: distant nodes
        for x in phi.dep_read(v).inputs[1:]:
            phi.dep_read(x)
    dies = [all(u is phi for u in v.outputs) for v in values]
    if not any(dies):
        return None  # every input is used elsewhere too: pushing would add an operation
    if not all(dies) and may_be_loop_head(region, phi):
        return None  # round a loop, a value kept for another user would run twice
    # The cheapest form first: one shared operand, and one phi of the others.
    for side in (1, 2):
        shared = first.operand(side)
        if all(v.inputs[side] is shared for v in values):
            other = 3 - side
            merged = typed(Phi(phi.graph, region, *(v.inputs[other] for v in values)))
            # The shared operand keeps its side, so a non-commutative operation (``-``) stays right.
            operands = (shared, merged) if side == 1 else (merged, shared)
            return typed(first.remake(*operands))
    # no operand in common, but the right ones are all constants: their phi is a
    # literal (Phi(x + 1, y + 2) -> Phi(x, y) + Phi(1, 2)), which costs no operation
    if all(v.operand(2).type.is_constant() for v in values):
        lefts = typed(Phi(phi.graph, region, *(v.inputs[1] for v in values)))
        rights = typed(Phi(phi.graph, region, *(v.inputs[2] for v in values)))
        return typed(first.remake(lefts, rights))
    # nothing in common: Phi(x + y, a + b) -> Phi(x, a) + Phi(y, b), one operation instead
    # of one per path, when every input dies with the phi and the merge heads no loop
    # (GVN then finds the operand phis and the operation if they exist already:
    # ``p - (g + h)`` with ``p = Phi(x + y, a + b)``, ``g = Phi(x, a)``, ``h = Phi(y, b)``)
    if all(dies) and not may_be_loop_head(region, phi):
        lefts = typed(Phi(phi.graph, region, *(v.inputs[1] for v in values)))
        rights = typed(Phi(phi.graph, region, *(v.inputs[2] for v in values)))
        return typed(first.remake(lefts, rights))
    return None


_CHAIN = 3  # single-user sums looked at above a phi for a literal to meet (a cost bound)


def pull_literal(phi: Phi) -> Node | None:
    """``Phi(x + c, y) -> Phi(x, y) + Phi(c, 0)`` (an input with no constant counts as
    ``+ 0``): the constants leave the paths as a literal, which reassociation then carries
    out to meet another literal -- so only when one does (the phi's single user is a sum
    whose chain of single users, within ``_CHAIN`` sums, adds a constant or a phi of
    constants), when the sums with constants die with the phi, and never at a merge that may
    head a loop. Simple's chapter 19 ``testIfMerge2``: ``Phi(arg*2 + 2, arg) + arg +
    Phi(2, 5)`` -> ``Phi(arg*2, arg) + arg + Phi(4, 5)``."""
    from ssa_course.son.data import Add, const  # data imports this module

    region = phi.inputs[0]
    if not isinstance(region, Region) or region.in_progress() \
            or any(v is None for v in phi.inputs[1:]) or phi.type.kind != "int":
        return None
    values = [phi.operand(i) for i in range(1, len(phi.inputs))]
    # Which inputs are ``x + c`` that die with the phi: only those give up their constant.
    sums = [isinstance(v, Add) and v.inputs[0] is None and v.operand(2).type.is_constant()
            and all(u is phi for u in v.outputs) for v in values]
    # Every input and its constant is read: a distant dependency of the phi.
    for v in values:
        if isinstance(phi.dep_read(v), Add):
            phi.dep_read(v.inputs[2])
    if not any(sums) or not _meets_a_literal(phi):
        return None
    if may_be_loop_head(region, phi):
        return None
    rests = [v.operand(1) if s else v for v, s in zip(values, sums, strict=True)]
    # ``Phi(phi + 1, ...)`` is a loop counter: pulling its constant would go round forever.
    if any(r is phi for r in rests):
        return None
    literals = [v.operand(2) if s else const(phi, 0) for v, s in zip(values, sums, strict=True)]
    lefts = typed(Phi(phi.graph, region, *rests))
    rights = typed(Phi(phi.graph, region, *literals))
    return typed(Add(phi.graph, None, lefts, rights))


def _meets_a_literal(phi: Phi) -> bool:
    """The phi's single user is a sum, and so up to ``_CHAIN`` sums, one of which adds a
    literal (every node read is a distant dependency of the phi)."""
    from ssa_course.son.data import Add  # data imports this module

    n: Node = phi
    # Up the chain of single users: a sum with other users stays where it is, so a literal
    # carried past it would meet nothing.
    for _ in range(_CHAIN):
        users = list(dict.fromkeys(phi.dep_read(n).outputs))
        if len(users) != 1 or not isinstance(users[0], Add):
            return False
        user = phi.dep_read(users[0])
        other = user.operand(2) if user.inputs[1] is n else user.operand(1)
        if literal_read(phi, other):
            return True
        n = user
    return False
