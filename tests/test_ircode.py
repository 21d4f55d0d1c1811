"""Julia-style IRCode: insertion, compaction, incremental compaction, printer, verifier."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import ssa_course
from ssa_course.errors import VerifyError
from ssa_course.runtime import Limits, Output
from ssa_course.ssa.ircode import (
    Expr,
    GotoNode,
    IncrementalCompact,
    PhiCNode,
    PhiNode,
    PiNode,
    SSAValue,
    compact,
)
from ssa_course.ssa.irinterp import run_ircode
from ssa_course.ssa.irverify import verify_ir
from ssa_course.ssa.julia import build_ircode, format_ir, program_ircode
from ssa_course.tiny.types import BOOL, INT

GOLDEN = Path(__file__).parent / "golden"

BRANCHY = """
fn main(x: int) {
    var y = 0;
    if (x < 10) { y = x + 1; } else { y = x - 1; }
    print(y);
}
"""


def ir_of(src: str, fn: str = "main"):
    return build_ircode(ssa_course.compile(src).quads.functions[fn])


def run_ir(ir, *args) -> str:
    out = Output()
    run_ircode({ir.name: ir}, list(args), out, Limits())
    return out.text()


def test_printer_looks_like_julia():
    text = format_ir(ir_of(BRANCHY))
    assert text.splitlines() == [
        "main(x::int)",
        "1 ─ %1 = lt(x, 10)::bool",
        "└──      goto #3 if not %1",
        "2 ─ %3 = π (x, x < 10)::int",
        "│   %4 = add(%3, 1)::int",
        "└──      goto #4",
        "3 ─ %6 = π (x, x >= 10)::int",
        "└── %7 = sub(%6, 1)::int",
        "4 ┄ %8 = φ (#2 => %4, #3 => %7)::int",
        "└──      print(%8)",
    ]


@pytest.mark.parametrize("name", ["loops", "exceptions", "memory", "short_circuit"])
def test_golden_julia_text(name):
    comp = ssa_course.load_file(str(GOLDEN / f"{name}.tiny"))
    text = "\n".join(format_ir(ir) for ir in program_ircode(comp.quads).values())
    assert text == (GOLDEN / f"{name}.julia").read_text()


def test_insert_node_then_compact_renumbers_uses_across_blocks():
    ir = ir_of(BRANCHY)
    n = len(ir.stmts)
    # double x at the very top, and make the else-branch use it instead of its PiNode
    doubled = ir.insert_node(1, Expr("mul", [ir.stmts[0].args[0], 2]), INT)
    assert doubled == SSAValue(n + 1)  # numbered after the vector's end, usable at once
    sub = ir.stmts[6]
    assert isinstance(sub, Expr) and sub.head == "sub"
    sub.args[0] = doubled
    new = compact(ir)
    verify_ir(new)
    assert new.stmts[0].head == "mul"            # placed first
    assert new.stmts[1].head == "lt" and new.stmts[2].cond == SSAValue(2)  # shifted by one
    phi = next(s for s in new.stmts if isinstance(s, PhiNode))
    assert phi.values == [SSAValue(5), SSAValue(8)]
    assert run_ir(new, 20) == "39\n" and run_ir(new, 3) == "4\n"


def test_attach_after_and_replace_uses():
    ir = ir_of(BRANCHY)
    plus = ir.stmts[3]  # %4 = add(%3, 1)
    extra = ir.insert_node(4, Expr("add", [SSAValue(4), 100], None, None), INT,
                           attach_after=True)
    phi = next(s for s in ir.stmts if isinstance(s, PhiNode))
    phi.values[0] = extra
    assert plus.head == "add"
    new = compact(ir)
    verify_ir(new)
    assert run_ir(new, 1) == "102\n"
    # replacing all uses: statement %8 (the phi) becomes the constant 7
    ir2 = ir_of(BRANCHY)
    ir2.replace_uses(SSAValue(8), 7)
    new2 = compact(ir2)
    verify_ir(new2)
    assert run_ir(new2, 1) == "7\n"
    assert not any(isinstance(s, PhiNode) for s in new2.stmts)


def test_compact_drops_dead_blocks_and_fixes_phi_edges():
    ir = ir_of(BRANCHY)
    # make block 1 always go to #3: block #2 becomes unreachable
    ir.stmts[1] = GotoNode(3)
    ir.blocks[0].succs = [3]
    ir.blocks[1].preds = []
    new = compact(ir)
    verify_ir(new)
    assert len(new.blocks) == 3
    phi = next(s for s in new.stmts if isinstance(s, PhiNode))
    assert phi.edges == [2]
    assert run_ir(new, 3) == "2\n"


def test_incremental_compact_while_deleting():
    src = (GOLDEN / "loops.tiny").read_text()
    ir = ir_of(src)
    before = run_ir(ir, 7)
    pis = sum(isinstance(s, PiNode) for s in ir.stmts)
    assert pis > 0
    walker = IncrementalCompact(ir)
    seen = 0
    for idx, stmt in walker:
        seen += 1
        if isinstance(stmt, PiNode):
            walker[idx] = stmt.val  # "delete" the PiNode: its uses read the value itself
        elif isinstance(stmt, Expr) and stmt.head == "add" and stmt.args[1] == 0:
            walker[idx] = stmt.args[0]
    assert seen == len(ir.stmts)
    new = walker.finish()
    verify_ir(new)
    assert not any(isinstance(s, PiNode) for s in new.stmts)
    assert len(new.stmts) == len(ir.stmts) - pis
    assert run_ir(new, 7) == before


def test_incremental_compact_insert_here():
    ir = ir_of(BRANCHY)
    walker = IncrementalCompact(ir)
    for idx, stmt in walker:
        if isinstance(stmt, Expr) and stmt.head == "print":
            tripled = walker.insert_here(Expr("mul", [stmt.args[0], 3]), INT)
            walker[idx] = Expr("print", [stmt.args[0], tripled])
    new = walker.finish()
    verify_ir(new)
    assert run_ir(new, 1) == "2 6\n"


def test_upsilon_phic_shape_follows_the_seed():
    src = (Path(__file__).parent / "programs" / "try_values_seed.tiny").read_text()
    ir = ir_of(src)
    verify_ir(ir)
    text = format_ir(ir)
    assert "ϒ (1)" in text and "enter #" in text and "φᶜ (" in text
    phics = [s for s in ir.stmts if isinstance(s, PhiCNode)]
    assert sorted(len(p.values) for p in phics) == [2, 4]  # x: top + 1 assignment; y: top + 3
    # every Upsilon a PhiC lists is printed with that number, so the reader can find it
    for phic in phics:
        for v in phic.values:
            assert re.search(rf"%{v.id} +=\s+ϒ \(", text), f"%{v.id} is not a numbered ϒ line"
    program = program_ircode(ssa_course.compile(src).quads)
    out = Output()
    run_ircode(program, [], out, Limits())
    assert out.text() == "1 3 10\n1 30\n"


def _broken(mutate) -> str:
    ir = ir_of(BRANCHY)
    mutate(ir)
    with pytest.raises(VerifyError) as info:
        verify_ir(ir)
    return info.value.invariant


def test_verifier_names_broken_invariants():
    def use_before_def(ir):
        ir.stmts[0].args[0] = SSAValue(4)

    def wrong_edges(ir):
        next(s for s in ir.stmts if isinstance(s, PhiNode)).edges = [1, 3]

    def goto_in_middle(ir):
        ir.stmts[2] = GotoNode(4)

    def bad_type(ir):
        ir.types[3] = BOOL

    def phic_of_non_upsilon(ir):
        ir.stmts[2] = PhiCNode([SSAValue(1)])

    assert _broken(use_before_def) == "uses dominated by defs"
    assert _broken(wrong_edges) == "phi edges equal predecessors"
    assert _broken(goto_in_middle) == "one terminator per block"
    assert _broken(bad_type) == "types consistent"
    assert _broken(phic_of_non_upsilon) == "PhiC lists Upsilons"


def test_code_typed_entry_point():
    from ssa_course import code_typed

    typed = code_typed(BRANCHY)
    assert str(typed).startswith("main(x::int)")
    assert "digraph" in typed.draw().dot


def test_phis_are_placed_without_visiting_every_join_below():
    """An else-if chain: each arm's temporaries are dead at the joins below, so placing
    their phis must not walk the whole chain of joins for each (it was quadratic)."""
    from ssa_course.ssa import julia

    arms = 300
    src = "fn main(n: int) {\n  var y = 0;\n" + "".join(
        f"  {'if' if k == 0 else '} else if'} (n == {k}) {{ y = y + {k}; \n"
        for k in range(arms)) + "  }\n  print(y);\n}\n"
    # the scheduled program out of SSA: every arm's values get names of their own
    quads = ssa_course.build(src, "scheduled").quads
    reads = 0

    class Counting(dict):
        def get(self, key, default=None):
            nonlocal reads
            reads += 1
            return dict.get(self, key, default)

    real = julia.dominance_frontiers
    julia.dominance_frontiers = lambda *a: Counting(real(*a))
    try:
        program = julia.program_ircode(quads)
    finally:
        julia.dominance_frontiers = real
    assert "φ" in julia.format_ir(program["main"])
    assert reads < 20 * arms  # the whole chain per temporary: about arms * arms
