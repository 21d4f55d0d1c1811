"""Lesson sentences that state an output, checked against the cell's own output.

A lesson's prose says things like "the cell prints ``int[1..11]``" or "fourteen registers
are free". Such a sentence is only true for the engine the lesson was written against; when
the engine changes, the text silently starts to lie. So every sentence of a lesson's
markdown that states an output is either printed by a code cell (an f-string built from the
engine's values) or *backed* by a claim in a code cell right after it::

    claim("`[0, 9] + 1` is `[1, 10]`", str(intervals.add(r(0, 9), r(1, 1))), "int[1..10]")

The first argument quotes the sentence (a verbatim piece of it; line breaks and runs of
spaces count as one space). When the output drifts, the cell raises :class:`ClaimError`
naming that sentence, the lesson stops with it, and ``make test`` (which runs every
lesson) fails. ``tests/test_lesson_claims.py`` checks the other direction: every markdown
sentence that states an output quotes-matches a claim below it, and every claim quotes a
sentence the lesson still says. ``docs/lessons.md`` has the whole convention.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["ClaimError", "claim", "claim_in", "claim_line"]

_NOTHING = object()


class ClaimError(AssertionError):
    """A lesson's sentence no longer matches what its cell computes."""

    def __init__(self, says: str, problem: str) -> None:
        super().__init__(f'the lesson says "{says}", but {problem}')
        self.says = says
        self.problem = problem


def claim(says: str, actual: object, expected: object = _NOTHING) -> None:
    """Check that ``actual`` equals ``expected`` -- or, with no ``expected``, that
    ``actual`` is true -- for the lesson sentence quoted by ``says``."""
    if expected is _NOTHING:
        if not actual:
            raise ClaimError(says, f"the cell finds it false ({actual!r})")
        return
    if actual != expected:
        raise ClaimError(says, f"the cell gives {actual!r}, not {expected!r}")


def claim_in(says: str, needle: str, text: str) -> None:
    """Check that ``needle`` occurs in ``text`` (a listing, a printed table)."""
    if needle not in text:
        shown = text if len(text) <= 400 else text[:400] + " ..."
        raise ClaimError(says, f"{needle!r} is not in the cell's output:\n{shown}")


def claim_line(says: str, lines: Iterable[str], *needles: str) -> str:
    """The first line holding every one of ``needles``; raises if no line does.

    Lessons point at the lines that matter in a listing with this (the listing is read,
    never a hard-coded line number)."""
    lines = list(lines)
    for line in lines:
        if all(n in line for n in needles):
            return line
    raise ClaimError(says, f"no line of the cell's output holds {' and '.join(map(repr, needles))}")
