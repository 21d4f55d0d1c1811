"""Instruction selection, phi lowering, frames, emission and the MIR verifier."""

from __future__ import annotations

import itertools
import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from codegen_native import run_native, skip_reason

from ssa_course.codegen import isel, select_effects
from ssa_course.codegen.mir import Imm, LabelRef, MBlock, Mem, MFunction, PReg, VReg
from ssa_course.codegen.mir_dot import mprogram_dot
from ssa_course.codegen.patterns import table_text
from ssa_course.codegen.phis import lower_phis, sequentialise
from ssa_course.codegen.x86_64 import patterns, select_float, select_ops
from ssa_course.codegen.x86_64 import select_effects as x86_effects
from ssa_course.codegen.x86_64.compile import allocate_program, compile_program, select_program
from ssa_course.codegen.x86_64.emit import instr_text
from ssa_course.codegen.x86_64.minstr import call, ins
from ssa_course.codegen.x86_64.verify import verify_function, verify_program
from ssa_course.compilation import compile_source
from ssa_course.errors import VerifyError
from ssa_course.registry import build
from ssa_course.stages import run as run_stage


def ssa_of(source: str, filename: str = "t.tiny"):
    return build(compile_source(source, filename), "scheduled").ssa


def mir_text(source: str, fn: str = "main") -> list[str]:
    mprog = select_program(ssa_of(source), step_limit=None)
    f = mprog.functions[fn]
    return [instr_text(f, i) for b in f.blocks for i in b.instrs]


def ops(lines: list[str]) -> list[str]:
    return [line.split()[0] for line in lines]


# -- parallel copies ---------------------------------------------------------------------

def _simulate(moves, regs):
    env = {id(r): f"old{r.id}" for r in regs}
    for d, s in moves:
        env[id(d)] = s.value if isinstance(s, Imm) else env[id(s)]
    return env


def _scratch_factory(start: int = 1000):
    counter = itertools.count(start)
    return lambda: VReg(next(counter), "swap")


def test_swap_needs_one_scratch_and_is_right():
    x, y = VReg(1, "x"), VReg(2, "y")
    moves = sequentialise([(x, y), (y, x)], _scratch_factory())
    env = _simulate(moves, [x, y])
    assert env[id(x)] == "old2" and env[id(y)] == "old1"
    assert len(moves) == 3  # save one, then two moves


def test_chain_needs_no_scratch():
    a, b, c = VReg(1), VReg(2), VReg(3)
    moves = sequentialise([(a, b), (b, c)], _scratch_factory())  # a=b, b=c at once
    assert moves == [(a, b), (b, c)]


def test_random_parallel_copies_keep_their_meaning():
    rnd = random.Random(11)
    for _ in range(300):
        regs = [VReg(k) for k in range(rnd.randint(1, 6))]
        dests = rnd.sample(regs, rnd.randint(1, len(regs)))
        copies = [(d, rnd.choice(regs) if rnd.random() < .8 else Imm(rnd.randint(-9, 9)))
                  for d in dests]
        moves = sequentialise(copies, _scratch_factory())
        before = _simulate([], regs)
        after = _simulate(moves, regs)
        for d, s in copies:
            assert after[id(d)] == (s.value if isinstance(s, Imm) else before[id(s)])
        untouched = [r for r in regs if all(r is not d for d, _ in copies)]
        assert all(after[id(r)] == before[id(r)] for r in untouched)


# -- patterns ------------------------------------------------------------------------------

def test_add_constant_is_lea_and_mul_by_3_is_lea():
    lines = mir_text("fn main(x: int) { print(x + 5, x * 3); }")
    assert any(re.fullmatch(r"lea %\d+\.\S+, \[%\d+\.x \+ 5\]", s) for s in lines), lines
    assert any(re.search(r"lea .*\[%\d+\.x \+ %\d+\.x\*2\]", s) for s in lines), lines
    assert "imul" not in ops(lines)


def test_multiply_and_divide_by_powers_of_two_use_shifts():
    lines = mir_text("fn main(x: int) { print(x * 8, x / 4, x % 4); }")
    assert "shl" in ops(lines) and "sar" in ops(lines)
    assert "idiv" not in ops(lines) and "imul" not in ops(lines)


def test_collatz_step_tests_the_low_bit_and_halves_without_a_copy():
    """`x % 2 == 0` read by its branch alone is `test x, 1` (no remainder made); `x / 2`
    takes the sign bit as its bias (no `sar t, 63`) and sums by lea, so the quotient may
    take x's register: gcc -O1's four instructions."""
    lines = mir_text("fn main(x: int) { var s = 0; while (x != 1) { if (x % 2 == 0) "
                     "{ x = x / 2; } else { x = 3 * x + 1; } s = s + 1; } print(s); }")
    assert any(re.fullmatch(r"test %\d+\.x\S*, 1", s) for s in lines), lines
    assert "and" not in ops(lines)
    assert not any(re.fullmatch(r"sar \S+, 63", s) for s in lines), lines
    assert any(re.fullmatch(r"shr %\d+\.bias, 63", s) for s in lines), lines
    assert any(re.fullmatch(r"lea \S+, \[%\d+\.x\S* \+ %\d+\.bias\]", s) for s in lines)
    # by 4 the bias is the sign spread, then its low 2 bits; a remainder kept as a value
    # (not only tested) is still made
    lines = mir_text("fn main(x: int) { var r = x % 2; print(x / 4, r == 0, r); }")
    assert any(re.fullmatch(r"sar %\d+\.bias, 63", s) for s in lines), lines
    assert any(re.fullmatch(r"shr %\d+\.bias, 62", s) for s in lines), lines


def test_an_index_plus_a_constant_proven_in_bounds_is_a_displacement():
    """insertion_sort's `a[j + 1] = ...` (lesson 09 proved it in bounds): j*8 + 16, and
    `j + 1` itself is never computed (nothing else reads it)."""
    source = (Path(__file__).resolve().parent.parent
              / "benchmarks/native/kernels/insertion_sort.tiny").read_text()
    lines = mir_text(source)
    stores = [s for s in lines if re.fullmatch(r"mov qword ptr \[%\d+\.\S+ \+ "
                                               r"%\d+\.j\S*\*8 \+ 16\], \S+", s)]
    assert len(stores) == 2, lines  # the shift inside the loop and the insertion after it
    assert not any(re.fullmatch(r"lea \S+, \[%\d+\.j\S* \+ 1\]", s) for s in lines), lines


def test_magic_division_matches_tiny_division():
    from ssa_course.codegen.magic import quotient
    from ssa_course.runtime import tiny_div

    rnd = random.Random(5)
    lo, hi = -(1 << 63), (1 << 63) - 1
    xs = [0, 1, -1, lo, hi, lo + 1, hi - 1] + [rnd.randint(lo, hi) for _ in range(400)]
    divisors = [3, 7, -7, 10, 641, 1000003, -(1 << 31) + 1, hi, -hi] + [
        rnd.choice((-1, 1)) * rnd.randint(3, 1 << 62) for _ in range(40)]
    for d in divisors:
        if abs(d) & (abs(d) - 1) == 0:
            continue
        for x in xs:
            assert quotient(x, d) == tiny_div(x, d, None), (x, d)


def test_division_by_a_constant_multiplies():
    lines = mir_text("fn main(x: int) { print(x / 7, x % 10); }")
    assert "idiv" not in ops(lines)
    assert ops(lines).count("imul") == 3  # two high products, one multiple for the %


def test_general_division_checks_zero_and_minus_one():
    lines = mir_text("fn main(x: int, y: int) { print(x / y); }")
    joined = "\n".join(lines)
    assert re.search(r"test (%\S+), \1\nje \S+trap", joined), joined
    assert "cmp %" in joined and ", -1\nje" in joined
    assert "idiv" in ops(lines) and "cqo" in ops(lines)


def test_compare_used_by_branch_is_fused():
    lines = mir_text("fn main(a: int, b: int) { if (a < b) { print(1); } }")
    assert "setl" not in ops(lines) and not any(o.startswith("set") for o in ops(lines))
    assert any(s.startswith("jl ") or s.startswith("jge ") for s in lines), lines


def test_branch_on_negations_flips_the_condition():
    lines = mir_text("fn main(a: bool, b: int) { if (!a) { print(1); } if (!(b < 4)) "
                     "{ print(2); } }")
    assert "xor" not in ops(lines) and not any(o.startswith("set") for o in ops(lines))
    assert any(s.startswith("je ") for s in lines) and any(s.startswith("jge ") for s in lines)


def test_compare_with_zero_is_test():
    lines = mir_text("fn main(a: int) { if (a > 0) { print(1); } }")
    assert any(re.fullmatch(r"test (%\S+), \1", s) for s in lines), lines
    assert not any(s.startswith("cmp") for s in lines)


def test_bool_value_uses_setcc():
    lines = mir_text("fn main(a: int, b: int) { var c = a == b; print(c); }")
    assert "sete" in ops(lines) and "movzx" in ops(lines)


def test_pattern_table_names_every_marker_in_select_ops():
    names = {p.name for p in patterns.PATTERNS}
    source = "".join(Path(m.__file__).read_text()
                     for m in (select_ops, select_effects, x86_effects, isel,
                               select_float))
    markers = set(re.findall(r"  # pattern: ([^\n]+)$", source, re.MULTILINE))
    assert markers and markers <= names, markers - names
    text = patterns.table_text()
    assert all(p.name in text for p in patterns.PATTERNS)
    assert max(len(line) for line in text.splitlines()) <= 100  # fits a notebook's width
    narrow = table_text(patterns.PATTERNS[:3], width=40)
    assert max(len(line) for line in narrow.splitlines()) <= 40
    assert [p.name in narrow for p in patterns.PATTERNS[:4]] == [True, True, True, False]


def test_unknown_operator_is_a_located_message():
    from ssa_course.codegen.isel import select_function
    from ssa_course.codegen.patterns import CodegenError
    from ssa_course.codegen.x86_64.machine import X86_64_MACHINE
    from ssa_course.quads.ir import Function, Instr, Label, Program
    from ssa_course.tiny.types import INT

    fn = Function("main", [("x", INT)], None,
                  [Label("b"), Instr("frob", "y", INT, ["x"]), Instr("ret")])
    with pytest.raises(CodegenError, match="no machine pattern for 'frob'"):
        select_function(X86_64_MACHINE, fn, Program({"main": fn}), [])


# -- phis, frames, emission -------------------------------------------------------------

SWAP_LOOP = """
fn main(n: int) {
  var x = 1; var y = 2; var i = 0;
  while (i < n) { var t = x; x = y; y = t; i = i + 1; }
  print(x, y);
}
"""


def test_critical_edge_gets_its_own_block():
    v, w = VReg(1, "v"), VReg(2, "w")
    head = MBlock("h", [ins("mov", v, Imm(0)), ins("cmp", v, Imm(3)),
                        ins("jcc", LabelRef("h"), cond="l"), ins("jmp", LabelRef("x"))],
                  ["h", "x"])
    exit_ = MBlock("x", [ins("mov", PReg("rax"), w), ins("ret", uses=(PReg("rax"),))])
    fn = MFunction("f", [], [head, exit_])
    lower_phis(fn, {("h", "h"): [(w, v)], ("h", "x"): [(w, Imm(5))]}, lambda h: VReg(9, h))
    labels = [b.label for b in fn.blocks]
    assert len(labels) == 4 and labels[0] == "h"
    assert head.succs == [labels[1], labels[2]] or sorted(head.succs) == sorted(labels[1:3])
    assert all(t not in ("h", "x") for t in head.succs)
    for b in fn.blocks[1:3]:
        assert b.instrs[0].op == "mov" and b.instrs[-1].op == "jmp"


def test_loop_phis_swap_through_a_scratch_register():
    mprog = select_program(ssa_of(SWAP_LOOP), step_limit=None)
    fn = mprog.functions["main"]
    verify_function(fn)
    swap = [i for b in fn.blocks for i in b.instrs
            if i.op == "mov" and any(isinstance(o, VReg) and o.hint == "swap"
                                     for o in i.operands)]
    assert swap, "the swap of x and y needs a scratch register"


def test_frame_aligns_calls_with_stack_arguments():
    src = """
fn sub(a: int, b: int) -> int { return a - b; }
fn f(a: int, b: int, c: int, d: int, e: int, g: int, h: int) -> int {
  return sub(a, b) + c - d + e - g + h;  // f calls: no leaf, son-opt keeps the call
}
fn main(x: int) { print(f(x, 2, 3, 4, 5, 6, 7)); }
"""
    mprog = select_program(ssa_of(src), step_limit=5)
    allocate_program(mprog, "spill-all")
    verify_program(mprog, allocated=True, laid_out=True)
    main = [instr_text(mprog.functions["main"], i)
            for b in mprog.functions["main"].blocks for i in b.instrs]
    assert "sub rsp, 8" in main and "add rsp, 16" in main  # one push + padding
    f = [instr_text(mprog.functions["f"], i) for b in mprog.functions["f"].blocks
         for i in b.instrs]
    assert any("[rbp + 16]" in s for s in f)  # the seventh argument


def test_listing_has_source_lines_and_assembles():
    src = "fn main(n: int) {\n  var a = new int[n];\n  print(a[0]);\n}\n"
    mprog, text = compile_program(ssa_of(src), None, src.splitlines(), step_limit=100,
                                  allocator="spill-all")
    assert "# line 2: var a = new int[n];" in text
    assert "# line 3: print(a[0]);" in text
    assert mprog.trap_sites == [(2, 11)]
    if shutil.which("as") is None:
        pytest.skip("'as' is not installed (binutils)")
    r = subprocess.run(["as", "-o", "/dev/null", "-"], input=text, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr


def test_no_step_limit_means_no_fuel_checks():
    src = "fn main(n: int) { while (n > 0) { n = n - 1; } }"
    _, with_fuel = compile_program(ssa_of(src), None, [], step_limit=10, allocator="color")
    _, without = compile_program(ssa_of(src), None, [], step_limit=None, allocator="color")
    burn = "sub qword ptr [rip + rt_fuel]"
    # function entry, and the loop header's test (copied to the loop's entry and latch)
    assert with_fuel.count(burn) == 3
    assert burn not in without
    assert "sub r15, 1" in without  # the depth check stays


def test_while_loop_is_rotated():
    src = "fn main(n: int) { var i = 0; while (i < n) { print(i); i = i + 1; } }"
    _, text = compile_program(ssa_of(src), None, [], step_limit=None, allocator="color")
    body = text[text.index("tiny_main:"):]
    back = re.search(r"    jl (\S+)", body)
    assert back and body.index(back.group(1) + ":") < back.start(), body  # backward jl
    assert "jmp" not in body, body  # one conditional jump per iteration, no other


def test_mir_dot_has_a_box_per_block_and_dashed_handler_edges():
    src = """
fn f(x: int) -> int { throw x; }
fn main() { try { print(f(3)); } catch (e) { print(e); } }
"""
    mprog = select_program(ssa_of(src), step_limit=None)
    dot = mprogram_dot(mprog)
    nodes = re.findall(r"\[shape=record", dot)
    assert len(nodes) == sum(len(f.blocks) for f in mprog.functions.values())
    assert "style=dashed" in dot
    if shutil.which("dot"):
        r = subprocess.run(["dot", "-Tsvg"], input=dot, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr


# -- the verifier names the broken invariant -------------------------------------------------

def _fn(*blocks: MBlock) -> MFunction:
    return MFunction("f", [], list(blocks))


def _ret() -> list:
    return [ins("ret")]


def test_verifier_memory_to_memory():
    m1, m2 = Mem(PReg("rbp"), disp=-8), Mem(PReg("rbp"), disp=-16)
    with pytest.raises(VerifyError, match="operand kinds legal") as e:
        verify_function(_fn(MBlock("a", [ins("mov", m1, m2), *_ret()])))
    assert "@f block a instruction 0" in str(e.value)


def test_verifier_big_immediate_only_in_mov_to_register():
    v = VReg(1)
    verify_function(_fn(MBlock("a", [ins("mov", v, Imm(1 << 40)), *_ret()])))
    with pytest.raises(VerifyError, match="operand kinds legal"):
        verify_function(_fn(MBlock("a", [ins("mov", v, Imm(0)), ins("add", v, Imm(1 << 40)),
                                          *_ret()])))


def test_verifier_use_not_defined_on_every_path():
    v = VReg(1, "v")
    a = MBlock("a", [ins("cmp", PReg("rdi"), Imm(0)), ins("jcc", LabelRef("b"), cond="e"),
                     ins("jmp", LabelRef("c"))], ["b", "c"])
    b = MBlock("b", [ins("mov", v, Imm(1)), ins("jmp", LabelRef("c"))], ["c"])
    c = MBlock("c", [ins("mov", PReg("rax"), v), *_ret()])
    with pytest.raises(VerifyError, match="every use defined on every path") as e:
        verify_function(_fn(a, b, c))
    assert "block c" in str(e.value)


def test_verifier_block_must_end_in_a_jump_and_succs_match():
    with pytest.raises(VerifyError, match="block ends in a jump"):
        verify_function(_fn(MBlock("a", [ins("mov", PReg("rax"), Imm(1))])))
    with pytest.raises(VerifyError, match="succs match"):
        verify_function(_fn(MBlock("a", [ins("jmp", LabelRef("b"))], []),
                            MBlock("b", _ret())))


def test_verifier_argument_register_not_set():
    blk = MBlock("a", [ins("mov", PReg("rdi"), Imm(1)), call("rt_print_int", 1),
                       call("rt_print_int", 1), *_ret()])
    with pytest.raises(VerifyError, match="calling convention") as e:
        verify_function(_fn(blk))
    assert "instruction 2" in str(e.value) and "rdi" in str(e.value)


def _loop_with_latch_first(latch_sets_rdi: bool) -> MFunction:
    """entry sets rdi and jumps to a loop header H; the latch L (laid out before H, as
    jumps.place_latches lays a short latch) goes back to H; H's exit prints."""
    latch = [ins("mov", PReg("rdi"), Imm(2)) if latch_sets_rdi
             else ins("cmp", PReg("rsi"), Imm(0))]
    entry = MBlock("e", [ins("mov", PReg("rdi"), Imm(1)), ins("jmp", LabelRef("h"))], ["h"])
    lat = MBlock("l", [*latch, ins("jmp", LabelRef("h"))], ["h"])
    head = MBlock("h", [ins("cmp", PReg("rsi"), Imm(0)), ins("jcc", LabelRef("l"), cond="e"),
                        ins("jmp", LabelRef("x"))], ["l", "x"])
    out = MBlock("x", [call("rt_print_int", 1), *_ret()])
    return _fn(entry, lat, head, out)


def test_verifier_reads_a_loop_whose_latch_comes_first_in_the_layout():
    # rdi is written before the loop and nothing in it writes rdi: set at the call on every
    # path. A latch visited before its header must not be read as "nothing written" (the
    # simple corpus' ch08_regress1 after place_latches).
    verify_function(_loop_with_latch_first(latch_sets_rdi=False))
    verify_function(_loop_with_latch_first(latch_sets_rdi=True))


def test_verifier_still_finds_an_argument_register_one_path_leaves_unset():
    fn = _loop_with_latch_first(latch_sets_rdi=True)
    # the entry calls first (a call clobbers rdi) and no longer sets rdi after it
    fn.blocks[0].instrs[0] = call("rt_print_newline")
    with pytest.raises(VerifyError, match="rdi not set"):
        verify_function(fn)


def test_verifier_stack_misaligned_at_call():
    blk = MBlock("a", [ins("push", PReg("rbp")), ins("push", PReg("rbx")),
                       call("rt_print_newline"), *_ret()])
    with pytest.raises(VerifyError, match="stack 16-byte aligned"):
        verify_function(_fn(blk), allocated=True, laid_out=True)


def test_every_corpus_function_verifies_before_and_after():
    from corpus import load_bril_corpus, load_corpus

    for case in [*load_corpus(), *load_bril_corpus()]:
        comp = compile_source(case.source, case.path.name)
        # every corpus program compiles (compile errors live in tests/errors/): a crash
        # while building is a failure, never a skip
        ssa = build(comp, "scheduled").ssa
        for alloc in ("spill-all", "color"):
            mprog = select_program(ssa, step_limit=1000)
            verify_program(mprog)
            allocate_program(mprog, alloc)
            verify_program(mprog, allocated=True, laid_out=True)
            left = [i for f in mprog.functions.values() for b in f.blocks for i in b.instrs
                    if any(isinstance(r, VReg) for r in (*i.defs, *i.uses))]
            assert not left, f"{case.name}: virtual registers left after {alloc}"


# -- native runs (against the C stand-in runtime) ------------------------------------------

native = pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")

DEPTH = """
fn down(n: int) -> int { if (n == 0) { return 0; } return down(n - 1) + 1; }
fn main(n: int) { print(down(n)); }"""

PROGRAMS = {
    "swap_loop": (SWAP_LOOP, ["5"]),
    "division": ("""
fn main(a: int, b: int) {
  var m = -9223372036854775807 - 1;
  print(a / b, a % b, -a / b, -a % b, m / -1, m % -1, m / 2, m % 2);
  print(a / 4, a % 4, -a / 4, -a % 4, a / -8, -a % -8, a / 1, a % -1);
  print(a / 7, a % 7, -a / 7, -a % -7, m / 7, m % 7, m / -3, m % -3, m / 1000003,
        m % 1000003, (m + 1) / 6, (m + 1) % 6, a / 9223372036854775807, m % 641);
  var x = 0; var i = -9;
  while (i < 10) { x = x + i / 4 + i % 8 + i / -2 + i % -16;
    if (i % 2 == 0) { x = x * 3; }
    i = i + 1; }
  print(x, a / (b - 3));
  var h = -7; var odd = 0;  // halving and the even test, on both signs and the edges
  while (h < 8) { if (h % 2 == 0) { odd = odd * 3 + h / 2; } else { odd = odd - h / 2; }
    h = h + 1; }
  print(odd, m / 2, (m + 1) / 2, (m + 1) / -2, -(m + 1) / 2, m / 4, (m + 1) / 4, m / -4);
}""", ["37", "3"]),
    "arrays_and_structs": ("""
struct P { x: int; next: [P]; }
fn main(n: int) {
  var ps = new P[n];
  var i = 0;
  while (i < n) { ps[i] = new P { x: i * i, next: ps }; i = i + 1; }
  print(ps[n - 1].x, len(ps[2].next), ps[1].next == ps);
  var q = new P[2];
  print(q[1].x);
}""", ["4"]),
    "exceptions_across_calls": ("""
fn g(d: int) -> int { if (d == 0) { throw 42; } return g(d - 1) + 1; }
fn main(n: int) {
  var k = 7; var total = 0;
  var i = 0;
  while (i < n) {
    try { total = total + g(i % 3 + k - 7); if (i == 1) { throw i; } }
    catch (e) { total = total + e * k; }
    i = i + 1;
  }
  print(total, k);
  throw total;
}""", ["4"]),
    "many_arguments": ("""
fn f(a: int, b: int, c: int, d: int, e: int, g: int, h: int, k: bool) -> int {
  if (k) { return a - b + c - d + e - g + h; } return f(h, g, e, d, c, b, a, true) * 2;
}
fn main(x: int) { print(f(x, 2, 3, 4, 5, 6, 7, false), f(1, 2, 3, 4, 5, 6, x, true)); }
""", ["10"]),
    "deep_recursion": ("""
fn down(n: int) -> int { if (n == 0) { return 0; } return down(n - 1) + 1; }
fn main(n: int) { print(down(n)); print(down(n * 3)); }""", ["50000"]),
    "callee_saved_across_throw": ("""
fn c(x: int) -> int { if (x > 2) { throw x; } return x; }
fn b(x: int) -> int { var k = x * 7; var r = c(x); return k + r + c(x + 1); }
fn a(x: int) -> int {
  var r = 0;
  try { r = b(x); } catch (e) { r = -e; }
  return r;
}
fn main(n: int) {
  var keep1 = n * 3; var keep2 = n + 11; var s = 0; var i = 0;
  while (i < n) { s = s + a(i) * keep1 + keep2; i = i + 1; }
  print(s, keep1, keep2);
}""", ["6"]),
    "handler_without_catch_value": ("""
fn f(x: int) -> int { if (x % 2 == 1) { throw 1; } return x; }
fn main(n: int) {
  var t = n * 5; var u = n - 1; var i = 0;
  while (i < n) {
    try { t = t + f(i) + u; } catch (e) { print(t, u); }
    i = i + 1;
  }
  print(t);
}""", ["5"]),
    "depth_limit_last_frame_fits": (DEPTH, ["99998"]),  # main + 99,999 frames of down
    "depth_limit_one_frame_more": (DEPTH, ["99999"]),
    "runaway_recursion": ("fn f(n: int) -> int { return f(n + 1) + 1; }\n"
                          "fn main() { print(f(0)); }", []),
    "throws_do_not_leak_depth": ("""
fn g(d: int) -> int { if (d == 0) { throw 1; } return g(d - 1); }
fn main(n: int) {
  var caught = 0; var i = 0;
  while (i < n) { try { caught = caught + g(2); } catch (e) { caught = caught + e; } i = i + 1; }
  print(caught);
}""", ["110000"]),
    "main_calls_itself": ("fn main(n: int) { if (n > 0) { main(n - 1); } print(n); }", ["4"]),
    "endless": ("fn main() { var i = 0; while (true) { i = i + 1; } }", []),
}


@native
@pytest.mark.parametrize("allocator", ["spill-all", "color"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_native_run_matches_the_interpreter(name, allocator):
    source, args = PROGRAMS[name]
    expected = run_stage(compile_source(source, f"{name}.tiny"), args, via="quads")
    got = run_native(source, args, filename=f"{name}.tiny", allocator=allocator,
                     steps=2_000_000)
    assert got.stdout == expected.stdout
    assert got.status == expected.status
    if expected.error:
        assert got.stderr.strip() == expected.error.strip()


def test_standin_skip_reason_is_one_line():
    reason = skip_reason()
    assert reason is None or "\n" not in reason


def test_gnu_and_keystone_give_the_same_bytes():
    from ssa_course.codegen.toolchain import gnu_missing, keystone_missing
    from ssa_course.codegen.x86_64.assemble import assemble

    if gnu_missing() or keystone_missing():
        pytest.skip(gnu_missing() or keystone_missing() or "")
    for name in ("division", "exceptions_across_calls", "many_arguments"):
        source, _ = PROGRAMS[name]
        _, text = compile_program(ssa_of(source), None, source.splitlines(), step_limit=100)
        assert assemble(text, "gnu").text == assemble(text, "keystone").text, name


def test_compiled_program_takes_its_limits_per_run():
    from ssa_course.codegen.x86_64.compile import compile_parts

    src = "fn main(n: int) { while (n > 0) { n = n - 1; } print(n); }"
    cp = compile_parts(ssa_of(src), src.splitlines())
    assert "sub qword ptr [rip + rt_fuel]" in cp.program_asm
    assert "_start" not in cp.program_asm and "_start" in cp.source(1000)
    assert cp.source(1000) != cp.source(2000)  # the limit is the runtime's data
    plain = compile_parts(ssa_of(src), src.splitlines(), fuel=False)
    assert "rt_fuel]" not in plain.program_asm
    if skip_reason() is None:
        from ssa_course.codegen.x86_64.assemble import assemble

        for steps, status in ((100, 2), (10_000_000, 0)):
            image = assemble(cp.source(steps))
            r = subprocess.run([image.path, "5000"], capture_output=True, text=True,
                               timeout=60)
            assert r.returncode == status, r.stderr
            if status:
                assert r.stderr == "error: step limit exceeded\n"


def test_selection_table_pairs_quads_with_instructions():
    from ssa_course.codegen.isel import selection_table

    ssa = ssa_of("fn main(a: int, b: int) { if (a < b) { print(a * 9); } }")
    rows = selection_table(ssa.functions["main"], ssa)
    by_op = {q.split("=")[-1].split()[0] if "=" in q else q.split()[0]: out for q, out in rows}
    assert by_op["lt"] == []  # fused into the branch
    assert any(s.startswith("cmp ") for s in by_op["br"]) and any(
        s.startswith("jl ") or s.startswith("jge ") for s in by_op["br"])
    assert any(s.startswith("lea ") and "*8" in s for s in by_op["mul"])


# -- wide constants hoisted out of loops (hoist.py) ----------------------------------------

LCG = """
fn main(n: int) {
  var h = 88172645463325252; var i = 0;
  while (i < n) { h = h * 6364136223846793005 + 1442695040888963407; i = i + 1; }
  print(h, n * 6364136223846793005);
}
"""


def test_wide_constant_in_a_loop_is_loaded_once_before_it():
    _, text = compile_program(ssa_of(LCG), None, [], step_limit=None, allocator="color")
    body = text[text.index("tiny_main:"):]
    back = re.search(r"    jl (\S+)", body)
    assert back, body
    top = body.index(back.group(1) + ":")
    loop, before = body[top:back.start()], body[:top]
    assert re.search(r"imul (\w+), (\w+)\n    add \1, \w+\n", loop), loop  # registers only
    for c in ("6364136223846793005", "1442695040888963407"):
        assert c not in loop, loop
        assert re.search(rf"mov \w+, {c}\n", before), before
    # outside any loop the constant is still loaded right where it is used
    assert re.search(r"mov (\w+), 6364136223846793005\n    imul \w+, \1\n",
                     body[back.end():]), body


def test_wide_constant_outside_loops_is_rematerialised_at_each_use():
    lines = mir_text("fn main(x: int) { print(x * 5000000000, x + 5000000000); }")
    loads = [k for k, s in enumerate(lines) if s.endswith(", 5000000000")]
    assert len(loads) == 2, lines
    assert lines[loads[0] + 1].startswith("imul ") and lines[loads[1] + 1].startswith("add ")


def _qfn(*blocks: tuple[str, list]):
    from ssa_course.codegen.quadcfg import function_blocks
    from ssa_course.quads.ir import Function, Instr, Label

    body: list = []
    for label, quads in blocks:
        body.append(Label(label))
        for q in quads:
            op, *labels = q.split()
            body.append(Instr(op, args=["c"] if op == "br" else [], labels=labels))
    return function_blocks(Function("f", [], None, body))


def test_hoist_plan_innermost_loop_and_its_preheader_point():
    from ssa_course.codegen import hoist

    # entry; outer loop {oh, ob, ih, ib}: its body ob jumps to an inner loop {ih, ib}
    plan = hoist.plan(_qfn(("entry", ["jmp oh"]), ("oh", ["br ob x"]), ("ob", ["jmp ih"]),
                           ("ih", ["br ib oh"]), ("ib", ["jmp ih"]), ("x", ["ret"])))
    assert plan.loop_of == {"oh": "oh", "ob": "oh", "ih": "ih", "ib": "ih"}
    assert plan.preheader == {"oh": "entry", "ih": "ob"}  # each idom: ob is in the outer loop
    # an outer header that only branches is passed over (its test stays copyable)
    plan = hoist.plan(_qfn(("entry", ["jmp oh"]), ("oh", ["br ih x"]), ("ih", ["br ib oh"]),
                           ("ib", ["jmp ih"]), ("x", ["ret"])))
    assert plan.preheader == {"oh": "entry", "ih": "entry"}
    # a loop headed by the first block loads in the machine entry block
    plan = hoist.plan(_qfn(("h", ["br h x"]), ("x", ["ret"])))
    assert plan.preheader == {"h": hoist.ENTRY} and plan.loop_of == {"h": "h"}


def test_hoist_plan_skips_irreducible_cycles_and_loops_that_call():
    from ssa_course.codegen import hoist

    # a cycle entered at both a and b: no block dominates the other, no natural loop
    plan = hoist.plan(_qfn(("entry", ["br a b"]), ("a", ["jmp b"]), ("b", ["br a x"]),
                           ("x", ["ret"])))
    assert plan.loop_of == {} and plan.preheader == {}
    # a loop holding a try (and so its handler) is not hoisted into, nor one that calls;
    # a call-free loop inside one that calls still is (``enter`` ends its block, as every
    # terminator does: the ``jmp b`` after it is dead, its body is b, its handler x)
    for op in ("enter b x", "call", "print", "newarr", "newstruct"):
        plan = hoist.plan(_qfn(("entry", ["jmp h"]), ("h", ["br t x"]), ("t", [op, "jmp b"]),
                               ("b", ["br c h"]), ("c", ["br c h"]), ("x", ["ret"])))
        assert plan.loop_of == {"c": "c"} and plan.preheader == {"c": "b"}, op


# Every way a wide constant reaches an instruction inside a loop (an operand of mul, add,
# sub, compare, rem; a stored value and field; the left of a sub), a call-free loop nested
# in one that calls (and prints across calls, and catches what a callee throws: not
# hoisted into), and the same constants outside loops.
WIDE_LOOPS = """
struct P { v: int; }
fn g(a: int, b: int) -> int { if (a < b) { throw a - b; } return a - b; }
fn main(x: int, n: int) {
  var h = x; var acc = 0; var i = 0;
  var a = new int[4]; var p = new P { v: 0 };
  while (i < n) {
    h = h * 6364136223846793005 + 1442695040888963407;
    acc = acc + (h - 5000000000) % 7000000001 + h / 10000000000;
    if (h < 4000000000) { acc = acc - 1; }
    if (x > -3000000000) { acc = acc + 1; }
    a[i % 4] = 5000000000; p.v = -6000000000;
    acc = acc + a[(i + 1) % 4] * -6000000000 + p.v;
    var j = 0;
    while (j < 3) { acc = acc * 3000000019 + j; j = j + 1; }
    try { acc = acc + g(acc, 7000000000); } catch (e) { acc = acc + e * 9000000000; }
    if (i == 1) { print(8000000000); }
    i = i + 1;
  }
  var k = 0; var s = x;
  while (k < n) {
    s = s * 6364136223846793005 - 5000000000;
    if (s < 4000000000) { s = s + 7000000000 + 2147483648; }
    a[k % 4] = 5000000000 + a[k % 4]; p.v = -6000000000 - p.v;
    k = k + 1;
  }
  print(h, acc, s, a[0], a[1], p.v, x * 3000000019, x + 5000000000, x < 4000000000);
}
"""

CORNERS = [0, 1, -1, -(1 << 63), (1 << 63) - 1]


def _corner_args() -> list[list[str]]:
    rnd = random.Random(11)
    xs = CORNERS + [rnd.randint(-(1 << 63), (1 << 63) - 1) for _ in range(4)]
    return [[str(x), n] for x in xs for n in ("0", "3")]


def test_wide_constants_in_loops_keep_their_meaning_in_the_simulator():
    """Machine IR before and after allocation (the simulator) against the interpreter."""
    import copy

    from mir_simulate import simulate_program

    from ssa_course.codegen.names import function_symbol
    from ssa_course.codegen.regalloc import allocate

    comp = compile_source(WIDE_LOOPS, "wide.tiny")
    mprog = select_program(build(comp, "scheduled").ssa, step_limit=None)
    main = mprog.functions["main"]
    def loads(value: int) -> int:
        return sum(1 for b in main.blocks for i in b.instrs if i.op == "mov"
                   and isinstance(i.operands[1], Imm) and i.operands[1].value == value)

    assert loads(3000000019) == 2  # before the inner loop, and where it is used after
    assert loads(5000000000) == 4  # 2 in the loop that calls, 1 after, 1 for the 2nd loop
    assert loads(6364136223846793005) == 2  # at its use in the first loop, before the 2nd
    before = {function_symbol(n): f for n, f in copy.deepcopy(mprog.functions).items()}
    after = {}
    for name, fn in mprog.functions.items():
        allocate(fn)
        after[function_symbol(name)] = fn
    for args in _corner_args():
        expected = run_stage(comp, args, via="quads")
        values = [int(a) for a in args]
        r0 = simulate_program(before, "tiny_main", values, mprog.trap_sites, 10**6, 1000)
        r1 = simulate_program(after, "tiny_main", values, mprog.trap_sites, 10**6, 1000,
                              check_abi=True)
        assert r0.text == r1.text == expected.stdout, args
        assert (r1.status == "return") == (expected.status == 0), args


@native
def test_wide_constants_in_loops_keep_their_meaning_natively():
    comp = compile_source(WIDE_LOOPS, "wide.tiny")
    for args in _corner_args():
        expected = run_stage(comp, args, via="quads")
        got = run_stage(comp, args, via="native")
        assert (got.status, got.stdout, got.error) == (
            expected.status, expected.stdout, expected.error), args
