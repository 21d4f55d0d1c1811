"""The lines face: which source line each item of a representation belongs to.

A representation's ``lines(artifact)`` returns a :class:`Lines`: one entry per line of its
text face (the source line that text line belongs to, or None) and a function from DOT
node names to source lines. Items with no source line are not dropped: ``no_line()``
lists them. What a phi, a Region, a hoisted node, a spill or a parallel copy is
attributed to is written down in ``docs/lines.md``.

The helpers here need no IR: :func:`annotated_lines` reads the markers the text faces
already print (``@3:5`` in the syntax tree, ``# line 4:`` comments in a machine listing),
so a representation added later (another target's listing) gets a lines face for free
when its text carries them. The IR-aware helpers are in
:mod:`ssa_course.lessons.lines_faces`.

:func:`split_lines` (defined in :mod:`ssa_course.tiny.lexer`, so the IR packages below can
use it too) is the one rule for turning text into lines: the lexers' rule (a line
ends at ``\\n``, ``\\r\\n`` or a lone ``\\r``), not :meth:`str.splitlines`, which also
breaks at a form feed, ``\\x1c``-``\\x1e``, U+0085, U+2028 and U+2029 and so would number
lines differently from the quads (issue 39).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ssa_course.tiny.lexer import split_lines


def _no_node(name: str) -> int | None:
    return None


@dataclass(frozen=True, slots=True)
class Lines:
    """``text[i]``: the source line of line ``i`` of the text face (None: none);
    ``node(name)``: the source line of the DOT node ``name`` (None: none)."""

    text: list[int | None]
    node: Callable[[str], int | None] = field(default=_no_node)

    def no_line(self, text: str) -> list[str]:
        """The text face's non-blank lines that belong to no source line."""
        return [t for t, n in zip(split_lines(text), self.text, strict=False)
                if n is None and t.strip()]

    def covered(self) -> set[int]:
        return {n for n in self.text if n is not None}


# ``# line 4: ...`` (x86 listings), ``// line 4: ...`` (other assemblers' comments)
_LINE_COMMENT = re.compile(r"^\s*(?:#|//|;|@)\s*line (\d+)\b")
_FUNCTION_START = re.compile(r"^[A-Za-z_.$][\w.$]*:\s*$|^\s*\.globl\b")
_AT_MARK = re.compile(r"@(\d+):\d+\s*$")


def listing_lines(text: str) -> Lines:
    """A machine listing's lines (any target): an instruction belongs to the last
    ``line N`` comment above it; a comment line to its own line; a function's code before
    its first comment (the prologue), labels and directives to none."""
    out: list[int | None] = []
    current: int | None = None
    for t in split_lines(text):
        m = _LINE_COMMENT.match(t)
        if m:
            current = int(m.group(1))
            out.append(current)
            continue
        stripped = t.strip()
        if _FUNCTION_START.match(t) and not t.startswith((" ", "\t", ".L")):
            current = None  # a new function: its prologue has no line
        if not stripped or stripped.startswith((".", "#", "//")) or stripped.endswith(":"):
            out.append(None)
            continue
        out.append(current)
    return Lines(out)


def annotated_lines(text: str) -> Lines:
    """Lines of a text face whose items print their position (``... @3:5``, the syntax
    tree) or machine listing comments (``# line 4:``); anything else: no line."""
    if any(_LINE_COMMENT.match(t) for t in split_lines(text)):
        return listing_lines(text)
    out: list[int | None] = []
    for t in split_lines(text):
        m = _AT_MARK.search(t)
        out.append(int(m.group(1)) if m else None)
    return Lines(out)


def valid(lines: Lines, text: str, n_source: int) -> list[str]:
    """What is wrong with ``lines`` for a text face ``text`` of a program of ``n_source``
    lines: a length that does not match, a line that is not a source line."""
    problems = []
    if len(lines.text) != len(split_lines(text)):
        problems.append(f"{len(lines.text)} entries for {len(split_lines(text))} text lines")
    problems += [f"text line {i + 1} -> source line {n}" for i, n in enumerate(lines.text)
                 if n is not None and not 1 <= n <= n_source]
    return problems
