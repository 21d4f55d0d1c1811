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

A claim cell ends with :func:`checked`, which prints one quiet line ("✓ checked against
the output: 3 claims of the text above"); lesson 00 explains it once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TypeVar

__all__ = ["ClaimError", "checked", "claim", "claim_all", "claim_in", "claim_line"]

_NOTHING = object()
T = TypeVar("T")

# The sentences claimed since the last :func:`checked` (what its quiet line counts).
_HELD: list[str] = []


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
        _HELD.append(says)
        return
    if actual != expected:
        raise ClaimError(says, f"the cell gives {actual!r}, not {expected!r}")
    _HELD.append(says)


def claim_in(says: str, needle: str, text: str) -> None:
    """Check that ``needle`` occurs in ``text`` (a listing, a printed table)."""
    if needle not in text:
        shown = text if len(text) <= 400 else text[:400] + " ..."
        raise ClaimError(says, f"{needle!r} is not in the cell's output:\n{shown}")
    _HELD.append(says)


def claim_line(says: str, lines: Iterable[str], *needles: str) -> str:
    """The first line holding every one of ``needles``; raises if no line does.

    Lessons point at the lines that matter in a listing with this (the listing is read,
    never a hard-coded line number)."""
    lines = list(lines)
    for line in lines:
        if all(n in line for n in needles):
            _HELD.append(says)
            return line
    raise ClaimError(says, f"no line of the cell's output holds {' and '.join(map(repr, needles))}")


def claim_all(says: str, items: Iterable[T], holds: Callable[[T], object],
              but: Mapping[str, T] | None = None) -> None:
    """Check a sentence about *every* item ("the control ones all say dead"): ``holds``
    is true of each of ``items`` except those in ``but``. An exception is named by a
    phrase of the sentence itself (``but={"`Start`": first_step}``), so a claim cannot
    skip an item the text does not own up to: a phrase missing from ``says``, an item
    that fails without being named, and a named item that no longer fails all raise."""
    but = dict(but or {})
    for phrase in but:
        if " ".join(phrase.split()) not in " ".join(says.split()):
            raise ClaimError(says, f"the claim excepts {phrase!r}, which the sentence "
                             f"does not say")
    excepted = list(but.values())
    items = list(items)
    for name, item in but.items():
        if item not in items:
            raise ClaimError(says, f"the exception {name!r} is not among the items")
        if holds(item):
            raise ClaimError(says, f"the exception {name!r} holds like the rest: the "
                             f"sentence need not except it")
    failing = [item for item in items
               if not any(item is e or item == e for e in excepted) and not holds(item)]
    if failing:
        raise ClaimError(says, f"it does not hold of {failing[:5]!r}"
                         + (f" and {len(failing) - 5} more" if len(failing) > 5 else ""))
    if not items:
        raise ClaimError(says, "there is nothing to check it on")
    _HELD.append(says)


def checked() -> None:
    """The quiet line a claim cell ends with: how many sentences of the text above the
    cell's claims just checked against the output (nothing is printed when none ran)."""
    if _HELD:
        n = len(_HELD)
        print(f"✓ checked against the output: {n} claim{'s' if n > 1 else ''} "
              "of the text above")
    _HELD.clear()
