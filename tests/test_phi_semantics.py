"""Phis read all their inputs before any of them is written: every executor, every lowering.

The swap ``a, b = b, a`` in a loop makes two phis of one block read each other; a three-way
rotation makes a cycle of three; "a phi feeding a phi" (the previous iteration's value used
after the loop) is the lost-copy shape. Each executor and each lowering is checked on its
own here; the corpus programs (``swap_*``, ``rotate3_loop``, ``lost_copy``) take the same
shapes through every stage in the differential test.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

import ssa_course
from ssa_course import stages
from ssa_course.lessons.faces import fresh_graphs as build_program
from ssa_course.quads.bril import parse_bril_text
from ssa_course.quads.interp import run_quads
from ssa_course.runtime import Limits, Output
from ssa_course.son.from_ssa import graphs_from_quads
from ssa_course.son.interp import run_graphs
from ssa_course.ssa.braun import program_braun_ssa
from ssa_course.ssa.construct import prepare_cfg, program_to_ssa
from ssa_course.ssa.destruct import program_from_ssa
from ssa_course.ssa.ircode import (
    Block,
    Expr,
    GotoIfNot,
    GotoNode,
    IRCode,
    PhiNode,
    ReturnNode,
    SSAValue,
)
from ssa_course.ssa.irinterp import run_ircode
from ssa_course.ssa.irverify import verify_ir
from ssa_course.ssa.julia import program_ircode
from ssa_course.ssa.verify import verify_ssa_program
from ssa_course.tiny.types import BOOL, INT

BRIL = Path(__file__).parent / "bril"

ROTATE = """
fn main() {
    var a = 1; var b = 2; var c = 3; var i = 0;
    while (i < 4) { var t = a; a = b; b = c; c = t; i = i + 1; }
    print(a, b, c);
}
"""  # after 4 rotations (period 3): one rotation -> 2 3 1

LOST_COPY = """
fn main() {
    var x = 1; var prev = 0; var i = 0;
    while (i < 3) { prev = x; x = x * 2 + i; i = i + 1; }
    print(prev, x);
}
"""  # x: 1, 2, 5, 12 -> prev = 5


def _quads_out(program) -> str:
    out = Output()
    run_quads(program, [], out, Limits())
    return out.text()


def _ir_out(program: dict) -> str:
    out = Output()
    run_ircode(program, [], out, Limits())
    return out.text()


# ---------------------------------------------------------------- the IRCode interpreter


def _swap_ir(order: tuple[int, ...]) -> IRCode:
    """``a, b, c = b, c, a`` three times in a loop, with the phis in the given order."""
    ir = IRCode("main", [], [], None)
    # block 1: goto #2
    # block 2: three rotating phis, a counter phi, the test
    # block 3: the counter's increment, the back edge
    # block 4: print the three values
    phis = {0: (1, "b"), 1: (2, "c"), 2: (3, "a")}  # initial value, where it comes from
    first = 2
    slot = {name: first + k for k, name in enumerate("abc"[i] for i in order)}
    stmts: list = [GotoNode(2)]
    for i in order:
        init, src = phis[i]
        stmts.append(PhiNode([1, 3], [init, SSAValue(slot[src])]))
    n = first + 3  # %5 is the counter
    stmts.append(PhiNode([1, 3], [0, SSAValue(n + 3)]))  # %5 = phi(0, %8)
    stmts.append(Expr("lt", [SSAValue(n), 3]))  # %6
    stmts.append(GotoIfNot(SSAValue(n + 1), 4))  # %7
    stmts.append(Expr("add", [SSAValue(n), 1]))  # %8
    stmts.append(GotoNode(2))  # %9
    stmts.append(Expr("print", [SSAValue(slot[c]) for c in "abc"]))  # %10
    stmts.append(ReturnNode())  # %11
    ir.stmts = stmts
    ir.types = [None, INT, INT, INT, INT, BOOL, None, INT, None, None, None]
    ir.lines = [None] * len(stmts)
    ir.flags = [0] * len(stmts)
    ir.blocks = [Block(1, 1, [], [2]), Block(2, 7, [1, 3], [3, 4]), Block(8, 9, [2], [2]),
                 Block(10, 11, [2], [])]
    return ir


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
def test_ircode_interpreter_reads_every_phi_before_writing_any(order):
    ir = _swap_ir(order)
    verify_ir(ir)
    # three rotations of (1, 2, 3) bring it back; read-after-write would smear one value
    assert _ir_out({"main": ir}) == "1 2 3\n"


def test_ircode_phi_without_a_value_is_an_error_only_when_read():
    # x has no value on the entry edge; the loop carries that "no value" around its back
    # edge (the phi reads itself), and nothing reads it: brili prints 2, so must we
    program = program_ircode(parse_bril_text((BRIL / "phi_undefined_loop.bril").read_text()))
    assert _ir_out(program) == "2\n"


# ---------------------------------------------------------------- the quads interpreter


ROTATE_BRIL = """
@main {
.entry:
  a.0: int = const 1;
  b.0: int = const 2;
  c.0: int = const 3;
  i.0: int = const 0;
  jmp .loop;
.loop:
{phis}
  i.1: int = phi i.0 i.2 .entry .loop;
  one: int = const 1;
  i.2: int = add i.1 one;
  four: int = const 4;
  go: bool = lt i.2 four;
  br go .loop .exit;
.exit:
  print a.1 b.1 c.1;
}
"""
ROTATE_PHIS = ["  a.1: int = phi a.0 b.1 .entry .loop;",
               "  b.1: int = phi b.0 c.1 .entry .loop;",
               "  c.1: int = phi c.0 a.1 .entry .loop;"]


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
def test_quads_phis_and_out_of_ssa_rotate_in_any_phi_order(order):
    text = ROTATE_BRIL.replace("{phis}", "\n".join(ROTATE_PHIS[i] for i in order))
    ssa = parse_bril_text(text)
    verify_ssa_program(ssa)
    # the loop body runs 4 times, the phis 3 times after entry: (1 2 3) rotated 3 times
    assert _quads_out(ssa) == "1 2 3\n"
    back = program_from_ssa(ssa)
    assert not any(i.op == "phi" for i in back.functions["main"].instrs())
    assert _quads_out(back) == "1 2 3\n"
    # a 3-cycle of copies needs one temporary: 4 copies, not 3
    copies = [i for i in back.functions["main"].instrs() if i.op == "id"]
    assert len(copies) >= 4


# ---------------------------------------------------------------- every lowering


@pytest.mark.parametrize("src, expected", [(ROTATE, "2 3 1\n"), (LOST_COPY, "5 12\n")])
def test_every_ssa_construction_and_destruction_keeps_parallel_semantics(src, expected):
    quads = ssa_course.compile(src).quads
    for ssa in (program_to_ssa(quads, pruned=True), program_to_ssa(quads, pruned=False),
                program_braun_ssa(quads)):
        verify_ssa_program(ssa)
        assert _quads_out(ssa) == expected
        assert _quads_out(program_from_ssa(ssa)) == expected
    program = program_ircode(quads)
    for ir in program.values():
        verify_ir(ir)
    assert _ir_out(program) == expected


@pytest.mark.parametrize("src, expected", [(ROTATE, "2 3 1\n"), (LOST_COPY, "5 12\n")])
def test_sea_of_nodes_interpreter_and_schedule_keep_parallel_semantics(src, expected):
    comp = ssa_course.compile(src)
    for stage in ("son-raw", "son", "son-opt", "scheduled", "optimized"):
        assert stages.run(comp, [], via=stage).stdout == expected, stage
    for optimize in (False, True):
        out = Output()
        run_graphs(build_program(comp, optimize), [], out, Limits())
        assert out.text() == expected
        out = Output()  # the same program reaching the graph through SSA quads
        run_graphs(graphs_from_quads(comp.quads, optimize), [], out, Limits())
        assert out.text() == expected


# ---------------------------------------------------------------- exceptional edges


THROWING_LOOP = """
fn f(i: int) -> int { if (i == 2) { throw 50; } return i * 10 + 7; }
fn main() {
    var x = 1; var i = 0;
    try {
        while (i < 3) { x = f(i); i = i + 1; }
        x = 0;
    } catch (e) { print(e, x, i); }
}
"""


def test_liveness_crosses_an_exceptional_edge_before_the_throwing_call():
    from ssa_course.quads.analyses import liveness

    fn = ssa_course.compile(THROWING_LOOP).quads.functions["main"]
    cfg = prepare_cfg(fn)
    live = liveness(cfg).top
    call_blocks = [n for n, b in cfg.blocks.items()
                   if b.throws_to is not None and b.instrs[-1].op == "call"]
    assert call_blocks
    # ``x = call f`` may throw before assigning x: the handler reads the old x
    for name in call_blocks:
        assert "x" in live[name]


def test_pruned_ssa_keeps_the_value_a_throwing_call_would_overwrite():
    quads = ssa_course.compile(THROWING_LOOP).quads
    expected = "50 17 2\n"
    for ssa in (program_to_ssa(quads, pruned=True), program_braun_ssa(quads)):
        verify_ssa_program(ssa)
        assert _quads_out(ssa) == expected
        assert _quads_out(program_from_ssa(ssa)) == expected
    assert _ir_out(program_ircode(quads)) == expected


# ---------------------------------------------------------------- irreducible loops


def test_an_open_region_is_reachable_until_all_its_paths_are_built():
    # .bottom is built before .top's edge into it exists; the only edge known then is
    # dead, so typing the merge unreachable folded the loop's exit test to "never"
    quads = parse_bril_text((BRIL / "irreducible_entry.bril").read_text())
    expected = (BRIL / "irreducible_entry.out").read_text()
    for optimize in (False, True):
        out = Output()
        run_graphs(graphs_from_quads(quads, optimize), [], out, Limits(steps=10_000))
        assert out.text() == expected
