"""Jump threading of bools (codegen/thread.py) on x86-64: the same pass AArch64 runs,
reading x86-64's Shapes (``setcc`` + ``movzx`` make a bool, ``test p, p`` + ``je``/``jne``
test it, ``xor p, 1`` negates it)."""

from __future__ import annotations

import re

import pytest
from machine_agree import agrees_with_the_interpreter
from test_codegen_aarch64 import NEGATED_BOOLS, THREADED

from ssa_course import registry
from ssa_course.codegen.mir import Imm, LabelRef, MBlock, MFunction, MInstr, VReg
from ssa_course.codegen.thread import thread_bools
from ssa_course.codegen.x86_64.machine import X86_64_MACHINE
from ssa_course.compilation import compile_source
from ssa_course.lessons.l11_codegen import compile_machine

X86 = X86_64_MACHINE.bool_shapes


def _ins(op: str, *operands, defs=(), uses=(), cond=None) -> MInstr:
    return MInstr(op, list(operands), list(defs), list(uses), cond)


def _and_shape() -> MFunction:
    """``a > b && ...``: A makes the bool from a compare, B the constant false, J tests it."""
    a, b, p = VReg(1, "a"), VReg(2, "b"), VReg(3, "p")
    fn = MFunction("f", [a, b])
    blocks = [
        MBlock("E", [_ins("cmp", a, Imm(0), uses=[a]), _ins("jcc", LabelRef("A"), cond="g"),
                     _ins("jmp", LabelRef("B"))], ["A", "B"]),
        MBlock("A", [_ins("cmp", a, b, uses=[a, b]), _ins("setcc", p, defs=[p], cond="g"),
                     _ins("movzx", p, p, defs=[p], uses=[p]), _ins("jmp", LabelRef("J"))],
               ["J"]),
        MBlock("B", [_ins("mov", p, Imm(0), defs=[p]), _ins("jmp", LabelRef("J"))], ["J"]),
        MBlock("J", [_ins("test", p, p, uses=[p, p]), _ins("jcc", LabelRef("T"), cond="ne"),
                     _ins("jmp", LabelRef("F"))], ["T", "F"]),
        MBlock("T", [_ins("ret")], []),
        MBlock("F", [_ins("ret")], []),
    ]
    fn.blocks = blocks
    return fn


def test_x86_bools_made_and_tested_become_branches():
    fn = _and_shape()
    assert thread_bools(fn, X86) == 2
    by = fn.block_map()
    assert [i.op for i in by["A"].instrs] == ["cmp", "jcc", "jmp"]
    assert by["A"].instrs[1].cond == "g" and by["A"].succs == ["T", "F"]
    assert "B" not in by  # only a jump to F was left: E branches to F itself
    assert by["E"].instrs[-1].operands[0] == LabelRef("F")
    assert "J" not in by  # nobody jumps to the test any more


def test_x86_negations_and_loads_are_tested_in_place():
    """``!seen[i]``: ``mov p, t; xor p, 1`` tested for zero is t tested for not zero; a
    bool loaded from memory is tested as it is (a load makes no known bool)."""
    t, p = VReg(1, "t"), VReg(2, "p")
    fn = MFunction("f", [])
    fn.blocks = [
        MBlock("E", [_ins("mov", t, Imm(5), defs=[t]), _ins("mov", p, t, defs=[p], uses=[t]),
                     _ins("xor", p, Imm(1), defs=[p], uses=[p]),
                     _ins("test", p, p, uses=[p, p]), _ins("jcc", LabelRef("T"), cond="e"),
                     _ins("jmp", LabelRef("F"))], ["T", "F"]),
        MBlock("T", [_ins("ret")], []), MBlock("F", [_ins("ret")], []),
    ]
    # mov t, 5 is a constant: the test goes straight to T (t != 0, so !t == 0)
    assert thread_bools(fn, X86) == 1
    assert [i.op for i in fn.blocks[0].instrs][-1] == "jmp"
    assert fn.blocks[0].instrs[-1].operands[0] == LabelRef("T")


def _listing(source: str) -> str:
    comp = compile_source(source, "t.tiny")
    return compile_machine(comp, fuel=False).program_asm  # type: ignore[attr-defined]


def test_insertion_sorts_and_is_a_compare_and_a_branch():
    text = _listing(THREADED)
    # j >= 0 && a[j] > v: compare, then jg (no setg/movzx/test of the bool)
    assert "setg" not in text and "setle" not in text, text
    # what stays a value: `ok` (printed) and the `not` of `a[i] < 7` (xor would clobber
    # the flags a branch needs)
    assert len(_widened(text)) == 2, text
    negated = _listing(NEGATED_BOOLS)
    loop = negated[negated.index("# line 10:"):]
    assert "xor" not in loop and not _widened(loop), loop
    assert "movzx" in loop  # the [bool] elements' byte loads stay


def _widened(text: str) -> list[str]:
    """The ``movzx r, r8`` that widen a bool made by ``setcc`` (not a byte load)."""
    return re.findall(r"movzx \w+, (?!byte ptr)\w+", text)


STAGES = [s for s in ("native", "emulated") if s in registry.names()]


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("source", [THREADED, NEGATED_BOOLS], ids=["threaded", "negated"])
def test_threaded_programs_print_what_the_interpreter_prints(stage, source):
    agrees_with_the_interpreter(source, "threaded", stage,
                                [[n] for n in ("0", "1", "2", "9", "40")])
