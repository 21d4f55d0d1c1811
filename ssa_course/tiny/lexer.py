"""Tiny's lexer: source text to a list of tokens, each with its line and column.

One regular expression names every kind of lexeme (the ``(?P<kind>...)`` groups below);
the loop in :func:`tokenize` walks the matches left to right, keeps track of the line and
where it started (so a column is ``offset - line_start + 1``), skips whitespace and
comments (``//`` to end of line, ``/* ... */`` not nested) and turns the rest into
:class:`Token` s. An unexpected character or an unterminated comment is a located
:class:`SourceError`.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ssa_course import opcodes
from ssa_course.errors import Pos, SourceError

KEYWORDS = frozenset({
    "fn", "var", "if", "else", "while", "for", "break", "continue", "return", "print",
    "struct", "new", "len", "true", "false", "try", "catch", "throw", "int", "bool",
    "float",
})

# Punctuation; the operator symbols come from the opcode table (ssa_course.opcodes).
PUNCTUATION = ("->", "=", "(", ")", "{", "}", "[", "]", ",", ";", ":", ".")


_NEWLINE = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """``text``'s lines as the lexer counts them: a line ends at ``\\n``, ``\\r\\n`` or a
    lone ``\\r`` and nothing else (not at a form feed or U+2028, which ``str.splitlines``
    also breaks at); as :meth:`str.splitlines`, a last line break does not start an empty
    last line, and ``""`` has no lines. Every place that numbers the lines of a program or
    of a text face uses this (through :mod:`ssa_course.srclines` above the IR packages)."""
    if not text:
        return []
    lines = _NEWLINE.split(text)
    if lines[-1] == "":
        lines.pop()
    return lines


def symbols() -> tuple[str, ...]:
    """Every symbol, longest first, so "<=" wins over "<"."""
    return tuple(sorted({*PUNCTUATION, *opcodes.symbols()}, key=lambda s: (-len(s), s)))


class Token(NamedTuple):
    """One lexeme. ``kind`` is ``"int"``, ``"float"``, ``"name"``, ``"keyword"``, ``"symbol"`` or
    ``"eof"``; ``text`` is the token as written; ``pos`` where it starts (and its length)."""

    kind: str
    text: str
    pos: Pos

    def describe(self) -> str:
        """How an error message names this token: ``'while'``, ``end of file``."""
        if self.kind == "eof":
            return "end of file"
        return f"'{self.text}'"


def _lexeme_regex() -> re.Pattern[str]:
    return re.compile(
        r"(?P<space>[ \t\r\f\v\n]+)"
        r"|(?P<line_comment>//[^\n]*)"
        r"|(?P<block_comment>/\*.*?\*/)"
        r"|(?P<unterminated>/\*)"          # a "/*" without its "*/"
        r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
        # a float literal: digits, then a fraction, an exponent or both (1.5, 1e10, 2.5e-3)
        r"|(?P<float>[0-9]+(?:\.[0-9]+(?:[eE][+-]?[0-9]+)?|[eE][+-]?[0-9]+))"
        r"|(?P<int>[0-9]+)"
        r"|(?P<symbol>" + "|".join(re.escape(s) for s in symbols()) + ")"
        r"|(?P<other>.)",                  # anything else is an unexpected character
        re.DOTALL,
    )


# The regular expression, rebuilt when an operator is added to or removed from the table.
_cache: dict[int, re.Pattern[str]] = {}


def _lexeme() -> re.Pattern[str]:
    version = opcodes.TABLE.version
    pattern = _cache.get(version)
    if pattern is None:
        _cache.clear()
        pattern = _cache[version] = _lexeme_regex()
    return pattern


def tokenize(source: str, filename: str = "<input>") -> list[Token]:
    """Split ``source`` into tokens; the last token has kind ``"eof"``."""
    tokens: list[Token] = []
    append = tokens.append
    line, line_start = 1, 0  # the current line and the offset where it starts
    for m in _lexeme().finditer(source):
        kind = m.lastgroup
        start = m.start()
        if kind == "name" or kind == "symbol" or kind == "int" or kind == "float":
            text = m.group()
            if kind == "name" and text in KEYWORDS:
                kind = "keyword"
            append(Token(kind, text, Pos(line, start - line_start + 1, len(text))))
        elif kind == "space" or kind == "block_comment":
            text = m.group()
            newlines = text.count("\n")
            if newlines:
                line += newlines
                line_start = start + text.rindex("\n") + 1
        elif kind == "unterminated":
            raise SourceError("unterminated comment", Pos(line, start - line_start + 1, 2),
                              source, filename)
        elif kind == "other":
            c = m.group()
            shown = f"'{c}'" if c.isprintable() else f"U+{ord(c):04X}"
            raise SourceError(f"unexpected character {shown}",
                              Pos(line, start - line_start + 1), source, filename)
        # line comments are skipped
    append(Token("eof", "", Pos(line, len(source) - line_start + 1, 1)))
    return tokens
