"""Guarded answers: the learner's function, run apart, with advice when it calls the engine.

The engine is importable on purpose (the lessons use it), so a task such as "find the
leaders" could be answered with one call of ``find_leaders``. :func:`guard` wraps the
learner's function; each call runs in a child process (:mod:`ssa_course.grading.sandbox`:
time and memory limits, so a runaway answer never takes the kernel down) under the call
watch of :mod:`ssa_course.grading.watch`, which fails the call with
:class:`~ssa_course.grading.watch.Forbidden` ("your answer calls ssa_course's own
find_leaders; write it yourself") when the answer enters a *forbidden* function. That is
advice for the learner's own kernel: at grading time the sandbox's copy of the package
does not hold those functions (docs/grading.md).

What is forbidden is a list of modules, packages, classes and functions; what the task may
use (the data classes it receives, their accessors) is a list of exceptions. The most
specific entry decides: a function beats its class, a class beats its module, a module
beats its package. Code the learner writes in the notebook is never in either list.

A guard can also *require* calls (exercise 04 asks for ``insert_node`` and ``compact``):
if the learner's function returns without entering one of them, the call fails too.
"""

from __future__ import annotations

import functools
import inspect
import os
import types
from collections.abc import Callable, Iterable
from typing import Any

from ssa_course.grading import sandbox, timelimit
from ssa_course.grading.check import DEFAULT_TIME_LIMIT, NOT_ANSWERED, Mismatch
from ssa_course.grading.detach import detach, fresh
from ssa_course.grading.timelimit import call_with_limit
from ssa_course.grading.watch import Forbidden, watched

__all__ = ["Forbidden", "Rules", "guard"]

_FUNCTION, _CLASS = range(2)  # how specific an entry for a code object is (lower: more)
_realpath = functools.lru_cache(maxsize=4096)(os.path.realpath)


def _functions_of(obj: object) -> Iterable[types.CodeType]:
    """The code objects a function, method, property or class stands for."""
    if isinstance(obj, property):
        for f in (obj.fget, obj.fset, obj.fdel):
            if f is not None:
                yield from _functions_of(f)
        return
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    obj = inspect.unwrap(obj) if callable(obj) else obj
    code = getattr(obj, "__code__", None)
    stack = [code] if isinstance(code, types.CodeType) else []
    while stack:  # the function and the functions, lambdas and comprehensions in it
        c = stack.pop()
        yield c
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))


class Rules:
    """Which code a guarded answer may run: forbidden and allowed entries, most specific wins.

    Entries are modules (a package's ``__init__`` module stands for the whole package),
    classes (every function defined in the class body) and functions or methods.
    """

    def __init__(self, forbid: Iterable[object], allow: Iterable[object] = ()) -> None:
        # code object -> (specificity, forbidden?, name to show)
        self._codes: dict[types.CodeType, tuple[int, bool, str]] = {}
        self._files: dict[str, tuple[bool, str]] = {}  # module file -> (forbidden?, name)
        self._packages: list[tuple[str, bool, str]] = []  # (directory/, forbidden?, name)
        self._seen: dict[types.CodeType, str | None] = {}  # verdicts already given
        for forbidden, entries in ((True, forbid), (False, allow)):
            for entry in entries:
                self._add(entry, forbidden)
        self._packages.sort(key=lambda p: -len(p[0]))  # the deepest directory first

    def _add(self, entry: object, forbidden: bool) -> None:
        if isinstance(entry, types.ModuleType):
            path = getattr(entry, "__file__", None)
            if not isinstance(path, str) or not path:
                raise TypeError(f"module {entry.__name__} has no source file to watch")
            path = os.path.realpath(path)
            if os.path.basename(path) == "__init__.py":
                self._packages.append((os.path.dirname(path) + os.sep, forbidden,
                                       entry.__name__))
            else:
                self._files[path] = (forbidden, entry.__name__)
            return
        if isinstance(entry, type):
            name = f"{entry.__module__}.{entry.__qualname__}"
            for attr in vars(entry).values():
                for code in _functions_of(attr):
                    self._set(code, _CLASS, forbidden, name)
            return
        codes = list(_functions_of(entry))
        if not codes:
            raise TypeError(f"cannot watch {entry!r}: not a module, class or function")
        name = f"{getattr(entry, '__module__', '?')}.{getattr(entry, '__qualname__', entry)}"
        for code in codes:
            self._set(code, _FUNCTION, forbidden, name)

    def _set(self, code: types.CodeType, level: int, forbidden: bool, name: str) -> None:
        old = self._codes.get(code)
        if old is None or level <= old[0]:
            self._codes[code] = (level, forbidden, name)

    def verdict(self, code: types.CodeType) -> str | None:
        """The name of the forbidden thing ``code`` belongs to, or None when it may run."""
        if code not in self._seen:
            self._seen[code] = self._judge(code)
        return self._seen[code]

    def _judge(self, code: types.CodeType) -> str | None:
        if not code.co_flags & inspect.CO_OPTIMIZED:  # a module's or a class's body: an
            return None  # import runs it, not an answer
        found = self._codes.get(code)
        if found is not None:
            return found[2] if found[1] else None
        path = _realpath(code.co_filename) if code.co_filename[:1] != "<" else ""
        if path in self._files:
            forbidden, name = self._files[path]
            return f"{name}.{code.co_qualname}" if forbidden else None
        for prefix, forbidden, name in self._packages:
            if path.startswith(prefix):
                if not forbidden:
                    return None
                if not name.startswith("ssa_course"):  # a library: its name says enough
                    return name
                module = path[len(prefix):].removesuffix(".py").replace(os.sep, ".")
                return f"{name}.{module}.{code.co_qualname}".replace(".__init__.", ".")
        return None


def guard(fn: Callable[..., Any], *, forbid: Iterable[object], allow: Iterable[object] = (),
          require: Iterable[object] = (), task: str | None = None,
          advice: str = "write it yourself") -> Callable[..., Any]:
    """``fn`` wrapped so that each call fails with :class:`Forbidden` when it runs any
    forbidden code, or returns without running each function of ``require``.

    Each call gets fresh copies of its data containers
    (:func:`~ssa_course.grading.detach.fresh`) and runs in a child process where one can
    be forked (its answer comes back as plain data,
    :func:`~ssa_course.grading.detach.detach`); elsewhere in this process with a time
    limit. ``task`` names the answer in messages (default: ``fn.__name__``)."""
    from ssa_course.grading.regrade import Remote, RemoteGuarded

    if isinstance(fn, Remote):  # a regrade: the learner's function lives in another process
        return RemoteGuarded(fn, forbid, allow, require, task or fn.name, advice)
    # the time limit's alarm handler runs inside the answer: it is the checker's, not a call
    rules = Rules(forbid, [*allow, timelimit])
    required = {code: f"{getattr(r, '__module__', '?')}.{getattr(r, '__qualname__', r)}"
                for r in require for code in _functions_of(r)}
    label: str = task or getattr(fn, "__name__", None) or "your answer"

    def run(args: tuple, kwargs: dict) -> Any:
        given: Any = fresh(args), fresh(kwargs)
        return watched(fn, given[0], given[1], rules.verdict, required, label, advice)

    @functools.wraps(fn)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        if sandbox.in_child():  # check_against's child: it runs the cases
            return detach(run(args, kwargs))
        if not sandbox.can_isolate():
            return call_with_limit(run, (args, kwargs), DEFAULT_TIME_LIMIT)
        return _returned(sandbox.call(lambda: detach(run(args, kwargs))), label)

    return guarded


def _returned(outcome: sandbox.Outcome, label: str) -> Any:
    """What a call run in a child gave, for its caller: the value, or the failure raised."""
    if outcome.kind == "value":
        return outcome.value
    if outcome.kind == "refused":
        raise Forbidden(outcome.text)
    if outcome.kind == "raised" and outcome.category == "notimpl":  # the learner's stub
        raise Mismatch(NOT_ANSWERED)
    if outcome.kind == "raised":
        raise Mismatch(outcome.text)
    if outcome.kind == "timeout":
        raise Mismatch(f"your {label} {outcome.text}")
    if outcome.kind == "memory":
        raise Mismatch(f"your {label} used more than {sandbox.MEMORY_GB:g} GB of memory")
    raise Mismatch(outcome.text)
