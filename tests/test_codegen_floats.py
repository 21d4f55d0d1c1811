"""Floats in x86-64 machine code (SSE2, issue #36): every program here must print, exit
and fail exactly as the quads interpreter does, natively and under the emulator.

IEEE comparisons with NaN, infinities and -0.0; ``int(x)``/``float(n)`` and the trap of
``int(x)`` without a 64-bit answer, at the edges of the range; System V's float
registers at calls (more than eight float and six int arguments, so the stack is used);
float results; floats in arrays and struct fields, across calls and spilled; main's
float arguments, read by the runtime exactly."""

from __future__ import annotations

import math
import subprocess

import pytest
from codegen_native import run_native, skip_reason

import ssa_course
from ssa_course import registry
from ssa_course.codegen.float_abi import float_bits
from ssa_course.codegen.mir import PReg
from ssa_course.codegen.native import format_args
from ssa_course.codegen.x86_64.compile import compile_program
from ssa_course.compilation import compile_source
from ssa_course.registry import build

STAGES = ("native", "emulated")


def _same_as_interpreter(source: str, args: list[str] | None = None,
                         name: str = "f.tiny") -> ssa_course.RunResult:
    comp = ssa_course.compile(source, name)
    want = ssa_course.run(comp, *(args or []), via="quads")
    ran = 0
    for via in STAGES:
        if registry.representation(via).unavailable() is not None:
            continue
        got = ssa_course.run(comp, *(args or []), via=via)
        assert (got.stdout, got.status, got.error) == (want.stdout, want.status,
                                                       want.error), via
        ran += 1
    if not ran:
        pytest.skip("neither native nor emulated x86-64 runs here")
    return want


SPECIALS = """
fn id(x: float) -> float { return x; }
fn main() {
    var vals = new float[7];
    vals[0] = id(0.0 / 0.0); vals[1] = id(1.0 / 0.0); vals[2] = id(-1.0 / 0.0);
    vals[3] = id(-0.0); vals[4] = id(0.0); vals[5] = id(1.5); vals[6] = id(-2.0);
    for (var i = 0; i < 7; i = i + 1) {
        for (var j = 0; j < 7; j = j + 1) {
            var a = vals[i];
            var b = vals[j];
            print(a == b, a != b, a < b, a <= b, a > b, a >= b);
            if (a < b) { print(1); }
            if (a <= b) { print(2); }
            if (a > b) { print(3); }
            if (a >= b) { print(4); }
            if (a == b) { print(5); }
            if (a != b) { print(6); }
            if (!(a < b)) { print(7); }
            print(a + b, a - b, a * b, a / b);
        }
    }
}
"""


def test_comparisons_and_arithmetic_on_nan_infinities_and_signed_zeros():
    out = _same_as_interpreter(SPECIALS).stdout
    assert "NaN" in out and "-0.00000000000000000" in out and "-Infinity" in out


CONVERSIONS = """
fn main() {
    print(int(2.9), int(-2.9), int(-0.5), int(-0.0), int(9223372036854774784.0));
    print(int(-9223372036854775808.0), int(4503599627370497.5));
    print(float(9223372036854775807), float(-9223372036854775807 - 1), float(0));
    print(float(9007199254740993), float(-3));
    print(int(%s));
}
"""


@pytest.mark.parametrize("value", [
    "0.0 / 0.0", "1.0 / 0.0", "-1.0 / 0.0", "9223372036854775808.0",
    "-9223372036854777856.0", "1e300", "-1e19", "5.0"])
def test_conversions_and_the_trap_of_int(value):
    r = _same_as_interpreter(CONVERSIONS % value)
    if value == "5.0":
        assert r.status == 0 and r.stdout.endswith("5\n")
    else:
        assert r.status == 2 and r.error.startswith(
            "error: float to int conversion out of range at 7:"), r.error


CALLS = """
fn many(a: float, i: int, b: float, c: float, j: int, d: float, e: float, k: int,
        f: float, g: float, l: int, h: float, m: int, x: float, n: int, y: float,
        o: int) -> float {
    print(a, b, c, d, e, f, g, h, x, y);
    print(i, j, k, l, m, n, o);
    var r = a - b * 2.0 + c - d + e - f + g - h + x - y + float(i + j + k + l + m + n + o);
    if (o > 0) {  // a real call (recursion is never inlined), the floats rotated
        return r + many(y, o, a, b, n, c, d, m, e, f, l, g, k, h, j, x, o - 7);
    }
    return r;
}

fn half(x: float) -> float { return x / 2.0; }

fn fact(n: int) -> float {
    if (n == 0) { return 1.0; }
    return float(n) * fact(n - 1);
}

fn main() {
    var r = many(1.5, 1, 2.5, 3.5, 2, 4.5, 5.5, 3, 6.5, 7.5, 4, 8.5, 5, 9.5, 6, 10.5, 7);
    print(r, half(r), half(half(-0.0)), fact(25), fact(171));
}
"""


def test_float_arguments_and_results_across_calls():
    out = _same_as_interpreter(CALLS).stdout
    assert out.splitlines()[1] == "1 2 3 4 5 6 7"


SPILLED = """
struct P { x: float; y: float; }

fn touch(n: int) -> int { return n + 1; }

fn main(n: int) {
    var a = float(n) + 0.1; var b = a * 1.5; var c = b - 0.25; var d = c / 3.0;
    var e = d + a; var f = e * b; var g = f - c; var h = g / d; var i = h + e;
    var j = i * 0.5; var k = j - f; var l = k + g; var m = l * 1.25; var o = m - h;
    var p = new P { x: o, y: -o };
    var arr = new float[4];
    arr[0] = a; arr[3] = o;
    var t = touch(n);
    print(a, b, c, d, e, f, g, h, i, j, k, l, m, o);
    print(a + b + c + d + e + f + g + h + i + j + k + l + m + o, t);
    print(p.x + p.y, p.y, arr[0], arr[1], arr[3]);
}
"""


def test_floats_live_across_a_call_spilled_in_arrays_and_fields():
    _same_as_interpreter(SPILLED, ["7"])


MAIN_ARGS = """
fn main(a: float, n: int, b: float) {
    print(a, n, b, a + b);
}
"""


@pytest.mark.parametrize("a", [0.1, -0.0, 1e-300, 5e-324, 1.7976931348623157e308,
                               math.inf, -math.inf, 0.30000000000000004, 730000.0])
def test_main_float_arguments_reach_machine_code_exactly(a):
    _same_as_interpreter(MAIN_ARGS, [repr(a), "-3", "2.5"])
    assert format_args([a])[0] in (a.hex(), "Infinity", "-Infinity")


def test_float_registers_at_a_call_and_in_the_callee():
    comp = compile_source(CALLS, "c.tiny")
    ssa = build(comp, "scheduled").ssa  # type: ignore[attr-defined]
    asm = compile_program(ssa, None, CALLS.splitlines(), step_limit=None)[1]
    many = asm[asm.index("tiny_many:"):asm.index("tiny_half:")]
    # the callee takes its eight register floats out of xmm0-xmm7 ...
    for k in range(8):
        assert f", xmm{k}" in many, k
    # ... its caller puts them there (the ninth and tenth floats and the seventh int on
    # the stack, in argument order), and a float result travels back in xmm0
    call = many.index("call tiny_many")
    before = many[:call].splitlines()[-40:]
    assert all(any(line.strip().startswith(f"movq xmm{k},") for line in before)
               for k in range(8))
    assert sum(line.strip().startswith("push") for line in before) == 3
    after = [line.strip() for line in many[call:].splitlines()[1:3]]
    assert after[0] == "add rsp, 32" and after[1].startswith("movq ")
    assert after[1].endswith(", xmm0")


def _exe(tmp_path, source: str) -> str:
    path = tmp_path / "f.tiny"
    path.write_text(source)
    exe = tmp_path / "f.exe"
    subprocess.run(["ssa-course", "compile", str(path), "-o", str(exe)], check=True)
    return str(exe)


@pytest.mark.parametrize(("text", "printed"), [
    ("1.0472", "1.04719999999999991"), ("-0.0", "-0.00000000000000000"),
    ("+2.5", "2.50000000000000000"), (".5", "0.50000000000000000"),
    ("5.", "5.00000000000000000"), ("1E5", "100000.00000000000000000"),
    ("1e23", "9.99999999999999916e+22"), ("1e-22", "1.00000000000000005e-22"),
    ("Infinity", "Infinity"), ("-Infinity", "-Infinity"),
    ("0x1.8000000000000p+1", "3.00000000000000000"),
    ("0x0.0000000000001p-1022", "4.94065645841246544e-324"),
])
def test_compiled_executable_reads_float_arguments(tmp_path, text, printed):
    if skip_reason() is not None:
        pytest.skip(skip_reason())
    exe = _exe(tmp_path, "fn main(x: float) { print(x); }\n")
    r = subprocess.run([exe, text], capture_output=True, text=True)
    assert (r.returncode, r.stdout) == (0, printed + "\n"), r.stderr


@pytest.mark.parametrize(("text", "problem"), [
    ("x", "must be a float, not 'x'"), ("1e", "must be a float"), ("NaN", "must be a float"),
    ("", "must be a float"), ("0x2.0p+0", "must be a float"),
    ("1e300", "cannot read exactly"), ("0.30000000000000004", "cannot read exactly"),
])
def test_compiled_executable_refuses_other_float_text_in_one_line(tmp_path, text, problem):
    if skip_reason() is not None:
        pytest.skip(skip_reason())
    exe = _exe(tmp_path, "fn main(x: float) { print(x); }\n")
    r = subprocess.run([exe, text], capture_output=True, text=True)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.startswith("error: argument 'x' ") and problem in r.stderr
    assert r.stderr.count("\n") == 1


def test_a_float_constant_is_its_bits():
    comp = compile_source("fn main() { print(-0.0, 2.5); }", "k.tiny")
    ssa = build(comp, "scheduled").ssa  # type: ignore[attr-defined]
    asm = compile_program(ssa, None, None, step_limit=None)[1]
    assert str(float_bits(2.5)) in asm


def test_a_float_order_tested_by_a_branch_branches_on_the_flags():
    # the seta/setae bool is threaded into ja/jae (or jbe/jb for the other arm): no setcc
    # is left, and NaN still takes the false arm (test_comparisons_... runs it)
    src = "fn f(a: float, b: float) -> int { if (a < b) { return 1; } return 2; }\n" \
          "fn main() { print(f(1.0, 2.0), f(0.0 / 0.0, 1.0)); }\n"
    comp = compile_source(src, "b.tiny")
    ssa = build(comp, "scheduled").ssa  # type: ignore[attr-defined]
    asm = compile_program(ssa, None, None, step_limit=None)[1]
    f = asm[asm.index("tiny_f:"):asm.index("tiny_main:")]
    lines = [line.strip() for line in f.splitlines()]
    k = next(k for k, line in enumerate(lines) if line.startswith("ucomisd"))
    assert lines[k + 1].split()[0] in ("ja", "jbe") and "seta" not in f
    assert _same_as_interpreter(src).stdout == "1 2\n"


@pytest.mark.parametrize("program", ["SPECIALS", "SPILLED", "CALLS"])
def test_floats_with_every_value_in_a_stack_slot(program):
    # the spill-all allocator's scratch registers carry the bits into and out of xmm
    source, args = {"SPECIALS": (SPECIALS, []), "SPILLED": (SPILLED, ["7"]),
                    "CALLS": (CALLS, [])}[program]
    want = ssa_course.run(ssa_course.compile(source, "s.tiny"), *args, via="quads")
    got = run_native(source, args, allocator="spill-all", backend="own",
                     emulated=skip_reason() is not None)
    assert (got.stdout, got.status) == (want.stdout, want.status)


@pytest.mark.parametrize("program", ["CALLS", "SPILLED", "SPECIALS", "CONVERSIONS"])
def test_float_programs_verify_before_and_after_allocation(program):
    from ssa_course.codegen.x86_64 import verify
    from ssa_course.codegen.x86_64.compile import allocate_program, select_program

    source = {"CALLS": CALLS, "SPILLED": SPILLED, "SPECIALS": SPECIALS,
              "CONVERSIONS": CONVERSIONS % "0.0 / 0.0"}[program]
    ssa = build(compile_source(source, "v.tiny"), "scheduled").ssa  # type: ignore[attr-defined]
    mprog = select_program(ssa, step_limit=1000)
    verify.verify_program(mprog)  # defined on every path, the call's integer registers
    allocate_program(mprog)
    verify.verify_program(mprog, allocated=True, laid_out=True)


def test_no_movq_back_into_an_xmm_register_that_holds_the_value():
    from ssa_course.codegen.mir import Imm, LabelRef, MBlock, MFunction
    from ssa_course.codegen.x86_64.minstr import call, ins
    from ssa_course.codegen.x86_64.peep_float import reuse_xmm

    rcx, rdx, x0, x1 = PReg("rcx"), PReg("rdx"), PReg("xmm0"), PReg("xmm1")
    block = MBlock("a", [
        ins("movq", rcx, x0), ins("movq", x0, rcx),  # gone: xmm0 == rcx
        ins("movq", x1, rdx), ins("addsd", x0, x1), ins("movq", x0, rcx),  # kept: written
        ins("movq", rcx, x0), ins("mov", rcx, Imm(5)), ins("movq", x0, rcx),  # kept: rcx new
        ins("movq", rdx, x1), call("rt_print_int", 1), ins("movq", x1, rdx),  # kept: a call
        ins("movq", x1, rdx),  # gone: the one before loaded it
        ins("jmp", LabelRef("a"))])
    fn = MFunction("f", [], [block])
    assert reuse_xmm(fn) == 2
    assert [i.op for i in block.instrs].count("movq") == 7
    # chained float operations: the result is not copied back before the next one
    src = "fn f(a: float, b: float, e: float) -> float { return (a * b + e) / b; }\n" \
          "fn main() { print(f(1.5, 2.0, 0.25)); }\n"
    comp = compile_source(src, "p.tiny")
    asm = compile_program(build(comp, "scheduled").ssa, None, None,  # type: ignore[attr-defined]
                          step_limit=None)[1]
    lines = [line.strip() for line in asm[asm.index("tiny_f:"):].splitlines()]
    for a, b in zip(lines, lines[1:], strict=False):
        if a.startswith("movq") and a.endswith(", xmm0"):
            assert b != f"movq xmm0, {a.split()[1].rstrip(',')}", (a, b)
    assert _same_as_interpreter(src).stdout == "1.62500000000000000\n"


def test_main_with_ten_float_and_seven_int_arguments():
    # _start places them as any caller does: xmm0-7, rdi..r9, the rest pushed in order
    src = ("fn main(a: float, i: int, b: float, c: float, j: int, d: float, e: float, "
           "k: int, f: float, g: float, l: int, h: float, m: int, x: float, n: int, "
           "y: float, o: int) {\n    print(a, b, c, d, e, f, g, h, x, y);\n"
           "    print(i, j, k, l, m, n, o);\n}\n")
    args = ["1.5", "1", "2.5", "-0.0", "2", "4.5", "1e-300", "3", "6.5", "7.5", "4",
            "Infinity", "5", "9.5", "6", "0.1", "7"]
    out = _same_as_interpreter(src, args).stdout
    assert out.endswith("Infinity 9.50000000000000000 0.10000000000000001\n1 2 3 4 5 6 7\n")
