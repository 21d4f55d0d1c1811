"""Tiny's lexer: source text to a list of tokens, each with its line and column.

Comments (``//`` to end of line, ``/* ... */`` not nested) and whitespace are skipped.
An unexpected character or an unterminated comment is a located :class:`SourceError`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ssa_course.errors import Pos, SourceError

KEYWORDS = frozenset({
    "fn", "var", "if", "else", "while", "for", "break", "continue", "return", "print",
    "struct", "new", "len", "true", "false", "try", "catch", "throw", "int", "bool",
})

# Longest first, so "<=" wins over "<".
SYMBOLS = (
    "&&", "||", "==", "!=", "<=", ">=", "->",
    "+", "-", "*", "/", "%", "<", ">", "=", "!", "(", ")", "{", "}", "[", "]",
    ",", ";", ":", ".",
)


@dataclass(frozen=True, slots=True)
class Token:
    """``kind`` is ``"int"``, ``"name"``, ``"keyword"``, ``"symbol"`` or ``"eof"``;
    ``text`` is the token as written."""

    kind: str
    text: str
    pos: Pos

    def describe(self) -> str:
        """How an error message names this token."""
        if self.kind == "eof":
            return "end of file"
        return f"'{self.text}'"


_TOKEN = re.compile(
    r"(?P<newline>\n)|(?P<space>[ \t\r\f\v]+)|(?P<line_comment>//[^\n]*)"
    r"|(?P<block_comment>/\*)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<int>[0-9]+)"
    r"|(?P<symbol>" + "|".join(re.escape(s) for s in SYMBOLS) + ")"
)


def tokenize(source: str, filename: str = "<input>") -> list[Token]:
    """Split ``source`` into tokens; the last token has kind ``"eof"``."""
    tokens: list[Token] = []
    append = tokens.append
    match = _TOKEN.match
    i, line, line_start = 0, 1, 0
    n = len(source)
    while i < n:
        m = match(source, i)
        if m is None:
            c = source[i]
            shown = c if c.isprintable() else repr(c)
            raise SourceError(f"unexpected character '{shown}'",
                              Pos(line, i - line_start + 1), source, filename)
        kind = m.lastgroup
        end = m.end()
        if kind == "newline":
            line, line_start = line + 1, end
        elif kind == "block_comment":
            close = source.find("*/", end)
            if close < 0:
                raise SourceError("unterminated comment", Pos(line, i - line_start + 1, 2),
                                  source, filename)
            newlines = source.count("\n", i, close)
            if newlines:
                line += newlines
                line_start = source.rfind("\n", i, close) + 1
            end = close + 2
        elif kind == "name":
            text = m.group()
            append(Token("keyword" if text in KEYWORDS else "name", text,
                         Pos(line, i - line_start + 1, end - i)))
        elif kind != "space" and kind != "line_comment":
            append(Token(kind, m.group(), Pos(line, i - line_start + 1, end - i)))
        i = end
    tokens.append(Token("eof", "", Pos(line, i - line_start + 1, 1)))
    return tokens
