"""Dominators, the dominator tree and dominance frontiers (Cooper, Harvey & Kennedy).

Block ``d`` *dominates* ``n`` when every path from the entry to ``n`` passes through
``d``. The iterative algorithm keeps, for each block, a guess of its immediate dominator
and refines it in reverse postorder: a block's idom is the nearest common ancestor
(``intersect``) of its processed predecessors' idoms. Why it converges: each guess only
moves *up* the current tree, the tree is finite, and the loop stops when a whole pass
changes nothing -- with reverse postorder that is usually two or three passes.

Everything works on plain ``succs`` dictionaries (node -> list of successors), so the same
code serves quads CFGs, IRCode and the sea of nodes. Unreachable nodes have no dominator
and are left out.

This is the lesson's algorithm. Its ``intersect`` walks up the tree, so a join with
thousands of predecessors at different depths (a long else-if chain) costs time quadratic
in the program; the stages use :mod:`ssa_course.quads.domtree` instead (re-exported here),
which gives the same answers in linear time and answers "does a dominate b" in O(1).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ssa_course.quads.domtree import Dominance, N, Node, fast_immediate_dominators

__all__ = [
    "Dominance", "Node", "dominance_frontiers", "dominates", "dominator_tree",
    "fast_immediate_dominators", "immediate_dominators", "iterated_frontier", "postorder",
    "predecessors", "preorder",
]


def postorder(succs: Mapping[N, Sequence[N]], entry: N) -> list[N]:
    """Depth-first postorder of the nodes reachable from ``entry`` (explicit stack)."""
    order: list[N] = []
    seen = {entry}
    # (node, index of the next successor to visit): the frames a recursive DFS would
    # keep on Python's stack, which a long chain of blocks would overflow
    stack: list[tuple[N, int]] = [(entry, 0)]
    while stack:
        node, i = stack[-1]
        kids = succs.get(node, ())
        if i < len(kids):
            # descend into the next unseen successor; come back for the rest later
            stack[-1] = (node, i + 1)
            kid = kids[i]
            if kid not in seen:
                seen.add(kid)
                stack.append((kid, 0))
        else:
            # every successor done: the node finishes, after all it reaches
            stack.pop()
            order.append(node)
    return order


def predecessors(succs: Mapping[N, Sequence[N]]) -> dict[N, list[N]]:
    preds: dict[N, list[N]] = {n: [] for n in succs}
    for n, kids in succs.items():
        for k in kids:
            preds.setdefault(k, []).append(n)
    return preds


def immediate_dominators(succs: Mapping[N, Sequence[N]], entry: N,
                         stats: dict[str, int] | None = None) -> dict[N, N]:
    """``idom[n]`` for every node reachable from ``entry`` (``idom[entry] == entry``).

    ``stats``, when given, receives ``passes``: how many sweeps the fixpoint took.
    """
    # Cooper, Harvey and Kennedy's "simple, fast dominance algorithm": iterate
    # idom(n) = the common ancestor, in the tree built so far, of n's processed
    # predecessors, in reverse postorder, until nothing changes (two or three sweeps).
    post = postorder(succs, entry)
    number = {n: i for i, n in enumerate(post)}  # postorder numbers: entry is highest
    preds = predecessors(succs)
    idom: dict[N, N] = {entry: entry}

    def intersect(a: N, b: N) -> N:
        # walk the two "fingers" up the tree (towards higher numbers, the entry) until
        # they meet: that node dominates both
        while a != b:
            while number[a] < number[b]:
                a = idom[a]
            while number[b] < number[a]:
                b = idom[b]
        return a

    passes = 0
    changed = True
    while changed:
        changed = False
        passes += 1
        for node in reversed(post):  # reverse postorder
            if node == entry:
                continue
            # a back edge's source may not be processed yet in the first sweep: the
            # predecessors that are give a first answer, later sweeps refine it
            new = None
            for p in preds.get(node, ()):
                if p in idom:  # processed (and reachable)
                    new = p if new is None else intersect(p, new)
            if new is not None and idom.get(node) != new:
                idom[node] = new
                changed = True
    if stats is not None:
        stats["passes"] = passes
    return idom


def dominator_tree(idom: Mapping[N, N]) -> dict[N, list[N]]:
    """Children lists of the dominator tree (in the order nodes appear in ``idom``)."""
    tree: dict[N, list[N]] = {n: [] for n in idom}
    for n, d in idom.items():
        if n != d:  # (the entry is its own idom: the root, nobody's child)
            tree[d].append(n)
    return tree


def dominates(idom: Mapping[N, N], a: N, b: N) -> bool:
    """Does ``a`` dominate ``b``? (Walks up from ``b``; every node dominates itself.)

    One query costs the depth of ``b``: for many queries build a
    :class:`~ssa_course.quads.domtree.Dominance`, whose ``dominates`` is O(1)."""
    while True:
        if a == b:
            return True
        parent = idom[b]
        if parent == b:
            return False
        b = parent


def dominance_frontiers(succs: Mapping[N, Sequence[N]],
                        idom: Mapping[N, N]) -> dict[N, set[N]]:
    """``DF[n]``: where ``n``'s dominance stops -- join points reached from ``n``'s region.

    For each join point (two or more reachable predecessors, or the entry with any), walk
    up from each predecessor to the join's idom; every node passed has the join in its
    frontier.
    """
    preds = predecessors(succs)
    entry = next((n for n, d in idom.items() if n == d), None)
    df: dict[N, set[N]] = {n: set() for n in idom}
    for node in idom:
        ps = [p for p in preds.get(node, ()) if p in idom]
        # The entry is a join too: control also arrives from outside the function.
        if len(ps) < 2 and node != entry:
            continue
        stop = idom[node] if node != entry else None
        for p in ps:
            runner = p
            while runner != stop:
                if node in df[runner]:
                    # An earlier predecessor's walk passed here and went on up to ``stop``:
                    # the rest of this walk is done (what keeps the whole loop linear).
                    break
                df[runner].add(node)
                if runner == entry:
                    break
                runner = idom[runner]
    return df


def iterated_frontier(df: Mapping[N, set[N]], nodes: set[N]) -> set[N]:
    """DF+ of a set of nodes: the frontier, then the frontier of that, to a fixpoint."""
    # a phi placed at a frontier node is itself a definition: its frontier needs
    # phis too (Cytron et al.), so the worklist takes in every node it adds
    result: set[N] = set()
    work = list(nodes)
    while work:
        n = work.pop()
        for f in df.get(n, ()):
            if f not in result:
                result.add(f)
                work.append(f)
    return result


def preorder(tree: Mapping[N, Sequence[N]], root: N) -> list[N]:
    """Nodes of a tree in preorder (explicit stack)."""
    out: list[N] = []
    stack = [root]
    while stack:
        n = stack.pop()
        out.append(n)
        # reversed, so the first child is popped (visited) first
        stack.extend(reversed(tree.get(n, ())))
    return out
