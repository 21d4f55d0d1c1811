"""Dominators, dominance frontiers: the lesson's code against networkx on random graphs."""

from __future__ import annotations

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from ssa_course.ssa.dom import (
    dominance_frontiers,
    dominates,
    dominator_tree,
    immediate_dominators,
    iterated_frontier,
)


@st.composite
def cfgs(draw):
    n = draw(st.integers(1, 14))
    succs = {i: [] for i in range(n)}
    for i in range(n):
        for j in draw(st.lists(st.integers(0, n - 1), max_size=3, unique=True)):
            succs[i].append(j)
    return succs


def to_nx(succs):
    g = nx.DiGraph()
    g.add_nodes_from(succs)
    g.add_edges_from((a, b) for a, kids in succs.items() for b in kids)
    return g


@settings(max_examples=2000, deadline=None)
@given(cfgs())
def test_idom_matches_networkx(succs):
    g = to_nx(succs)
    ours = {n: d for n, d in immediate_dominators(succs, 0).items() if n != 0}
    theirs = {n: d for n, d in nx.immediate_dominators(g, 0).items() if n != 0}
    assert ours == theirs


@settings(max_examples=2000, deadline=None)
@given(cfgs())
def test_frontiers_match_networkx(succs):
    g = to_nx(succs)
    idom = immediate_dominators(succs, 0)
    expected = {n: set(f) for n, f in nx.dominance_frontiers(g, 0).items()}
    assert dominance_frontiers(succs, idom) == expected


def test_diamond_and_loop():
    succs = {"a": ["b", "c"], "b": ["d"], "c": ["d"], "d": ["a", "e"], "e": []}
    idom = immediate_dominators(succs, "a")
    assert idom == {"a": "a", "b": "a", "c": "a", "d": "a", "e": "d"}
    df = dominance_frontiers(succs, idom)
    assert df["b"] == {"d"} and df["c"] == {"d"} and df["d"] == {"a"} and df["a"] == {"a"}
    assert iterated_frontier(df, {"b"}) == {"d", "a"}
    assert sorted(dominator_tree(idom)["a"]) == ["b", "c", "d"]
    assert dominates(idom, "a", "e") and not dominates(idom, "b", "d")


def test_convergence_takes_few_passes():
    stats: dict = {}
    chain = {i: [i + 1] for i in range(5000)}
    chain[5000] = [0]
    idom = immediate_dominators(chain, 0, stats)
    assert idom[5000] == 4999 and stats["passes"] <= 3
