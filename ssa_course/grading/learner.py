"""The learner's process: where a regrade (:mod:`ssa_course.grading.regrade`) runs the
learner's cells and answers, and nothing of the grader's.

The grading process starts this module with ``python -I -S`` and writes one request to its
standard input: the notebook's setup cells (the instructor's, from the gradebook), the
learner's cells up to the graded cell, the task's rules (what the answer may not call,
what it must call), the answer's name and the inputs. This process then

1. runs the setup cells and imports what the learner's cells import (nothing of the
   learner's has run yet);
2. compiles the learner's cells, one top-level statement at a time, and builds the guard
   of the task (:func:`ssa_course.grading.forbid.guard`);
3. cuts itself off (:func:`ssa_course.grading.sandbox._isolate`: descriptors, memory and
   CPU limits, the seccomp filter) and arms the audit hook of
   :mod:`ssa_course.grading.watch` with the task's rules *for the rest of its life*: from
   here on every call is watched, the learner's top-level code included, and the watch
   cannot be switched off;
4. runs the learner's statements in order, announcing each on the result pipe. As in a
   kernel, a statement that raises ends its cell. A statement the watch refuses ends the
   process: the grader starts it again without that statement and says so; one that runs
   past :data:`STATEMENT_SECONDS` is stopped and the rest of its cell left out;
5. serves the grading process's calls, one at a time: each request (the arguments, read
   and rebuilt by the audit hook itself from standard input) gets the learner's answer
   as plain data, or why there is none (:func:`ssa_course.grading.sandbox._run_one`).

No expected answer, hidden test or test cell is ever sent here: a cheat that rebinds the
checker, replaces a module's function or reads memory changes this process only, and the
grading process compares what comes back as plain data.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import importlib
import os
import pickle
import sys
from typing import Any

STATEMENT_SECONDS = 30.0  # one top-level statement of the learner's cells


def python_source(source: str) -> str:
    """A cell's source as Python: IPython's magics and shell escapes (``%time``, ``!ls``)
    become ``pass`` (the lines keep their numbers)."""
    return "\n".join("pass" if line.lstrip().startswith(("%", "!")) else line
                     for line in source.splitlines())


def statements(source: str, where: str) -> list[tuple[int, Any]]:
    """(line, code) of each top-level statement of a learner's cell (see
    :func:`python_source`)."""
    tree = ast.parse(python_source(source), where)
    out = []
    for node in tree.body:
        module = ast.Module(body=[node], type_ignores=[])
        out.append((node.lineno, compile(module, where, "exec", dont_inherit=True)))
    return out


def imported_modules(source: str) -> list[str]:
    """The modules a cell's ``import`` statements name (anywhere in it), to import before
    the watch is armed (the watch refuses a module's first import)."""
    try:
        tree = ast.parse(python_source(source))
    except SyntaxError:
        return []
    names: list[str] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
            names += [f"{node.module}.{a.name}" for a in node.names]
        stack.extend(ast.iter_child_nodes(node))
    return names


def resolve(entry: tuple, ns: dict) -> object:
    """A rule's entry as the grading process described it, found again here."""
    kind, module, qualname = entry
    if kind == "module":
        return importlib.import_module(module)
    found: Any = ns if module == "__main__" else vars(importlib.import_module(module))
    first, *rest = qualname.split(".")
    found = found[first]
    for part in rest:
        found = getattr(found, part)
    return found


class _Quiet:
    """What ``get_ipython()`` gives here: every method does nothing (a learner's cell may
    call ``get_ipython().run_line_magic(...)`` or ``display(...)`` at its top level; in
    the regrade nothing is shown, and the rest of the cell must still run)."""

    def __getattr__(self, name: str) -> Any:
        return _nothing


def _nothing(*args: Any, **kwargs: Any) -> None:
    return None


def _get_ipython() -> _Quiet:
    return _Quiet()


def read_frame(fd: int) -> bytes:
    """One length-prefixed frame from ``fd`` (before the watch is armed)."""
    from ssa_course.grading.watch import HEADER

    def exactly(size: int) -> bytes:
        data = b""
        while len(data) < size:
            chunk = os.read(fd, size - len(data))
            if not chunk:
                raise EOFError("the grading process closed the pipe")
            data += chunk
        return data

    return exactly(HEADER.unpack(exactly(HEADER.size))[0])


def _die_with_parent() -> None:
    """Linux: this process is killed when the grading process ends (for any reason), so
    a learner's endless loop never outlives the regrade."""
    import ctypes
    import signal

    parent = os.getppid()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PDEATHSIG
    if os.getppid() != parent:  # it ended before the line above
        os._exit(0)


def main() -> None:
    audit = sys.audit  # bound before the learner's code could replace sys.audit
    _die_with_parent()
    request = pickle.loads(read_frame(0))  # from the grading process: trusted
    fd = request["fd"]
    from ssa_course.grading import forbid, sandbox, watch
    from ssa_course.grading.detach import detach, fresh

    ns: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins,
                          "display": _nothing, "get_ipython": _get_ipython}
    for gid, source in request["setup"]:
        # the grading process runs it too, and shows what fails
        with contextlib.suppress(Exception):
            exec(compile(source, f"<setup:{gid}>", "exec", dont_inherit=True), ns)
    compiled: list[tuple[str, int, Any]] = []
    problems: list[tuple[str, int, str]] = []
    for where, source in request["cells"]:
        for module in imported_modules(source):
            with contextlib.suppress(BaseException):  # a name, not a module; a broken one
                importlib.import_module(module)
        try:
            compiled += [(where, line, code) for line, code in statements(source, where)]
        except SyntaxError as e:
            problems.append((where, e.lineno or 0, f"SyntaxError: {e.msg}"))
    entries = {k: [resolve(e, ns) for e in request[k]] for k in ("forbid", "allow", "require")}
    rules = forbid.Rules(entries["forbid"], entries["allow"])
    rules.tables()
    required = {code: f"{getattr(r, '__module__', '?')}.{getattr(r, '__qualname__', r)}"
                for r in entries["require"] for code in forbid._functions_of(r)}
    name, label, advice = request["name"], request["label"], request["advice"]
    crashed, run_one, limit = forbid._crashed, sandbox._run_one, watch.OUTPUT_LIMIT
    send = _sender(fd)

    def call(args: tuple, kwargs: dict) -> Any:
        """One watched call of the learner's function (as forbid._watched, with this
        process's own bindings)."""
        token = object()
        audit("ssa_course.guard", "enter", token, rules, required, label, advice)
        try:
            given: Any = fresh(args), fresh(kwargs)  # (no call of typing.cast in the watch)
            result = detach(ns[name](*given[0], **given[1]))
        except BaseException as e:
            failure = crashed(e)
            audit("ssa_course.guard", "exit", token)
            raise failure from None
        audit("ssa_course.guard", "exit", token)
        return result

    watch.CHILD_PID = os.getpid()
    out = sandbox._isolate(fd, request["memory_gb"], request["seconds"], 60)
    audit("ssa_course.sandbox.cells", tuple(code for _, _, code in compiled))
    audit("ssa_course.sandbox.arm", fd, out)
    token = object()  # never given back: the watch stays on until the process ends
    audit("ssa_course.guard", "enter", token, rules, {}, LABEL_TOP, advice)
    skip, broken = request["skip"], ""
    for k, (where, line, code) in enumerate(compiled):
        if k in skip or where == broken:  # as in a kernel, an error ends its cell
            continue
        send(("statement", b"", str(k), "", ""))
        try:
            exec(code, ns)
        except BaseException as e:
            problems.append((where, line, f"{type(e).__name__}: {e}"[:300]))
            broken = where
    out.seek(0)
    out.truncate()
    if name not in ns:
        send(("raised", b"", f"your notebook does not define {name} before this test "
                             "(NameError)", "crash", ""))
        os._exit(0)
    send(("ready", b"", repr(problems), "", ""))
    box: list[Any] = []
    while True:
        box.clear()
        audit("ssa_course.sandbox.receive", box)
        if not box or box[0] is None:
            os._exit(0)
        message = run_one(lambda request: call(request[0], request[1]), box[0])
        text = out.getvalue()
        out.seek(0)
        out.truncate()
        send(message + (text[:limit],))


LABEL_TOP = "code at the top level of a cell"


def _sender(fd: int) -> Any:
    from ssa_course.grading.sandbox import _write
    from ssa_course.grading.watch import HEADER

    dumps, pack, write = pickle.dumps, HEADER.pack, _write

    def send(message: tuple) -> None:
        data = dumps(message)
        write(fd, pack(len(data)) + data)

    return send


if __name__ == "__main__":
    try:
        main()
    finally:
        os._exit(0)
