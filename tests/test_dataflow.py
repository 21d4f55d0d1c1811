"""The one data-flow solver (``quads/dataflow.py``) and its table of analyses
(``quads/analyses.py``): each analysis agrees with a naive fixed point on generated
programs, the exception-edge rule holds, and the passes that ask it keep their answers."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tiny_gen import programs

import ssa_course
from ssa_course.quads import dataflow
from ssa_course.quads.analyses import TABLE, assigned, liveness, phi_edge_uses
from ssa_course.quads.bril_defined import check_defined
from ssa_course.quads.bril_problem import BrilProblem
from ssa_course.quads.cfg import CFG, build_cfg
from ssa_course.quads.exceptions import add_exception_edges
from ssa_course.quads.flow import Problem, solve, through
from ssa_course.quads.ir import Function, Instr, Label
from ssa_course.ssa.construct import program_to_ssa


def naive(cfg: CFG, a: Problem) -> dict[str, list]:
    """The fact at every point of every block, by iterating *every* instruction of every
    block until nothing changes -- no worklist, no summaries, no split nodes: the
    exception-edge rule written out again independently (the edge leaves from the point
    before a throwing block's last instruction)."""
    names = list(cfg.blocks)
    pts = {n: [a.init] * (len(cfg.blocks[n].instrs) + 1) for n in names}
    thrown_to = {b.throws_to for b in cfg.blocks.values() if b.throws_to is not None}

    def taken(src: str, dst: str) -> bool:
        """Not ``enter``'s edge to a handler that throwing instructions' edges reach."""
        term = cfg.blocks[src].instrs[-1] if cfg.blocks[src].instrs else None
        return not (term is not None and term.op == "enter" and len(term.labels) > 1
                    and term.labels[1] == dst != term.labels[0] and dst in thrown_to)

    def leaving(src: str, dst: str) -> int:
        """The point of ``src`` where its edge to ``dst`` leaves."""
        block = cfg.blocks[src]
        if dst == block.throws_to and block.instrs:
            return len(block.instrs) - 1
        return len(block.instrs)

    changed = True
    while changed:
        changed = False
        for n in names:
            block = cfg.blocks[n]
            new = list(pts[n])
            if a.forward:
                incoming = []
                for p in block.preds:
                    if not taken(p, n):
                        continue
                    fact = pts[p][leaving(p, n)]
                    incoming.append(a.edge(p, n, fact) if a.edge else fact)
                if n == cfg.entry:
                    incoming.append(a.boundary)
                fact = incoming[0] if incoming else a.init
                for f in incoming[1:]:
                    fact = a.meet(fact, f)
                new[0] = fact
                for k, instr in enumerate(block.instrs):
                    new[k + 1] = a.transfer(instr, new[k])
            else:
                last = len(block.instrs)
                normal = [s for s in block.succs if leaving(n, s) == last and taken(n, s)]
                incoming = [a.edge(n, s, pts[s][0]) if a.edge else pts[s][0] for s in normal]
                if not block.succs:
                    incoming.append(a.boundary)
                fact = incoming[0] if incoming else a.init
                for f in incoming[1:]:
                    fact = a.meet(fact, f)
                new[last] = fact
                for k in range(last - 1, -1, -1):
                    fact = a.transfer(block.instrs[k], new[k + 1])
                    if k == last - 1 and block.throws_to is not None:
                        h = block.throws_to
                        fact = a.meet(fact, a.edge(n, h, pts[h][0]) if a.edge else pts[h][0])
                    new[k] = fact
            if new != pts[n]:
                pts[n], changed = new, True
    return pts


def cfgs(source: str, ssa: bool = False) -> list[CFG]:
    program = ssa_course.compile(source).quads
    if ssa:
        program = program_to_ssa(program)
    out = []
    for fn in program.functions.values():
        cfg = build_cfg(fn)
        add_exception_edges(cfg)
        out.append(cfg)
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(), st.booleans())
def test_every_analysis_agrees_with_the_naive_fixed_point(source, ssa):
    for cfg in cfgs(source, ssa):
        for name, make in TABLE.items():
            a = make(cfg)
            facts = solve(cfg, a)
            expected = naive(cfg, a)
            for block in cfg.blocks:
                assert facts.points(block) == expected[block], (name, block)
                assert facts.top[block] == expected[block][0], (name, block)
                assert facts.bottom[block] == expected[block][-1], (name, block)


THROWING = """
fn f(x: int) -> int { if (x > 1) { throw x; } return x + 1; }
fn main(n: int) {
    var x = 50;
    var i = 0;
    try { while (i < 3) { x = f(i + n); i = i + 1; } x = 0; } catch (e) { print(e, x, i); }
}
"""


def test_the_exceptional_edge_leaves_before_the_throwing_call():
    """``x = call f`` that throws never writes ``x``: the old ``x`` is live before the call
    (the handler prints it); the point before the call joins its normal path with what
    the handler reads, the point after it is its normal path only."""
    cfg = next(c for c in cfgs(THROWING) if c.function.name == "main")
    live = liveness(cfg)
    calls = [n for n, b in cfg.blocks.items() if b.throws_to and b.instrs[-1].op == "call"]
    assert calls
    for name in calls:
        points = live.points(name)
        assert "x" in points[-2]  # before the call: the handler reads the old x
        call = cfg.blocks[name].instrs[-1]
        handler = live.from_handler(name)
        assert handler >= {"x", "i"}
        assert points[-2] == live.analysis.transfer(call, points[-1]) | handler
        assert points[-1] == live.top[cfg.blocks[name].succs[0]]
    defined = solve(cfg, assigned(cfg, ["n"], must=True))
    handler = next(b for b in cfg.blocks.values() if b.instrs and b.instrs[0].op == "catch")
    assert {"x", "i"} <= defined.top[handler.name]


def test_a_phi_reads_its_argument_on_its_own_edge():
    """In SSA, a phi's argument is live at the end of the block its label names, not in
    the other predecessors."""
    src = "fn main(n: int) { var x = 1; if (n > 0) { x = 2; } else { x = 3; } print(x); }"
    cfg = cfgs(src, ssa=True)[0]
    uses = phi_edge_uses(cfg)
    assert len(uses) == 2
    live = liveness(cfg)
    for (pred, _), args in uses.items():
        (arg,) = args
        assert arg in live.bottom[pred]
        others = [p for (p, _) in uses if p != pred]
        assert all(arg not in live.bottom[o] for o in others)


def _drop_some(fn: Function, rng: random.Random) -> Function:
    """``fn`` with some non-terminator instructions removed (so some reads lose their
    assignment on some or all paths)."""
    body = [item for item in fn.body
            if isinstance(item, Label) or item.is_terminator() or rng.random() > 0.2]
    return Function(fn.name, fn.params, fn.ret, body)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(), st.integers(0, 2**32))
def test_bril_definedness_agrees_with_the_maybe_assigned_analysis(source, seed):
    """``check_defined`` (graph walks, not a fixed point) reports a read exactly when the
    solver's "maybe assigned" fact before it lacks the variable (in reachable code)."""
    rng = random.Random(seed)
    for fn in ssa_course.compile(source).quads.functions.values():
        if any(i.op == "enter" for i in fn.instrs()):
            continue  # check_defined keeps brilck's flow-insensitive rule there
        fn = _drop_some(fn, rng)
        cfg = build_cfg(fn)
        facts = solve(cfg, assigned(cfg, [p for p, _ in fn.params], must=False))
        undefined = any(a not in before
                        for name in cfg.reachable()
                        for instr, before in zip(cfg.blocks[name].instrs,
                                                 facts.points(name), strict=False)
                        for a in instr.args)
        try:
            check_defined(fn)
            reported = False
        except BrilProblem as e:
            reported = "no path" in str(e)
            if not reported:
                continue  # the other check: running off the end of a function
        assert reported == undefined


def test_a_must_problem_ignores_blocks_no_path_reaches():
    """A block nothing jumps to keeps the optimistic start: it does not weaken a join."""
    fn = Function("main", [("n", None)], None, [
        Instr("const", "x", None, value=1), Instr("jmp", labels=["join"]),
        Label("dead"), Instr("jmp", labels=["join"]),
        Label("join"), Instr("print", args=["x"]), Instr("ret")])
    cfg = build_cfg(fn)
    facts = solve(cfg, assigned(cfg, ["n"], must=True))
    assert facts.top["join"] == {"n", "x"}


@pytest.mark.parametrize("forward", [True, False])
def test_a_general_transfer_without_gen_kill(forward):
    """The solver needs no gen/kill: a transfer of any shape (here: counting the
    instructions, capped) reaches the same fixed point as the naive iteration."""
    cfg = cfgs(THROWING)[-1]
    a = Problem("count", forward, 0, 0, max, lambda _i, n: min(n + 1, 50))
    facts = solve(cfg, a)
    expected = naive(cfg, a)
    for block in cfg.blocks:
        assert facts.points(block) == expected[block]


CORPUS = sorted((Path(__file__).parent / "programs").glob("*.tiny")) + \
    sorted((Path(__file__).parent / "bril").glob("*.bril"))


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_every_analysis_gives_the_same_facts_through_both_layers(path):
    """The plain solver (``quads/dataflow.py``) on a CFG's blocks, with a transfer that walks
    each block's instructions, and the layer over it (``quads/flow.py``: split throwing
    blocks, gen/kill summaries) give the same facts, for every analysis of the table, on
    every function of the corpus, in SSA or not; with exception edges, the layer's fast
    path and its instruction-by-instruction transfer agree (same facts, same visits)."""
    from ssa_course.compilation import load_file

    quads = load_file(str(path)).quads
    for program in (quads, program_to_ssa(quads)):
        for fn in program.functions.values():
            cfg = build_cfg(fn)
            for name, make in TABLE.items():
                p = make(cfg)
                layered = solve(cfg, p)
                blocks = cfg.blocks
                succs = {b: [s for s in blocks[b].succs if s in blocks] for b in blocks}
                plain = dataflow.solve(succs, dataflow.Analysis(
                    p.forward, p.init, p.meet,
                    lambda b, fact, p=p, blocks=blocks: through(p, blocks[b].instrs, fact),
                    p.boundary, p.edge), cfg.entry)
                assert (plain.top, plain.bottom) == (layered.top, layered.bottom), name
                assert plain.visits == layered.visits, name
            add_exception_edges(cfg)
            for name, make in TABLE.items():
                p = make(cfg)
                fast, walked = solve(cfg, p), solve(cfg, p, fast=False)
                assert (fast.top, fast.bottom, fast.visits) == \
                    (walked.top, walked.bottom, walked.visits), name
