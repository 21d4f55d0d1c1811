"""Global code motion, phases 1 and 2: the CFG the control nodes spell, and its dominator
tree (lesson 08). :mod:`ssa_course.son.gcm` runs all six phases.

1. :func:`blocks_from_control` -- control nodes become a CFG: a block starts at Start's
   control, a Region or Loop, or a projection of an If or a Call, and ends at the If,
   Call, Return, Throw or Trap that follows (or falls into the next Region).
2. :func:`dominators_and_loops` -- the dominator tree of that CFG (lesson 03), numbered
   once by a depth-first walk so that "does ``a`` dominate ``b``?" is two comparisons,
   and each block's loop depth (the natural loops around it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ssa_course.quads.loops import forward_only
from ssa_course.son.control import (
    Call,
    If,
    Never,
    Proj,
    Region,
    Return,
    Stop,
    Throw,
    Trap,
    goes_to,
)
from ssa_course.son.graph import Node
from ssa_course.son.program import FunctionGraph
from ssa_course.ssa.dom import (
    dominator_tree,
    fast_immediate_dominators,
    postorder,
    predecessors,
)


# eq=False: blocks compare by identity (two blocks with equal fields are still two).
@dataclass(eq=False)
class Block:
    """A basic block of the schedule."""

    name: str
    head: Node  # Start's control projection, a Region/Loop, or a branch projection
    end: Node | None = None  # the If / Call / Return / Throw / Trap that ends it
    succs: list[str] = field(default_factory=list)
    preds: list[str] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)  # phis, then the body, in order
    depth: int = 0  # loop nesting depth
    falls_into: Node | None = None  # the Region it continues in (no branch or exit)


@dataclass
class Cfg:
    """Phase 1's result: the blocks in reverse postorder, and which block each control
    node heads or ends."""

    blocks: dict[str, Block]
    owner: dict[int, str]  # control node id -> block name
    entry: str

    def block_of_control(self, node: Node) -> str:
        return _block_of_control(node, self.owner)


@dataclass
class DomTree:
    """Phase 2's result: immediate dominators, depths in the tree, and the tree's
    depth-first numbers: ``a`` dominates ``b`` when ``b``'s interval lies in ``a``'s."""

    idom: dict[str, str]
    depth: dict[str, int]
    pre: dict[str, int]
    post: dict[str, int]

    def dominates(self, a: str, b: str) -> bool:
        # A block dominates itself: ``<=`` on both ends.
        return self.pre[a] <= self.pre[b] and self.post[b] <= self.post[a]

    def lca(self, a: str | None, b: str) -> str:
        """The deepest block dominating both (``a`` None: just ``b``). Only ``a`` moves,
        and only up: a node's use blocks folded in one by one cost, together, the
        distance from its first use up to their common ancestor."""
        if a is None:
            return b
        # Up from ``a`` to the first block whose subtree holds ``b``: that one dominates both,
        # and no deeper block on ``a``'s chain does.
        while not self.dominates(a, b):
            a = self.idom[a]
        return a


def dom_tree(idom: dict[str, str], entry: str) -> DomTree:
    """Depths and depth-first pre/post numbers of the dominator tree (explicit stack)."""
    tree = dominator_tree(idom)
    depth, pre, post = {entry: 0}, {}, {}
    counter = 0
    stack: list[tuple[str, bool]] = [(entry, False)]
    while stack:
        b, done = stack.pop()
        # Second visit: the subtree is numbered; its interval closes here.
        if done:
            post[b] = counter
            counter += 1
            continue
        pre[b] = counter
        counter += 1
        stack.append((b, True))
        for c in reversed(tree.get(b, [])):
            if c != b:
                depth[c] = depth[b] + 1
                stack.append((c, False))
    return DomTree(idom, depth, pre, post)


# ---------------------------------------------------------------- 1. blocks from control


def _next_control(node: Node) -> Node | None:
    """The one control node after a non-branching control node (None at an exit)."""
    for u in node.outputs:
        if not isinstance(u, (Proj, Never, Stop)) and goes_to(node, u):
            return u
    return None


def _control_projs(node: Node) -> list[Proj]:
    return sorted((u for u in node.outputs if isinstance(u, Proj) and u.is_control),
                  key=lambda p: p.index)


def blocks_from_control(fg: FunctionGraph) -> Cfg:
    """Phase 1: walk control from Start's control projection; each block head (Start's
    control, a Region, an If's or a Call's projection) starts a block that runs to the
    next branch or exit. The blocks come in reverse postorder of a walk that takes the
    *last* successor first: a branch's true side then comes before its false side and a
    loop's body before its exit, the order the source text has."""
    blocks: dict[str, Block] = {}
    owner: dict[int, str] = {}
    start_ctrl = next(u for u in fg.start.outputs if isinstance(u, Proj) and u.index == 0)
    heads: list[Node] = [start_ctrl]
    while heads:
        head = heads.pop()
        # A Region is reached once per path into it: it heads one block.
        if head.id in owner:
            continue
        # Named after the head node's id: stable for a given graph, so lessons can print the
        # blocks and tests name them.
        block = Block(f"b{head.id}", head)
        blocks[block.name] = block
        owner[head.id] = block.name
        node = head
        while (nxt := _next_control(node)) is not None:
            # Control reaches a merge: this block ends and falls into the merge's own block.
            if isinstance(nxt, Region):
                block.falls_into = nxt
                heads.append(nxt)
                break
            owner[nxt.id] = block.name
            block.end = nxt
            if isinstance(nxt, (If, Call)):
                # Each projection of a branch (If's two sides, a Call's normal and exceptional ways)
                # heads a block of its own.
                heads.extend(reversed(_control_projs(nxt)))
                break
            if isinstance(nxt, (Return, Throw, Trap)):
                break
            node = nxt
    for block in blocks.values():
        if block.falls_into is not None:
            block.succs = [owner[block.falls_into.id]]
        elif isinstance(block.end, (If, Call)):
            block.succs = [owner[u.id] for u in _control_projs(block.end)]
    entry = owner[start_ctrl.id]
    succs = {n: b.succs for n, b in blocks.items()}
    # Reverse postorder: each block after its dominators (the order every later phase and
    # the printed schedule use).
    order = reversed(postorder({n: s[::-1] for n, s in succs.items()}, entry))
    blocks = {n: blocks[n] for n in order}
    preds = predecessors(succs)
    for name, block in blocks.items():
        block.preds = preds.get(name, [])
    return Cfg(blocks, owner, entry)


def _block_of_control(node: Node, owner: dict[int, str]) -> str:
    while node.id not in owner:  # a projection of a branch heads its own block
        node = node.operand(0)
    return owner[node.id]


# ---------------------------------------------------------------- 2. dominators and loops


def dominators_and_loops(cfg: Cfg) -> DomTree:
    """Phase 2: immediate dominators of the blocks, the dominator tree's depths and
    depth-first numbers, and (into each ``Block.depth``) its loop depth."""
    succs = {n: b.succs for n, b in cfg.blocks.items()}
    # (the linear algorithm the stages use: the lesson's is quadratic on the join of a
    # long else-if chain; both give the same dictionary, in the same order)
    idom = fast_immediate_dominators(succs, cfg.entry)
    dom = dom_tree(idom, cfg.entry)
    _loop_depths(cfg.blocks, idom, dom)
    return dom


def _loop_depths(blocks: dict[str, Block], idom: dict[str, str],
                 dom: DomTree | None = None) -> None:
    """Loop depth from natural loops: an edge ``t -> h`` where ``h`` dominates ``t`` is a
    back edge; its loop is ``h`` plus every block that reaches ``t`` without passing
    ``h``. (Graphs from Tiny mark loop heads with Loop nodes; graphs from Bril only have
    Regions, so the CFG decides.) Each loop's body is walked once: the cost is the sum of
    the loops' sizes."""
    succs = {n: b.succs for n, b in blocks.items()}
    if forward_only(succs):
        return  # no cycle, no loop: every depth stays 0
    preds = predecessors(succs)
    if dom is None:
        entry = next(b for b, d in idom.items() if d == b)
        dom = dom_tree(idom, entry)
    for head in blocks:
        # A back edge goes to a block from one it dominates.
        tails = [t for t in preds.get(head, []) if t == head or (
            head in dom.pre and t in dom.pre and dom.dominates(head, t))]
        if not tails:
            continue
        body = {head}
        work = list(tails)
        while work:
            b = work.pop()
            if b in body:
                continue
            # Walking predecessors up from the tail: the head is in ``body`` already and stops the
            # walk, so only the blocks inside the loop are collected.
            body.add(b)
            work.extend(preds.get(b, []))
        for b in body:
            blocks[b].depth += 1
