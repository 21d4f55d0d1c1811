"""Bril's memory and char extensions: reading, checking, writing, running (issue #36).

``tests/bril_mem`` holds small programs whose expected output, ``total_dyn_inst`` and
exit status were checked with Bril's reference interpreter (brili); our error messages
are worded in our style. Every Bril stage, machine code on both CPUs included, runs them
exactly (output, status, message); ``tests/test_codegen_ptr.py`` has the machine code's
own cases.
"""

from __future__ import annotations

import json

import pytest
from corpus import HERE, _case
from hypothesis import given, settings
from hypothesis import strategies as st

from ssa_course import registry, stages
from ssa_course.compilation import compile_source
from ssa_course.errors import SourceError
from ssa_course.quads import bril
from ssa_course.quads.bril_setget import set_get_text
from ssa_course.quads.memory import CHAR, PtrType, char_compare

CASES = [_case(p) for p in sorted((HERE / "bril_mem").glob("*.bril"))]
BRIL_STAGES = [s.name for s in registry.executors() if not s.tiny_only]


def test_the_corpus_has_programs_and_errors():
    assert len([c for c in CASES if c.exit == 0]) >= 2
    assert len([c for c in CASES if c.exit == 2]) >= 6


@pytest.mark.parametrize("stage", BRIL_STAGES)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_every_stage_runs_them(case, stage):
    if registry.representation(stage).unavailable():
        pytest.skip(registry.representation(stage).unavailable())
    comp = compile_source(case.source, case.path.name)
    result = stages.run(comp, case.args, via=stage)
    assert result.stdout == case.stdout
    assert result.status == case.exit, result.error
    assert result.error == case.stderr.rstrip("\n")
    if case.profile is not None and stage == "quads":
        assert result.steps == case.profile


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_text_and_json_round_trip(case):
    program = bril.parse_bril_text(case.source)
    text = bril.to_bril_text(program)
    assert bril.to_bril_text(bril.parse_bril_text(text)) == text
    data = bril.to_bril_json(program)
    again = bril.parse_bril_json(json.dumps(data))
    assert bril.to_bril_json(again) == data


def test_types_and_literals_in_json():
    program = bril.parse_bril_text(
        "@main(c: char) {\n  n: int = const 1;\n  p: ptr<ptr<char>> = alloc n;\n"
        "  q: char = const '\\n';\n  r: char = const '🐱';\n  free p;\n}\n")
    data = bril.to_bril_json(program)
    instrs = data["functions"][0]["instrs"]
    assert data["functions"][0]["args"] == [{"name": "c", "type": "char"}]
    assert instrs[1]["type"] == {"ptr": {"ptr": "char"}}
    assert instrs[2]["value"] == "\n" and instrs[3]["value"] == "🐱"
    text = bril.to_bril_text(program)
    assert "q: char = const '\\n';" in text and "p: ptr<ptr<char>> = alloc n;" in text
    assert bril.parse_bril_json(json.dumps(data)).functions["main"].params == [("c", CHAR)]
    assert program.functions["main"].body[1].type == PtrType(PtrType(CHAR))


def _text_error(text: str) -> str:
    with pytest.raises(SourceError) as info:
        bril.parse_bril_text(text, "t.bril")
    return info.value.render()


@pytest.mark.parametrize(("body", "needle"), [
    ("n: int = const 1;\n  p: int = alloc n;", "'alloc' makes a pointer"),
    ("n: int = const 1;\n  free n;", "'free' needs a pointer, but 'n' is int"),
    ("n: int = const 1;\n  p: ptr<int> = alloc n;\n  t: bool = const true;\n  store p t;",
     "'store' needs int operands, but 't' is bool"),
    ("n: int = const 1;\n  p: ptr<int> = alloc n;\n  v: bool = load p;",
     "'load' produces int, but 'v' is declared bool"),
    ("n: int = const 1;\n  p: ptr<int> = alloc n;\n  t: bool = const true;\n"
     "  q: ptr<int> = ptradd p t;", "an int offset"),
    ("a: char = const 'a';\n  b: bool = ceq a a;\n  c: bool = eq a a;",
     "chars compare with 'ceq'"),
    ("a: char = const 'a';\n  i: int = char2int a;\n  b: bool = clt i i;",
     "'clt' needs char operands"),
    ("a: char = const 5;", "a char constant must be one Unicode character"),
    ("a: int = const 'x';", "an int constant must be a number"),
])
def test_type_errors_are_one_located_line(body, needle):
    message = _text_error(f"@main {{\n  {body}\n}}\n")
    assert needle in message and message.startswith("t.bril:")


def test_imports_are_refused_in_text_and_json():
    text = 'from "lib.bril" import @f as @g;\n@main {\n  call @g;\n}\n'
    message = _text_error(text)
    assert message.startswith("t.bril:1:1: error: unsupported Bril extension: imports")
    with pytest.raises(SourceError) as info:
        bril.parse_bril_json('{"imports": [{"path": "lib.bril", "functions": '
                             '[{"name": "f"}]}], "functions": []}', "t.json")
    assert "unsupported Bril extension: imports" in info.value.render()
    assert len(info.value.render().splitlines()) <= 3  # the line, the source, the caret


def test_set_get_text_reads_back_and_runs_the_same():
    for case in CASES:
        comp = compile_source(case.source, case.path.name)
        for stage in ("ssa-minimal", "ssa-pruned", "ssa-braun"):
            text = set_get_text(registry.build(comp, stage))
            assert " phi " not in text
            again = compile_source(text, "again.bril")
            result = stages.run(again, case.args, via="quads")
            assert (result.stdout, result.status) == (case.stdout, case.exit), stage


def test_show_format_bril_prints_set_get(tmp_path, capsys):
    from ssa_course.cli import main

    path = tmp_path / "p.bril"
    path.write_text((HERE / "bril_mem" / "mem_sum.bril").read_text())
    assert main(["show", "--as", "ssa-pruned", "--format", "bril", str(path)]) == 0
    text = capsys.readouterr().out
    assert " = get;" in text and "set " in text and " phi " not in text
    # a Bril program's quads views print Bril by default (brili runs them); --format text
    # keeps the classic phis the lessons draw, and a Tiny program's default is text
    assert main(["show", "--as", "ssa-pruned", str(path)]) == 0
    assert capsys.readouterr().out == text
    assert main(["show", "--as", "ssa-pruned", "--format", "text", str(path)]) == 0
    assert " phi " in capsys.readouterr().out
    tiny = tmp_path / "t.tiny"
    tiny.write_text("fn main(n: int) {\n  var s = 0;\n  while (n > 0) { s = s + n; n = n - 1; }"
                    "\n  print(s);\n}\n")
    assert main(["show", "--as", "ssa-pruned", str(tiny)]) == 0
    assert " phi " in capsys.readouterr().out
    assert main(["show", "--as", "son", "--format", "bril", str(path)]) == 1
    assert "needs a quads representation" in capsys.readouterr().err


def _sum_program(values: list[int]) -> str:
    """Stores the values in a fresh block, reads them back from the end, prints each."""
    lines = ["@main {", f"  n: int = const {len(values)};", "  p: ptr<int> = alloc n;",
             "  one: int = const 1;", "  back: int = const -1;", "  q: ptr<int> = id p;"]
    for k, v in enumerate(values):
        lines += [f"  v{k}: int = const {v};", f"  store q v{k};",
                  "  q: ptr<int> = ptradd q one;"]
    lines += ["  last: int = sub n one;", "  r: ptr<int> = ptradd p last;"]
    for k in range(len(values)):
        lines += [f"  w{k}: int = load r;", f"  print w{k};", "  r: ptr<int> = ptradd r back;"]
    lines += ["  free p;", "}"]
    return "\n".join(lines) + "\n"


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(-(1 << 63), (1 << 63) - 1), min_size=1, max_size=6))
def test_stored_values_come_back_in_every_running_stage(values):
    comp = compile_source(_sum_program(values), "gen.bril")
    expected = "".join(f"{v}\n" for v in reversed(values))
    for stage in ("quads", "ssa-pruned", "out-of-ssa", "julia", "son", "optimized"):
        result = stages.run(comp, [], via=stage)
        assert (result.stdout, result.status) == (expected, 0), (stage, result.error)


@settings(max_examples=30, deadline=None)
@given(st.characters(exclude_categories=("Cs",)), st.characters(exclude_categories=("Cs",)))
def test_char_ops_match_their_meaning(a, b):
    source = ("@main(a: char, b: char) {\n  lt: bool = clt a b;\n  ge: bool = cge a b;\n"
              "  i: int = char2int a;\n  c: char = int2char i;\n  e: bool = ceq a c;\n"
              "  print lt ge i e;\n}\n")
    comp = compile_source(source, "c.bril")
    # brili compares chars as JavaScript strings (UTF-16 code units)
    lt = char_compare("clt", a, b)
    assert lt == (a.encode("utf-16-be", "surrogatepass") < b.encode("utf-16-be",
                                                                     "surrogatepass"))
    expected = f"{str(lt).lower()} {str(not lt).lower()} {ord(a)} true\n"
    for stage in ("quads", "julia", "son-opt"):
        result = stages.run(comp, [a, b], via=stage)
        assert (result.stdout, result.status) == (expected, 0), (stage, result.error)
