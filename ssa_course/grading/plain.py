"""Answers as plain data: compared strictly, shown as the lessons write them.

A learner's answer is never compared with ``==`` as it comes: a numpy array answers ``==``
with an array, an object can say it equals everything, an ``__eq__`` can raise. Both the
expected and the learner's answer are first turned into a *plain form* -- nested tuples
tagged with their kind -- and the plain forms are compared:

* ``None``, ``bool``, ``int``, ``float``, ``str`` (exactly these types: ``True`` is not
  ``1``, ``1.0`` is not ``1``);
* lists and tuples (both are sequences), sets and frozensets, dicts -- and their
  subclasses (a ``defaultdict`` is a dict), read with the base class's own methods;
* enums, and the course's own value classes (frozen dataclasses such as the lattice types
  of :mod:`ssa_course.son.types`), field by field;
* any other object of a class the course itself defines (a graph node, a block) stands
  for itself: it equals only the very same object.

Anything else -- the learner's own class, a numpy array, a generator -- is not an answer:
:class:`NotPlain` says what it is. :func:`shown` writes a value for a message, with
lattice types printed by their own printer (``int``, ``TOP``, ``3``, ``int[1..5]``).
"""

from __future__ import annotations

import dataclasses
import enum
import sys
from collections.abc import Callable, Iterable
from typing import Any

MAX_NESTING = 100  # an answer nested deeper than this is a mistake (or contains itself)


class NotPlain(ValueError):
    """The value is not data an answer can be made of; the message says why."""


def plain(value: object) -> object:
    """The plain, type-tagged form of ``value`` (hashable); raises :class:`NotPlain`."""
    return _plain(value, 0, set())


def _plain(value: object, depth: int, active: set[int]) -> object:
    if depth > MAX_NESTING:
        raise NotPlain(f"it is nested more than {MAX_NESTING} levels deep")
    kind = type(value)
    if value is None or kind in (bool, int, float, str):
        return (kind.__name__, value)
    if id(value) in active:
        raise NotPlain(f"it contains itself (a {kind.__name__} inside itself)")
    active.add(id(value))
    try:
        return _container(value, kind, depth, active)
    finally:
        active.discard(id(value))


def _container(value: object, kind: type, depth: int, active: set[int]) -> object:
    inner = depth + 1
    # Subclasses (a defaultdict, a namedtuple) count as their base container; their
    # items are read with the base class's own methods, so an overridden __iter__ or
    # __eq__ changes nothing.
    for base, tag, items in _CONTAINERS:
        if isinstance(value, base):
            return (tag, _collect(tag, items(value), inner, active))
    if kind.__module__ == "ssa_course.grading.detach" and kind.__qualname__ == "Foreign" \
            and _course_class(kind):  # what an answer held that was not plain data
        raise NotPlain(f"it is {value.kind}, not plain data (a number, string, list, set, "  # type: ignore[attr-defined]
                       "dict or one of the course's values)")
    if not _course_class(kind):
        raise NotPlain(f"it is {_a(kind)}, not plain data (a number, string, list, set, "
                       "dict or one of the course's values)")
    name = f"{kind.__module__}.{kind.__qualname__}"
    if isinstance(value, enum.Enum):
        return ("enum", name, value.name)
    if dataclasses.is_dataclass(value):
        return ("value", name, tuple(_plain(getattr(value, f.name), inner, active)
                                     for f in dataclasses.fields(value)))
    return ("object", name, id(value))


_CONTAINERS: list[tuple[type, str, Callable[[Any], Iterable[Any]]]] = [
    (dict, "dict", dict.items),
    (list, "seq", list.__iter__),
    (tuple, "seq", tuple.__iter__),
    (set, "set", set.__iter__),
    (frozenset, "set", frozenset.__iter__),
]


def _collect(tag: str, items: Iterable[Any], depth: int, active: set[int]) -> object:
    if tag == "dict":
        return frozenset((_plain(k, depth, active), _plain(v, depth, active))
                         for k, v in items)
    if tag == "set":
        return frozenset(_plain(v, depth, active) for v in items)
    return tuple(_plain(v, depth, active) for v in items)


def _course_class(kind: type) -> bool:
    """Is ``kind`` really a class of this package (not one that only claims its module)?"""
    module = kind.__module__ or ""
    if module != "ssa_course" and not module.startswith("ssa_course."):
        return False
    found: object = sys.modules.get(module)
    for part in kind.__qualname__.split("."):
        found = getattr(found, part, None)
    return found is kind


def _a(kind: type) -> str:
    name = kind.__name__ if kind.__module__ in ("builtins", "__main__") \
        else f"{kind.__module__}.{kind.__qualname__}"
    return f"an {name}" if name[:1].lower() in "aeiou" else f"a {name}"


def kind_name(value: object) -> str:
    """``a list``, ``an int``, ``a numpy.ndarray``: what a value is, for messages."""
    return _a(type(value))


def shown(value: object, limit: int = 2000) -> str:
    """``value`` as a message shows it: containers as Python writes them, sets sorted,
    lattice types by their own printer; cut at ``limit`` characters."""
    text = _shown(value, 0)
    return text if len(text) <= limit else text[:limit] + " ..."


def _shown(value: object, depth: int) -> str:
    if depth > MAX_NESTING:
        return "..."
    kind = type(value)
    inner = depth + 1
    if kind is list:
        return "[" + ", ".join(_shown(v, inner) for v in value) + "]"  # type: ignore[attr-defined]
    if kind is tuple:
        items = [_shown(v, inner) for v in value]  # type: ignore[attr-defined]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if kind in (set, frozenset):
        items = sorted(_shown(v, inner) for v in value)  # type: ignore[attr-defined]
        return "{" + ", ".join(items) + "}" if items else "set()"
    if kind is dict:
        return "{" + ", ".join(f"{_shown(k, inner)}: {_shown(v, inner)}"
                               for k, v in value.items()) + "}"  # type: ignore[attr-defined]
    if _is_lattice_type(value):
        return str(value)
    try:
        return repr(value)
    except Exception:  # a learner's object whose __repr__ fails
        return f"<{kind.__name__} object>"


def _is_lattice_type(value: object) -> bool:
    types = sys.modules.get("ssa_course.son.types")
    return types is not None and isinstance(value, types.Type) and _course_class(type(value))


def first_difference(expected: object, actual: object,
                     show: Callable[[Any], str] | None = None) -> str:
    """Where two answers of the same shape first differ (``at key 'b2'``, ``at index 3``),
    or an empty string when there is no simpler way to say it (values written by ``show``,
    default :func:`shown`)."""
    def shown(value: object, limit: int) -> str:
        text = _shown(value, 0) if show is None else show(value)
        return text if len(text) <= limit else text[:limit] + " ..."

    if type(expected) is dict and type(actual) is dict:
        missing = [k for k in expected if k not in actual]
        extra = [k for k in actual if k not in expected]
        if missing:
            return f"missing key {shown(missing[0], 200)}"
        if extra:
            return f"unexpected key {shown(extra[0], 200)}"
        for k in expected:
            if _differ(expected[k], actual[k]):
                return (f"at key {shown(k, 200)}: expected {shown(expected[k], 300)}, "
                        f"got {shown(actual[k], 300)}")
    if isinstance(expected, list | tuple) and isinstance(actual, list | tuple):
        if len(expected) != len(actual):
            return f"expected {len(expected)} items, got {len(actual)}"
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            if _differ(e, a):
                return f"at index {i}: expected {shown(e, 300)}, got {shown(a, 300)}"
    if isinstance(expected, set | frozenset) and isinstance(actual, set | frozenset):
        parts = []
        if expected - actual:
            parts.append(f"missing {shown(set(expected - actual), 300)}")
        if actual - expected:
            parts.append(f"not expected {shown(set(actual - expected), 300)}")
        return "; ".join(parts)
    return ""


def _differ(a: object, b: object) -> bool:
    try:
        return plain(a) != plain(b)
    except NotPlain:
        return True
