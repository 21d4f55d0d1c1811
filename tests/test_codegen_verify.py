"""The machine-IR verifiers of both targets: the checks they share and their messages.

x86-64 (:mod:`ssa_course.codegen.x86_64.verify`) and AArch64 (:mod:`ssa_course.codegen.aarch64.
verify`) run the same checks from :mod:`ssa_course.codegen.verify_shared`, each with its
own argument registers, result register and instruction syntax, and word a broken
invariant the same way. Each test here runs on both, through a :class:`Target` that
builds the target's instructions.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from corpus import load_bril_corpus, load_corpus

from ssa_course.codegen.aarch64 import minstr as a64_minstr
from ssa_course.codegen.aarch64 import verify as a64_verify
from ssa_course.codegen.mir import Imm, LabelRef, MBlock, MFunction, MInstr, PReg, VReg
from ssa_course.codegen.verify_shared import Callees
from ssa_course.codegen.x86_64 import minstr as x86_minstr
from ssa_course.codegen.x86_64 import verify as x86_verify
from ssa_course.compilation import compile_source
from ssa_course.errors import VerifyError
from ssa_course.quads.ir import Instr
from ssa_course.registry import build


@dataclass(frozen=True)
class Target:
    name: str
    args: tuple[str, ...]  # argument registers
    ins: Callable[..., MInstr]
    call: Callable[..., MInstr]
    verify: Callable[..., None]  # verify_function
    call_text: str  # how a call of rt_print_int prints
    eq: str  # the condition "equal"

    def mov(self, reg: str, value: int) -> MInstr:
        return self.ins("mov", PReg(reg), Imm(value))

    def jmp(self, label: str) -> MInstr:
        return self.ins("jmp", LabelRef(label))


X86 = Target("x86-64", x86_verify.RULES.arg_regs, x86_minstr.ins, x86_minstr.call,
             x86_verify.verify_function, "call rt_print_int", "e")
A64 = Target("aarch64", a64_verify.RULES.arg_regs, a64_minstr.ins, a64_minstr.call,
             a64_verify.verify_function, "bl rt_print_int", "eq")
TARGETS = pytest.mark.parametrize("t", [X86, A64], ids=["x86-64", "aarch64"])


def _fn(*blocks: MBlock) -> MFunction:
    return MFunction("f", [], list(blocks))


def _ret(t: Target) -> MInstr:
    return t.ins("ret")


def _one_path_unset(t: Target) -> MFunction:
    """a: a call (clobbers every argument register), then a branch; b sets the first
    argument register, c does not; d prints it."""
    a0 = t.args[0]
    return _fn(
        MBlock("a", [t.call("rt_print_newline"), t.ins("cmp", PReg(t.args[1]), Imm(0)),
                     t.ins("jcc", LabelRef("b"), cond=t.eq), t.jmp("c")], ["b", "c"]),
        MBlock("b", [t.mov(a0, 1), t.jmp("d")], ["d"]),
        MBlock("c", [t.ins("cmp", PReg(t.args[1]), Imm(1)), t.jmp("d")], ["d"]),
        MBlock("d", [t.call("rt_print_int", 1), _ret(t)]))


@TARGETS
def test_argument_register_unset_on_one_path_is_named(t):
    with pytest.raises(VerifyError, match="calling convention respected") as e:
        t.verify(_one_path_unset(t), allocated=True)
    assert e.value.where == f"@f block d instruction 0 ({t.call_text})"
    assert e.value.detail == f"argument register {t.args[0]} not set before the call"


@TARGETS
def test_argument_register_set_on_every_path_passes(t):
    fn = _one_path_unset(t)
    fn.blocks[2].instrs.insert(0, t.mov(t.args[0], 2))  # c sets it too
    t.verify(fn, allocated=True)


def _loop_with_latch_first(t: Target, latch_sets: bool) -> MFunction:
    """e sets the first argument register and jumps to a loop header h; the latch l (laid
    out before h, as jumps.place_latches lays a short latch) goes back to h; h's exit
    prints."""
    a0, a1 = t.args[0], t.args[1]
    latch = [t.mov(a0, 2) if latch_sets else t.ins("cmp", PReg(a1), Imm(0))]
    return _fn(
        MBlock("e", [t.mov(a0, 1), t.jmp("h")], ["h"]),
        MBlock("l", [*latch, t.jmp("h")], ["h"]),
        MBlock("h", [t.ins("cmp", PReg(a1), Imm(0)), t.ins("jcc", LabelRef("l"), cond=t.eq),
                     t.jmp("x")], ["l", "x"]),
        MBlock("x", [t.call("rt_print_int", 1), _ret(t)]))


@TARGETS
def test_a_latch_laid_out_before_its_header_is_no_false_positive(t):
    t.verify(_loop_with_latch_first(t, latch_sets=False), allocated=True)
    t.verify(_loop_with_latch_first(t, latch_sets=True), allocated=True)
    # ... and the check still sees a path that leaves the register unset: the entry
    # calls first (clobbering it) and no longer sets it after
    fn = _loop_with_latch_first(t, latch_sets=False)
    fn.blocks[0].instrs[0] = t.call("rt_print_newline")
    with pytest.raises(VerifyError, match=f"register {t.args[0]} not set") as e:
        t.verify(fn, allocated=True)
    assert e.value.where.startswith("@f block x instruction 0")


@TARGETS
def test_a_calls_value_is_written_in_the_result_register(t):
    # AArch64 returns in x0, its first argument register: `h(g())` passes g's value on
    # without a move, and so does `print(new S {...})`. x86-64 returns in rax, no
    # argument register: the same code leaves rdi unset.
    returning = Callees({"tiny_g": 0, "tiny_h": 1}, frozenset({"tiny_g", "rt_new_struct"}))
    void = Callees({"tiny_g": 0, "tiny_h": 1}, frozenset())
    chained = _fn(MBlock("a", [t.call("tiny_g"), t.call("tiny_h", 1), _ret(t)]))
    made = _fn(MBlock("a", [t.mov(t.args[0], 1), t.call("rt_new_struct", 1),
                            t.call("rt_print_int", 1), _ret(t)]))
    for fn in (chained, made):
        if t is A64:
            t.verify(fn, allocated=True, callees=returning)
        with pytest.raises(VerifyError, match=f"register {t.args[0]} not set"):
            t.verify(fn, allocated=True, callees=returning if t is X86 else void)


@TARGETS
def test_a_tiny_function_gets_one_register_per_parameter(t):
    fn = _fn(MBlock("a", [t.mov(t.args[0], 1), t.call("tiny_g", 1), _ret(t)]))
    t.verify(fn, allocated=True, callees=Callees({"tiny_g": 1}))
    with pytest.raises(VerifyError, match="calling convention") as e:
        t.verify(fn, allocated=True, callees=Callees({"tiny_g": 2}))
    assert e.value.detail == "tiny_g takes 2 arguments"


@TARGETS
def test_a_handler_starts_with_only_the_result_register(t):
    # a throw lands in a handler with every caller-saved register clobbered: the thrown
    # value (in the result register) is all that is set there
    handler = MBlock("h", [t.call("rt_print_int", 1), _ret(t)], handler=True)
    fn = _fn(MBlock("a", [t.mov(t.args[0], 1), t.jmp("h")], ["h"]), handler)
    if t is A64:  # x0 holds the thrown value
        t.verify(fn, allocated=True)
    else:  # rax holds it; rdi was clobbered by the throw
        with pytest.raises(VerifyError, match="register rdi not set"):
            t.verify(fn, allocated=True)


def test_corpus_programs_with_calls_verify_on_both_targets():
    from ssa_course.codegen.aarch64.compile import compile_parts as a64_parts
    from ssa_course.codegen.aarch64.compile import select_program as a64_select
    from ssa_course.codegen.x86_64.compile import allocate_program, select_program

    checked = 0
    for case in [*load_corpus(), *load_bril_corpus()]:
        ssa = build(compile_source(case.source, case.path.name), "scheduled").ssa
        if not any(isinstance(i, Instr) and i.op == "call"
                   for f in ssa.functions.values() for i in f.body):
            continue  # no call of a Tiny function: only runtime calls
        checked += 1
        mprog = select_program(ssa, step_limit=1000)
        x86_verify.verify_program(mprog)
        allocate_program(mprog)
        x86_verify.verify_program(mprog, allocated=True, laid_out=True)
        a64_verify.verify_program(a64_select(ssa), allocated=False)
        a64_verify.verify_program(a64_parts(ssa).mprog)
    assert checked >= 20


# -- one message shape on both targets ------------------------------------------------------

def _broken(t: Target, invariant: str) -> tuple[MFunction, dict]:
    """A function of target ``t`` that breaks ``invariant``, and how to verify it."""
    a0, a1 = t.args[0], t.args[1]
    after = {"allocated": True}
    if invariant == "block ends in a jump":
        return _fn(MBlock("a", [t.mov(a0, 1)])), after
    if invariant == "succs match the block's branches":
        return _fn(MBlock("a", [t.jmp("b")], []), MBlock("b", [_ret(t)])), after
    if invariant == "branches name a label":
        return _fn(MBlock("a", [t.ins("jmp", LabelRef(""))], [])), after
    if invariant == "every use defined on every path":
        v = VReg(1, "v")
        return _fn(
            MBlock("a", [t.ins("cmp", PReg(a1), Imm(0)), t.ins("jcc", LabelRef("b"), cond=t.eq),
                         t.jmp("c")], ["b", "c"]),
            MBlock("b", [t.ins("mov", v, Imm(1)), t.jmp("c")], ["c"]),
            MBlock("c", [t.ins("mov", PReg(a0), v), _ret(t)])), {"allocated": False}
    if invariant == "calling convention respected":
        return _one_path_unset(t), after
    if invariant == "operand kinds legal for the opcode":
        return _fn(MBlock("a", [t.ins("mov", Imm(1), Imm(2)), _ret(t)])), after
    assert invariant == "stack 16-byte aligned"
    if t is X86:  # System V: aligned at calls
        return _fn(MBlock("a", [t.ins("push", PReg("rbp")), t.ins("push", PReg("rbx")),
                                t.call("rt_print_newline"), _ret(t)])), \
            {"allocated": True, "laid_out": True}
    # AAPCS64: sp moves by multiples of 16
    return _fn(MBlock("a", [t.ins("sub", PReg("sp"), PReg("sp"), Imm(8)), _ret(t)])), after


INVARIANTS = ["block ends in a jump", "succs match the block's branches",
              "branches name a label", "every use defined on every path",
              "calling convention respected", "operand kinds legal for the opcode",
              "stack 16-byte aligned"]


@pytest.mark.parametrize("invariant", INVARIANTS)
def test_the_same_broken_invariant_reads_the_same_on_both_targets(invariant):
    from ssa_course.codegen.aarch64.emit import instr_text as a64_text
    from ssa_course.codegen.x86_64.emit import instr_text as x86_text

    errors = {}
    for t, text in ((X86, x86_text), (A64, a64_text)):
        fn, how = _broken(t, invariant)
        with pytest.raises(VerifyError) as e:
            t.verify(fn, **how)
        err = e.value
        assert err.invariant == invariant, (t.name, str(err))
        assert str(err) == f"verify: {invariant}: {err.where}" + (
            f" ({err.detail})" if err.detail else "")
        # the place: "@f block L", or "... instruction k (the instruction as the
        # target's listing writes it)"
        m = re.fullmatch(r"@f block (\w+)(?: instruction (\d+) \((.*)\))?", err.where)
        assert m is not None, err.where
        if m[2] is not None:
            instr = fn.blocks[[b.label for b in fn.blocks].index(m[1])].instrs[int(m[2])]
            try:
                expected = text(fn, instr)
            except (AssertionError, AttributeError, IndexError, KeyError, TypeError,
                    ValueError):
                expected = instr.op  # too broken to print: named by its op
            assert m[3] == expected
        # the target's registers, written as x86-64's, make the same detail (the stack
        # rules differ: System V checks calls, AAPCS64 every move of sp)
        detail = err.detail
        for mine, x86 in zip(t.args, X86.args, strict=False):  # x86-64 has six
            detail = re.sub(rf"\b{mine}\b", x86, detail)
        errors[t.name] = (m[1], m[2] is None, detail)
    x86, a64 = errors["x86-64"], errors["aarch64"]
    if invariant == "stack 16-byte aligned":
        assert x86[:2] == a64[:2]
    else:
        assert x86 == a64


def test_instructions_are_named_in_the_targets_own_syntax():
    # the shared checks once printed AArch64 instructions as Intel syntax
    with pytest.raises(VerifyError) as e:
        A64.verify(_one_path_unset(A64), allocated=True)
    assert "(bl rt_print_int)" in str(e.value)
    with pytest.raises(VerifyError) as e:
        A64.verify(_broken(A64, "block ends in a jump")[0], allocated=True)
    assert e.value.where == "@f block a instruction 0 (movz x0, #0x1)"
