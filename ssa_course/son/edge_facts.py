"""Facts along edges: what a branch tells each of its sides (lesson 09).

Past ``if (i < n)``, on the true side, ``i < n`` holds; on the false side ``i >= n``. Past
a bounds check ``InBounds(i, len(a))`` the program only goes on when ``0 <= i < len(a)``.
Such a fact is attached to the *projection* of the If (the edge into that side) and holds
in every block that projection dominates: there the values it speaks of are still the ones
the branch tested (SSA: a value's definition dominates the test, so no path reaches a
dominated block through a new instance of it without passing the test again). Simple and
Julia put a cast (a Pi node) on the projection; here the facts stay beside the graph, in
a table the range analysis (:mod:`~ssa_course.son.range_facts`) reads, so no pass after it
has to know a new node.

A fact is kept about the *base* of its operand: ``i + 1 < n`` is recorded as a fact about
``i`` with offset 1 (constants peeled off ``Add``/``Sub``), so it helps ``i`` and
``i + k`` alike (the analysis checks that the offset does not wrap).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from ssa_course.quads.loops import forward_only
from ssa_course.son.cfg_blocks import Cfg, DomTree, blocks_from_control, dominators_and_loops
from ssa_course.son.control import If, Loop, Phi, Proj, Region
from ssa_course.son.data import Add, Compare, Constant, Not, Sub
from ssa_course.son.graph import Node
from ssa_course.son.memory import InBounds
from ssa_course.son.program import FunctionGraph
from ssa_course.son.types import FALSE, TRUE, IntType

# ``a op b`` is ``b mirror(op) a``; on the false side ``a negate(op) b`` holds
MIRROR = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
NEGATE = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}
MAX_PEEL = 4  # constant offsets peeled off one operand
NEAREST = 16  # facts about one value that one question looks at, at most


# Frozen: a fact is recorded once and copied, never edited (follow_links makes copies).
@dataclass(frozen=True, slots=True)
class Fact:
    """On the edge ``proj`` (in the blocks it dominates): ``base + offset  op  other``;
    ``other`` None means the constant 0 (the lower half of a bounds check)."""

    proj: Proj
    base: Node
    offset: int
    op: str
    other: Node | None

    def describe(self) -> str:
        left = _name(self.base) + (f" + {self.offset}" if self.offset > 0 else
                                   f" - {-self.offset}" if self.offset < 0 else "")
        right = "0" if self.other is None else _name(self.other)
        return f"{left} {self.op} {right}"


def _name(n: Node) -> str:
    if isinstance(n, Constant):
        return n.label
    var = getattr(n, "var_name", "")
    return f"{var}#{n.id}" if var else f"{n.label}#{n.id}"


def constant_offset(n: Node) -> int | None:
    """The integer constant ``n`` is, or None."""
    t = n.type
    # Only a Constant node counts, not any node typed constant: the peepholes turn those
    # into Constants anyway, and a peeled offset must be a plain number.
    if isinstance(t, IntType) and t.is_constant() and isinstance(n, Constant):
        return t.lo
    return None


def peel(n: Node) -> tuple[Node, int]:
    """``n`` as ``base + offset`` (constants peeled off Add and Sub; the offset is exact
    arithmetic: whoever uses it checks that ``base + offset`` does not wrap)."""
    offset = 0
    for _ in range(MAX_PEEL):
        # Only a constant on the right is peeled: the peepholes put constants there (data.py),
        # so one side to look at is enough.
        if isinstance(n, (Add, Sub)):
            k = constant_offset(n.operand(2))
            if k is not None:
                offset += k if isinstance(n, Add) else -k
                n = n.operand(1)
                continue
        break
    return n, offset


def _relations(pred: Node, side: int) -> list[tuple[Node, str, Node | None]]:
    """The (left, op, right) relations that hold on side 0 (true) or 1 (false) of an If
    on ``pred``."""
    negated = False
    while isinstance(pred, Not):
        pred, negated = pred.operand(1), not negated
    # Each Not in front of the test swaps the sides.
    holds_true = (side == 0) != negated
    # On the false side only "not (a and b)" holds, which is no fact about ``i`` alone.
    if isinstance(pred, InBounds):  # 0 <= i < n, a conjunction: only its true side
        if not holds_true:
            return []
        index, length = pred.operand(1), pred.operand(2)
        return [(index, ">=", None), (index, "<", length)]
    if isinstance(pred, Compare) and isinstance(pred.operand(1).type, IntType) \
            and isinstance(pred.operand(2).type, IntType):
        op = pred.op if holds_true else NEGATE[pred.op]
        left, right = pred.operand(1), pred.operand(2)
        # Both ways round: ``i < n`` is a fact about ``i`` and one about ``n``; each is filed
        # under its own base.
        return [(left, op, right), (right, MIRROR[op], left)]
    return []


@dataclass
class EdgeFacts:
    """Every fact of one function graph, by the base it is about, with the dominator tree
    that says where each holds."""

    cfg: Cfg
    dom: DomTree
    by_base: dict[int, list[Fact]]
    by_proj: dict[int, list[Fact]]
    loop_heads: set[str]  # blocks a back edge enters (a predecessor they dominate)
    # (a branch's side, the block of the one path its value came by): whatever holds at
    # the end of that path holds on that side too (``&&``, ``||``: see _derive)
    links: list[tuple[Proj, str]]
    _holding: dict[tuple[int, str], list[Fact]] = field(default_factory=dict)
    _order: dict[int, tuple[list[int], list[tuple[str, Fact]]]] = field(default_factory=dict)

    def block_of(self, ctrl: Node | None) -> str | None:
        """The block a control node belongs to (None when control never gets there)."""
        owner = self.cfg.owner
        seen: set[int] = set()
        # A control node that starts no block is inside one: walk up its control inputs to the
        # node that owns the block.
        while ctrl is not None and ctrl.id not in owner:
            if ctrl.id in seen:
                return None  # a cycle of control that no block holds: never reached
            seen.add(ctrl.id)
            ctrl = ctrl.inputs[0] if ctrl.inputs else None
        return None if ctrl is None else owner[ctrl.id]

    def holding(self, base: Node, block: str | None) -> list[Fact]:
        """The facts about ``base`` that hold in ``block`` (their edge dominates it).

        At most :data:`NEAREST` of them, the nearest first: a value compared in every one
        of a thousand loops would otherwise make each question cost a thousand steps.
        Leaving facts out is safe (less is known); the nearest ones are what matters."""
        facts = self.by_base.get(base.id)
        # A block the tree does not know is unreachable: nothing is claimed there.
        if not facts or block is None or block not in self.dom.pre:
            return []
        key = (base.id, block)
        found = self._holding.get(key)
        if found is not None:
            return found
        order = self._ordered(base.id)
        pre, post = self.dom.pre, self.dom.post
        # the blocks dominating ``block`` come before it in the tree's preorder: walk back
        # from its place, keeping the ones whose subtree holds it
        i = bisect.bisect_right(order[0], pre[block])
        found, looked = [], 0
        while i > 0 and len(found) < NEAREST and looked < 4 * NEAREST:
            i -= 1
            looked += 1
            where, fact = order[1][i]
            # Preorder at or before ``block`` and postorder at or after it: ``where`` dominates
            # ``block``, so the fact's edge does.
            if post[block] <= post[where]:
                found.append(fact)
        self._holding[key] = found
        return found

    def _ordered(self, base_id: int) -> tuple[list[int], list[tuple[str, Fact]]]:
        """The facts about a base sorted by the preorder number of their edge's block."""
        order = self._order.get(base_id)
        if order is None:
            pairs = sorted(((self.cfg.owner[f.proj.id], f) for f in self.by_base[base_id]
                            if self.cfg.owner.get(f.proj.id) in self.dom.pre),
                           key=lambda p: self.dom.pre[p[0]])
            order = self._order[base_id] = ([self.dom.pre[w] for w, _ in pairs], pairs)
        return order

    def add(self, fact: Fact) -> None:
        self.by_base.setdefault(fact.base.id, []).append(fact)
        self.by_proj.setdefault(fact.proj.id, []).append(fact)

    def follow_links(self, reach: int = 64) -> None:
        """Copy onto each linked side the facts that hold at the end of its path: those
        of the edges heading the blocks up the dominator tree from there (``reach``
        blocks up at most: a bound on the work, what is left out is only not known)."""
        by_block: dict[str, list[Fact]] = {}
        for facts in self.by_proj.values():
            for f in facts:
                by_block.setdefault(self.cfg.owner[f.proj.id], []).append(f)
        # A link says: this side is entered only from the end of block ``src``. So every fact
        # holding at ``src`` -- those of the edges above it in the dominator tree -- holds here.
        for side, src in self.links:
            here = self.cfg.owner[side.id]
            b, steps = src, 0
            while steps < reach:
                for f in list(by_block.get(b, ())):
                    copy = Fact(side, f.base, f.offset, f.op, f.other)
                    self.add(copy)
                    by_block.setdefault(here, []).append(copy)
                up = self.dom.idom.get(b)
                if up is None or up == b:
                    break
                b, steps = up, steps + 1


def blocks_of(fg: FunctionGraph) -> EdgeFacts:
    """The blocks of ``fg``, their dominator tree and loop heads, with no facts yet."""
    cfg = blocks_from_control(fg)
    dom = dominators_and_loops(cfg)
    # A loop head is a block that dominates one of its predecessors (a back edge); Bril's
    # loops are plain Regions, so the Loop class alone would miss them. With every edge
    # going forward in the blocks' order there is no cycle, so no such block (#22).
    heads = set() if forward_only({n: b.succs for n, b in cfg.blocks.items()}) else {
        name for name, b in cfg.blocks.items()
        if any(p in dom.pre and name in dom.pre and dom.dominates(name, p) for p in b.preds)}
    return EdgeFacts(cfg, dom, {}, {}, heads, [])


def edge_facts(fg: FunctionGraph) -> EdgeFacts:
    """Read the facts off every If's projections."""
    ef = blocks_of(fg)
    cfg = ef.cfg
    for n in fg.nodes():
        # An If not in the CFG is unreachable: its facts would hold nowhere.
        if not isinstance(n, If) or n.id not in cfg.owner:
            continue
        for proj in n.outputs:
            if isinstance(proj, Proj) and proj.is_control and proj.id in cfg.owner:
                _derive(ef, proj, n.operand(1), proj.index)
    ef.follow_links()
    return ef


def _derive(ef: EdgeFacts, proj: Proj, pred: Node, side: int, depth: int = 4) -> None:
    """Record what ``pred`` being true (side 0) or false (side 1) says on ``proj``.

    A short-circuit ``a && b`` is a Phi of a merge: ``b`` on the path where ``a`` held,
    ``false`` on the other. The If on it goes to its true side only by the first path, so
    what held at the end of that path holds there too (a *link*), and so does ``b``. The
    false side of ``a || b`` likewise. A merge that heads a loop is not followed: its
    phis are new values each time round."""
    for left, op, right in _relations(pred, side):
        if constant_offset(left) is not None:
            continue  # a fact about a constant teaches nothing
        base, offset = peel(left)
        ef.add(Fact(proj, base, offset, op, right))
    if depth == 0 or not isinstance(pred, Phi) or not isinstance(pred.inputs[0], Region) \
            or isinstance(pred.inputs[0], Loop):
        return
    region = pred.inputs[0]
    dead = FALSE if side == 0 else TRUE  # the value that sends control the other way
    live = [k for k in range(1, len(pred.inputs)) if (v := pred.inputs[k]) is not None
            and not (isinstance(v, Constant) and v.type == dead)]
    # Only when exactly one path can send control to this side does what held at the end of
    # that path hold here.
    if len(live) != 1:
        return
    k = live[0]
    there = ef.block_of(region.in_(k))
    head = ef.cfg.owner.get(region.id)
    # (a path from inside a loop back to its head is not followed: the values there are a
    # later round's)
    if there is None or head is None or there not in ef.dom.pre \
            or ef.dom.dominates(head, there):
        return
    ef.links.append((proj, there))
    _derive(ef, proj, pred.operand(k), side, depth - 1)
