"""Copy coalescing's class merging (``quads.coalesce.merge_classes``) against the plain
version that copies both sets on every merge: same renaming, and ``adj`` left untouched."""

from __future__ import annotations

import copy
import random

import pytest

from ssa_course.quads.coalesce import merge_classes


def reference(pairs, adj, rank):
    parent: dict[str, str] = {}

    def find(v):
        while parent.get(v, v) != v:
            v = parent[v]
        return v

    members: dict = {}
    near: dict = {}
    label: dict = {}
    for d, s in pairs:
        rd, rs = find(d), find(s)
        if rd == rs:
            continue
        md, ms = members.get(rd, {rd}), members.get(rs, {rs})
        nd, ns = near.get(rd, adj[rd]), near.get(rs, adj[rs])
        if nd & ms or ns & md:
            continue
        name_d, name_s = label.get(rd, rd), label.get(rs, rs)
        if rank(name_d) == 2 and rank(name_s) == 2:
            continue
        parent[rs] = rd
        members[rd] = md | ms
        near[rd] = nd | ns
        label[rd] = name_s if rank(name_s) > rank(name_d) else name_d
    out = {}
    for v in adj:
        name = label.get(find(v), find(v))
        if name != v:
            out[v] = name
    return out


@pytest.mark.parametrize("seed", range(300))
def test_same_renaming_as_the_copying_version(seed):
    rng = random.Random(seed)
    names = [f"v{i}" for i in range(rng.randint(2, 30))]
    adj: dict[str, set[str]] = {v: set() for v in names}
    for _ in range(rng.randint(0, 40)):
        a, b = rng.sample(names, 2)
        adj[a].add(b)
        adj[b].add(a)
    pairs = [tuple(rng.sample(names, 2)) for _ in range(rng.randint(1, 60))]
    ranks = {v: rng.choice([0, 0, 1, 2]) for v in names}
    before = copy.deepcopy(adj)
    assert merge_classes(pairs, adj, ranks.__getitem__) == \
        reference(pairs, before, ranks.__getitem__)
    assert adj == before  # the interference sets are the caller's: never changed


def test_one_class_growing_by_thousands_of_copies():
    # y = y.1, y = y.2, ...: a class that keeps growing (was quadratic), no interference
    names = ["y"] + [f"y.{i}" for i in range(1, 5001)]
    adj = {v: set() for v in names}
    rename = merge_classes([("y", v) for v in names[1:]], adj, lambda v: 0)
    assert rename == {v: "y" for v in names[1:]}
