"""Malformed Tiny programs: each gives exactly the located message in its ``.err`` file.

Every row of LANGUAGE.md's "where errors point" table has cases here; the message
names the file, line and column, shows the source line, and puts a caret under the spot.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ssa_course.errors import SourceError
from ssa_course.tiny import compile_tiny

ERRORS = sorted((Path(__file__).parent / "errors").glob("*.tiny"))


def test_there_are_enough_malformed_programs():
    assert len(ERRORS) >= 45


@pytest.mark.parametrize("path", ERRORS, ids=[p.stem for p in ERRORS])
def test_malformed_program_message(path: Path):
    expected = path.with_suffix(".err").read_text().rstrip("\n")
    with pytest.raises(SourceError) as info:
        compile_tiny(path.read_text(), path.name)
    assert info.value.render() == expected


TOKENS = ["fn", "main", "(", ")", "{", "}", "var", "x", "=", "1", ";", "print", "if",
          "while", "for", "else", "+", "*", "/", "<", "==", "&&", "!", "-", "[", "]", ".",
          "new", "int", "bool", "struct", "return", "break", "true", ",", ":", "->", "try",
          "catch", "throw", "len", "9223372036854775808", "/*", "//", "\n", "$"]


def _check_only_located_errors(text: str) -> None:
    try:
        compile_tiny(text, "fuzz.tiny")
    except SourceError as e:
        lines = text.split("\n")
        assert 1 <= e.pos.line <= len(lines)
        assert 1 <= e.pos.col <= len(lines[e.pos.line - 1]) + 1
        assert e.render().startswith(f"fuzz.tiny:{e.pos.line}:{e.pos.col}: error: ")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=200))
def test_random_text_gives_only_located_errors(text):
    _check_only_located_errors(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=60))
def test_token_soup_gives_only_located_errors(tokens):
    _check_only_located_errors(" ".join(tokens))


VALID = (Path(__file__).parent / "programs" / "sieve.tiny").read_text()


@settings(max_examples=300, deadline=None)
@given(st.integers(0, len(VALID) - 1), st.integers(1, 5), st.sampled_from(TOKENS + [""]))
def test_mutated_programs_give_only_located_errors(at, cut, insert):
    _check_only_located_errors(VALID[:at] + insert + VALID[at + cut:])


@pytest.mark.parametrize("depth", [150, 5000])
def test_deep_nesting_is_handled(depth):
    text = "fn main() { print(" + "(" * depth + "1" + ")" * depth + "); }"
    try:
        prog = compile_tiny(text)
    except SourceError as e:
        assert "nested too deeply" in e.message
        assert depth > 150
    else:
        assert depth <= 200 and prog.functions["main"]


def test_long_operator_chain_compiles_and_runs():
    import ssa_course

    text = "fn main() { print(" + " + ".join(["1"] * 10_000) + "); }"
    assert ssa_course.run(text, via="ast").stdout == "10000\n"
    assert ssa_course.run(text, via="quads").stdout == "10000\n"
