"""Malformed Tiny programs: each gives exactly the located message in its ``.err`` file.

Every row of LANGUAGE.md's "where errors point" table has cases here; the message
names the file, line and column, shows the source line, and puts a caret under the spot.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ssa_course.errors import SourceError
from ssa_course.tiny import compile_tiny

ERRORS = sorted((Path(__file__).parent / "errors").glob("*.tiny"))


def test_there_are_enough_malformed_programs():
    assert len(ERRORS) >= 45


# Each row of LANGUAGE.md's "where errors point" table: a pattern its message contains, and
# one the text under its caret must match (what the row says errors point at).
NAME = r"[A-Za-z_][A-Za-z0-9_]*\b"
TABLE = {
    "undefined variable": ("undefined variable '", NAME),  # (message patterns are regexes)
    "undefined function": ("undefined function '", NAME),
    "undefined struct": ("undefined struct '", NAME),
    "redeclaration": ("is already declared", NAME),
    "operator type": ("type mismatch: '", r"(&&|\|\||==|!=|<=|>=|[-+*/%<>!])"),
    "argument count": (r"takes \d+ arguments?, but", NAME),
    "missing return": ("missing return", NAME),
    "break outside": ("'break' outside", r"break\b"),
    "continue outside": ("'continue' outside", r"continue\b"),
    "unknown field": ("has no field", NAME),
    "unexpected character": ("unexpected character", r"[^ \t]"),
    "too large": ("too large", r"[0-9]+"),
    "expected": ("expected", r"(.|$)"),  # end of file: just after the last character
    "unterminated comment": ("unterminated comment", r"/\*"),
}


@pytest.mark.parametrize("row", TABLE)
def test_every_row_of_the_table_has_cases(row):
    words, pattern = TABLE[row]
    hits = 0
    for path in ERRORS:
        head, line, caret = path.with_suffix(".err").read_text().split("\n")[:3]
        if re.search(words, head):
            hits += 1
            assert re.match(pattern, line[caret.index("^"):]), path.name
    assert hits, row


@pytest.mark.parametrize("path", ERRORS, ids=[p.stem for p in ERRORS])
def test_malformed_program_message(path: Path):
    expected = path.with_suffix(".err").read_text().rstrip("\n")
    with pytest.raises(SourceError) as info:
        compile_tiny(path.read_text(), path.name)
    assert info.value.render() == expected


TOKENS = ["fn", "main", "(", ")", "{", "}", "var", "x", "=", "1", ";", "print", "if",
          "while", "for", "else", "+", "*", "/", "<", "==", "&&", "!", "-", "[", "]", ".",
          "new", "int", "bool", "struct", "return", "break", "true", ",", ":", "->", "try",
          "catch", "throw", "len", "9223372036854775808", "/*", "//", "\n", "$", "P", "f",
          "continue", "false", "%", "||", "!=", ">=", "*/", "0", "\t", "é"]

PROGRAMS = sorted((Path(__file__).parent / "programs").glob("*.tiny"))
VALID = [p.read_text() for p in PROGRAMS]


def _check_only_located_errors(text: str) -> None:
    """``compile_tiny`` either succeeds or raises a SourceError located inside ``text``."""
    try:
        compile_tiny(text, "fuzz.tiny")
    except SourceError as e:
        lines = text.split("\n")
        assert e.message
        assert 1 <= e.pos.line <= len(lines)
        assert 1 <= e.pos.col <= len(lines[e.pos.line - 1]) + 1
        assert e.pos.length >= 1
        rendered = e.render().split("\n")
        assert rendered[0].startswith(f"fuzz.tiny:{e.pos.line}:{e.pos.col}: error: ")
        assert len(rendered) == 3 and rendered[2].lstrip(" ").startswith("^")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=200))
def test_random_text_gives_only_located_errors(text):
    _check_only_located_errors(text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet="fnmainvrwhiletus(){}[];:=+-*/%<>!&|., 0123456789\n\tP_", max_size=300))
def test_random_tiny_alphabet_text_gives_only_located_errors(text):
    _check_only_located_errors(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=60))
def test_token_soup_gives_only_located_errors(tokens):
    _check_only_located_errors(" ".join(tokens))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=30))
def test_token_soup_inside_main_gives_only_located_errors(tokens):
    _check_only_located_errors("fn main() {\n" + " ".join(tokens) + "\n}\n")


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_mutated_programs_give_only_located_errors(data):
    text = data.draw(st.sampled_from(VALID))
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(text)))
        cut = data.draw(st.integers(0, 5))
        insert = data.draw(st.sampled_from([*TOKENS, ""]))
        text = text[:at] + insert + text[at + cut:]
    _check_only_located_errors(text)


def test_unmutated_programs_compile():
    for text in VALID:
        compile_tiny(text)


def _nested(kind: str, depth: int) -> str:
    if kind == "parens":
        return "fn main() { print(" + "(" * depth + "1" + ")" * depth + "); }"
    if kind == "unary":
        return "fn main() { print(" + "-" * depth + "1); }"
    if kind == "neg_parens":
        return "fn main() { print(" + "-(" * depth + "1" + ")" * depth + "); }"
    if kind == "calls":
        return ("fn f(x: int) -> int { return x; } fn main() { print(" + "f(" * depth + "1"
                + ")" * depth + "); }")
    if kind == "index":
        return "fn main() { var a = new int[1]; print(" + "a[" * depth + "0" + "]" * depth + "); }"
    if kind == "blocks":
        return "fn main() " + "{" * depth + "}" * depth
    if kind == "loops":
        return "fn main() {" + "while (false) {" * depth + "}" * depth + "}"
    assert kind == "types"
    return "fn main() { var a = new " + "[" * depth + "int" + "]" * depth + "[0]; }"


@pytest.mark.parametrize("kind", ["parens", "unary", "neg_parens", "calls", "index", "blocks",
                                  "loops", "types"])
def test_moderate_nesting_compiles(kind):
    compile_tiny(_nested(kind, 90))


@pytest.mark.parametrize("depth", [1_000, 5_000, 100_000])
@pytest.mark.parametrize("kind", ["parens", "unary", "neg_parens", "calls", "index", "blocks",
                                  "loops", "types"])
def test_deep_nesting_is_a_located_error(kind, depth):
    text = _nested(kind, depth)
    with pytest.raises(SourceError) as info:
        compile_tiny(text, "deep.tiny")
    assert "nested too deeply" in info.value.message
    assert info.value.pos.line == 1 and 1 <= info.value.pos.col <= len(text)
    assert info.value.render().startswith("deep.tiny:1:")


def test_parse_and_check_alone_handle_the_deepest_allowed_nesting():
    # parse() and check() do not rely on compile_tiny raising the recursion limit
    from ssa_course.tiny import check, parse
    from ssa_course.tiny.parser import MAX_BLOCK_DEPTH, MAX_EXPR_DEPTH

    inner = "(" * (MAX_EXPR_DEPTH - 1) + "1" + ")" * (MAX_EXPR_DEPTH - 1)
    blocks = MAX_BLOCK_DEPTH - 1
    text = "fn main() " + "{" * blocks + f"print({inner});" + "}" * blocks
    check(parse(text))


def test_long_operator_chain_compiles_and_runs():
    import ssa_course

    text = "fn main() { print(" + " + ".join(["1"] * 10_000) + "); }"
    assert ssa_course.run(text, via="ast").stdout == "10000\n"
    assert ssa_course.run(text, via="quads").stdout == "10000\n"


def test_very_long_operator_chains_compile():
    for op in ("+", "*", "&&", "||", "-"):
        leaf = "true" if op in ("&&", "||") else "1"
        compile_tiny("fn main() { print(" + f" {op} ".join([leaf] * 100_000) + "); }")


def test_hundred_thousand_term_chain_runs_through_every_kind_of_executor():
    import ssa_course

    text = "fn main(x: int) { print(" + " + ".join(["x"] * 100_000) + "); }"
    for via in ("ast", "quads", "julia"):
        assert ssa_course.run(text, 1, via=via).stdout == "100000\n", via
