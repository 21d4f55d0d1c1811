"""The quads passes after ``gcm`` do less redundant work (#22, "fourth round"): they share
instruction objects instead of copying them, skip the exception-edge rebuild when there is
no ``try``, and ask for no dominator tree in a loop-free function. Each shortcut must give
what the long way gives; sharing is safe only because no pass changes the function it was
given, which is checked here for the whole default pipeline."""

from __future__ import annotations

from collections import OrderedDict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tiny_gen import programs

import ssa_course
from ssa_course import passes
from ssa_course.quads import loops
from ssa_course.quads.cfg import CFG, BasicBlock, build_cfg
from ssa_course.quads.coalesce import apply_renaming
from ssa_course.quads.domtree import Dominance
from ssa_course.quads.exceptions import add_exception_edges
from ssa_course.quads.ir import Function, Instr, Label
from ssa_course.tiny.types import INT


def _snapshot(fn: Function) -> list[tuple]:
    """Everything an instruction holds, position by position (labels as names)."""
    return [(item.name,) if isinstance(item, Label) else
            (item.op, item.dest, str(item.type), tuple(item.args), tuple(item.funcs),
             tuple(item.labels), item.value, item.field, item.in_bounds, item.set_known)
            for item in fn.body]


@settings(max_examples=40, deadline=None)
@given(programs())
def test_no_pass_of_the_default_pipeline_changes_the_function_it_was_given(source):
    # The passes' results share instruction objects with their inputs (no copies where
    # nothing changes): safe only while every pass leaves its input as it was.
    state = passes.PassState(ssa_course.compile(source))
    for p in passes.check_pipeline(passes.DEFAULT_PIPELINE):
        given_program = state.quads if state.form != "graph" else None
        before = ({n: _snapshot(f) for n, f in given_program.functions.items()}
                  if given_program is not None else None)
        passes.run_pass(state, p)
        if given_program is not None:
            after = {n: _snapshot(f) for n, f in given_program.functions.items()}
            assert after == before, f"{p.name} changed the function it was given"
        if state.quads is not None:
            for fn in state.quads.functions.values():
                objs = [id(i) for i in fn.body if isinstance(i, Instr)]
                assert len(objs) == len(set(objs)), f"{p.name}: one instruction twice"


def _cfg(succs: dict[str, list[str]]) -> CFG:
    blocks = OrderedDict((n, BasicBlock(n, [Instr("nop")], list(s))) for n, s in succs.items())
    for n, s in succs.items():
        for t in s:
            blocks[t].preds.append(n)
    return CFG(Function("f", [], None, []), blocks, next(iter(succs)))


def _depths_the_long_way(cfg: CFG) -> dict[str, int]:
    succs = {n: list(b.succs) for n, b in cfg.blocks.items()}
    preds: dict[str, list[str]] = {}
    for n, kids in succs.items():
        for k in kids:
            preds.setdefault(k, []).append(n)
    depth = {n: 0 for n in cfg.blocks}
    for _, body in loops.natural_loops(preds, Dominance(succs, cfg.entry)).values():
        for b in body:
            depth[b] += 1
    return depth


@st.composite
def graphs(draw, forward_only: bool = False) -> dict[str, list[str]]:
    n = draw(st.integers(1, 12))
    names = [f"b{k}" for k in range(n)]
    succs = {}
    for k, name in enumerate(names):
        lo = k + 1 if forward_only else 0
        kids = draw(st.lists(st.integers(lo, n - 1), max_size=2, unique=True)) \
            if lo < n else []
        succs[name] = [names[j] for j in kids]
    return succs


@settings(max_examples=400, deadline=None)
@given(st.one_of(graphs(), graphs(forward_only=True)))
def test_loop_depths_equal_the_natural_loops_with_or_without_the_shortcut(succs):
    cfg = _cfg(succs)
    assert loops.loop_depths(cfg) == _depths_the_long_way(cfg)


def test_a_loop_free_function_builds_no_dominator_tree(monkeypatch):
    def refuse(*_: object) -> None:
        raise AssertionError("a dominator tree was built")

    monkeypatch.setattr(loops, "Dominance", refuse)
    # an else-if chain: many joins, no cycle
    chain = {f"t{k}": [f"a{k}", f"t{k + 1}"] for k in range(50)}
    chain.update({f"a{k}": ["end"] for k in range(50)})
    chain.update({"t50": ["end"], "end": []})
    assert set(loops.loop_depths(_cfg(chain)).values()) == {0}
    with pytest.raises(AssertionError, match="dominator tree"):  # a loop: the long way
        loops.loop_depths(_cfg({"entry": ["head"], "head": ["head", "exit"], "exit": []}))


def test_unroll_finds_no_loop_in_a_loop_free_function_without_a_dominator_tree(monkeypatch):
    from ssa_course.quads import unroll

    chain = {f"t{k}": [f"a{k}", f"t{k + 1}"] for k in range(50)}
    chain.update({f"a{k}": ["end"] for k in range(50)})
    chain.update({"t50": ["end"], "end": []})
    looped = {"entry": ["head"], "head": ["body", "exit"], "body": ["head"], "exit": []}
    assert unroll.single_latch_loops(_cfg(looped)) == [("head", "body", ["head", "body"])]

    def refuse(*_: object) -> None:
        raise AssertionError("a dominator tree was built")

    monkeypatch.setattr(unroll, "Dominance", refuse)
    assert unroll.single_latch_loops(_cfg(chain)) == []
    with pytest.raises(AssertionError, match="dominator tree"):  # a loop: the long way
        unroll.single_latch_loops(_cfg(looped))


def test_no_enter_means_no_exception_edges_and_the_same_blocks():
    fn = Function("main", [], None, [
        Instr("call", "x", INT, funcs=["f"]), Instr("br", args=["c"], labels=["a", "b"]),
        Label("a"), Instr("throw", args=["x"]), Label("b"), Instr("ret")])
    cfg = build_cfg(fn)
    blocks = dict(cfg.blocks)
    preds = {n: list(b.preds) for n, b in cfg.blocks.items()}
    assert add_exception_edges(cfg) == 0
    assert all(cfg.blocks[n] is b for n, b in blocks.items()) and list(cfg.blocks) == list(blocks)
    assert {n: b.preds for n, b in cfg.blocks.items()} == preds
    assert all(b.throws_to is None for b in cfg.blocks.values())


def test_to_function_copies_unless_told_not_to():
    fn = Function("main", [], None, [Label("x"), Instr("nop"), Instr("jmp", labels=["x"])])
    cfg = build_cfg(fn)
    own = {id(i) for b in cfg.blocks.values() for i in b.instrs}
    assert not {id(i) for i in cfg.to_function().instrs()} & own
    assert {id(i) for i in cfg.to_function(copy=False).instrs()} == own


def test_renaming_copies_only_what_it_renames():
    keep, rename, drop = (Instr("const", "k", INT, value=1), Instr("add", "y", INT, ["a", "k"]),
                          Instr("id", "b", INT, ["a"]))
    fn = Function("main", [("a", INT)], None, [keep, rename, drop, Instr("print", args=["b"])])
    out = apply_renaming(fn, {"b": "a", "y": "z"}, "id")
    assert out.body[0] is keep  # names nothing renamed: shared
    assert out.body[1] is not rename and out.body[1].dest == "z"
    assert [(i.op, i.dest, i.args) for i in out.instrs()] == [
        ("const", "k", []), ("add", "z", ["a", "k"]), ("print", None, ["a"])]
    assert rename.dest == "y" and drop.dest == "b", "the function given is left as it was"


@settings(max_examples=400, deadline=None)
@given(st.one_of(graphs(), graphs(forward_only=True)))
def test_forward_only_means_no_cycle_and_a_forward_layout_is_recognized(succs):
    import networkx as nx

    g = nx.DiGraph()
    g.add_nodes_from(succs)
    g.add_edges_from((a, b) for a, kids in succs.items() for b in kids)
    if loops.forward_only(succs):
        assert nx.is_directed_acyclic_graph(g)
    names = list(succs)
    if all(names.index(b) > names.index(a) for a, kids in succs.items() for b in kids):
        assert loops.forward_only(succs)


def test_out_of_ssa_splits_a_critical_edge_without_changing_its_input():
    # from_ssa builds its CFG without copies: the branch relabelled onto the new block
    # of the critical edge entry -> join must be a copy, the input's ``br`` unchanged
    from ssa_course.ssa.destruct import from_ssa
    from ssa_course.tiny.types import BOOL

    br = Instr("br", args=["c"], labels=["join", "other"])
    fn = Function("main", [("c", BOOL)], None, [
        Label("entry"), Instr("const", "a", INT, value=1), br,
        Label("other"), Instr("const", "b", INT, value=2), Instr("jmp", labels=["join"]),
        Label("join"), Instr("phi", "x", INT, ["a", "b"], labels=["entry", "other"]),
        Instr("print", args=["x"]), Instr("ret")])
    before = _snapshot(fn)
    out = from_ssa(fn)
    assert _snapshot(fn) == before and br.labels == ["join", "other"]
    split = [i for i in out.body if isinstance(i, Instr) and i.op == "br"]
    assert split[0].labels == ["entry.to.join", "other"] and split[0] is not br
    assert not any(isinstance(i, Instr) and i.op == "phi" for i in out.body)
