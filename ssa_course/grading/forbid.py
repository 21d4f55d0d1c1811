"""Grade the learner's own code: refuse answers that call the course's engine instead.

The engine is importable on purpose (the lessons use it), so a task such as "find the
leaders" could be answered with one call of ``find_leaders``. :func:`guard` wraps the
learner's function: while it runs, a profile hook (``sys.setprofile``, which sees every
Python function call and costs nothing once the call is over) watches which functions are
entered. If one of them is *forbidden* for this task, the call ends with :class:`Forbidden`
("your answer calls ssa_course's own find_leaders; write it yourself").

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
import sys
import threading
import types
from collections.abc import Callable, Iterable
from typing import Any

from ssa_course.grading import sandbox, watch
from ssa_course.grading.check import DEFAULT_TIME_LIMIT, NOT_ANSWERED, Mismatch
from ssa_course.grading.detach import detach, fresh
from ssa_course.grading.timelimit import call_with_limit


class Forbidden(Mismatch):
    """The answer used code the task asks the learner to write (or skipped required code)."""


_FUNCTION, _CLASS, _MODULE, _PACKAGE = range(4)


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
    if isinstance(code, types.CodeType):
        yield from _nested_codes(code)


def _nested_codes(code: types.CodeType) -> Iterable[types.CodeType]:
    """A code object and the code of the functions, lambdas and comprehensions in it."""
    stack = [code]
    while stack:
        c = stack.pop()
        yield c
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))


def _source_file(obj: object) -> str | None:
    path = getattr(obj, "__file__", None)
    return os.path.realpath(path) if isinstance(path, str) and path else None


_realpath = functools.lru_cache(maxsize=4096)(os.path.realpath)


def _watchable(obj: object) -> bool:
    return isinstance(obj, (property, staticmethod, classmethod, types.FunctionType))


def shape(code: types.CodeType) -> tuple:
    """What a function does, without its name, file or line numbers: a copy made with
    ``code.replace`` or by running the module's source again has the same shape."""
    consts = tuple(c.co_code if type(c) is types.CodeType else c for c in code.co_consts)
    return (code.co_code, code.co_names, code.co_varnames, consts, code.co_argcount)


def solution_shapes() -> dict[int, str]:
    """The shapes of the functions in the instructor's notebooks this machine holds --
    ``solutions/`` beside the package (an editable install) and ``source/`` of the
    nbgrader course around the working directory (autograding) -- answer and test cells,
    not the setup cells (their helpers are offered to the learner). Run from a notebook
    cell they are the instructor's own run; read from the file and ``exec``'d they are an
    answer copied from the instructor (see :func:`watch.from_a_cell`)."""
    here = os.getcwd()
    if here not in _SOLUTION_SHAPES:
        found: dict[int, str] = {}
        for path in _instructor_notebooks(here):
            found.update(_notebook_shapes(path))
        _SOLUTION_SHAPES[here] = found
    return _SOLUTION_SHAPES[here]


_SOLUTION_SHAPES: dict[str, dict[int, str]] = {}  # working directory -> hashed shapes
_SHAPES: dict[tuple, tuple] = {}  # (ids of the entries, directory) -> (entries, shapes)
def _instructor_notebooks(here: str) -> list[str]:
    import glob

    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    found = glob.glob(os.path.join(os.path.dirname(package), "solutions", "*.ipynb"))
    here = os.path.abspath(here)
    for _ in range(6):  # autograding runs in <course>/autograded/<student>/<assignment>
        if os.path.exists(os.path.join(here, "nbgrader_config.py")):
            found += glob.glob(os.path.join(here, "source", "*", "*.ipynb"))
            break
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    return sorted(set(found))


def _notebook_shapes(path: str) -> dict[int, str]:
    import json

    try:
        with open(path, encoding="utf-8") as f:
            cells = json.load(f).get("cells", [])
    except (OSError, ValueError):
        return {}
    where = f"{watch.SOLUTION}{os.path.basename(path)}"
    shapes: dict[int, str] = {}
    for cell in cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.get("cell_type") != "code" or not (meta.get("solution") or meta.get("grade")):
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        try:
            module = compile(source, path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            continue
        for code in _nested_codes(module):
            if code.co_name[:1] != "<" and len(code.co_code) >= SHAPE_MIN:
                # only a hash: the shape itself (bytecode, constants) would hand the
                # solution and the hidden tests' constants to the notebook
                shapes.setdefault(hash(shape(code)), f"{where}:{code.co_name}")
    return shapes


SHAPE_MIN = 60  # bytes of bytecode: a shorter function is too common a pattern to match

# The grader's own modules: they run inside the watch (turning an answer into data,
# explaining a crash) and are never an answer.
_MACHINERY = ("ssa_course.grading.forbid", "ssa_course.grading.detach",
              "ssa_course.grading.sandbox", "ssa_course.grading.watch",
              "ssa_course.grading.crash", "ssa_course.grading.plain", "ssa_course.errors",
              "ssa_course.grading.learner", "ssa_course.grading.check")


class Rules:
    """Which code a guarded answer may run: forbidden and allowed entries, most specific wins.

    Entries are modules (a package's ``__init__`` module stands for the whole package),
    classes (every function defined in the class body) and functions or methods.
    """

    def __init__(self, forbid: Iterable[object], allow: Iterable[object] = ()) -> None:
        forbid, allow = list(forbid), list(allow)
        # code object -> (specificity, forbidden?, name to show)
        self._codes: dict[types.CodeType, tuple[int, bool, str]] = {}
        self._files: dict[str, tuple[bool, str]] = {}
        self._packages: list[tuple[str, bool, str]] = []
        self._aliases: dict[str, tuple[str, ...]] = {}  # file or prefix -> other spellings
        self._tables: tuple[dict, dict, list, dict] | None = None
        self._entries = (tuple(forbid), tuple(allow))
        for forbidden, entries in ((True, forbid), (False, allow)):
            for entry in entries:
                self._add(entry, forbidden)
        # longest (most specific) package directory first
        self._packages.sort(key=lambda p: -len(p[0]))

    def _add(self, entry: object, forbidden: bool) -> None:
        if isinstance(entry, types.ModuleType):
            path = _source_file(entry)
            if path is None:
                raise TypeError(f"module {entry.__name__} has no source file to watch")
            raw = os.path.abspath(entry.__file__ or path)
            if os.path.basename(path) == "__init__.py":
                prefix = os.path.dirname(path) + os.sep
                self._packages.append((prefix, forbidden, entry.__name__))
                self._aliases[prefix] = (os.path.dirname(raw) + os.sep,)
            else:
                self._files[path] = (forbidden, entry.__name__)
                self._aliases[path] = (raw,)
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
        if old is None or level <= old[0]:  # lower level = more specific
            self._codes[code] = (level, forbidden, name)

    def tables(self) -> tuple[dict, dict, list, dict]:
        """The rules as plain tables for a grading child's audit hook (built once):
        code objects, file names (as code objects spell them, and resolved), package
        directories, and the *shape* of every forbidden function (its bytecode, names
        and constants), which finds a copy of one under another name or file."""
        if self._tables is None:
            files = {}
            for path, entry in self._files.items():
                files[path] = entry
                files.update({alias: entry for alias in self._aliases.get(path, ())})
            for name in _MACHINERY:  # the grader's own code, which runs inside the watch
                module = sys.modules.get(name)
                found = getattr(module, "__file__", None)
                if isinstance(found, str) and found:
                    for alias in (found, os.path.realpath(found)):
                        files.setdefault(alias, (False, name))
            packages = list(self._packages)
            packages += [(alias, f, n) for prefix, f, n in self._packages
                         for alias in self._aliases.get(prefix, ())]
            packages.sort(key=lambda p: -len(p[0]))
            key = (tuple(map(id, self._entries[0])), tuple(map(id, self._entries[1])),
                   os.getcwd())
            entries, shapes = _SHAPES.get(key, ((), None))
            mine = self._entries[0] + self._entries[1]
            if shapes is None or len(mine) != len(entries) or any(
                    a is not b for a, b in zip(entries, mine, strict=False)):
                shapes = dict(solution_shapes())  # the same rules in every test cell:
                shapes.update(self._shapes())     # built once
                _SHAPES[key] = (mine, shapes)
            self._tables = (dict(self._codes), files, packages, shapes)
        return self._tables

    def _shapes(self) -> dict[int, str]:
        """Shapes of the course's forbidden functions (a library's are left out: nobody
        copies networkx's code object, and walking it takes long)."""
        shapes: dict[int, str] = {}
        names = tuple(name for _, forbidden, name in self._packages
                      if forbidden and name.startswith("ssa_course"))
        names += tuple(name for forbidden, name in self._files.values()
                       if forbidden and name.startswith("ssa_course"))
        candidates: list[types.CodeType] = [c for c, v in self._codes.items() if v[1]]
        for module_name, module in list(sys.modules.items()):
            if not names or not module_name.startswith(names) or module is None:
                continue
            for value in list(vars(module).values()):
                if getattr(value, "__module__", None) != module.__name__:
                    continue
                members = vars(value).values() if isinstance(value, type) else [value]
                for member in members:
                    candidates.extend(_functions_of(member) if _watchable(member) else ())
        for code in candidates:
            name = self.verdict(code)
            # whole functions only (a comprehension or a lambda is too small a pattern)
            if name is not None and len(code.co_code) >= SHAPE_MIN and code.co_name[:1] != "<":
                shapes.setdefault(hash(shape(code)), name)
        return shapes

    def verdict(self, code: types.CodeType) -> str | None:
        """The name of the forbidden thing ``code`` belongs to, or None when it may run."""
        if code.co_name == "<module>":  # a first import runs module code: not an answer
            return None
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


def _short(name: str) -> str:
    """``ssa_course.quads.cfg.find_leaders`` -> ``find_leaders (ssa_course.quads.cfg)``."""
    module, _, last = name.rpartition(".")
    parts = name.split(".")
    # keep Class.method together
    if len(parts) >= 2 and parts[-2][:1].isupper():
        module, last = ".".join(parts[:-2]), ".".join(parts[-2:])
    return f"{last} ({module})" if module else last


def _refusal(label: str, name: str, advice: str) -> str:
    if name.startswith("ssa_course"):
        return f"your {label} calls ssa_course's own {_short(name)}; {advice}"
    return f"your {label} calls the library {name}, which does the task for you; {advice}"


def guard(fn: Callable[..., Any], *, forbid: Iterable[object], allow: Iterable[object] = (),
          require: Iterable[object] = (), task: str | None = None,
          advice: str = "write it yourself") -> Callable[..., Any]:
    """``fn`` wrapped so that each call fails with :class:`Forbidden` when it runs any
    forbidden code, or returns without running each function of ``require``.

    Where graded calls can run in a child process (:mod:`ssa_course.grading.sandbox`),
    each call does: inside a grading child the child's audit hook watches it, elsewhere
    the call itself is sent to a new child. The answer comes back as plain data
    (:func:`~ssa_course.grading.detach.detach`). Elsewhere a profile hook watches it in
    this process. ``task`` names the answer in messages (default: ``fn.__name__``)."""
    from ssa_course.grading.regrade import Remote, RemoteGuarded

    if isinstance(fn, Remote):  # a regrade: the learner's function lives in another process
        return RemoteGuarded(fn, forbid, allow, require, task or fn.name, advice)
    rules = Rules(forbid, allow)
    required = {code: f"{getattr(r, '__module__', '?')}.{getattr(r, '__qualname__', r)}"
                for r in require for code in _functions_of(r)}
    label: str = task or getattr(fn, "__name__", None) or "your answer"
    in_process = _watch_in_process(fn, rules, required, label, advice)
    if sandbox.can_isolate():
        rules.tables()  # built once here, before any child is forked

    @functools.wraps(fn)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        if sandbox.in_child():
            return _watched(fn, args, kwargs, rules, required, label, advice)
        if not sandbox.can_isolate():  # the watch in this process, and a time limit
            return call_with_limit(lambda: in_process(*args, **kwargs), (),
                                   DEFAULT_TIME_LIMIT)
        return _returned(sandbox.call(lambda: guarded(*args, **kwargs)), label)

    return guarded


def _watched(fn: Callable[..., Any], args: tuple, kwargs: dict, rules: Rules,
             required: dict, label: str, advice: str) -> Any:
    """One call in a grading child, under its audit hook: the answer as plain data."""
    token = object()  # only this frame and the hook know it: the answer cannot end the watch
    sys.audit("ssa_course.guard", "enter", token, rules, required, label, advice)
    try:
        given: Any = fresh(args), fresh(kwargs)  # (no call of typing.cast in the watch)
        result = detach(fn(*given[0], **given[1]))
    except BaseException as e:
        crashed = _crashed(e)
        sys.audit("ssa_course.guard", "exit", token)
        raise crashed from None
    sys.audit("ssa_course.guard", "exit", token)
    return result


def _crashed(error: BaseException) -> sandbox.Crashed:
    from ssa_course.errors import SsaCourseError
    from ssa_course.grading.crash import explain_crash

    if isinstance(error, Mismatch):
        return sandbox.Crashed("mismatch", str(error))
    if isinstance(error, NotImplementedError):
        return sandbox.Crashed("notimpl", "")
    if isinstance(error, MemoryError):
        return sandbox.Crashed("memory", "")
    frames: list = []
    sys.audit("ssa_course.guard", "explain", error, frames)
    line = explain_crash(error, frames)
    if isinstance(error, SsaCourseError):
        line = f"your code stopped with: {line}"
    return sandbox.Crashed("crash", line)


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


def _watch_in_process(fn: Callable[..., Any], rules: Rules, required: dict, label: str,
                      advice: str) -> Callable[..., Any]:
    """The watch where no child can be started: a profile hook in this process."""
    required_names = sorted(set(required.values()))

    def guarded(*args: Any, **kwargs: Any) -> Any:
        hits: list[str] = []
        seen: set[str] = set()

        def hook(frame: types.FrameType, event: str, arg: object) -> None:
            if event != "call":
                return
            code = frame.f_code
            if required and code in required:
                seen.add(required[code])
            if not hits:
                bad = rules.verdict(code)
                if bad is not None:
                    hits.append(bad)

        args, kwargs = fresh(args), fresh(kwargs)  # type: ignore[assignment]
        previous, previous_threads = sys.getprofile(), threading.getprofile()
        sys.setprofile(hook)
        threading.setprofile(hook)  # a thread the answer starts is watched too
        try:
            result = fn(*args, **kwargs)
        except Exception as e:
            # a forbidden call that then failed is still reported as the forbidden call
            if hits:
                raise Forbidden(_refusal(label, hits[0], advice)) from e
            raise
        finally:
            still_ours = sys.getprofile() is hook
            sys.setprofile(previous)
            threading.setprofile(previous_threads)
        if hits:
            raise Forbidden(_refusal(label, hits[0], advice))
        if not still_ours:
            raise Forbidden(f"your {label} switched off the grader's call watch "
                            "(sys.setprofile); leave it alone")
        missing = [name for name in required_names if name not in seen]
        if missing:
            raise Forbidden(f"your {label} never calls {', '.join(map(_short, missing))}: "
                            "the task asks you to use it")
        return result

    return guarded
