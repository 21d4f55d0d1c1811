"""Loop inversion by tail duplication (codegen/jumps.py): which blocks a jump takes a copy
of, and that the copies keep the program's behaviour."""

from __future__ import annotations

import re

import pytest
from machine_agree import agrees_with_the_interpreter

from ssa_course import registry
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
