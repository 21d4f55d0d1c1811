"""Bril interop: reading text and JSON, writing both, round trips, malformed files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ssa_course.args import parse_main_args
from ssa_course.errors import SourceError, UsageError
from ssa_course.quads import bril
from ssa_course.quads.interp import run_quads
from ssa_course.quads.ir import Function, Instr, Label, Program
from ssa_course.runtime import Limits, Output
from ssa_course.tiny.types import BOOL, INT, ArrayType

HERE = Path(__file__).parent
TEXT_PROGRAMS = sorted((HERE / "bril").glob("*.bril"))
BAD = sorted(p for p in (HERE / "bril_errors").glob("*") if p.suffix in (".bril", ".json"))


def test_enough_programs_and_malformed_files():
    assert len(TEXT_PROGRAMS) >= 20
    assert len(BAD) >= 12


def test_every_core_op_is_covered():
    ops = set()
    for path in TEXT_PROGRAMS:
        for fn in bril.parse_bril_text(path.read_text()).functions.values():
            ops |= {i.op for i in fn.instrs()}
    core = {"const", "add", "sub", "mul", "div", "eq", "lt", "gt", "le", "ge", "not", "and",
            "or", "jmp", "br", "call", "ret", "id", "print", "nop"}
    assert core <= ops


@pytest.mark.parametrize("path", TEXT_PROGRAMS, ids=[p.stem for p in TEXT_PROGRAMS])
def test_text_round_trip_is_a_fixpoint(path):
    once = bril.to_bril_text(bril.parse_bril_text(path.read_text()))
    assert bril.to_bril_text(bril.parse_bril_text(once)) == once


@pytest.mark.parametrize("path", TEXT_PROGRAMS, ids=[p.stem for p in TEXT_PROGRAMS])
def test_text_and_json_agree(path):
    program = bril.parse_bril_text(path.read_text())
    data = bril.to_bril_json(program)
    again = bril.parse_bril_json(json.dumps(data))
    assert bril.to_bril_json(again) == data
    assert bril.to_bril_text(again) == bril.to_bril_text(program)


def test_json_files_match_their_text_twins():
    for path in (HERE / "bril").glob("*.json"):
        text = bril.parse_bril_text(path.with_suffix(".bril").read_text())
        assert bril.to_bril_json(bril.parse_bril_json(path.read_text())) == \
            bril.to_bril_json(text)


def test_text_form_details():
    program = bril.parse_bril_text(
        "# ARGS: 1\n@f(a: int, b: bool): int {\n  r: int = call @g a;\n  call @p a;\n"
        "  br b .x.1 .y_2;\n.x.1:\n  ret r;\n.y_2:\n  ret a;\n}\n@g(a: int): int {\n  ret a;\n}\n"
        "@p(a: int) {\n  print a;\n}\n")
    f = program.functions["f"]
    assert f.params == [("a", INT), ("b", BOOL)] and f.ret == INT
    call, effect, br = f.body[:3]
    assert (call.dest, call.funcs, call.args) == ("r", ["g"], ["a"])
    assert effect.dest is None and effect.funcs == ["p"]
    assert br.labels == ["x.1", "y_2"] and br.args == ["b"]
    assert isinstance(f.body[3], Label) and f.body[3].name == "x.1"


def test_operands_in_any_order():
    a = bril.parse_bril_text("@main {\n  x: int = const 1;\n  y: int = call x @id;\n"
                             "  print y;\n}\n@id(v: int): int {\n  ret v;\n}\n")
    assert a.functions["main"].body[1].funcs == ["id"]


def test_bril_args_line():
    assert bril.bril_args("# ARGS: 3 -6 true\n@main {}\n") == ["3", "-6", "true"]
    assert bril.bril_args("@main {}\n") is None


def test_extensions_round_trip_through_text_and_json():
    fn = Function("main", [], None, [
        Instr("const", "n", INT, value=2),
        Instr("newarr", "a", ArrayType(INT), ["n"]),
        Instr("const", "i", INT, value=1),
        Instr("astore", None, None, ["a", "i", "n"]),
        Instr("aload", "v", INT, ["a", "i"]),
        Instr("alen", "l", INT, ["a"]),
        Instr("rem", "r", INT, ["v", "l"]),
        Instr("print", args=["v", "l", "r"]),
    ])
    program = Program({"main": fn})
    text = bril.to_bril_text(program)
    assert "a: [int] = newarr n;" in text
    for again in (bril.parse_bril_text(text), bril.parse_bril_json(bril.to_bril_json(program))):
        out = Output()
        run_quads(again, [], out, Limits())
        assert out.text() == "2 2 0\n"


def test_struct_fields_in_text():
    text = ("struct P { x: int; y: bool; }\n@main {\n  a: int = const 4;\n"
            "  b: bool = const true;\n  p: P = newstruct a b;\n  v: int = getf p x;\n"
            "  setf p x a;\n  print v;\n}\n")
    program = bril.parse_bril_text(text)
    assert bril.to_bril_text(program) == text
    assert program.functions["main"].body[3].field == "x"


@pytest.mark.parametrize("path", BAD, ids=[p.name for p in BAD])
def test_malformed_file(path):
    expected = path.with_suffix(".err").read_text().rstrip("\n")
    with pytest.raises(SourceError) as info:
        if path.suffix == ".json":
            bril.parse_bril_json(path.read_text(), path.name)
        else:
            bril.parse_bril_text(path.read_text(), path.name)
    rendered = info.value.render()
    if path.suffix == ".json":
        assert rendered.splitlines()[0] == expected
    else:
        assert rendered == expected


# ---------------------------------------------------------------- property: round trips

NAMES = st.sampled_from(["c", "x.1", "y_2", "tmp"])  # bool results: a and b stay ints
INT_OPS = ["add", "sub", "mul", "div"]
CMP_OPS = ["eq", "lt", "gt", "le", "ge"]


@st.composite
def straight_line(draw) -> Program:
    """Straight-line core Bril programs over int variables a, b (always defined)."""
    body: list[Instr | Label] = [Instr("const", "a", INT, value=draw(st.integers(-99, 99))),
                                 Instr("const", "b", INT, value=draw(st.integers(1, 99)))]
    for _ in range(draw(st.integers(0, 12))):
        kind = draw(st.integers(0, 3))
        dest = draw(NAMES)
        if kind == 0:
            body.append(Instr(draw(st.sampled_from(INT_OPS[:3])), "a", INT, ["a", "b"]))
        elif kind == 1:
            body.append(Instr(draw(st.sampled_from(CMP_OPS)), dest, BOOL, ["a", "b"]))
            body.append(Instr("print", args=[dest]))
        elif kind == 2:
            body.append(Instr("const", "b", INT, value=draw(st.integers(1, 2**62))))
        else:
            body.append(Label(f"L{len(body)}"))
        body.append(Instr("print", args=["a", "b"]))
    return Program({"main": Function("main", [], None, body)})


@settings(max_examples=150, deadline=None)
@given(straight_line())
def test_generated_programs_round_trip(program):
    text = bril.to_bril_text(program)
    from_text = bril.parse_bril_text(text)
    from_json = bril.parse_bril_json(json.dumps(bril.to_bril_json(program)))
    assert bril.to_bril_text(from_text) == text
    assert bril.to_bril_text(from_json) == text
    outs = []
    for p in (program, from_text, from_json):
        out = Output()
        steps = run_quads(p, [], out, Limits())
        outs.append((out.text(), steps))
    assert outs[0] == outs[1] == outs[2]


# ---------------------------------------------------------------- main's arguments


def test_parse_main_args():
    params = [("n", INT), ("b", BOOL)]
    assert parse_main_args(params, ["-5", "true"]) == [-5, True]
    assert parse_main_args([("n", INT)], ["9223372036854775807"]) == [2**63 - 1]
    assert parse_main_args([("n", INT)], ["-9223372036854775808"]) == [-(2**63)]


@pytest.mark.parametrize("argv, needle", [
    ([], "takes 2 arguments"), (["1"], "takes 2"), (["1", "true", "3"], "3 were given"),
    (["x", "true"], "must be an int"), (["1", "yes"], "true or false"),
    (["9223372036854775808", "true"], "out of the 64-bit"), (["1.5", "true"], "int"),
    (["+1", "true"], "int"), (["", "true"], "int"),
])
def test_bad_main_args(argv, needle):
    with pytest.raises(UsageError) as info:
        parse_main_args([("n", INT), ("b", BOOL)], argv)
    assert needle in str(info.value)


def _tokens_one_match_at_a_time(text: str) -> list[tuple[str, str, int, int, int]]:
    """The tokenizer as first written: the pattern tried at each position in turn, a
    character it does not match a "bad" token of its own."""
    out, line, line_start, i = [], 1, 0, 0
    while i < len(text):
        m = bril._TOKEN.match(text, i)
        if m is None:
            out.append(("bad", text[i], line, i - line_start + 1, 1))
            i += 1
            continue
        kind = m.lastgroup or ""
        if kind == "newline":
            line, line_start = line + 1, m.end()
        elif kind not in ("space", "comment"):
            out.append((kind, m.group(), line, i - line_start + 1, m.end() - i))
        i = m.end()
    out.append(("eof", "", line, i - line_start + 1, 1))
    return out


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab1 -@.:=;{}()<>[],#\n\t%!$é\\\"'", max_size=60))
def test_tokens_as_if_matched_at_each_position(text):
    """``_tokens`` scans with ``finditer`` (r62, #22): the same tokens, kinds and
    positions as matching at every position in turn, "bad" characters included."""
    got = [(t.kind, t.text, t.line, t.col, t.length) for t in bril._tokens(text, "t.bril")]
    assert got == _tokens_one_match_at_a_time(text)
    assert all(t.pos.line == t.line and t.pos.col == t.col
               for t in bril._tokens(text, "t.bril"))
