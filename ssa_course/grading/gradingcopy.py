"""The grading copy of the package: ``ssa_course`` without the engine functions an exercise
asks for (issue #35).

While an assignment is graded, the learner's code runs in a sandbox whose ``sys.path``
starts with a copy of the package built here: every ``.py`` file of the installed package,
except that each function :data:`ssa_course.grading.withheld.WITHHELD` lists for that
assignment keeps its name, signature and decorators but its body is replaced by a raise of
:class:`~ssa_course.grading.withheld.WithheldError` (its docstring goes too). Its code is
nowhere in the copy, so no import, ``inspect.getsource`` or file read in the sandbox finds
it; the grader computes the expected answers outside, with the full package.

:func:`build_copy` writes one copy; :func:`copy_for` keeps one per (package source,
assignment) in a cache directory, built once even when several processes ask at once.
"""

from __future__ import annotations

import ast
import compileall
import contextlib
import hashlib
import importlib
import inspect
import os
import shutil
import tempfile
import types
from pathlib import Path

from ssa_course.grading.withheld import WITHHELD, WithheldError, message, withheld

WITHHELD_MODULE = "ssa_course.grading.withheld"

# Appended to the copy's ``ssa_course/__init__.py``: loads the module of WithheldError
# on its own (not ``ssa_course.grading``, whose import has side effects), so a withheld
# function finds it in ``sys.modules`` whatever was imported before (a sandbox may refuse a
# module's first import once the learner's code runs).
_INIT_BLOCK = """

def _load_withheld() -> None:  # the grading copy's: see ssa_course.grading.gradingcopy
    import importlib.util
    import os
    import sys
    name = "ssa_course.grading.withheld"
    if name not in sys.modules:
        path = os.path.join(os.path.dirname(__file__), "grading", "withheld.py")
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)


_load_withheld()
del _load_withheld
"""
# ... and to the copy's ``ssa_course/grading/__init__.py``: the package's attribute, as an
# import of the submodule would have set it
_GRADING_INIT_LINE = "\nfrom ssa_course.grading import withheld  # the grading copy's\n"
_FORMAT = "3"  # bump when the transform changes: old cached copies are not reused


def package_dir() -> Path:
    """The directory of the installed ``ssa_course`` package (the real one)."""
    import ssa_course

    return Path(ssa_course.__file__).resolve().parent


def _sources(root: Path) -> list[Path]:
    """The package's ``.py`` files, relative to ``root``, sorted; no ``__pycache__``."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in filenames:
            if name.endswith(".py"):
                out.append((Path(dirpath) / name).relative_to(root))
    return sorted(out)


def _split(entry: str) -> tuple[str, str]:
    module, sep, qualname = entry.partition(":")
    if not sep or not module or not qualname:
        raise ValueError(f"withheld entry {entry!r} is not 'module:qualname'")
    return module, qualname


def resolve(entry: str) -> types.FunctionType:
    """The real package's function an entry names (``module:Class.method``); ValueError
    naming the entry when there is none, or when it is defined in another module (the
    entry must name the module that defines it: that is the file the copy rewrites)."""
    module_name, qualname = _split(entry)
    try:
        found: object = importlib.import_module(module_name)
    except ImportError as e:
        raise ValueError(f"withheld entry {entry!r}: no module {module_name} ({e})") from None
    for part in qualname.split("."):
        try:
            found = inspect.getattr_static(found, part)
        except AttributeError:
            raise ValueError(f"withheld entry {entry!r}: {module_name} has no "
                             f"{qualname}") from None
    if isinstance(found, (staticmethod, classmethod)):
        found = found.__func__
    elif isinstance(found, property) and found.fget is not None:
        found = found.fget
    function = inspect.unwrap(found) if callable(found) else found
    if not isinstance(function, types.FunctionType):
        raise ValueError(f"withheld entry {entry!r} is a {type(function).__name__}, "
                         "not a function")
    if function.__module__ != module_name or function.__qualname__ != qualname:
        raise ValueError(f"withheld entry {entry!r} names {function.__module__}:"
                         f"{function.__qualname__}: name the module that defines it")
    return function


def check_entries(assignment: str) -> tuple[str, ...]:
    """The assignment's entries, each checked against the real package (ValueError)."""
    entries = withheld(assignment)
    for entry in entries:
        resolve(entry)
    return entries


def _raise_body(entry: str, assignment: str) -> list[ast.stmt]:
    text = message(entry, assignment)
    tree = ast.parse("import sys\n"
                     f"raise sys.modules[{WITHHELD_MODULE!r}].WithheldError({text!r})\n")
    return tree.body


_FUNCTION_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _definitions(body: list[ast.stmt], name: str) -> list[ast.stmt]:
    """The statements of ``body`` that define ``name`` (a def or a class), looking inside
    module-level ``if``/``try``/``with`` blocks too."""
    out: list[ast.stmt] = []
    for stmt in body:
        if isinstance(stmt, (*_FUNCTION_DEFS, ast.ClassDef)) and stmt.name == name:
            out.append(stmt)
        elif isinstance(stmt, (ast.If, ast.Try, ast.With)):
            for block in ("body", "orelse", "finalbody"):
                out += _definitions(getattr(stmt, block, []), name)
            for handler in getattr(stmt, "handlers", []):
                out += _definitions(handler.body, name)
    return out


def _withhold(tree: ast.Module, qualname: str, entry: str, assignment: str) -> int:
    """Replace the body of each def of ``qualname`` in ``tree``; how many were replaced."""
    scopes: list[list[ast.stmt]] = [tree.body]
    *outer, last = qualname.split(".")
    for part in outer:
        scopes = [d.body for body in scopes for d in _definitions(body, part)
                  if isinstance(d, ast.ClassDef)]
    count = 0
    for body in scopes:
        for d in _definitions(body, last):
            if isinstance(d, _FUNCTION_DEFS):
                d.body = _raise_body(entry, assignment)
                count += 1
    return count


def _rewrite(source: str, filename: str, entries: list[str], assignment: str) -> str:
    tree = ast.parse(source, filename)
    for entry in entries:
        if not _withhold(tree, _split(entry)[1], entry, assignment):
            raise ValueError(f"withheld entry {entry!r}: no def of it in {filename}")
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def build_copy(assignment: str, dest: Path) -> Path:
    """Write ``dest/ssa_course/``: the installed package's ``.py`` files, the functions
    withheld for ``assignment`` raising :class:`WithheldError`, byte-compiled. Returns
    ``dest``, the directory to put first on ``sys.path``."""
    entries = check_entries(assignment)
    root = package_dir()
    by_file: dict[Path, list[str]] = {}
    for entry in entries:
        module = _split(entry)[0]
        parts = module.split(".")
        if parts[0] != root.name:
            raise ValueError(f"withheld entry {entry!r} is not in the {root.name} package")
        path = Path(*parts[1:]).with_suffix(".py") if len(parts) > 1 else Path("__init__.py")
        if not (root / path).is_file():
            path = Path(*parts[1:], "__init__.py")
        by_file.setdefault(path, []).append(entry)
    target = Path(dest) / root.name
    for rel in _sources(root):
        out = target / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        text = (root / rel).read_text(encoding="utf-8")
        if rel in by_file:
            text = _rewrite(text, str(root / rel), by_file[rel], assignment)
        if rel == Path("__init__.py"):
            text += _INIT_BLOCK
        elif rel == Path("grading", "__init__.py"):
            text += _GRADING_INIT_LINE
        out.write_text(text, encoding="utf-8")
    missing = set(by_file) - set(_sources(root))
    if missing:
        raise ValueError(f"withheld entries in files the package lacks: {sorted(missing)}")
    if not compileall.compile_dir(str(target), quiet=2, workers=1):
        raise ValueError(f"the grading copy of {assignment} does not compile ({target})")
    return Path(dest)


def source_hash(assignment: str) -> str:
    """A hash of the package's source files, the assignment and its entries."""
    h = hashlib.sha256(f"{_FORMAT}\0{assignment}\0".encode())
    h.update("\0".join(withheld(assignment)).encode())
    root = package_dir()
    for rel in _sources(root):
        h.update(b"\0" + str(rel).encode() + b"\0")
        h.update((root / rel).read_bytes())
    return h.hexdigest()


def copy_for(assignment: str, cache: Path) -> Path:
    """The grading copy for ``assignment`` in ``cache`` (built on the first call, then
    reused while the package's source and the entries stay the same). Two processes may
    build it at once: each builds in a directory of its own and renames it into place;
    the first rename wins and the other's copy is removed."""
    cache = Path(cache)
    cache.mkdir(parents=True, exist_ok=True)
    final = cache / f"{assignment}-{source_hash(assignment)[:20]}"
    if (final / "ssa_course" / "__init__.py").is_file():
        return final
    building = Path(tempfile.mkdtemp(prefix=f".{assignment}-", dir=cache))
    try:
        building.chmod(0o755)  # (mkdtemp's 0o700: a sandbox's other user could not read it)
        build_copy(assignment, building)
        try:
            os.rename(building, final)
        except OSError:  # another process renamed its copy there first
            if not (final / "ssa_course" / "__init__.py").is_file():
                raise
    finally:
        with contextlib.suppress(FileNotFoundError):
            shutil.rmtree(building)
    return final


__all__ = ["WITHHELD", "WithheldError", "build_copy", "check_entries", "copy_for",
           "package_dir", "resolve", "source_hash"]
