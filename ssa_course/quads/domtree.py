"""Dominators in linear time, and O(1) dominance queries, for the stages.

:func:`fast_immediate_dominators` gives exactly the dictionary of
:func:`~ssa_course.ssa.dom.immediate_dominators` (the lesson's) (same keys, same values, same order:
the entry, then reverse postorder), computed with the Semi-NCA algorithm (Georgiadis;
the one LLVM and Julia use): semidominators by Lengauer and Tarjan's link/eval with path
compression, then each idom as the nearest ancestor of the DFS parent whose number is at
most the semidominator. Cooper, Harvey and Kennedy's ``intersect`` instead walks up the
tree once per predecessor, which is quadratic on a join of a long else-if chain.

:class:`Dominance` numbers the dominator tree in DFS pre/post order, so "does ``a``
dominate ``b``" is two comparisons instead of a walk up the idom chain (the SSA verifiers
ask it once per use).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Generic, TypeVar

Node = Hashable
# A graph's node: a block label, an IRCode block number, a sea-of-nodes node. The functions
# below are generic in it, so a caller's ``dict[str, list[str]]`` gives back ``str`` nodes.
N = TypeVar("N", bound=Hashable)


def _dfs(succs: Mapping[N, Sequence[N]], entry: N
         ) -> tuple[list[N], list[int], list[N], dict[N, int]]:
    """One depth-first search from ``entry`` (successors in order, as
    :func:`ssa_course.ssa.dom.postorder` does): the nodes in preorder, each one's DFS parent
    (by preorder number), the nodes in postorder, and each node's preorder number."""
    order: list[N] = [entry]
    parent: list[int] = [0]
    post: list[N] = []
    number = {entry: 0}
    stack = [(0, iter(succs.get(entry, ())))]
    while stack:
        at, kids = stack[-1]
        for kid in kids:
            if kid not in number:
                number[kid] = len(order)
                order.append(kid)
                parent.append(at)
                stack.append((number[kid], iter(succs.get(kid, ()))))
                break
        else:
            stack.pop()
            post.append(order[at])
    return order, parent, post, number


def fast_immediate_dominators(succs: Mapping[N, Sequence[N]], entry: N
                              ) -> dict[N, N]:
    """``idom[n]`` for every node reachable from ``entry`` (``idom[entry] == entry``),
    in O(E log V) (near-linear in practice), in the order of ``immediate_dominators``."""
    order, parent, post, number = _dfs(succs, entry)
    count = len(order)
    preds: list[list[int]] = [[] for _ in range(count)]
    for i, node in enumerate(order):
        for kid in succs.get(node, ()):
            preds[number[kid]].append(i)
    semi = list(range(count))
    label = list(range(count))
    ancestor = [-1] * count  # the link/eval forest; -1: a root

    def evaluate(v: int) -> int:
        """The node of least semidominator on ``v``'s forest path (path compression)."""
        if ancestor[v] == -1:
            return v
        path = []
        x = v
        while ancestor[ancestor[x]] != -1:
            path.append(x)
            x = ancestor[x]
        for x in reversed(path):  # top down: each ancestor is already compressed
            a = ancestor[x]
            if semi[label[a]] < semi[label[x]]:
                label[x] = label[a]
            ancestor[x] = ancestor[a]
        return label[v]

    for w in range(count - 1, 0, -1):
        for v in preds[w]:
            # (a predecessor numbered after w is linked already; one before it is still a
            # root of the forest, its own answer: no call)
            u = evaluate(v) if ancestor[v] != -1 else v
            if semi[u] < semi[w]:
                semi[w] = semi[u]
        ancestor[w] = parent[w]
    idom = parent[:]
    for w in range(1, count):
        x = idom[w]
        while x > semi[w]:
            x = idom[x]
        idom[w] = x
    result = {entry: entry}
    for node in reversed(post):
        if node != entry:
            result[node] = order[idom[number[node]]]
    return result


def tree_children(idom: Mapping[N, N]) -> dict[N, list[N]]:
    """The dominator tree's children of every node, in ``idom``'s order (for a walk down
    the tree that needs no dominance query: :class:`Dominance` numbers it for those)."""
    children: dict[N, list[N]] = {n: [] for n in idom}
    for n, d in idom.items():
        if n != d:
            children[d].append(n)
    return children


class Dominance(Generic[N]):
    """The dominator tree of a graph with pre/post numbers: O(1) dominance queries.

    ``idom`` is :func:`fast_immediate_dominators`; ``children`` the tree; ``pre``/``post``
    the tree's DFS entry/exit numbers, so ``a`` dominates ``b`` exactly when ``a``'s
    interval encloses ``b``'s.
    """

    __slots__ = ("succs", "entry", "idom", "children", "pre", "post")

    def __init__(self, succs: Mapping[N, Sequence[N]], entry: N):
        self.succs = succs
        self.entry = entry
        self.idom = fast_immediate_dominators(succs, entry)
        self.children = tree_children(self.idom)
        self.pre: dict[N, int] = {}
        self.post: dict[N, int] = {}
        clock = 0
        stack = [(entry, iter(self.children[entry]))]
        self.pre[entry] = clock
        while stack:
            node, kids = stack[-1]
            kid = next(kids, None)
            if kid is None:
                stack.pop()
                clock += 1
                self.post[node] = clock
                continue
            clock += 1
            self.pre[kid] = clock
            stack.append((kid, iter(self.children[kid])))

    def __contains__(self, node: N) -> bool:
        """Is ``node`` reachable from the entry (does it have a dominator)?"""
        return node in self.pre

    def dominates(self, a: N, b: N) -> bool:
        """Does ``a`` dominate ``b``? (Both reachable; every node dominates itself.)"""
        return self.pre[a] <= self.pre[b] and self.post[b] <= self.post[a]

    def preorder(self) -> list[N]:
        """The reachable nodes in dominator-tree preorder (parents before children)."""
        return sorted(self.pre, key=self.pre.__getitem__)
