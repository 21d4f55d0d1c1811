"""The pattern table of instruction selection: what each quad shape becomes, and why.

One row per pattern; :mod:`ssa_course.codegen.x86_64.select_ops` implements them (each branch
there is marked ``# pattern: <name>``) and the lesson prints :func:`table_text`. The
first row that matches a quad wins; rows are listed from the most specific.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from ssa_course.errors import UsageError


# A UsageError, not an internal error: a program with an operator the backend lacks is
# reported as one line (exit status 1), never as a traceback.
class CodegenError(UsageError):
    """A program the code generator cannot translate (an operator with no pattern)."""


# Documentation as data: the lesson prints the rows, and every `# pattern: <name>` marker
# in the selection code must name a row (tests/test_codegen_isel.py checks it), so the
# table and the code cannot drift apart unseen.
@dataclass(frozen=True, slots=True)
class Pattern:
    name: str
    matches: str
    emits: str
    why: str


def table_text(patterns: Sequence[Pattern], width: int = 100) -> str:
    """A pattern table as text no wider than ``width`` (what the lesson prints): per
    pattern, its name and the quad shape it matches, then what it emits and why, indented
    and wrapped. Every target's table prints through here (pass its ``PATTERNS``)."""
    # Wrapped here rather than in the rows: each row stays one readable sentence, and
    # the width is one parameter.
    lines: list[str] = []
    for p in patterns:
        lines += textwrap.wrap(f"{p.name}:  {p.matches}", width, subsequent_indent="    ")
        lines += textwrap.wrap(p.emits, width, initial_indent="    emits  ",
                               subsequent_indent="           ")
        lines += textwrap.wrap(p.why, width, initial_indent="    why    ",
                               subsequent_indent="           ")
    return "\n".join(lines)
