"""Bril's bitcast extension (``float2bits``, ``bits2float``; issue #36).

Two rows of the opcode table (``ssa_course/bitcast.py``): every stage reads, checks, runs
and writes them. ``tests/bril/float/bitcast.bril`` runs through every stage in
``tests/test_differential.py``; here: the bit patterns, folding in the graph (exact, and
never a NaN or an infinity, which no constant spells), brilck's type rules, JSON, and the
printers writing them back.
"""

from __future__ import annotations

import json
import math

import pytest

from ssa_course import passes
from ssa_course.bitcast import bits2float, float2bits
from ssa_course.compilation import compile_source
from ssa_course.errors import SourceError
from ssa_course.quads import bril
from ssa_course.stages import run


@pytest.mark.parametrize(("value", "bits"), [
    (0.1, 4591870180066957722),
    (-0.0, -(2 ** 63)),
    (0.0, 0),
    (math.inf, 9218868437227405312),
    (-math.inf, -4503599627370496),
    (5e-324, 1),
])
def test_bit_patterns(value, bits):
    assert float2bits(value) == bits
    back = bits2float(bits)
    assert back == value and math.copysign(1.0, back) == math.copysign(1.0, value)


def test_nan_payloads_survive_the_round_trip():
    for bits in (9221120237041090561, -2251799813685247, 9218868437227405313):
        assert math.isnan(bits2float(bits)) and float2bits(bits2float(bits)) == bits


def optimized(source: str) -> str:
    return passes.emit(passes.run_pipeline(compile_source(source, "t.bril")), "bril")


def test_the_graph_folds_exact_bits_but_never_a_nan():
    text = optimized("@main {\n  z: float = const -0.0;\n  b: int = float2bits z;\n"
                     "  o: int = const 1;\n  t: float = bits2float o;\n"
                     "  n: int = const 9221120237041090561;\n  f: float = bits2float n;\n"
                     "  print b t f;\n}\n")
    assert "const -9223372036854775808" in text and "bits2float" in text, text
    assert "float2bits" not in text and text.count("bits2float") == 1, text
    assert "const 5e-324" in text or "const 4.9" in text, text
    got = run(compile_source(text, "o.bril"), [])
    assert got.stdout == "-9223372036854775808 4.94065645841246544e-324 NaN\n"


@pytest.mark.parametrize(("line", "message"), [
    ("b: int = float2bits a;", "'float2bits' needs float operands, but 'a' is int"),
    ("b: int = bits2float a;", "'bits2float' produces float, but 'b' is declared int"),
    ("b: float = bits2float a a;", "'bits2float' takes 1 argument, found 2"),
])
def test_checked_as_brilck_checks_in_one_line(line, message):
    with pytest.raises(SourceError) as e:
        bril.parse_bril_text(f"@main {{\n  a: int = const 1;\n  {line}\n  print b;\n}}\n",
                             "t.bril")
    assert message in e.value.render().splitlines()[0]


def test_json_in_and_out():
    text = ("@main(n: int) {\n  f: float = bits2float n;\n  b: int = float2bits f;\n"
            "  print f b;\n}\n")
    comp = compile_source(text, "t.bril")
    js = passes.emit(passes.run_pipeline(comp, ["parse", "gcm", "out-of-ssa"]), "bril-json")
    ops = [i["op"] for f in json.loads(js)["functions"] for i in f["instrs"] if "op" in i]
    assert "bits2float" in ops and "float2bits" in ops
    again = compile_source(js, "t.json")
    assert run(again, ["4607182418800017408"]).stdout == \
        "1.00000000000000000 4607182418800017408\n"
