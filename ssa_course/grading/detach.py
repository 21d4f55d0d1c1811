"""An answer made safe to hand to the grader: plain containers and the course's values,
nothing of the learner's.

:func:`detach` runs in the process that ran the learner's function, right after the
call: it rebuilds dicts, lists, tuples and sets as exactly those types (a subclass's
``__iter__`` or ``__eq__`` never runs again), keeps the course's own objects, and puts a
:class:`Foreign` marker where anything else was (a generator, a numpy array, an object of
the learner's class). So no code of the learner's runs where the checker reads,
compares, prints or sends the answer.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from ssa_course.grading.plain import MAX_NESTING, _course_class, kind_name

_SCALARS = (type(None), bool, int, float, str, bytes, complex)


@dataclass(frozen=True, slots=True)
class Foreign:
    """Where an answer held something that is not plain data: what it was."""

    kind: str
    text: str

    def __repr__(self) -> str:
        return self.text


def detach(value: object) -> object:
    """``value`` rebuilt from plain containers and course values (see the module doc)."""
    return _detach(value, 0, set())


def _detach(value: object, depth: int, active: set[int]) -> object:
    kind = type(value)
    if kind in _SCALARS:
        return value
    if depth > MAX_NESTING:
        return Foreign(f"nested more than {MAX_NESTING} levels deep", "...")
    if id(value) in active:
        return Foreign(f"{kind_name(value)} that contains itself", "...")
    active.add(id(value))
    try:
        return _rebuilt(value, kind, depth + 1, active)
    finally:
        active.discard(id(value))


def _rebuilt(value: object, kind: type, inner: int, active: set[int]) -> object:
    def detach(item: object, _: int) -> object:
        return _detach(item, inner, active)

    if isinstance(value, dict):
        return {detach(k, inner): detach(v, inner) for k, v in dict.items(value)}
    if isinstance(value, list):
        return [detach(v, inner) for v in list.__iter__(value)]
    if isinstance(value, tuple):
        return tuple(detach(v, inner) for v in tuple.__iter__(value))
    if isinstance(value, (set, frozenset)):
        items = {detach(v, inner) for v in (set.__iter__(value) if isinstance(value, set)
                                             else frozenset.__iter__(value))}
        return items if isinstance(value, set) else frozenset(items)
    if _course_kind(kind):
        return value
    return Foreign(kind_name(value), _text(value))


def _course_kind(kind: type) -> bool:
    """A class of the course: defined in its modules, or made by them on the fly (the
    ``Add`` subclass exercise 06 builds around the learner's ``idealize``)."""
    if _course_class(kind):
        return True
    module = kind.__module__ or ""
    maker, local, _ = kind.__qualname__.partition(".<locals>.")
    return (bool(local) and (module == "ssa_course" or module.startswith("ssa_course."))
            and callable(getattr(sys.modules.get(module), maker, None))
            and any(_course_class(base) for base in kind.__mro__[1:-1]))


def _text(value: object) -> str:
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__} object>"
    return text if len(text) <= 300 else text[:300] + " ..."


def fresh(value: object) -> object:
    """A copy of the data containers in ``value`` (dicts, lists, sets, tuples, at any
    depth) for one call of an answer: an answer that updates what it is given (``a[k] |=
    b[k]``) cannot change what the next call gets. Everything else -- the course's
    objects, a graph's nodes -- is handed over as it is (its identity matters)."""
    return _fresh(value, {})


def _fresh(value: object, done: dict[int, object]) -> object:
    kind = type(value)
    if kind not in (dict, list, set, tuple, frozenset):
        return value
    if id(value) in done:  # shared twice, or containing itself: one copy
        return done[id(value)]
    if kind is dict:
        copy: dict = {}
        done[id(value)] = copy
        for k, v in value.items():  # type: ignore[attr-defined]
            copy[_fresh(k, done)] = _fresh(v, done)
        return copy
    if kind is list:
        items: list = []
        done[id(value)] = items
        items.extend(_fresh(v, done) for v in value)  # type: ignore[attr-defined]
        return items
    make: Any = kind
    items_of: Any = value
    rebuilt: object = make(_fresh(v, done) for v in items_of)
    done[id(value)] = rebuilt
    return rebuilt
