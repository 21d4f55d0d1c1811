"""Floats (issue #36): Bril's float printing, Tiny's float rules and IEEE-correct folding.

Every expected string below was printed by Node.js (``x.toFixed(17)``,
``x.toExponential(17)``), which is what Bril's reference interpreter uses; the corpus
programs in ``tests/programs/float`` and ``tests/bril/float`` run through every stage in
``tests/test_differential.py``.
"""

from __future__ import annotations

import math

import pytest

import ssa_course
from ssa_course import opcodes, registry
from ssa_course.errors import SourceError
from ssa_course.floats import const_key, float_to_int, format_float, ieee_div
from ssa_course.quads import bril
from ssa_course.tiny import compile_tiny

# (value, what brili prints): ties (2^-18 ends in ...625 at the 18th decimal: JavaScript
# rounds the tie up, Python's format would round it to even), the exponent form at
# |log10| >= 10 with "e+10" (not "e+010"), signed zeros, NaN and the infinities.
GOLDEN = [
    (2.0 ** -18, "0.00000381469726563"),
    (-(2.0 ** -18), "-0.00000381469726563"),
    (2.0 ** -20, "0.00000095367431641"),
    (0.1, "0.10000000000000001"),
    (1.0 / 3.0, "0.33333333333333331"),
    (1e10, "1.00000000000000000e+10"),
    (9999999999.0, "9999999999.00000000000000000"),
    (1e-10, "1.00000000000000004e-10"),
    (1.5e-10, "0.00000000015000000"),
    (1e21, "1.00000000000000000e+21"),
    (1.1e11, "1.10000000000000000e+11"),
    (1e-21, "9.99999999999999908e-22"),
    (5e-324, "4.94065645841246544e-324"),
    (1.7976931348623157e308, "1.79769313486231571e+308"),
    (-1e300, "-1.00000000000000005e+300"),
    (123456789.125, "123456789.12500000000000000"),
    (0.0, "0.00000000000000000"),
    (-0.0, "-0.00000000000000000"),
    (math.inf, "Infinity"),
    (-math.inf, "-Infinity"),
    (math.nan, "NaN"),
]


@pytest.mark.parametrize(("value", "text"), GOLDEN, ids=[t for _, t in GOLDEN])
def test_floats_print_as_brili_prints_them(value, text):
    assert format_float(value) == text


def test_python_would_round_the_tie_the_other_way():
    # why floats.py works on the exact decimal value: Python rounds half to even
    assert f"{2.0 ** -18:.17f}" == "0.00000381469726562"
    assert format_float(2.0 ** -18).endswith("563")


def test_ieee_division_and_conversion():
    assert ieee_div(1.0, 0.0) == math.inf and ieee_div(-1.0, 0.0) == -math.inf
    assert ieee_div(1.0, -0.0) == -math.inf and math.isnan(ieee_div(0.0, 0.0))
    assert math.isnan(ieee_div(math.nan, 0.0))
    assert float_to_int(-2.9) == -2 and float_to_int(2.0 ** 63) is None
    assert float_to_int(-(2.0 ** 63)) == -(2 ** 63)
    assert float_to_int(math.nan) is None and float_to_int(-math.inf) is None
    assert const_key(0.0) != const_key(-0.0) and const_key(1) != const_key(1.0)


# ------------------------------------------------------------------ Tiny's rules

def _run(source: str, *args: str, via: str = "ast") -> ssa_course.RunResult:
    return ssa_course.run(ssa_course.compile(source, "f.tiny"), *args, via=via)


def test_literals_and_operators():
    r = _run("fn main() { print(1.5 + 2.5e-3, 1e10 * 2.0, -1.5, 7.0 / 2.0, 1.5 < 2.0); }")
    assert r.stdout == ("1.50249999999999995 2.00000000000000000e+10 -1.50000000000000000 "
                        "3.50000000000000000 true\n")


@pytest.mark.parametrize(("source", "message", "col"), [
    ("fn main() { print(1 + 1.5); }", "type mismatch: '+' on int and float", 21),
    ("fn main() { print(1.5 == 1); }", "type mismatch: '==' on float and int", 23),
    ("fn main() { print(5.0 % 2.0); }", "'%' needs int operands, not float and float", 23),
    ("fn main() { print(1e999); }", "float literal too large", 19),
    ("fn main() { print(int(3)); }", "'int' needs float, not int", 19),
    ("fn main() { print(float(3.0)); }", "'float' needs int, not float", 19),
    ("fn main() { var x: int = 1.5; }", "type", 26),
    ("fn main() { print(!1.5); }", "'!' needs bool, not float", 19),
])
def test_type_errors_point_at_the_operator(source, message, col):
    with pytest.raises(SourceError) as info:
        compile_tiny(source, "f.tiny")
    text = info.value.render()
    assert message in text and f"f.tiny:1:{col}:" in text, text
    assert text.splitlines()[-1].strip().startswith("^")


def test_int_conversion_out_of_range_is_a_located_runtime_error():
    for via in ("ast", "quads", "julia", "son", "son-opt", "optimized", "scheduled"):
        r = _run("fn main() {\n  var z = 0.0;\n  print(1);\n  print(int(1.0 / z));\n}", via=via)
        assert (r.stdout, r.status) == ("1\n", 2), via
        assert r.error == "error: float to int conversion out of range at 4:9", via


def test_float_main_arguments():
    r = _run("fn main(x: float) { print(x * 2.0); }", "-1.25")
    assert r.stdout == "-2.50000000000000000\n"
    r = _run("fn main(x: float) { print(x); }", "nan")
    assert r.status == 1 and "must be a float" in r.error


def test_the_printer_writes_floats_back():
    from ssa_course.tiny.printer import format_source

    src = "fn main() { print(int(-1.5e-07 * float(3)), 0.25, 1e+300); }"
    again = format_source(compile_tiny(src, "f.tiny"))
    assert "int(-1.5e-07 * float(3))" in again and "1e+300" in again
    assert _run(again).stdout == _run(src).stdout


# ------------------------------------------------------------------ folding


PROGRAM = """
fn main(n: int) {
    var x = float(n);
    print(x * 0.0, x + 0.0, x == x, x != x, (x + 1.0) + 1.0, x - x, x * 1.0, x / x);
    print(1.5 * 2.0, 1.0 / 3.0, 0.0 - 0.0, -(0.0));
    var nan = 0.0 / 0.0;
    print(nan == nan, 1.0 / 0.0);
}
"""


def _ops(stage: str) -> list[str]:
    comp = ssa_course.compile(PROGRAM, "fold.tiny")
    program = registry.build(comp, stage)
    return [i.op for i in program.functions["main"].instrs()]


@pytest.mark.parametrize("stage", ["lvn", "optimized", "scheduled-bril"])
def test_no_unsafe_float_rewrites(stage):
    ops = _ops(stage)
    # x * 0.0 is NaN for NaN/inf, -0.0 for x < 0: the fmul stays (and x * 1.0 is exact but
    # the table has no float identities at all)
    assert ops.count("fmul") >= 1, ops
    # x + 0.0 (-0.0 + 0.0 is 0.0), (x + 1.0) + 1.0 (not reassociated into x + 2.0)
    assert ops.count("fadd") >= 3 - (stage != "lvn"), ops
    # x == x is false for NaN; x - x is NaN for infinities; x / x too
    assert "feq" in ops and "fsub" in ops and "fdiv" in ops, ops


@pytest.mark.parametrize("stage", ["lvn", "optimized"])
def test_float_constants_fold_only_when_finite(stage):
    comp = ssa_course.compile(PROGRAM, "fold.tiny")
    program = registry.build(comp, stage)
    consts = [i.value for i in program.functions["main"].instrs() if i.op == "const"]
    assert 3.0 in consts and 1.0 / 3.0 in consts  # 1.5 * 2.0 and 1 / 3 fold
    assert any(repr(c) == "-0.0" for c in consts)  # -(0.0) folds to -0.0, not to 0.0
    assert all(not isinstance(c, float) or math.isfinite(c) for c in consts)
    want = _run(PROGRAM, "-3").stdout
    assert ssa_course.run(comp, "-3", via=stage).stdout == want


def test_reassociation_would_change_the_answer():
    src = "fn main(n: int) { var x = float(n); print((x + 1.0) + 1.0, x + (1.0 + 1.0)); }"
    big = str(2 ** 53)
    outs = {ssa_course.run(ssa_course.compile(src, "r.tiny"), big, via=via).stdout
            for via in ("ast", "quads", "lvn", "son-opt", "optimized", "scheduled")}
    assert outs == {"9.00719925474099200e+15 9.00719925474099400e+15\n"}


def test_float_rows_have_no_algebra():
    for name in ("fadd", "fsub", "fmul", "fdiv", "feq", "flt", "fle", "fgt", "fge"):
        row = opcodes.get(name)
        assert (row.right_identity, row.left_identity, row.zero, row.same) == \
            (None, None, None, None), name
    assert opcodes.get("fdiv").fold((1.0, 0.0)) is None  # infinity: stays for the run
    assert opcodes.get("fdiv").fold((1.0, 4.0)) == 0.25


# ------------------------------------------------------------------ Bril


def test_bril_text_and_json_round_trip_floats():
    text = ("@main {\n  a: float = const -0.0;\n  b: float = const 1e+300;\n"
            "  c: float = const 5;\n  d: float = fadd a b;\n  e: bool = fle a c;\n"
            "  print a b c d e;\n}\n")
    program = bril.parse_bril_text(text, "t.bril")
    again = bril.to_bril_text(program)
    assert "const -0.0;" in again and "const 1e+300;" in again and "const 5.0;" in again
    assert bril.to_bril_text(bril.parse_bril_text(again, "t.bril")) == again
    js = bril.dumps_json(program)
    assert bril.to_bril_text(bril.parse_bril_json(js, "t.json")) == again
    r = ssa_course.run(ssa_course.compile(text, "t.bril"))
    assert r.stdout == ("-0.00000000000000000 1.00000000000000005e+300 5.00000000000000000 "
                        "1.00000000000000005e+300 true\n")


@pytest.mark.parametrize(("text", "message"), [
    ("@main {\n  a: float = const true;\n}\n", "a float constant must be a finite number"),
    ("@main {\n  a: int = const 1.5;\n}\n", "whole number"),
    ("@main {\n  a: float = const 1;\n  b: int = add a a;\n}\n", "int"),
    ("@main {\n  a: int = const 1;\n  b: float = fadd a a;\n}\n", "float"),
    ("@main {\n  a: float = const 1;\n  b: bool = eq a a;\n}\n", "use 'feq'"),
])
def test_bril_float_type_rules(text, message):
    with pytest.raises(SourceError) as info:
        bril.parse_bril_text(text, "t.bril")
    assert message in info.value.render()


def test_machine_code_refuses_floats_in_one_line_where_it_has_none(monkeypatch):
    """Both CPUs run floats now (tests/test_codegen_floats.py, x86-64 in SSE2;
    tests/test_codegen_aarch64_float.py, AArch64 in d registers); a machine without float
    code (``Machine.floats`` false) refuses a program with floats in one line, status 1."""
    from ssa_course.codegen.aarch64.machine import A64Machine

    comp = ssa_course.compile("fn main() { print(1.5); }", "m.tiny")
    for via in ("native", "emulated", "emulated-aarch64"):
        if registry.representation(via).unavailable() is not None:
            continue
        r = ssa_course.run(comp, via=via)
        assert (r.status, r.stdout) == (0, "1.50000000000000000\n"), (via, r.error)
    if registry.representation("emulated-aarch64").unavailable() is None:
        monkeypatch.setattr(A64Machine, "floats", False)
        r = ssa_course.run(ssa_course.compile("fn main() { print(2.5); }", "n.tiny"),
                           via="emulated-aarch64")
        assert r.status == 1 and "\n" not in r.error, r.error
        assert "machine code does not support float yet" in r.error
