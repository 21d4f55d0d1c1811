"""Printing long outputs in a lesson: whole lines only.

A lesson that shows the start of a long listing cuts it with :func:`clip`, at a line
boundary, and says how much it left out -- never ``text[:1500]``, which stops in the middle
of a line and hides how long the rest is.
"""

from __future__ import annotations

__all__ = ["clip"]


def clip(text: str, lines: int = 30) -> str:
    """The first ``lines`` lines of ``text`` and, when there are more, a last line
    ``... N more lines``."""
    rows = text.splitlines()
    if len(rows) <= lines:
        return text
    rest = len(rows) - lines
    return "\n".join(rows[:lines]) + f"\n... {rest} more line{'s' if rest > 1 else ''}\n"
