"""Global code motion: from the sea of nodes back to basic blocks (lesson 08).

Click's algorithm, on one function graph:

1. **Blocks.** Control nodes become a CFG: a block starts at Start's control, a Region or
   Loop, or a projection of an If or a Call, and ends at the If, Call, Return, Throw or
   Trap that follows (or falls into the next Region).
2. **Dominators and loop depth** over that CFG (the dominator code of lesson 03); a
   block's loop depth counts the natural loops around it.
3. **Pinned nodes stay**: Phis in their Region's block, loads, stores, prints, allocations
   and guarded divisions in the block of the control they hang on -- so nothing moves
   past a memory operation it depends on, and nothing that can trap is hoisted above its
   test.
4. **Schedule early**: every floating node goes to the deepest block among its inputs'
   blocks (the highest point where all its inputs exist).
5. **Schedule late**: the lowest common ancestor, in the dominator tree, of the blocks of
   its uses (a Phi uses its value at the end of the matching predecessor block).
6. **Pick** the block between late and early (walking up the dominator tree) with the
   shallowest loop depth, latest on ties: loop-invariant code leaves the loop, and
   nothing is computed on a path that does not need it when it can be avoided.
7. **Order** each block: Phis, then the rest in an order their data and memory edges
   allow (a load before the store that overwrites its memory), the terminator last.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ssa_course.errors import VerifyError
from ssa_course.son.control import (
    Call,
    If,
    Never,
    Phi,
    Proj,
    Region,
    Return,
    Start,
    Stop,
    Throw,
    Trap,
)
from ssa_course.son.emit import FunctionGraph
from ssa_course.son.graph import Node
from ssa_course.son.order import anti_dependences, dependency_order
from ssa_course.ssa.dom import dominator_tree, immediate_dominators, postorder, predecessors


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
class Schedule:
    """A function graph cut into ordered blocks (in reverse postorder)."""

    fg: FunctionGraph
    blocks: dict[str, Block]
    entry: str
    idom: dict[str, str]
    block_of: dict[int, str]  # node id -> block name
    early: dict[int, str] = field(default_factory=dict)
    late: dict[int, str] = field(default_factory=dict)
    dom_depth: dict[str, int] = field(default_factory=dict)
    owner: dict[int, str] = field(default_factory=dict)  # control node id -> block name

    def block_of_control(self, node: Node) -> str:
        """The block a control node belongs to (heads it, or ends it)."""
        return _block_of_control(node, self.owner)

    def table(self) -> list[tuple[str, str, str, str, int]]:
        """(node, early, late, chosen block, its loop depth) for every floating node."""
        rows = []
        for nid in sorted(self.early):
            node = self.fg.graph.nodes[nid]
            chosen = self.block_of[nid]
            rows.append((repr(node), self.early[nid], self.late.get(nid, chosen), chosen,
                         self.blocks[chosen].depth))
        return rows

    def order(self) -> list[Block]:
        return list(self.blocks.values())

    def moved(self) -> list[Node]:
        """Floating nodes placed above their latest block (hoisted, e.g. out of a loop)."""
        return [self.fg.graph.nodes[i] for i, b in self.block_of.items()
                if i in self.late and b != self.late[i]]


def _next_control(node: Node) -> Node | None:
    """The one control node after a non-branching control node (None at an exit)."""
    for u in node.outputs:
        if u.is_control and not isinstance(u, (Proj, Never, Stop)) \
                and (isinstance(u, Region) or u.inputs[0] is node):
            return u
    return None


def _build_blocks(fg: FunctionGraph) -> tuple[dict[str, Block], dict[int, str], str]:
    blocks: dict[str, Block] = {}
    owner: dict[int, str] = {}  # control node id -> block
    start_ctrl = next(u for u in fg.start.outputs if isinstance(u, Proj) and u.index == 0)
    heads = [start_ctrl]
    seen: set[int] = set()
    while heads:
        head = heads.pop()
        if head.id in seen:
            continue
        seen.add(head.id)
        block = Block(f"b{head.id}", head)
        blocks[block.name] = block
        owner[head.id] = block.name
        node = head
        while True:
            nxt = _next_control(node)
            if nxt is None:
                break
            if isinstance(nxt, Region):
                block.falls_into = nxt
                heads.append(nxt)
                break
            owner[nxt.id] = block.name
            block.end = nxt
            if isinstance(nxt, (If, Call)):
                projs = sorted((u for u in nxt.outputs if isinstance(u, Proj) and u.is_control),
                               key=lambda p: p.index)
                heads.extend(reversed(projs))
                break
            if isinstance(nxt, (Return, Throw, Trap)):
                break
            node = nxt
    entry = owner[start_ctrl.id]
    for block in blocks.values():
        if block.falls_into is not None:
            block.succs = [owner[block.falls_into.id]]
        elif isinstance(block.end, (If, Call)):
            block.succs = [owner[u.id] for u in sorted(
                (u for u in block.end.outputs if isinstance(u, Proj) and u.is_control),
                key=lambda p: p.index)]
    return blocks, owner, entry


def _loop_depths(blocks: dict[str, Block], idom: dict[str, str]) -> None:
    """Loop depth from natural loops: an edge ``t -> h`` where ``h`` dominates ``t`` is a
    back edge; its loop is ``h`` plus every block that reaches ``t`` without passing
    ``h``. (Graphs from Tiny mark loop heads with Loop nodes; graphs from Bril only have
    Regions, so the CFG decides.)"""
    preds = predecessors({n: b.succs for n, b in blocks.items()})

    def dominates(a: str, b: str) -> bool:
        while True:
            if a == b:
                return True
            if b not in idom or idom[b] == b:
                return False
            b = idom[b]

    for head in blocks:
        tails = [t for t in preds.get(head, []) if dominates(head, t)]
        if not tails:
            continue
        body = {head}
        work = list(tails)
        while work:
            b = work.pop()
            if b in body:
                continue
            body.add(b)
            work.extend(preds.get(b, []))
        for b in body:
            blocks[b].depth += 1


def _call_successor(proj: Proj, owner: dict[int, str]) -> str:
    call = proj.inputs[0]
    wanted = 3 if proj.index == 4 else 0
    for u in call.outputs:
        if isinstance(u, Proj) and u.is_control and u.index == wanted:
            return owner[u.id]
    return owner[call.id]


def _block_of_control(node: Node, owner: dict[int, str]) -> str:
    while node.id not in owner:  # a projection of a branch heads its own block
        node = node.inputs[0]
    return owner[node.id]


def schedule(fg: FunctionGraph) -> Schedule:
    """Place every node of ``fg`` in a block (Click's global code motion)."""
    blocks, owner, entry = _build_blocks(fg)
    succs = {n: b.succs for n, b in blocks.items()}
    # reverse postorder of a walk that takes the *last* successor first: a branch's true
    # side then comes before its false side, and a loop's body before its exit -- the
    # order the source text has, which layout keeps where it has no better reason
    order = list(reversed(postorder({n: s[::-1] for n, s in succs.items()}, entry)))
    blocks = {n: blocks[n] for n in order}
    preds = predecessors(succs)
    for name, block in blocks.items():
        block.preds = preds.get(name, [])
    idom = immediate_dominators(succs, entry)
    tree = dominator_tree(idom)
    dom_depth = {entry: 0}
    work = [entry]
    while work:
        b = work.pop()
        for c in tree.get(b, []):
            dom_depth[c] = dom_depth[b] + 1
            work.append(c)
    _loop_depths(blocks, idom)

    nodes = [n for n in fg.nodes() if not n.is_control]
    fixed: dict[int, str] = {}
    for n in nodes:
        if isinstance(n, Phi):
            fixed[n.id] = owner[n.inputs[0].id]
        elif n.is_pinned():
            fixed[n.id] = _block_of_control(n.inputs[0], owner)
        elif isinstance(n, Proj) and isinstance(n.inputs[0], Start):
            fixed[n.id] = entry
        elif isinstance(n, Proj) and isinstance(n.inputs[0], Call):
            # the result exists after the call, the thrown value in the handler: they
            # belong to the block where control continues on that path
            fixed[n.id] = _call_successor(n, owner)
    # Start itself and its data projections live in the entry block
    fixed[fg.start.id] = entry

    def block_of_input(x: Node) -> str:
        if x.id in fixed:
            return fixed[x.id]
        if x.id in early:
            return early[x.id]
        return _block_of_control(x, owner) if x.is_control else entry

    # schedule early: inputs first (iterative post-order over inputs)
    early: dict[int, str] = {}
    for root in nodes:
        stack = [(root, False)]
        while stack:
            n, ready = stack.pop()
            if n.id in early or n.id in fixed or n.is_control:
                continue
            inputs = [x for x in n.inputs[1:] if x is not None]
            if isinstance(n, Proj) or n.inputs[0] is not None:
                inputs = [x for x in n.inputs if x is not None]
            if not ready:
                stack.append((n, True))
                stack.extend((x, False) for x in inputs
                             if x.id not in early and x.id not in fixed and not x.is_control)
                continue
            best = entry
            for x in inputs:
                b = block_of_input(x)
                if dom_depth[b] > dom_depth[best]:
                    best = b
            early[n.id] = best

    def lca(a: str | None, b: str) -> str:
        return dominator_lca(a, b, idom, dom_depth)

    # schedule late: uses first (reverse topological order of the floating nodes)
    late: dict[int, str] = {}
    placed: dict[int, str] = dict(fixed)
    floating = [n for n in nodes if n.id in early]
    topo = _topological(floating)
    for n in reversed(topo):
        use_block: str | None = None
        for u in n.outputs:
            if isinstance(u, Phi):
                region = u.inputs[0]
                for i, v in enumerate(u.inputs):
                    if v is n and i > 0:
                        use_block = lca(use_block, _block_of_control(region.inputs[i], owner))
                continue
            if u.is_control:
                ub = _block_of_control(u, owner)
            else:
                ub = placed.get(u.id)
                if ub is None:
                    continue  # a dead user
            use_block = lca(use_block, ub)
        if use_block is None:
            use_block = early[n.id]
        late[n.id] = use_block
        try:
            placed[n.id] = pick_block(early[n.id], use_block, idom,
                                      {k: b.depth for k, b in blocks.items()})
        except ValueError:
            raise VerifyError("schedule: early dominates late", repr(n),
                              f"early {early[n.id]}, late {use_block}") from None

    sched = Schedule(fg, blocks, entry, idom, placed, early, late, dom_depth, owner)
    for n in nodes:
        if n.id in placed and not isinstance(n, Start):
            blocks[placed[n.id]].nodes.append(n)
    for block in blocks.values():
        block.nodes = _local_order(block)
    return sched


def dominator_lca(a: str | None, b: str, idom: dict[str, str],
                  dom_depth: dict[str, int]) -> str:
    """The deepest block dominating both ``a`` and ``b`` (``a`` None: just ``b``)."""
    if a is None:
        return b
    while dom_depth[a] > dom_depth[b]:
        a = idom[a]
    while dom_depth[b] > dom_depth[a]:
        b = idom[b]
    while a != b:
        a, b = idom[a], idom[b]
    return a


def pick_block(early: str, late: str, idom: dict[str, str], loop_depth: dict[str, int]
               ) -> str:
    """Walk the dominator tree from ``late`` up to ``early``; the block with the smallest
    loop depth wins, the latest one on ties. ValueError if ``early`` is not above."""
    best = b = late
    while b != early:
        if idom.get(b, b) == b:
            raise ValueError(f"{early} does not dominate {late}")
        b = idom[b]
        if loop_depth[b] < loop_depth[best]:
            best = b
    return best


def _topological(nodes: list[Node]) -> list[Node]:
    """Inputs before users, among ``nodes``."""
    return dependency_order(nodes, lambda n: n.inputs)


def _local_order(block: Block) -> list[Node]:
    """Phis first; then data and memory order (loads before a store that overwrites
    their memory); ties by id, i.e. by program order."""
    phis = sorted((n for n in block.nodes if isinstance(n, Phi)), key=lambda n: n.id)
    rest = [n for n in block.nodes if not isinstance(n, Phi)]
    loads_before = anti_dependences(rest)
    return phis + dependency_order(rest, lambda n: [*n.inputs, *loads_before(n)])
