"""Global code motion: from the sea of nodes back to basic blocks (lesson 08).

Click's algorithm on one function graph, as six phases (each a function below, each
linear in the size of the graph or close to it, each shown in lesson 08):

1. :func:`blocks_from_control` -- control nodes become a CFG: a block starts at Start's
   control, a Region or Loop, or a projection of an If or a Call, and ends at the If,
   Call, Return, Throw or Trap that follows (or falls into the next Region).
2. :func:`dominators_and_loops` -- the dominator tree of that CFG (lesson 03), numbered
   once by a depth-first walk so that "does ``a`` dominate ``b``?" is two comparisons,
   and each block's loop depth (the natural loops around it). Phases 1 and 2 live in
   :mod:`~ssa_course.son.cfg_blocks`.
3. :func:`schedule_early` -- pinned nodes stay (Phis in their Region's block; loads,
   stores, prints, allocations and guarded divisions in the block of the control they
   hang on: nothing moves past a memory operation it depends on, nothing that can trap is
   hoisted above its test); every floating node goes to the deepest block among its
   inputs' blocks, the highest point where all its inputs exist.
4. :func:`schedule_late` -- the lowest common ancestor, in the dominator tree, of the
   blocks of its uses (a Phi uses its value at the end of the matching predecessor);
   users are placed first, so each node is placed as soon as its late block is known:
5. :func:`pick_block` -- the block between late and early (walking up the dominator tree)
   with the shallowest loop depth, latest on ties: loop-invariant code leaves the loop,
   and nothing is computed on a path that does not need it when it can be avoided.
6. :func:`local_order` -- each block: Phis, then the rest in an order their data and
   memory edges allow (a load before the store that overwrites its memory), each value
   just before its first use (:func:`just_in_time_order`), so no live range is longer
   than the block needs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ssa_course.errors import VerifyError
from ssa_course.runtime import paused_gc
from ssa_course.son.cfg_blocks import (  # phases 1 and 2, with what they make
    Block,
    Cfg,
    DomTree,
    _block_of_control,
    _loop_depths,
    blocks_from_control,
    dom_tree,
    dominators_and_loops,
)
from ssa_course.son.control import Call, Phi, Proj, Start
from ssa_course.son.graph import Node
from ssa_course.son.order import anti_dependences, dependency_order
from ssa_course.son.program import FunctionGraph


@dataclass
class Schedule:
    """A function graph cut into ordered blocks (in reverse postorder)."""

    fg: FunctionGraph
    blocks: dict[str, Block]
    entry: str
    idom: dict[str, str]
    block_of: dict[int, str]  # node id -> block name
    # early/late are kept for the lesson's table: the range each floating node could go in.
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


# ---------------------------------------------------------------- 3. schedule early


def pinned_blocks(fg: FunctionGraph, cfg: Cfg) -> dict[int, str]:
    """The blocks of the nodes that do not move: Phis, effects and guarded operations,
    Start and its projections, a Call's results (where control goes on after it)."""
    owner, entry = cfg.owner, cfg.entry
    fixed: dict[int, str] = {fg.start.id: entry}
    for n in fg.nodes():
        # Control nodes already are the CFG: they own or end their blocks (phase 1).
        if n.is_control:
            continue
        if isinstance(n, Phi):
            # A Phi is evaluated on entry to its merge: its block is its Region's.
            fixed[n.id] = owner[n.operand(0).id]
        elif n.is_pinned():
            # Pinned: the block of the control input it hangs on. This is what keeps a load after
            # the test that guards it and an effect on the path that runs it (Click: pinned nodes
            # are the schedule's fixed points; everything else floats between them).
            fixed[n.id] = _block_of_control(n.operand(0), owner)
        elif isinstance(n, Proj) and isinstance(n.inputs[0], Start):
            fixed[n.id] = entry
        elif isinstance(n, Proj) and isinstance(n.inputs[0], Call):
            # the result exists after the call, the thrown value in the handler: they
            # belong to the block where control continues on that path
            fixed[n.id] = _call_successor(n, owner)
    return fixed


def _call_successor(proj: Proj, owner: dict[int, str]) -> str:
    call = proj.operand(0)
    # The thrown value (4) goes with the exceptional control (3); the result and memory
    # (2, 1) with the normal one (0).
    wanted = 3 if proj.index == 4 else 0
    for u in call.outputs:
        if isinstance(u, Proj) and u.is_control and u.index == wanted:
            return owner[u.id]
    # No projection of that control (the path is dead): the call's own block.
    return owner[call.id]


def _data_inputs(n: Node) -> list[Node]:
    # A projection's input 0 is its source, and a pinned node's is its control: both count
    # as inputs. A floating node's input 0 is None and is skipped.
    if isinstance(n, Proj) or n.inputs[0] is not None:
        return [x for x in n.inputs if x is not None]
    return [x for x in n.inputs[1:] if x is not None]


def schedule_early(fg: FunctionGraph, cfg: Cfg, dom: DomTree,
                   fixed: dict[int, str]) -> dict[int, str]:
    """Phase 3: every floating node in the deepest block (in the dominator tree) among its
    inputs' blocks -- inputs first, by an iterative depth-first walk over inputs."""
    early: dict[int, str] = {}
    entry, owner, depth = cfg.entry, cfg.owner, dom.depth

    def block_of_input(x: Node) -> str:
        if x.id in fixed:
            return fixed[x.id]
        if x.id in early:
            return early[x.id]
        # Neither pinned nor placed by this walk: the entry, which dominates every block,
        # is always a legal answer.
        return _block_of_control(x, owner) if x.is_control else entry

    for root in fg.nodes():
        stack = [(root, False)]
        while stack:
            n, ready = stack.pop()
            if n.id in early or n.id in fixed or n.is_control:
                continue
            inputs = _data_inputs(n)
            # Post-order by hand (an explicit stack, no recursion: a deep expression would overflow
            # Python's stack): first the inputs, then the node, once all its inputs have a block.
            if not ready:
                stack.append((n, True))
                stack.extend((x, False) for x in inputs
                             if x.id not in early and x.id not in fixed and not x.is_control)
                continue
            best = entry
            for x in inputs:
                b = block_of_input(x)
                # The inputs' blocks all dominate this use (SSA), so they lie on one chain of the
                # dominator tree: the deepest is dominated by all the others and is the earliest
                # legal block.
                if depth[b] > depth[best]:
                    best = b
            early[n.id] = best
    return early


# ---------------------------------------------------------------- 4. schedule late


Picker = Callable[[str, str], str]


def schedule_late(fg: FunctionGraph, cfg: Cfg, dom: DomTree, fixed: dict[int, str],
                  early: dict[int, str], pick: Picker) -> tuple[dict[int, str], dict[int, str]]:
    """Phase 4: users before the nodes they use (reverse topological order), each
    floating node's *late* block is the dominator-tree LCA of its uses' blocks, and
    ``pick(early, late)`` (phase 5) places it at once, so its own inputs see where it
    went. Returns (late blocks, every node's block)."""
    late: dict[int, str] = {}
    placed: dict[int, str] = dict(fixed)
    owner = cfg.owner
    floating = [n for n in fg.nodes() if n.id in early]
    # Users first: a node's late block needs the final blocks of all its users.
    for n in reversed(dependency_order(floating, lambda m: m.inputs)):
        use_block: str | None = None
        for u in n.outputs:
            # A Phi reads input i at the end of its Region's i-th predecessor, not in its own block:
            # the value must be ready there (Click's rule for phi uses).
            if isinstance(u, Phi):
                region = u.operand(0)
                for i, v in enumerate(u.inputs):
                    if v is n and i > 0:
                        use_block = dom.lca(use_block,
                                            _block_of_control(region.operand(i), owner))
                continue
            ub: str | None
            if u.is_control:
                ub = _block_of_control(u, owner)
            else:
                ub = placed.get(u.id)
                if ub is None:
                    # A user that has no block is unreachable (swept later): it asks for nothing.
                    continue  # a dead user
            use_block = dom.lca(use_block, ub)
        if use_block is None:
            # No live user at all: keep it where it may first run.
            use_block = early[n.id]
        late[n.id] = use_block
        # Early must dominate late, or no block satisfies both the inputs and the uses: that
        # would be a broken graph, reported with the invariant's name.
        if not dom.dominates(early[n.id], use_block):
            raise VerifyError("schedule: early dominates late", repr(n),
                              f"early {early[n.id]}, late {use_block}")
        placed[n.id] = pick(early[n.id], use_block)
    return late, placed


# ---------------------------------------------------------------- 5. pick a block


def pick_block(early: str, late: str, idom: dict[str, str], loop_depth: dict[str, int]
               ) -> str:
    """Phase 5: walk the dominator tree from ``late`` up to ``early``; the block with the
    smallest loop depth wins, the latest one on ties. The walk stops at a block outside
    every loop (nothing above can beat it). ValueError if ``early`` is not above."""
    best = b = late
    # Every block on the way dominates ``late`` and is dominated by ``early``, so each is
    # a legal place; only the loop depth decides. Latest on ties (strict ``<``): the node
    # is not computed on paths that do not need it.
    while b != early and loop_depth[best] > 0:
        if idom.get(b, b) == b:
            raise ValueError(f"{early} does not dominate {late}")
        b = idom[b]
        if loop_depth[b] < loop_depth[best]:
            best = b
    return best


def dominator_lca(a: str | None, b: str, idom: dict[str, str],
                  dom_depth: dict[str, int]) -> str:
    """The deepest block dominating both ``a`` and ``b`` (``a`` None: just ``b``), by
    depths alone (the exercise's version; :meth:`DomTree.lca` is the scheduler's)."""
    if a is None:
        return b
    # Bring both to the same depth, then step both up until they meet.
    while dom_depth[a] > dom_depth[b]:
        a = idom[a]
    while dom_depth[b] > dom_depth[a]:
        b = idom[b]
    while a != b:
        a, b = idom[a], idom[b]
    return a


# ---------------------------------------------------------------- 6. local order


def local_order(block: Block) -> list[Node]:
    """Phase 6: Phis first; then data and memory order (loads before a store that
    overwrites their memory), each value computed just before its first use in the block:
    a depth-first walk from the nodes nothing in the block reads (roots by id, i.e. by
    program order), the input with the longest chain of inputs in the block first."""
    phis = sorted((n for n in block.nodes if isinstance(n, Phi)), key=lambda n: n.id)
    rest = [n for n in block.nodes if not isinstance(n, Phi)]
    # A load and a later store to the same memory have no edge between them (the store does
    # not read the load): the anti-dependence adds one, so the load is not moved after the
    # store that overwrites what it reads.
    loads_before = anti_dependences(rest)
    return phis + just_in_time_order(rest, lambda n: [*n.inputs, *loads_before(n)])


def just_in_time_order(members: list[Node],
                       waits_for: Callable[[Node], list[Node | None]]) -> list[Node]:
    """``members`` after what they ``wait_for``, each as late as its first user allows.

    Roots in id order (program order) would compute every value whose id is low -- all
    the ``n + k`` of a long straight-line ``main`` -- before the first of its users, and
    keep them all live to the end: a register pressure (and an interference graph) that
    grows with the square of the block. Walking from the roots (nodes nothing in the block
    reads: effects at the end of a memory chain, values the block's end or other blocks
    read) instead places each value just before the first node that needs it; among a
    node's inputs the one with the longest chain below it goes first (Sethi-Ullman's
    rule: the deeper operand first, so fewer values wait while it is computed). Linear in
    the members and their edges."""
    member_set = set(members)
    topo = dependency_order(members, waits_for)
    height: dict[Node, int] = {}
    deps: dict[Node, list[Node]] = {}
    read: set[Node] = set()
    for n in topo:
        ds = [d for d in waits_for(n) if d is not None and d in member_set]
        deps[n] = ds
        height[n] = 1 + max((height[d] for d in ds), default=0)
        read.update(ds)
    roots = sorted((n for n in members if n not in read), key=lambda n: n.id)
    out: list[Node] = []
    done: set[Node] = set()
    for root in roots:
        stack: list[tuple[Node, bool]] = [(root, False)]
        while stack:
            n, ready = stack.pop()
            if n in done:
                continue
            if ready:
                done.add(n)
                out.append(n)
                continue
            stack.append((n, True))
            # Pushed lowest first, so the highest (then the first operand) is popped first.
            todo = [(height[d], -i, d) for i, d in enumerate(deps[n]) if d not in done]
            todo.sort(key=lambda t: (t[0], t[1]))
            stack.extend((d, False) for _, _, d in todo)
    # Every member is a root or read by one in the block (no cycles inside a block).
    assert len(out) == len(members), "a cycle inside a block"
    return out


# ---------------------------------------------------------------- all six


def schedule(fg: FunctionGraph) -> Schedule:
    """Place every node of ``fg`` in a block (Click's global code motion)."""
    with paused_gc():  # the tables below all stay alive: nothing for the collector
        return _schedule(fg)


def _schedule(fg: FunctionGraph) -> Schedule:
    # The phases in order; each reads only what the earlier ones made (fixed, early, late).
    cfg = blocks_from_control(fg)
    dom = dominators_and_loops(cfg)
    fixed = pinned_blocks(fg, cfg)
    early = schedule_early(fg, cfg, dom, fixed)
    loop_depth = {k: b.depth for k, b in cfg.blocks.items()}
    late, placed = schedule_late(
        fg, cfg, dom, fixed, early,
        lambda e, lt: pick_block(e, lt, dom.idom, loop_depth))
    blocks = cfg.blocks
    for n in fg.nodes():
        # Control nodes are in their blocks already (heads and ends); data nodes are added here.
        if n.id in placed and not n.is_control and not isinstance(n, Start):
            blocks[placed[n.id]].nodes.append(n)
    for block in blocks.values():
        block.nodes = local_order(block)
    return Schedule(fg, blocks, cfg.entry, dom.idom, placed, early, late, dom.depth,
                    cfg.owner)


__all__ = [
    "Block", "Cfg", "DomTree", "Schedule", "_loop_depths", "blocks_from_control", "dom_tree",
    "dominator_lca", "dominators_and_loops", "just_in_time_order", "local_order", "pick_block",
    "pinned_blocks",
    "schedule", "schedule_early", "schedule_late",
]
