"""Strongly connected components (``ssa_course.quads.components``): checked against
reachability computed the slow way on generated graphs, and on the graphs that use them."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ssa_course.quads.components import components


def _reach(graph: dict[int, list[int]], start: int) -> set[int]:
    seen, work = {start}, [start]
    while work:
        for w in graph[work.pop()]:
            if w not in seen:
                seen.add(w)
                work.append(w)
    return seen


@st.composite
def _graphs(draw) -> dict[int, list[int]]:
    n = draw(st.integers(1, 12))
    return {v: draw(st.lists(st.integers(0, n - 1), max_size=4)) for v in range(n)}


@settings(max_examples=200, deadline=None)
@given(_graphs())
def test_components_are_mutual_reachability_in_reverse_topological_order(graph):
    found = components(graph, graph.__getitem__)
    where = {v: k for k, comp in enumerate(found) for v in comp}
    assert sorted(where) == sorted(graph) and sum(map(len, found)) == len(graph)
    reach = {v: _reach(graph, v) for v in graph}
    for v in graph:
        for w in graph:
            same = w in reach[v] and v in reach[w]
            assert (where[v] == where[w]) == same
            if w in reach[v]:  # what v reaches finished no later than v's component
                assert where[w] <= where[v]


def test_a_long_chain_needs_no_recursion():
    n = 50_000  # deeper than Python's recursion limit
    chain = {v: [v + 1] if v + 1 < n else [] for v in range(n)}
    found = components(chain, chain.__getitem__)
    assert [c[0] for c in found] == list(range(n - 1, -1, -1))
    loop = {v: [(v + 1) % n] for v in range(n)}
    assert len(components(loop, loop.__getitem__)) == 1
