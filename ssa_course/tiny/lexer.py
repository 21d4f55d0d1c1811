"""Tiny's lexer: source text to a list of tokens, each with its line and column.

Comments (``//`` to end of line, ``/* ... */`` not nested) and whitespace are skipped.
An unexpected character or an unterminated comment is a located :class:`SourceError`.
"""

from __future__ import annotations

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


def tokenize(source: str, filename: str = "<input>") -> list[Token]:
    """Split ``source`` into tokens; the last token has kind ``"eof"``."""
    tokens: list[Token] = []
    i, line, col = 0, 1, 1
    n = len(source)

    def error(message: str, length: int = 1) -> SourceError:
        return SourceError(message, Pos(line, col, length), source, filename)

    while i < n:
        c = source[i]
        if c == "\n":
            i, line, col = i + 1, line + 1, 1
            continue
        if c in " \t\r\f\v":
            i, col = i + 1, col + 1
            continue
        if source.startswith("//", i):
            while i < n and source[i] != "\n":
                i += 1
            continue
        if source.startswith("/*", i):
            end = source.find("*/", i + 2)
            if end < 0:
                raise error("unterminated comment", 2)
            chunk = source[i:end + 2]
            newlines = chunk.count("\n")
            if newlines:
                line += newlines
                col = len(chunk) - chunk.rfind("\n")
            else:
                col += len(chunk)
            i = end + 2
            continue
        start = i
        if c.isascii() and (c.isalpha() or c == "_"):
            while i < n and source[i].isascii() and (source[i].isalnum() or source[i] == "_"):
                i += 1
            text = source[start:i]
            kind = "keyword" if text in KEYWORDS else "name"
        elif c.isascii() and c.isdigit():
            while i < n and source[i].isascii() and source[i].isdigit():
                i += 1
            text = source[start:i]
            kind = "int"
        else:
            text = next((s for s in SYMBOLS if source.startswith(s, i)), "")
            if not text:
                shown = c if c.isprintable() else repr(c)
                raise error(f"unexpected character '{shown}'")
            i += len(text)
            kind = "symbol"
        tokens.append(Token(kind, text, Pos(line, col, len(text))))
        col += len(text)
    tokens.append(Token("eof", "", Pos(line, col, 1)))
    return tokens
