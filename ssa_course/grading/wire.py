"""What crosses the sandbox's boundary back to the grader: JSON of a fixed schema.

A learner's process (inside the sandbox, :mod:`ssa_course.grading.box`) answers every
call with one JSON message (:func:`message`); the grader reads it with :func:`read`,
which validates every part and builds the value from the grader's own classes. Nothing a
student made is unpickled, formatted, compared or called on the grader's side: a value is
rebuilt from these tags only --

* ``null``, ``true``/``false``, numbers and strings as themselves;
* ``{"list": [...]}``, ``{"tuple": [...]}``, ``{"set": [...]}``,
  ``{"frozenset": [...]}``, ``{"dict": [[key, value], ...]}``, ``{"bytes": "<hex>"}``;
* ``{"obj": "module:Qualname", "id": N, "state": {"field": value, ...}}`` -- an object of
  one of the course's classes (defined in ``ssa_course``, not the grader's machinery), made with
  ``object.__new__`` and its fields set directly (no ``__init__``, ``__setstate__`` or
  ``__setattr__`` of its class runs); ``{"ref": N}`` is that object again (graphs have
  cycles); ``{"enum": "module:Qualname", "name": "X"}`` is an enum member;
* ``{"foreign": "a generator", "text": "..."}`` -- what the answer held that is not data
  (shown in the message, never compared equal to anything).

A message that breaks the schema, names a class that is not the course's, nests deeper
than :data:`MAX_DEPTH` or is larger than the frame limit is reported as "your answer
could not be read back" -- the learner's process is the student's to break.
"""

from __future__ import annotations

import enum
import json
import sys
import types
from dataclasses import dataclass
from typing import Any

from ssa_course.grading.detach import Foreign

MAX_DEPTH = 4000  # containers and objects inside each other
MAX_TEXT = 20_000  # characters of a message's text or printed output kept
KINDS = ("value", "raised", "memory", "refused", "timeout", "died", "statement", "ready",
         "skipped")
CATEGORIES = ("", "mismatch", "notimpl", "crash", "memory", "withheld")


class WireError(ValueError):
    """A message from a learner's process that does not follow the schema."""


# ------------------------------------------------------------------ inside the sandbox


class _Deep:
    """Room for :data:`MAX_DEPTH` levels (objects nest two JSON levels deep each)."""

    def __enter__(self) -> None:
        self.limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(self.limit, MAX_DEPTH * 3 + 200))

    def __exit__(self, *exc: object) -> None:
        sys.setrecursionlimit(self.limit)


def encode(value: object) -> Any:
    """``value`` as JSON-able data of the schema above (run in the learner's process)."""
    with _Deep():
        return _Encoder().encode(value, 0)


class _Encoder:
    def __init__(self) -> None:
        self.ids: dict[int, int] = {}
        self.keep: list[object] = []  # objects seen, kept alive so ids stay unique

    def encode(self, value: object, depth: int) -> Any:
        kind = type(value)
        if value is None or kind in (bool, str):
            return value
        if kind is int or kind is float:
            return value
        if depth > MAX_DEPTH:
            return {"foreign": f"a value nested more than {MAX_DEPTH} levels deep",
                    "text": "..."}
        inner = depth + 1
        if kind is Foreign:
            return {"foreign": value.kind, "text": value.text}  # type: ignore[attr-defined]
        if kind is bytes:
            return {"bytes": value.hex()}  # type: ignore[attr-defined]
        if kind in (list, tuple, set, frozenset):
            items: Any = value
            return {kind.__name__: [self.encode(v, inner) for v in items]}
        if kind is dict:
            pairs: Any = value
            return {"dict": [[self.encode(k, inner), self.encode(v, inner)]
                             for k, v in pairs.items()]}
        if isinstance(value, enum.Enum):
            return {"enum": _class_name(kind), "name": value.name}
        if id(value) in self.ids:
            return {"ref": self.ids[id(value)]}
        self.ids[id(value)] = number = len(self.ids)
        self.keep.append(value)
        return {"obj": _class_name(_named_class(kind)), "id": number,
                "state": {k: self.encode(v, inner) for k, v in _state(value).items()}}


def _named_class(kind: type) -> type:
    """A class made on the fly by a course function (``<locals>`` in its name) travels as
    its nearest base class the grader can name."""
    for base in kind.__mro__:
        if "<locals>" not in base.__qualname__:
            return base
    return object


def _class_name(kind: type) -> str:
    return f"{kind.__module__}:{kind.__qualname__}"


def _state(value: object) -> dict[str, object]:
    state: dict[str, object] = {}
    for klass in type(value).__mro__:
        slots = klass.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name not in ("__dict__", "__weakref__") and hasattr(value, name):
                state[name] = getattr(value, name)
    state.update(getattr(value, "__dict__", {}))
    return state


def message(kind: str, value: object = None, text: str = "", category: str = "",
            output: str = "") -> bytes:
    """One message of the learner's process, as the bytes of a frame."""
    body = {"kind": kind, "text": text[:MAX_TEXT], "category": category,
            "output": output[:MAX_TEXT]}
    with _Deep():
        if kind == "value":
            body["value"] = _Encoder().encode(value, 0)
        return json.dumps(body, separators=(",", ":")).encode()


# ------------------------------------------------------------------ the grader's side


@dataclass(slots=True)
class Received:
    """A validated message: ``kind`` (one of :data:`KINDS`), the rebuilt ``value``,
    ``text``, ``category`` and the printed ``output`` (plain strings)."""

    kind: str
    value: object = None
    text: str = ""
    category: str = ""
    output: str = ""


def read(frame: bytes) -> Received:
    """A frame from a learner's process, validated and rebuilt (raises
    :class:`WireError` when it breaks the schema)."""
    with _Deep():
        return _read(frame)


def _read(frame: bytes) -> Received:
    try:
        body = json.loads(frame.decode("utf-8"))
    except (ValueError, RecursionError, MemoryError) as e:
        raise WireError(f"not JSON ({type(e).__name__})") from None
    if type(body) is not dict or set(body) - {"kind", "text", "category", "output", "value"}:
        raise WireError("not a message")
    kind, text = body.get("kind"), body.get("text", "")
    category, output = body.get("category", ""), body.get("output", "")
    if kind not in KINDS or category not in CATEGORIES:
        raise WireError(f"unknown kind {str(kind)[:40]!r}")
    for part in (text, output):
        if type(part) is not str:
            raise WireError("a text that is not a string")
    try:
        value = _Decoder().decode(body.get("value"), 0) if kind == "value" else None
    except RecursionError:
        raise WireError("nested too deep") from None
    return Received(kind, value, text[:MAX_TEXT], category, output[:MAX_TEXT])


class _Decoder:
    def __init__(self) -> None:
        self.objects: dict[int, object] = {}

    def decode(self, data: Any, depth: int) -> object:
        kind = type(data)
        if data is None or kind in (bool, int, float, str):
            return data
        if depth > MAX_DEPTH + 2:
            raise WireError("nested too deep")
        if kind is not dict or len(data) not in (1, 2, 3):
            raise WireError("an untagged value")
        inner = depth + 1
        if len(data) == 1:
            ((tag, items),) = data.items()
            if tag in ("list", "tuple", "set", "frozenset"):
                if type(items) is not list:
                    raise WireError(f"{tag} without items")
                values = [self.decode(v, inner) for v in items]
                made: object = values if tag == "list" else {
                    "tuple": tuple, "set": set, "frozenset": frozenset}[tag](values)
                return made
            if tag == "dict":
                if type(items) is not list or any(type(p) is not list or len(p) != 2
                                                   for p in items):
                    raise WireError("dict without pairs")
                return {self.decode(k, inner): self.decode(v, inner) for k, v in items}
            if tag == "bytes" and type(items) is str:
                return bytes.fromhex(items)
            if tag == "ref" and type(items) is int and items in self.objects:
                return self.objects[items]
            raise WireError(f"unknown tag {str(tag)[:40]!r}")
        if set(data) == {"foreign", "text"}:
            return Foreign(str(data["foreign"])[:200], str(data["text"])[:MAX_TEXT])
        if set(data) == {"enum", "name"}:
            klass = course_class(data["enum"])
            if not issubclass(klass, enum.Enum) or type(data["name"]) is not str:
                raise WireError("not an enum")
            return klass[data["name"]]
        if set(data) == {"obj", "id", "state"}:
            return self._object(data, inner)
        raise WireError("an untagged value")

    def _object(self, data: dict, inner: int) -> object:
        klass, number, state = course_class(data["obj"]), data["id"], data["state"]
        if type(number) is not int or number in self.objects or type(state) is not dict:
            raise WireError("a malformed object")
        if issubclass(klass, (enum.Enum, BaseException)) or klass.__new__ is not \
                object.__new__:
            raise WireError(f"{data['obj']} is not a class an answer can hold")
        obj = object.__new__(klass)
        self.objects[number] = obj
        for name, value in state.items():
            if type(name) is not str or not name.isidentifier() or name.startswith("__"):
                raise WireError("a malformed field name")
            try:
                object.__setattr__(obj, name, self.decode(value, inner))
            except (AttributeError, TypeError):
                raise WireError(f"{data['obj']} has no field {name[:40]!r}") from None
        return obj


# The grader's own machinery: no value of an answer is ever one of its objects.
MACHINERY = frozenset(f"ssa_course.grading.{m}" for m in (
    "box", "wire", "regrade", "learner", "sandbox", "watch", "forbid", "check",
    "nbgrader_regrade", "nbgrader_box", "gradingcopy", "withheld", "seccomp", "timelimit",
    "detach"))


def course_class(name: object) -> type:
    """The grader's own class called ``module:Qualname``: one of the course's, in a
    module the grader has already imported (a message never makes it import one), outside
    the grader's machinery (:data:`MACHINERY`), and never a function or module."""
    if type(name) is not str or name.count(":") != 1:
        raise WireError("a malformed class name")
    module, qualname = name.split(":")
    if not (module == "ssa_course" or module.startswith("ssa_course.")) or \
            module in MACHINERY or "<" in qualname:
        raise WireError(f"{name[:80]} is not one of the course's classes")
    found: object = sys.modules.get(module)  # never imported on a message's word
    if found is None:
        raise WireError(f"{name[:80]} is not one of the course's classes")
    for part in qualname.split("."):
        found = getattr(found, part, None)
    if not isinstance(found, type) or isinstance(found, types.GenericAlias) or \
            found.__module__ != module:
        raise WireError(f"{name[:80]} is not one of the course's classes")
    return found
