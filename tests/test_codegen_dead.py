"""Dead machine instructions (codegen/dead.py): a pure computation nobody reads goes,
anything with an effect, a physical register, memory or flags someone reads stays."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ssa_course.codegen.aarch64.machine import AARCH64_MACHINE
from ssa_course.codegen.dead import remove_dead_code
from ssa_course.codegen.mir import Imm, LabelRef, MBlock, Mem, MFunction, MInstr, PReg, VReg
from ssa_course.codegen.x86_64.machine import X86_64_MACHINE
from ssa_course.compilation import load_file
from ssa_course.lessons.l11_codegen import scheduled_ssa_quads

X86 = X86_64_MACHINE.bool_shapes
A64 = AARCH64_MACHINE.bool_shapes
NQUEENS = Path(__file__).resolve().parent.parent / "benchmarks/native/kernels/nqueens.tiny"

A, B, V, W = VReg(1, "a"), VReg(2, "b"), VReg(3, "v"), VReg(4, "w")


def _ins(op: str, *operands, defs=(), uses=(), cond=None) -> MInstr:
    return MInstr(op, list(operands), list(defs), list(uses), cond)


def _jmp(label: str) -> MInstr:
    return _ins("jmp", LabelRef(label))


def _fn(*blocks: MBlock) -> MFunction:
    return MFunction("f", [A, B], list(blocks))


def _ops(block: MBlock) -> list[str]:
    return [i.op for i in block.instrs]


def _dead_chain() -> list[MInstr]:
    """``v = a - b; w = v + b - 1`` (nqueens' index of `down`), x86-64 two-address."""
    return [_ins("mov", V, A, defs=[V], uses=[A]),
            _ins("sub", V, B, defs=[V], uses=[V, B]),
            _ins("lea", W, Mem(V, B), defs=[W], uses=[V, B]),
            _ins("lea", W, Mem(W, None, 1, -1), defs=[W], uses=[W])]


def test_a_chain_nobody_reads_goes_in_one_call():
    latch = MBlock("L", [_ins("cmp", A, B, uses=[A, B]), _ins("jcc", LabelRef("E"), cond="l"),
                         _jmp("R")], ["E", "R"])
    fn = _fn(MBlock("E", [*_dead_chain(), _jmp("L")], ["L"]), latch,
             MBlock("R", [_ins("ret")], []))
    assert remove_dead_code(fn, X86.pure, X86.no_flags) == 4
    assert _ops(fn.blocks[0]) == ["jmp"]


def test_what_is_read_later_or_has_an_effect_stays():
    read = MBlock("E", [*_dead_chain(), _ins("ret", uses=[W])], [])
    assert remove_dead_code(_fn(read), X86.pure, X86.no_flags) == 0
    effects = [
        _ins("mov", V, Mem(A), defs=[V], uses=[A]),  # a load
        _ins("mov", Mem(A), B, uses=[A, B]),  # a store
        _ins("mov", PReg("rdi"), A, defs=[PReg("rdi")], uses=[A]),  # a physical register
        _ins("imul", B, defs=[PReg("rax"), PReg("rdx")], uses=[B]),  # implicit results
        _ins("idiv", B, defs=[V], uses=[B]),  # may trap: not pure
        _ins("call", LabelRef("g"), defs=[V]),
    ]
    for instr in effects:
        fn = _fn(MBlock("E", [instr, _ins("ret")], []))
        assert remove_dead_code(fn, X86.pure, X86.no_flags) == 0, instr.op


def test_flags_someone_reads_keep_their_writer():
    """x86-64's `sub` sets the flags: dead in its register, it stays when a `jcc` reads
    them before a `cmp`/`test` sets them afresh (here, or in the block it jumps to)."""
    sub = _ins("sub", V, B, defs=[V], uses=[V, B])
    reads_here = MBlock("E", [sub, _ins("jcc", LabelRef("E"), cond="l"), _jmp("R")],
                        ["E", "R"])
    fn = _fn(reads_here, MBlock("R", [_ins("ret")], []))
    assert remove_dead_code(fn, X86.pure, X86.no_flags) == 0
    sub = _ins("sub", V, B, defs=[V], uses=[V, B])
    hop = MBlock("H", [_jmp("J")], ["J"])  # a lone jump in between
    reads_after = MBlock("J", [_ins("jcc", LabelRef("J"), cond="l"), _jmp("R")], ["J", "R"])
    fn = _fn(MBlock("E", [sub, _jmp("H")], ["H"]), hop, reads_after,
             MBlock("R", [_ins("ret")], []))
    assert remove_dead_code(fn, X86.pure, X86.no_flags) == 0
    # the same on AArch64, where `sub` leaves the flags alone: it goes
    sub = _ins("sub", V, V, B, defs=[V], uses=[V, B])
    fn = _fn(MBlock("E", [sub, _jmp("H")], ["H"]), hop, reads_after,
             MBlock("R", [_ins("ret")], []))
    assert remove_dead_code(fn, A64.pure, A64.no_flags) == 1
    # a compare in between sets them afresh: the x86-64 `sub` goes too
    sub = _ins("sub", V, B, defs=[V], uses=[V, B])
    fresh = MBlock("J", [_ins("cmp", A, Imm(0), uses=[A]),
                         _ins("jcc", LabelRef("J"), cond="l"), _jmp("R")], ["J", "R"])
    fn = _fn(MBlock("E", [sub, _jmp("J")], ["J"]), fresh, MBlock("R", [_ins("ret")], []))
    assert remove_dead_code(fn, X86.pure, X86.no_flags) == 1


def test_aarch64_constants_built_in_pieces_are_not_touched():
    """`movz`/`movk` write a register in pieces (the movk reads what the movz wrote,
    which its defs do not say): neither is pure, so neither is ever judged dead."""
    assert not {"movz", "movn", "movk"} & A64.pure


@pytest.mark.parametrize("target", ["x86-64", "aarch64"])
def test_nqueens_computes_the_down_index_once_per_loop_copy(target):
    """GCM puts `row - c + n - 1` in the join of the first two `&&` tests; threading copies
    it into the arm where `cols[c]` is set, which never reads it: it goes. Each of the
    two copies of the loop (versioned, checked) then computes it once, not twice: x86-64's
    `mov; sub; lea; lea` has one `sub` (there were 4 in all), AArch64's `sub; add; sub`
    two (there were 8)."""
    program = scheduled_ssa_quads(load_file(str(NQUEENS)))
    if target == "x86-64":
        from ssa_course.codegen.x86_64.compile import select_program
        fn = select_program(program, None).functions["place"]
        shapes = X86
    else:
        from ssa_course.codegen.aarch64.compile import select_program as select_a64
        fn = select_a64(program, False).functions["place"]
        shapes = A64
    assert sum(i.op == "sub" and i.defs != [] and isinstance(i.defs[0], VReg)
               for b in fn.blocks for i in b.instrs) == {"x86-64": 2, "aarch64": 4}[target]
    assert remove_dead_code(fn, shapes.pure, shapes.no_flags) == 0  # nothing dead is left


_OPS = ("mov", "add", "sub", "imul", "and", "xor", "lea", "neg", "cmp", "setcc", "movi")


def _straight(steps: list[tuple[str, int, int, int]], result: int, cond: str
              ) -> MFunction:
    """Straight x86-64 machine IR over six vregs (from the two arguments and constants):
    ``steps`` of (op, destination, source, constant), then ``rax = v[result]; ret``. A
    `setcc` reads the flags of the last op before it that wrote them."""
    v = [VReg(10 + k, f"v{k}") for k in range(6)]
    rdi, rsi, rax = PReg("rdi"), PReg("rsi"), PReg("rax")
    body = [_ins("mov", v[0], rdi, defs=[v[0]], uses=[rdi]),
            _ins("mov", v[1], rsi, defs=[v[1]], uses=[rsi])]
    body += [_ins("mov", v[k], Imm(k - 3), defs=[v[k]]) for k in range(2, 6)]
    for op, d, s, c in steps:
        rd, rs = v[d], v[s]
        if op == "mov":
            body.append(_ins("mov", rd, rs, defs=[rd], uses=[rs]))
        elif op == "movi":
            body.append(_ins("mov", rd, Imm(c), defs=[rd]))
        elif op == "lea":
            body.append(_ins("lea", rd, Mem(rs, None, 1, c), defs=[rd], uses=[rs]))
        elif op == "neg":
            body.append(_ins("neg", rd, defs=[rd], uses=[rd]))
        elif op == "cmp":
            body.append(_ins("cmp", rd, rs, uses=[rd, rs]))
        elif op == "setcc":
            body.append(_ins("setcc", rd, defs=[rd], cond=cond))
            body.append(_ins("movzx", rd, rd, defs=[rd], uses=[rd]))
        else:
            body.append(_ins(op, rd, rs, defs=[rd], uses=[rd, rs]))
    body += [_ins("mov", rax, v[result], defs=[rax], uses=[v[result]]),
             _ins("ret", uses=[rax])]
    fn = MFunction("f", [A, B], [MBlock("E", body, [])])
    fn.returns_value = True
    return fn


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_OPS), st.integers(0, 5), st.integers(0, 5),
                          st.integers(-4, 4)), min_size=1, max_size=16),
       st.integers(0, 5), st.sampled_from(["e", "ne", "l", "ge", "g", "le"]),
       st.integers(-9, 9), st.integers(-9, 9))
def test_removing_dead_code_never_changes_what_a_function_returns(steps, result, cond, x, y):
    """Whatever it removes (values nobody reads, flags a later op overwrites), the
    function returns what it returned, and a second run finds nothing more."""
    from mir_simulate import simulate

    before = simulate(_straight(steps, result, cond), [x, y])
    fn = _straight(steps, result, cond)
    remove_dead_code(fn, X86.pure, X86.no_flags)
    after = simulate(fn, [x, y])
    assert (after.status, after.value) == (before.status, before.value)
    assert remove_dead_code(fn, X86.pure, X86.no_flags) == 0
