"""Dominators, dominance frontiers: the lesson's code against networkx on random graphs."""

from __future__ import annotations

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from ssa_course.ssa.dom import (
    Dominance,
    dominance_frontiers,
    dominates,
    dominator_tree,
    fast_immediate_dominators,
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


# ---------------------------------------------------------------- the stages' fast version


def _walk_dominates(idom, a, b) -> bool:
    while True:
        if a == b:
            return True
        if idom[b] == b:
            return False
        b = idom[b]


@settings(max_examples=2000, deadline=None)
@given(cfgs())
def test_fast_idoms_equal_the_lessons_and_networkx(succs):
    lesson = immediate_dominators(succs, 0)
    fast = fast_immediate_dominators(succs, 0)
    assert list(fast.items()) == list(lesson.items())  # same order: renaming depends on it
    theirs = {n: d for n, d in nx.immediate_dominators(to_nx(succs), 0).items() if n != 0}
    assert {n: d for n, d in fast.items() if n != 0} == theirs


@settings(max_examples=1000, deadline=None)
@given(cfgs())
def test_interval_dominance_equals_walking_the_idom_chain(succs):
    dom = Dominance(succs, 0)
    for a in dom.idom:
        for b in dom.idom:
            assert dom.dominates(a, b) == _walk_dominates(dom.idom, a, b), (a, b)
    assert all((n in dom) == (n in dom.idom) for n in succs)
    assert dom.preorder()[0] == 0 and set(dom.preorder()) == set(dom.idom)


def test_fast_idoms_on_large_random_graphs_match_networkx():
    import random

    rng = random.Random(10)
    for n in (2_000, 20_000):
        succs = {i: [] for i in range(n)}
        for i in range(n):  # mostly forward edges (a program), some back edges (loops)
            succs[i] = [min(n - 1, i + 1 + rng.randrange(3))]
            if rng.random() < 0.3:
                succs[i].append(rng.randrange(n))
        theirs = nx.immediate_dominators(to_nx(succs), 0)
        fast = fast_immediate_dominators(succs, 0)
        assert {k: v for k, v in fast.items() if k} == {k: v for k, v in theirs.items() if k}
        dom = Dominance(succs, 0)
        for _ in range(2_000):
            a, b = rng.randrange(n), rng.randrange(n)
            if a in dom and b in dom:
                assert dom.dominates(a, b) == _walk_dominates(dom.idom, a, b)


def test_else_if_chain_join_with_many_predecessors():
    # The shape that makes Cooper-Harvey-Kennedy's intersect quadratic: every arm of a
    # 20,000-arm else-if chain jumps to one join. Answers, not time, are checked here.
    n = 20_000
    succs: dict = {("arm", i): ["join"] for i in range(n)}
    succs.update({("test", i): [("arm", i), ("test", i + 1)] for i in range(n)})
    succs[("test", n)] = ["join"]
    succs["join"] = []
    idom = fast_immediate_dominators(succs, ("test", 0))
    assert idom["join"] == ("test", 0) and idom[("arm", 7)] == ("test", 7)
    assert idom[("test", n)] == ("test", n - 1)
    df = dominance_frontiers(succs, idom)
    assert all(df[("test", i)] == {"join"} for i in range(1, n + 1))
    assert df[("test", 0)] == set() and df[("arm", 5)] == {"join"}
