"""Regenerates the setup and graded cells of solutions/03-*.ipynb (see build.py)."""
# ruff: noqa: E402, E501 - cell templates keep the notebooks' style; imports follow setup
from common import listing, load, run, save, setsrc, sset

NAME = "03-ssa.ipynb"
nb = load(NAME)

SETUP = r'''
import random
import networkx
import ssa_course
from ssa_course.grading import check_against
from ssa_course.grading.forbid import guard
from ssa_course.quads.cfg import build_cfg
from ssa_course.ssa.dom import immediate_dominators
from ssa_course.viz.dot import GraphEdge, GraphNode, graph_drawing

def lesson_cfgs():
    srcs = [
        "fn main(n: int) { var i = 0; while (i < n) { i = i + 1; } print(i); }",
        "fn main(n: int) { if (n > 0) { print(1); } else { print(2); } print(3); }",
        "fn main(n: int) { var s = 0; for (var i = 0; i < n; i = i + 1) { if (i % 2 == 0) { continue; } s = s + i; } print(s); }",
        "fn main(a: int, b: int) { if (a > 0 && b > 0 || a == b) { print(1); } }",
    ]
    out = []
    for src in srcs:
        cfg = build_cfg(ssa_course.compile(src).quads.functions["main"])
        out.append(({n: list(b.succs) for n, b in cfg.blocks.items()}, cfg.entry))
    return out

def random_cfgs(count, seed):
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        n = rng.randint(1, 9)
        succs = {f"b{i}": sorted({f"b{rng.randrange(n)}" for _ in range(rng.randint(0, 2))})
                 for i in range(n)}
        out.append((succs, "b0"))
    return out

def draw_cfg(case):
    succs, entry = case[0], case[1]
    return graph_drawing([GraphNode(n, header=n, shape="box", emphasis=n == entry) for n in succs],
                         [GraphEdge(a, b) for a, bs in succs.items() for b in bs])

def describe_cfg(case):
    succs, entry = case[0], case[1]
    return f"entry {entry}, successors {succs}"
'''

T1 = r'''
# Checks frontiers() on the lesson's CFGs and small random ones; answers written out below.
_frontiers = guard(frontiers, forbid=[ssa_course, networkx])
# (successors, entry, expected dominance frontiers)
%s
check_against(lambda c: _frontiers(c[0], immediate_dominators(c[0], c[1])), lambda c: c[2],
              FRONTIER_CASES, describe=describe_cfg, draw=draw_cfg,
              size=lambda c: sum(map(len, c[0].values())) + len(c[0]), what="frontiers")
### BEGIN HIDDEN TESTS
def _hidden():
    from ssa_course.ssa.dom import dominance_frontiers
    cases = random_cfgs(300, 2)
    for succs, entry in cases[:60]:   # the reference itself agrees with networkx
        g = networkx.DiGraph([(a, b) for a, bs in succs.items() for b in bs])
        g.add_nodes_from(succs)
        assert {n: set(f) for n, f in networkx.dominance_frontiers(g, entry).items()} == \
            dominance_frontiers(succs, immediate_dominators(succs, entry))
    check_against(lambda c: _frontiers(c[0], immediate_dominators(*c)),
                  lambda c: dominance_frontiers(c[0], immediate_dominators(*c)), cases,
                  describe=describe_cfg, draw=draw_cfg,
                  size=lambda c: sum(map(len, c[0].values())) + len(c[0]), what="frontiers")

_hidden()
### END HIDDEN TESTS
'''

T2 = r'''
# Checks phi_blocks() on frontiers of the lesson's CFGs and random ones; answers below.
_phi_blocks = guard(phi_blocks, forbid=[ssa_course, networkx])
# (dominance frontiers, blocks assigning the variable, expected phi blocks)
%s
check_against(lambda c: _phi_blocks({b: set(f) for b, f in c[0].items()}, set(c[1])),
              lambda c: c[2], PHI_CASES,
              describe=lambda c: f"frontiers {c[0]}; defined in {sorted(c[1])}",
              size=lambda c: len(c[0]), what="phi blocks")
### BEGIN HIDDEN TESTS
def _hidden():
    from ssa_course.ssa.dom import dominance_frontiers, iterated_frontier
    rng = random.Random(4)
    cases = []
    for succs, entry in lesson_cfgs() + random_cfgs(200, 4):
        idom = immediate_dominators(succs, entry)
        defs = frozenset(rng.sample(sorted(idom), k=min(len(idom), rng.randint(1, 3))))
        cases.append((dominance_frontiers(succs, idom), defs, succs, entry))
    check_against(lambda c: _phi_blocks(c[0], set(c[1])), lambda c: iterated_frontier(c[0], set(c[1])),
                  cases, describe=lambda c: f"{describe_cfg(c[2:])}; defined in {sorted(c[1])}",
                  draw=lambda c: draw_cfg(c[2:]), size=lambda c: len(c[0]), what="phi blocks")

_hidden()
### END HIDDEN TESTS
'''

T3 = r'''
# Checks sequentialize_copies() by running its copies one by one (no expected answers
# needed: the values after the copies must equal those of the parallel copy).
_sequentialize = guard(sequentialize_copies, forbid=[ssa_course])

def _parallel(copies):
    env = {v: i for i, v in enumerate("abcdefgh")}
    new = dict(env)
    for d, s in copies:
        new[d] = env[s]
    return {v: new[v] for v in "abcdefgh"}

def _sequential(seq):
    env = {v: i for i, v in enumerate("abcdefgh")}
    for d, s in seq:
        if s not in env:
            raise AssertionError(f"the copy {(d, s)} reads {s!r} before anything is written to it")
        env[d] = env[s]
    return {v: env[v] for v in "abcdefgh"}

def _copy_cases(seed, count):
    rng = random.Random(seed)
    out = [[("a", "b"), ("b", "a")], [("a", "b"), ("b", "c"), ("c", "a")], [("a", "a")]]
    for _ in range(count):
        dsts = rng.sample("abcdefgh", rng.randint(1, 6))
        out.append([(d, rng.choice("abcdefgh")) for d in dsts])
    return out

check_against(lambda c: _sequential(_sequentialize(list(c))), _parallel,
              _copy_cases(5, 200), describe=lambda c: f"parallel copies {c}", size=len,
              what="values after the copies")
### BEGIN HIDDEN TESTS
check_against(lambda c: _sequential(_sequentialize(list(c))), _parallel,
              _copy_cases(6, 400), describe=lambda c: f"parallel copies {c}", size=len,
              what="values after the copies")
### END HIDDEN TESTS
'''

ns = {}
run(ns, SETUP)
from ssa_course.ssa.dom import dominance_frontiers, immediate_dominators, iterated_frontier

cases = ns["lesson_cfgs"]() + ns["random_cfgs"](14, 1)
rows = [(s, e, dominance_frontiers(s, immediate_dominators(s, e))) for s, e in cases]
def fdict(d):
    return "{" + ", ".join(f"{k!r}: {sset(v)}" for k, v in d.items()) + "}"
t1 = listing("FRONTIER_CASES", rows, fmt=lambda r: f"({r[0]!r}, {r[1]!r},\n     {fdict(r[2])})")
import random

rng = random.Random(3)
prow = []
for s, e in ns["lesson_cfgs"]() + ns["random_cfgs"](14, 3):
    idom = immediate_dominators(s, e)
    df = dominance_frontiers(s, idom)
    defs = sorted(rng.sample(sorted(idom), k=min(len(idom), rng.randint(1, 3))))
    prow.append((df, defs, iterated_frontier(df, set(defs))))
# a frontier chain the iteration must follow
chain = {"a": {"b"}, "b": {"c"}, "c": {"d"}, "d": set(), "e": {"e"}}
prow.append((chain, ["a"], {"b", "c", "d"}))
prow.append((chain, ["e"], {"e"}))
t2 = listing("PHI_CASES", prow, fmt=lambda r: f"({fdict(r[0])},\n     {r[1]!r}, {sset(r[2])})")
setsrc(nb, "setup", SETUP)
setsrc(nb, "test_frontiers", T1 % t1)
setsrc(nb, "test_phi_blocks", T2 % t2)
setsrc(nb, "test_sequentialize", T3)
save(nb, NAME)
print("written", NAME)
