"""Strongly connected components of a directed graph (Tarjan 1972), on an explicit stack.

One implementation for every graph that needs them: the call graph (a function on a
cycle is recursive: :mod:`ssa_course.quads.call_depth`) and a function's CFG (an edge's
facts are kept only where a later test may read them: :mod:`ssa_course.quads.thread`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TypeVar

N = TypeVar("N", bound=Hashable)


def components(nodes: Iterable[N], succs: Callable[[N], Sequence[N]]) -> list[list[N]]:
    """The strongly connected components of the graph, in the order Tarjan's algorithm
    finishes them: a component comes after every component reachable from it (so
    *reverse* topological order). Linear in nodes and edges; no recursion (a 10,000-block
    CFG is as deep as it is long)."""
    index: dict[N, int] = {}
    low: dict[N, int] = {}
    on_stack: set[N] = set()
    stack: list[N] = []
    found: list[list[N]] = []
    for start in nodes:
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            v, k = work.pop()
            if k == 0:
                index[v] = low[v] = len(index)
                stack.append(v)
                on_stack.add(v)
            out = succs(v)
            if k < len(out):
                work.append((v, k + 1))
                w = out[k]
                if w not in index:
                    work.append((w, 0))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            for w in out:  # children done: take their low links
                if w in on_stack:
                    low[v] = min(low[v], low[w])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                found.append(component)
    return found
