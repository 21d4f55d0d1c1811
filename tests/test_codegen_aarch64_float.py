"""Floats in AArch64 machine code (issue #36): values as bits in x registers, each
operation in d0/d1 (codegen/aarch64/select_float.py), AAPCS64 at calls (float arguments
in d0-d7 counted apart from x0-x7, a float result in d0).

Every program runs emulated (unicorn) and, where installed, under qemu-aarch64, and must
print what the quads interpreter prints, end with its status and report its error. The
corpora's float programs run there too (tests/test_differential.py); these are the
corners: NaN, infinities and -0.0 in every comparison, the conversions and their trap,
many float arguments, floats spilled across calls.
"""

from __future__ import annotations

import re

import pytest

import ssa_course
from ssa_course import registry
from ssa_course.codegen.aarch64 import toolchain

STAGES = [s for s in ("emulated-aarch64", "qemu-aarch64")
          if registry.representation(s).unavailable() is None]
pytestmark = pytest.mark.skipif(not STAGES, reason=toolchain.emulator_missing() or "")

COMPARES = """
fn show(a: float, b: float) {
    print(a < b, a <= b, a > b, a >= b, a == b, a != b);
    print(a < 0.0, a <= 0.0, a > 0.0, a >= 0.0, a == 0.0, a != 0.0);
    print(0.0 < a, 0.0 <= a, 0.0 > a, 0.0 >= a, 0.0 == a, -0.0 != a);
    if (a < b) { print(1); } else { print(0); }
    if (!(a >= b)) { print(1); } else { print(0); }
}
fn pick(k: int, z: float) -> float {
    if (k == 0) { return z / z; }        // NaN
    if (k == 1) { return 1.0 / z; }      // Infinity
    if (k == 2) { return -1.0 / z; }     // -Infinity
    if (k == 3) { return -z; }           // -0.0
    if (k == 4) { return z; }            // 0.0
    if (k == 5) { return 1.5; }
    return -2.5;
}
fn main(n: int) {
    var z = float(n - n);
    for (var i = 0; i < 7; i = i + 1) {
        for (var j = 0; j < 7; j = j + 1) {
            show(pick(i, z), pick(j, z));
        }
    }
}
"""


def _same_as_quads(source: str, *args: object, name: str = "t.tiny") -> ssa_course.RunResult:
    comp = ssa_course.compile(source, name)
    want = ssa_course.run(comp, *args, via="quads")
    for stage in STAGES:
        got = ssa_course.run(comp, *args, via=stage)
        assert (got.stdout, got.status, got.error) == (want.stdout, want.status, want.error), \
            stage
    return want


def test_every_comparison_of_nan_infinities_and_zeros():
    """49 pairs of NaN, +-Infinity, -0.0, 0.0, 1.5, -2.5 through ==, !=, <, <=, >, >=,
    against a register and against 0.0 on either side, as a value and as a branch."""
    want = _same_as_quads(COMPARES, 1)
    first = want.stdout.splitlines()[:5]  # NaN against NaN: only != holds
    assert first == ["false false false false false true"] * 3 + ["0", "1"]


ARITH = """
fn main(n: int) {
    var z = float(n - n);
    var nan = z / z;
    var inf = 1.0 / z;
    var mz = -z;
    print(nan + 1.0, inf - inf, inf * z, mz * 1.0, mz + z, z - z, -mz, -(z - 1.0));
    print(1.0 / mz, 7.5 / 2.5, 0.1 + 0.2, 1e308 * 10.0, 5e-324 / 2.0, -z * 3.0);
    print(float(n), float(-n), float(9007199254740993 + n), float(-9223372036854775807 - 1));
}
"""


def test_arithmetic_specials_and_float_of_int():
    want = _same_as_quads(ARITH, 3)
    assert want.stdout.splitlines()[0].startswith("NaN NaN NaN -0.00000000000000000 ")


CONVERT = """
fn main(k: int) {
    var z = float(k - k);
    var x = 0.0;
    if (k == 0) { x = -9223372036854775808.0; }
    if (k == 1) { x = 9223372036854774784.0; }
    if (k == 2) { x = -2.75 + z; }
    if (k == 3) { x = -0.0 * (z + 1.0); }
    if (k == 4) { x = 9223372036854775808.0; }
    if (k == 5) { x = z / z; }
    if (k == 6) { x = 1.0 / z; }
    if (k == 7) { x = -1.0 / z; }
    if (k == 8) { x = -9223372036854777856.0; }
    print(int(x));
}
"""


@pytest.mark.parametrize("k,out", [(0, "-9223372036854775808\n"),
                                   (1, "9223372036854774784\n"), (2, "-2\n"), (3, "0\n"),
                                   (4, ""), (5, ""), (6, ""), (7, ""), (8, "")])
def test_int_of_float_truncates_or_traps_as_the_interpreters(k, out):
    """-2^63 converts; 2^63, NaN, the infinities and the next double below -2^63 stop
    with the interpreters' error (fcvtzs alone would saturate, or give 0 for NaN)."""
    want = _same_as_quads(CONVERT, k)
    assert want.stdout == out
    if not out:
        assert want.status == 2
        assert want.error == "error: float to int conversion out of range at 14:11"


ABI = """
fn mix(a: float, i: int, b: float, j: int, c: float, d: float, e: float, f: float,
       g: float, h: float, p: float, q: float, k: int, r: float) -> float {
    // ten floats (d0-d7, then two on the stack) between three ints (x0-x2)
    return a + 2.0 * b + 3.0 * c + 4.0 * d + 5.0 * e + 6.0 * f + 7.0 * g + 8.0 * h
        + 9.0 * p + 10.0 * q + 11.0 * r + float(i * 100 + j * 10 + k);
}
fn many(a: int, b: int, c: int, d: int, e: int, f: int, g: int, h: int, i: int,
        x: float, y: float) -> float {
    // nine ints (x0-x7, then one on the stack) and two floats (d0, d1)
    return float(a + b + c + d + e + f + g + h + i) * x - y;
}
fn fact(n: float) -> float {
    if (n <= 1.0) { return 1.0; }
    return n * fact(n - 1.0);
}
fn main(n: int) {
    var s = 0.25 * float(n);
    print(mix(s, 1, s + 1.0, 2, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 3, -s));
    print(many(1, 2, 3, 4, 5, 6, 7, 8, 9, s, 0.5), fact(float(n)), fact(30.0));
}
"""


def test_float_arguments_and_results_follow_aapcs64():
    want = _same_as_quads(ABI, 4)
    assert want.stdout == "497.00000000000000000\n44.50000000000000000 " \
        "24.00000000000000000 2.65252859812191032e+32\n"
    listing = _listing(ABI)
    body = listing[listing.index("tiny_mix:"):listing.index("tiny_many:")]
    assert "fmov x" in body and ", d7" in body  # the eighth float arrives in d7


SPILLS = """
fn g(x: float) -> float { return x * 0.5; }
fn main(n: int) {
    var a = float(n);
    var b = a + 1.0; var c = b + 1.0; var d = c + 1.0; var e = d + 1.0;
    var f = e + 1.0; var g1 = f + 1.0; var h = g1 + 1.0; var i = h + 1.0;
    var j = i + 1.0; var k = j + 1.0; var l = k + 1.0; var m = l + 1.0;
    var o = m + 1.0; var p = o + 1.0; var q = p + 1.0; var r = q + 1.0;
    var s = 0.0;
    for (var t = 0; t < n; t = t + 1) {
        s = s + g(a) + g(b) + g(c) + g(d) + g(e) + g(f) + g(g1) + g(h) + g(i);
        a = a + 0.5; b = b * 1.5; c = c - 0.25; d = d / 2.0; e = -e; f = f + s;
        g1 = g1 * g1; h = h - s; i = i + a; j = j + k; k = k * 0.5; l = l + m;
        m = m - 1.0; o = o + p; p = p * 2.0; q = q + r; r = r / 3.0;
    }
    print(s, a, b, c, d, e, f, g1, h);
    print(i, j, k, l, m, o, p, q, r);
}
"""


def test_floats_live_across_calls_spill_and_come_back():
    """Eighteen floats live across nine calls a trip: more than the callee-saved x19-x26
    hold, so some live in the frame (a spilled float is its bits in a stack slot)."""
    _same_as_quads(SPILLS, 5)
    listing = _listing(SPILLS)
    main = listing[listing.index("tiny_main:"):]
    assert re.search(r"str x\d+, \[x29, #-?\d+\]", main), "no float spilled"


def _listing(source: str) -> str:
    from contextlib import redirect_stdout
    from io import StringIO
    from pathlib import Path
    from tempfile import TemporaryDirectory

    from ssa_course.cli import main

    with TemporaryDirectory() as d:
        path = Path(d) / "t.tiny"
        path.write_text(source)
        out = StringIO()
        with redirect_stdout(out):
            assert main(["show", "--as", "asm", "--target", "aarch64", str(path)]) == 0
    return out.getvalue()


def test_the_listing_shows_the_patterns():
    """fneg for -x, fcmp #0.0 against a zero, scvtf/fcvtzs, constants from xzr or fmov's
    8-bit immediate, and no callee-saved d8-d15 ever written (AAPCS64 would make the
    function save them)."""
    listing = _listing(ARITH + COMPARES.replace("fn main(n: int)", "fn main2(n: int)")
                       + CONVERT.replace("fn main(k: int)", "fn main3(k: int)"))
    for form in (r"fneg d0, d0", r"fcmp d0, #0\.0", r"scvtf d0, x\d+", r"fcvtzs x\d+, d0",
                 r"fmov d1, #10\.0\n", r"fmov d\d, xzr", r"fmov d0, #-1\.0\n",
                 r"fcmp d0, d1\n\s+cset x\d+, mi", r"fdiv d0, d0, d1"):
        assert re.search(form, listing), form
    assert not re.search(r"\b(d[89]|d1[0-5])\b", listing)


def test_the_verifier_knows_which_register_file_an_operand_is_in():
    from ssa_course.codegen.aarch64.minstr import ins
    from ssa_course.codegen.aarch64.verify import check_operands
    from ssa_course.codegen.float_abi import float_bits
    from ssa_course.codegen.mir import Imm, MBlock, MFunction, PReg, VReg
    from ssa_course.errors import VerifyError

    v, d0, d1 = VReg(1, "x"), PReg("d0"), PReg("d1")
    good = [ins("fmov", d0, v), ins("fadd", d0, d0, d1), ins("fcmp", d0, Imm(0)),
            ins("fmov", d1, Imm(float_bits(2.5))),
            ins("fmov", v, d0), ins("scvtf", d1, v), ins("fcvtzs", v, d1)]
    for instr in good:
        assert v not in (*instr.defs, *instr.uses) or instr.op in ("fmov", "scvtf", "fcvtzs")
        assert d0 not in (*instr.defs, *instr.uses) and d1 not in (*instr.defs, *instr.uses)
    fn = MFunction("f", [], blocks=[MBlock("b", good + [ins("ret")])])
    check_operands(fn)
    for bad in (ins("fadd", d0, v, d1), ins("add", v, v, d0), ins("fcmp", d0, Imm(1)),
                ins("fmov", d0, Imm(float_bits(0.1))),
                ins("scvtf", v, d0), ins("fmov", v, v)):
        fn = MFunction("f", [], blocks=[MBlock("b", [bad, ins("ret")])])
        with pytest.raises(VerifyError, match="operand kinds legal"):
            check_operands(fn)


ARGS = "fn main(a: int, x: float, b: bool, y: float) { print(a, x, b, y, x * y); }\n"
# what the interpreters read too (the fast path, Infinity, signs, zeros)
SAME = ["2.0", "-1.5", ".5", "1.e5", "+7", "1e10", "0.1", "-0.0", "1e22", "1e23",
        "Infinity", "-Infinity", "+Infinity", "0.000125", "9007199254740992", "abc", ".",
        "1e", "1.5x", "--1", "Inf"]
# float.hex(), which the run face passes (every double, bit for bit)
HEX = {"0x1.8000000000000p+1": 3.0, "-0x0.0p+0": -0.0, "0x0.0000000000001p-1022": 5e-324,
       "0x1.fffffffffffffp+1023": 1.7976931348623157e308, "0x1.999999999999ap-4": 0.1}
INEXACT = ["1e400", "123456789012345678", "9007199254740993", "1e-23"]


def _compiled_args(tmp_path):
    from ssa_course.cli import main

    src, exe = tmp_path / "args.tiny", tmp_path / "args"
    src.write_text(ARGS)
    assert main(["compile", "--target", "aarch64", "-o", str(exe), str(src)]) == 0
    return exe.read_bytes()


def test_float_arguments_read_from_the_command_line(tmp_path):
    """_start's rt_parse_float (runtime_float_args.py): what the interpreters read, read
    the same; float.hex() bit for bit; other decimals refused in one line, status 1."""
    from ssa_course.codegen.aarch64.emulate import run_counted
    from ssa_course.floats import format_float

    exe = _compiled_args(tmp_path)
    comp = ssa_course.compile(ARGS, "args.tiny")
    for text in SAME:
        got, _ = run_counted(exe, ["3", text, "true", "2.0"], count=False)
        want = ssa_course.run(comp, "3", text, "true", "2.0", via="quads")
        assert (got.stdout, got.stderr.strip(), got.status) == \
            (want.stdout, want.error, want.status), text
    for text, value in HEX.items():
        got, _ = run_counted(exe, ["3", text, "false", "-0x1.0000000000000p+0"], count=False)
        assert got.stdout == f"3 {format_float(value)} false -1.00000000000000000 " \
            f"{format_float(-value)}\n", text
    for text in INEXACT:
        got, _ = run_counted(exe, ["3", "1.0", "true", text], count=False)
        assert got.status == 1 and got.stdout == "", text
        assert got.stderr == f"error: argument 'y' is a float compiled code cannot read " \
            f"exactly (at most 2^53 in its digits, exponent -22..22, or float.hex()): " \
            f"'{text}'\n"


def test_the_run_face_passes_every_float_exactly():
    """``run --via emulated-aarch64`` hands the executable float.hex(): values past the
    fast path (1e400 is Infinity, 0.1 + a 17th digit) arrive as the interpreters read them."""
    for text in ("1e400", "123456789012345678", "-1e-320", "0.30000000000000004"):
        _same_as_quads(ARGS, 3, text, "true", "2.5")


def test_a_float_is_not_copied_back_where_it_came_from():
    """peep.py: ``fmov x, d0`` then ``fmov d0, x`` keeps the first only (a sum's partial
    result stays in d0; a float returned at once is not copied back into d0), and a copy
    into an x register the ``ret`` after it does not read goes."""
    from ssa_course.codegen.aarch64 import peep
    from ssa_course.codegen.aarch64.minstr import ins
    from ssa_course.codegen.mir import MBlock, MFunction, PReg

    x5, x6, d0, d1 = PReg("x5"), PReg("x6"), PReg("d0"), PReg("d1")
    block = MBlock("b", [ins("fmov", x5, d0), ins("fmov", d0, x5), ins("fmov", d1, x6),
                         ins("fmov", x6, d1), ins("fmov", d1, x5), ins("fmov", x6, d0),
                         ins("ret")])
    assert peep.peephole(MFunction("f", [], blocks=[block])) == 3  # either way round
    assert [" ".join(map(str, i.operands)) for i in block.instrs] == [
        "x5 d0", "d1 x6", "d1 x5", ""]  # x6 = d0 went: the ret does not read x6
    x0 = PReg("x0")
    keep = MBlock("k", [ins("fmov", x0, d0), ins("ret", uses=(x0,))])
    assert peep.peephole(MFunction("g", [], blocks=[keep])) == 0  # an int result in x0
    source = "fn f(a: float, b: float) -> float { return a * b + a / b - 1.5; }\n" \
        "fn main() { print(f(3.0, 2.0)); }\n"
    assert _same_as_quads(source).stdout == "6.00000000000000000\n"
    listing = _listing(source)
    assert not re.search(r"fmov (x\d+), (d\d+)\n\s+fmov \2, \1\n", listing), listing
    body = listing[listing.index("tiny_f:"):listing.index("tiny_main:")]
    assert "fmov d0, x" in body and re.search(r"fsub d0, d0, d1\n\s+add x28", body), body


BRANCHES = """
fn main(n: int, k: int) {
    var z = float(k - k);
    var limit = float(n);
    if (k == 1) { limit = z / z; }
    var x = 0.0;
    var s = 0.0;
    while (x < limit) {
        if (x >= 2.5) { s = s + x; }
        if (!(x <= 1.0)) { s = s + 0.25; }
        x = x + 0.5;
    }
    print(s, x);
}
"""


@pytest.mark.parametrize("k", [0, 1])
def test_a_float_compare_read_by_a_branch_is_one_conditional_branch(k):
    """The bool a float compare makes only for a branch is threaded away (thread.py): fcmp
    then b.pl / b.lt / b.hi, the negations of mi / ge / ls, each true on NaN, so a NaN
    limit (k = 1) leaves the loop at once."""
    want = _same_as_quads(BRANCHES, 5, k)
    assert want.stdout == ("19.25000000000000000 5.00000000000000000\n" if k == 0 else
                           "0.00000000000000000 0.00000000000000000\n")
    main = _listing(BRANCHES)
    main = main[main.index("tiny_main:"):]
    assert "cset" not in main, main
    assert len(re.findall(r"fcmp d0, d1\n\s+b\.(pl|lt|hi|mi|ge|ls) ", main)) == 3, main


HANDLERS = """
fn risky(x: float, k: int) -> float {
    if (k % 3 == 0) { throw k; }
    return x * 2.0 + float(k);
}
fn main(n: int) {
    var s = 0.5;
    var t = -0.0;
    for (var i = 1; i <= n; i = i + 1) {
        try {
            s = risky(s, i) - t;
            t = t + 1.25;
        } catch (e) {
            s = s / float(e);
            t = -t;
            print(s, t, int(s * 100.0));
        }
    }
    print(s, t);
}
"""


def test_floats_live_into_a_handler():
    """A handler is entered by a throw with every live value in a stack slot: floats
    there are their bits like any other value."""
    want = _same_as_quads(HANDLERS, 10)
    assert want.stdout.splitlines()[-1] == "20.90123456790123413 -1.25000000000000000"


@pytest.mark.parametrize("program", ["COMPARES", "ABI", "SPILLS", "CONVERT", "HANDLERS"])
def test_float_programs_verify_before_and_after_allocation(program):
    """The verifier over AArch64 float code: every use defined on every path before
    allocation (d registers are no values: out of defs and uses), the call's integer
    registers (float arguments travel in d0-d7), operand kinds and files after."""
    from ssa_course.codegen.aarch64.compile import allocate_program, select_program
    from ssa_course.codegen.aarch64.verify import verify_program
    from ssa_course.compilation import compile_source
    from ssa_course.registry import build

    source = globals()[program]
    ssa = build(compile_source(source, "v.tiny"), "scheduled").ssa  # type: ignore[attr-defined]
    mprog = select_program(ssa)
    verify_program(mprog, allocated=False)
    allocate_program(mprog)
    verify_program(mprog)


MAIN_ARGS = """
fn main(a: float, i: int, b: float, c: float, d: float, e: float, f: float, g: float,
        h: float, j: int, p: float, q: float, k: int, l: int, m: int, n: int, o: int,
        r: int, s: int, t: bool) {
    print(a, b, c, d, e, f, g, h, p, q);
    print(i, j, k, l, m, n, o, r, s, t);
}
"""


def test_main_takes_floats_in_d_registers_and_on_the_stack():
    """_start places main's arguments by AAPCS64 as any call does: ten floats (d0-d7,
    two on the stack) among nine ints and a bool (x0-x7, two on the stack)."""
    args = ["1.5", "1", "2.5", "3.5", "4.5", "5.5", "6.5", "7.5", "8.5", "2", "9.5",
            "-10.5", "3", "4", "5", "6", "7", "8", "9", "true"]
    want = _same_as_quads(MAIN_ARGS, *args)
    assert want.stdout.splitlines()[1] == "1 2 3 4 5 6 7 8 9 true"
    assert want.stdout.split()[9] == "-10.50000000000000000"
