"""Loop inversion by tail duplication (codegen/jumps.py): which blocks a jump takes a copy
of, and that the copies keep the program's behaviour."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from machine_agree import agrees_with_the_interpreter

from ssa_course import registry, views
from ssa_course.codegen.jumps import MAX_STEPS, duplicate_tests
from ssa_course.codegen.mir import Imm, LabelRef, MBlock, Mem, MFunction, MInstr, VReg
from ssa_course.compilation import compile_source
from ssa_course.lessons.l11_codegen import compile_machine
from ssa_course.stages import run as run_stage

LATTICE = """fn main(n: int) {
    var inside = 0; var weight = 0;
    for (var i = 0; i < n; i = i + 1) {
        for (var j = 0; j < n; j = j + 1) {
            if (i * i + j * j < n * n) { inside = inside + 1; }
            else { weight = weight + i * j - j; }
        }
    }
    print(inside, weight);
}
"""


def _i(op, *operands, defs=(), uses=(), cond=None):
    return MInstr(op, list(operands), list(defs), list(uses), cond)


def _fn(latch: list[MInstr]) -> MFunction:
    """A then-arm T and an else-arm E both jumping to a latch L (``latch`` + its test)."""
    j, n = VReg(1, "j"), VReg(2, "n")
    fn = MFunction("f", [n])
    fn.blocks = [
        MBlock("H", [_i("cmp", j, n, uses=[j, n]), _i("jcc", LabelRef("T"), cond="l"),
                     _i("jmp", LabelRef("E"))], ["T", "E"]),
        MBlock("T", [_i("jmp", LabelRef("L"))], ["L"]),
        MBlock("E", [_i("jmp", LabelRef("L"))], ["L"]),
        MBlock("L", [*latch, _i("cmp", j, n, uses=[j, n]),
                     _i("jcc", LabelRef("H"), cond="l"), _i("jmp", LabelRef("X"))],
               ["H", "X"]),
        MBlock("X", [_i("ret")], []),
    ]
    return fn


def test_a_latch_with_its_step_is_copied_into_both_arms():
    j, t = VReg(1, "j"), VReg(3, "t")
    step = [_i("lea", t, Mem(j, disp=1), defs=[t], uses=[j]), _i("mov", j, t, defs=[j],
                                                                   uses=[t])]
    fn = _fn(step)
    assert duplicate_tests(fn) == 2
    by = fn.block_map()
    for arm in ("T", "E"):
        assert [i.op for i in by[arm].instrs] == ["lea", "mov", "cmp", "jcc", "jmp"]
        assert by[arm].succs == ["H", "X"]
    assert "L" not in by  # no jump reaches it any more


@pytest.mark.parametrize("latch", [
    # a load from memory is no step
    [_i("mov", VReg(1, "j"), Mem(VReg(2, "n")), defs=[VReg(1, "j")], uses=[VReg(2, "n")])],
    # a multiply is no step
    [_i("imul", VReg(1, "j"), VReg(2, "n"), defs=[VReg(1, "j")], uses=[VReg(1, "j")])],
    # more register writes than MAX_STEPS
    [_i("mov", VReg(10 + k, "x"), Imm(k), defs=[VReg(10 + k, "x")])
     for k in range(MAX_STEPS + 1)],
])
def test_latches_doing_more_than_stepping_stay_where_they_are(latch):
    fn = _fn(latch)
    assert duplicate_tests(fn) == 0
    assert [b.label for b in fn.blocks] == ["H", "T", "E", "L", "X"]


def test_both_arms_of_an_if_in_a_loop_branch_back_themselves():
    text = compile_machine(compile_source(LATTICE, "t.tiny"), fuel=False).program_asm  # type: ignore[attr-defined]
    body = text[text.index("tiny_main_body:"):]
    # the inner loop's test (cmp j, n; jl top) ends both arms of the if: no jmp to it
    backs = re.findall(r"    jl (\.Lmain\.b\d+)\n", body)
    assert len(backs) >= 3, body  # both arms of the inner loop and the outer latch
    assert len(set(backs)) == 2, body


STAGES = [s for s in ("native", "emulated", "emulated-aarch64") if s in registry.names()]


@pytest.mark.parametrize("stage", STAGES)
def test_inverted_loops_print_what_the_interpreter_prints(stage):
    agrees_with_the_interpreter(LATTICE, "lattice", stage,
                                [[n] for n in ("0", "1", "2", "7", "30")])
    comp = compile_source(LATTICE, "t.tiny")
    # with a step limit the copied fuel checks still stop the program
    from ssa_course.runtime import Limits
    small = Limits(steps=50)
    want = run_stage(comp, ["30"], via="quads", limits=small)
    got = run_stage(comp, ["30"], via=stage, limits=small)
    assert (got.status, got.error) == (want.status, want.error)


def test_a_branch_falls_into_its_taken_arm_when_that_arm_has_no_other_way_in():
    from ssa_course.codegen.jumps import place_taken_arms

    a = VReg(1, "a")
    fn = MFunction("f", [a])
    fn.blocks = [
        MBlock("A", [_i("cmp", a, Imm(0), uses=[a]), _i("jcc", LabelRef("T"), cond="g"),
                     _i("jmp", LabelRef("F"))], ["T", "F"]),
        MBlock("X", [_i("ret")], []),
        MBlock("F", [_i("jmp", LabelRef("X"))], ["X"]),
        MBlock("T", [_i("jmp", LabelRef("X"))], ["X"]),
    ]
    assert place_taken_arms(fn) == 1
    assert [b.label for b in fn.blocks] == ["A", "T", "X", "F"]
    # X has two ways in (T and F): it is not moved behind either
    assert place_taken_arms(fn) == 0


def _latch_function():
    """H tests a flag and jumps to S (a step and a test back to H) or falls into B."""
    i, n, f = VReg(1, "i"), VReg(2, "n"), VReg(3, "f")
    fn = MFunction("f", [i, n, f])
    fn.blocks = [
        MBlock("P", [_i("cmp", i, n, uses=[i, n]), _i("jcc", LabelRef("H"), cond="l"),
                     _i("jmp", LabelRef("X"))], ["H", "X"]),
        MBlock("H", [_i("test", f, f, uses=[f]), _i("jcc", LabelRef("S"), cond="ne"),
                     _i("jmp", LabelRef("B"))], ["S", "B"]),
        MBlock("B", [_i("lea", i, Mem(i, disp=1), defs=[i], uses=[i]),
                     _i("mov", Mem(f), Imm(1), uses=[f]),  # a store: B is no latch to move
                     _i("cmp", i, n, uses=[i, n]), _i("jcc", LabelRef("H"), cond="l"),
                     _i("jmp", LabelRef("X"))], ["H", "X"]),
        MBlock("S", [_i("lea", i, Mem(i, disp=1), defs=[i], uses=[i]),
                     _i("cmp", i, n, uses=[i, n]), _i("jcc", LabelRef("H"), cond="l"),
                     _i("jmp", LabelRef("X"))], ["H", "X"]),
        MBlock("X", [_i("ret")], []),
    ]
    return fn


def test_a_latch_that_only_steps_and_tests_is_laid_out_before_its_header():
    from ssa_course.codegen.jumps import place_latches

    fn = _latch_function()
    assert place_latches(fn) == 1
    assert [b.label for b in fn.blocks] == ["P", "S", "H", "B", "X"]
    assert place_latches(fn) == 0  # S falls into H now


@pytest.mark.parametrize("change", ["work in the latch", "second way in", "header falls"])
def test_latches_that_would_not_gain_stay_where_they_are(change):
    from ssa_course.codegen.jumps import place_latches

    fn = _latch_function()
    blocks = fn.block_map()
    if change == "work in the latch":  # S stores: not a step-and-test block
        blocks["S"].instrs.insert(0, _i("mov", Mem(blocks["S"].instrs[0].defs[0]), Imm(0)))
    elif change == "second way in":  # B also jumps to S
        blocks["B"].instrs[-1] = _i("jmp", LabelRef("S"))
        blocks["B"].succs = ["H", "S"]
    else:  # H's other arm is not laid out after it: H would need two jumps
        fn.blocks = [fn.blocks[k] for k in (0, 1, 3, 2, 4)]
    order = [b.label for b in fn.blocks]
    assert place_latches(fn) == 0
    assert [b.label for b in fn.blocks] == order


def test_sieve_skips_a_set_flag_with_one_branch():
    # The step of `if (!composite[i])`'s skipped arm falls into the loop's test block.
    kernel = Path(__file__).resolve().parent.parent / "benchmarks/native/kernels/sieve.tiny"
    asm = views.render(compile_source(kernel.read_text(), "sieve.tiny"), "asm")
    lines = [s.strip() for s in asm.splitlines() if s.strip() and not s.strip().startswith("#")]
    at = lines.index(".Lsieve.b39:")
    assert lines[at - 2].startswith("cmp") and lines[at - 1].startswith("jge")
    assert any(s.startswith("jne .Lsieve.b52") for s in lines[at:at + 4])
