"""Validation of Bril input before anything runs: the JSON schema check, hostile sizes,
brilck-like type rules and the definedness rule, and one message in every stage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ssa_course import registry, stages
from ssa_course.compilation import compile_source
from ssa_course.errors import Pos, SourceError, UsageError
from ssa_course.quads import bril
from ssa_course.quads.bril_json import MAX_DEPTH, locate
from ssa_course.runtime import Limits
from ssa_course.tiny.types import INT

HERE = Path(__file__).parent
BAD = sorted(p for p in (HERE / "bril_errors").glob("*") if p.suffix in (".bril", ".json"))
BRIL_STAGES = [s.name for s in registry.representations() if not s.tiny_only]


def _json_error(doc: str) -> str:
    with pytest.raises(SourceError) as info:
        bril.parse_bril_json(doc, "t.json")
    return info.value.render().splitlines()[0]


def _text_error(text: str) -> str:
    with pytest.raises(SourceError) as info:
        bril.parse_bril_text(text, "t.bril")
    return info.value.render().splitlines()[0]


def _main(*instrs: dict, **extra: object) -> str:
    return json.dumps({"functions": [{"name": "main", "instrs": list(instrs), **extra}]})


def test_enough_malformed_files():
    assert len(BAD) >= 45


@pytest.mark.parametrize("path", BAD[::6], ids=[p.name for p in BAD[::6]])
def test_same_message_and_status_in_every_stage(path):
    """A malformed program is rejected when it is loaded: status 1, one message, and the
    message does not depend on the stage."""
    expected = path.with_suffix(".err").read_text().splitlines()[0]
    for stage in BRIL_STAGES:
        result = stages.run(compile_source(path.read_text(), path.name), [], via=stage)
        assert result.status == 1, stage
        assert result.stdout == ""
        assert result.error.splitlines()[0] == expected, stage


def test_hundred_thousand_deep_json_is_refused_without_recursion():
    doc = '{"functions": ' + "[" * 100_000 + "]" * 100_000 + "}"
    message = _json_error(doc)
    assert f"nested more than {MAX_DEPTH} levels" in message
    assert message.startswith(f"t.json:1:{14 + MAX_DEPTH}:")  # the bracket one too deep


def test_hundred_thousand_deep_text_type_is_refused_without_recursion():
    text = "@main {\n  a: " + "[" * 100_000 + "int" + "]" * 100_000 + " = const 1;\n}\n"
    assert "array type nested more than 64 deep" in _text_error(text)
    assert bril.parse_bril_text("@f(a: " + "[" * 64 + "int" + "]" * 64 + ") {\n}\n"
                                "@main {\n}\n")


def test_deep_json_inside_a_string_is_only_text():
    program = bril.parse_bril_json(_main({"op": "nop", "note": "[{" * 5000}))
    assert program.functions["main"].body[0].op == "nop"


@pytest.mark.parametrize("value, needle", [
    ("9" * 5000, "(5000 digits) is out of the 64-bit range"),
    ("-9223372036854775809", "out of the 64-bit range"),
    ('"5"', 'needs a whole number, found "5"'),
    ("1.0", "needs a whole number, found 1.0"),
    ("1e400", "needs a whole number, found inf"),
    ("NaN", "found NaN"),
    ("-Infinity", "found -Infinity"),
    ("false", "found false"),
    ("null", "found null"),
    ("[1]", "found [1]"),
])
def test_int_constant_values(value, needle):
    doc = _main({"op": "const", "dest": "x", "type": "int", "value": 0})
    message = _json_error(doc.replace('"value": 0', f'"value": {value}'))
    assert needle in message
    assert '@main instrs[0] "value"' in message


def test_the_extreme_ints_are_accepted():
    for value in (2**63 - 1, -(2**63)):
        doc = _main({"op": "const", "dest": "x", "type": "int", "value": value},
                    {"op": "print", "args": ["x"]})
        assert bril.parse_bril_json(doc).functions["main"].body[0].value == value


@pytest.mark.parametrize("instr, needle", [
    ({"op": "print", "args": [1]}, '"args"[0] must be a non-empty string, found 1'),
    ({"op": "print", "args": None}, '"args" must be a list of names, found null'),
    ({"op": "jmp", "labels": [["x"]]}, '"labels"[0] must be a non-empty string'),
    ({"op": "nop", "pos": [1, 2]}, '"pos" must be {"row": N, "col": N}'),
    ({"op": "nop", "pos": {"row": 1, "col": True}}, '"pos" must be'),
    ({"op": "nop", "pos": {"row": 1, "col": 2**40}}, '"pos" must be'),
    ({"op": "nop", "value": 1}, "only 'const' has a \"value\""),
    ({"op": "nop", "label": "x"}, 'has both "label" and "op"'),
    ({"dest": "x"}, 'has neither "op" nor "label"'),
    ({"op": "const", "dest": "x", "type": "any", "value": 1}, "is not supported"),
    ({"op": "const", "dest": "x", "type": {"ptr": "int"}, "value": 1},
     "a constant must be an int, a bool, a float or a char"),
    ({"op": "const", "dest": "x", "type": "char", "value": "ab"},
     "a char constant is a string of one Unicode character"),
    ({"op": "const", "dest": "x", "type": "char", "value": "\ud800"},
     "a char constant is a string of one Unicode character"),
    ({"op": "const", "dest": "x", "type": {"array": "int", "size": 3}, "value": 1},
     "unknown type"),
    ({"op": "const", "dest": "", "type": "int", "value": 1}, '"dest" must be a non-empty'),
    ({"op": "getf", "dest": "x", "type": "int", "args": ["p"], "field": 3},
     '"field" must be a non-empty string'),
])
def test_instruction_fields(instr, needle):
    message = _json_error(_main(instr))
    assert needle in message
    assert "@main instrs[0]" in message


def test_json_messages_point_at_the_value():
    doc = ('{"functions": [\n  {"name": "main",\n   "instrs": [\n'
           '     {"op": "const", "dest": "x", "type": "int", "value": "7"}]}]}')
    assert _json_error(doc).startswith("t.json:4:59: ")
    assert locate(doc, ("functions", 0, "instrs", 0)).line == 4
    assert locate(doc, ("functions", 0, "nothing", 9)).line == 2  # the longest prefix
    assert locate(doc, ("functions", 0, "name")) == Pos(2, 12)


def test_document_level_shapes():
    assert "object with a \"functions\" list" in _json_error("[]")
    assert "object with a \"functions\" list" in _json_error('{"functions": {}}')
    assert '"structs" must be a list' in _json_error('{"functions": [], "structs": 1}')
    assert "functions[0] must be an object" in _json_error('{"functions": [3]}')
    assert "non-empty string" in _json_error('{"functions": [{"name": 3, "instrs": []}]}')
    two = ('{"functions": [], "structs": [{"name": "P", "fields": []}, '
           '{"name": "P", "fields": []}]}')
    assert "struct 'P' is defined twice" in _json_error(two)
    field = '{"functions": [], "structs": [{"name": "P", "fields": [{"name": "a"}]}]}'
    assert "field 'a': unknown type null" in _json_error(field)
    assert "invalid JSON" in _json_error('{"functions": [}')
    assert "not UTF-8" in _json_error_bytes(b'{"functions": "\xff"}')


def _json_error_bytes(doc: bytes) -> str:
    with pytest.raises(SourceError) as info:
        bril.parse_bril_json(doc, "t.json")
    return info.value.render()


# ---------------------------------------------------------------- types (brilck's rules)

GOOD = """@main {
  v: int = call @f;
  print v;
}
"""


@pytest.mark.parametrize("text, needle", [
    ("@main {\n  x: int = const 1;\n  y: int = id x;\n  z: bool = id y;\n}\n",
     "'id' produces int, but 'z' is declared bool"),
    ("@main {\n  t: bool = const true;\n  n: int = const 1;\n  c: bool = and t n;\n}\n",
     "'and' needs bool operands, but 'n' is int"),
    ("@main {\n  a: [int] = const 1;\n}\n", "a constant must be an int, a bool, a float or a char"),
    ("@main {\n  n: int = const 2;\n  a: int = newarr n;\n}\n",
     "'newarr' makes an array, but 'a' is declared int"),
    ("@main {\n  n: int = const 2;\n  a: [int] = newarr n;\n  b: bool = const true;\n"
     "  astore a n b;\n}\n", "'astore' needs int operands, but 'b' is bool"),
    ("@main {\n  n: int = const 2;\n  l: int = alen n;\n}\n",
     "'alen' needs an array, but 'n' is int"),
    ("struct P { x: int; }\n@main {\n  b: bool = const true;\n  p: P = newstruct b;\n}\n",
     "'newstruct' needs int operands, but 'b' is bool"),
    ("@main {\n  n: int = const 2;\n  v: int = phi n .entry;\n}\n", "unknown label '.entry'"),
    ("@main {\n  x: int = undef;\n  r: int = call @f x;\n}\n@f(a: int): int {\n  ret a;\n}\n",
     "'x' is only ever undef, so 'call' cannot use it"),
])
def test_type_rules(text, needle):
    assert needle in _text_error(text)


def test_variables_defined_on_some_path_are_fine():
    # defined only inside the loop, read in the loop after the first iteration's write
    text = """# ARGS: 3
@main(n: int) {
  i: int = const 0;
  one: int = const 1;
.loop:
  done: bool = ge i n;
  br done .end .body;
.body:
  last: int = id i;
  i: int = add i one;
  jmp .loop;
.end:
  print last;
}
"""
    program = bril.parse_bril_text(text)
    assert "main" in program.functions


def test_unreachable_code_is_not_checked_for_definedness():
    text = "@main {\n  ret;\n  print ghost_never;\n}\n"
    with pytest.raises(SourceError):  # never defined anywhere: brilck's rule still holds
        bril.parse_bril_text(text)
    text = "@main {\n  ret;\n.dead:\n  print x;\n  x: int = const 1;\n  jmp .dead;\n}\n"
    assert bril.parse_bril_text(text)  # x is assigned in the function; this code never runs


def test_typecheck_can_be_skipped_for_internal_round_trips():
    text = "@main {\n  b: bool = const true;\n  x: int = add b b;\n}\n"
    with pytest.raises(SourceError):
        bril.parse_bril_text(text)
    assert bril.parse_bril_text(text, typecheck=False)


def test_hash_args_without_a_space():
    assert bril.bril_args("#ARGS: 1 2\r\n@main {}\n") == ["1", "2"]
    comp = compile_source("#ARGS: 4\n@main(n: int) {\n  print n;\n}\n", "a.bril")
    assert stages.run(comp, None, via="quads").stdout == "4\n"


# ---------------------------------------------------------------- property: mutated JSON

_LEAVES = [None, True, False, 0, -1, 2**63, 1.5, float("nan"), "", "x", "main", "int", [],
           ["x"], [1], {}, {"array": "int"}, {"struct": "P"}, "9" * 30, "a b", {"row": 0}]


def _paths(doc: object, path: tuple = ()) -> list[tuple]:
    out, stack = [], [(doc, path)]
    while stack:
        node, here = stack.pop()
        out.append(here)
        items = node.items() if isinstance(node, dict) else \
            enumerate(node) if isinstance(node, list) else ()
        stack.extend((v, here + (k,)) for k, v in items)
    return sorted(out[1:], key=repr)


_SEEDS = [bril.to_bril_json(bril.parse_bril_text((HERE / "bril" / name).read_text()))
          for name in ("fact.bril", "ssa_set_get_calls.bril", "ssa_phi_diamond.bril")]


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_any_mutated_document_is_read_or_refused_cleanly(data):
    """Replace or delete up to three fields of a good document: it is either refused with
    a located message (status 1) or runs, and every stage then agrees on status and
    output. Never an internal error."""
    doc = json.loads(json.dumps(data.draw(st.sampled_from(_SEEDS))))
    for _ in range(data.draw(st.integers(1, 3))):
        if not _paths(doc):
            break
        path = data.draw(st.sampled_from(_paths(doc)))
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        if isinstance(parent, dict) and data.draw(st.booleans()):
            del parent[path[-1]]
        else:
            parent[path[-1]] = json.loads(json.dumps(data.draw(st.sampled_from(_LEAVES))))
    comp = compile_source(json.dumps(doc), "m.json")
    seen = set()
    for stage in ("quads", "bril", "ssa-pruned", "julia", "son"):
        result = stages.run(comp, ["3"] if _takes_arg(comp) else [],
                            via=stage, limits=Limits(20_000, 100))
        assert result.status in (0, 1, 2), result.error
        assert "internal error" not in result.error
        seen.add((result.status, result.stdout if result.status == 0 else ""))
    assert len({status for status, _ in seen}) == 1
    assert len(seen) == 1


def _takes_arg(comp) -> bool:
    try:
        return len(comp.main_params()) == 1 and comp.main_params()[0][1] == INT
    except (SourceError, UsageError):
        return False


def test_every_tiny_program_lowers_to_bril_that_passes_the_checks():
    """Our own Bril (lesson 01's export) is valid Bril: ``while (true)`` loops in a
    function with a result do not count as falling off its end."""
    from corpus import load_corpus

    checked = 0
    for case in load_corpus():
        comp = compile_source(case.source, case.path.name)
        try:
            quads = comp.quads
        except (SourceError, UsageError):
            continue  # a Tiny compile error: nothing to export
        bril.parse_bril_text(bril.to_bril_text(quads), case.name + ".bril")
        bril.parse_bril_json(bril.dumps_json(quads), case.name + ".json")
        checked += 1
    assert checked >= 40


def test_a_constant_condition_decides_whether_a_function_can_fall_off():
    def loop(cond: str, tail: str = "") -> str:
        return ("@f: int {\n  one: int = const 1;\n  t: bool = const " + cond + ";\n"
                "  jmp .top;\n.done:\n  ret one;\n.top:\n  br t .top .out;\n.out:\n"
                + tail + "}\n@main {\n}\n")

    assert bril.parse_bril_text(loop("true"))
    assert "can reach its end" in _text_error(loop("false"))
    assert bril.parse_bril_text(loop("false", "  ret one;\n"))
