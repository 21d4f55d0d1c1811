"""The learner's process: where a regrade (:mod:`ssa_course.grading.regrade`) runs the
learner's cells and answers -- inside the sandbox (:mod:`ssa_course.grading.box`), with
the assignment's grading copy of ``ssa_course`` (the functions the exercise asks for are
absent: calling one raises :class:`~ssa_course.grading.withheld.WithheldError`).

The grading process starts it and writes one request to its standard input (a pickle:
the grader's own data, read here, never the other way round): the notebook's setup cells
(the instructor's, from the gradebook), the learner's cells up to the graded cell, the
answer's name and what it must call. This process then

1. installs a seccomp filter (no new processes or threads, no signals to others, no
   sockets, no tracing) that nothing after it can lift;
2. runs the setup cells, one statement at a time (a statement that needs what the
   sandbox withholds is skipped: the grader built the inputs with the whole package);
3. runs the learner's cells, one top-level statement at a time, announcing each on the
   result pipe (the grader stops a statement that runs past its time). As in a kernel, a
   statement that raises ends its cell -- except one that only called a withheld
   function (exploring with the engine's own version): it is left out, with a note;
4. serves the grader's calls, one at a time: each answer goes back as JSON of a fixed
   schema (:mod:`ssa_course.grading.wire`), which the grader validates and rebuilds from
   its own classes.

Nothing here decides a grade: no expected answer, hidden test or test cell is ever sent
here, and whatever the learner's code does to this process -- rebind the checker, replace
a module's function, forge a message -- it does in a sandbox whose only output is data.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import io
import os
import pickle
import sys
import types
from typing import Any

STATEMENT_SECONDS = 30.0  # one top-level statement of the learner's cells (grader's limit)


def python_source(source: str) -> str:
    """A cell's source as Python: IPython's magics and shell escapes (``%time``, ``!ls``)
    become ``pass`` (the lines keep their numbers)."""
    return "\n".join("pass" if line.lstrip().startswith(("%", "!")) else line
                     for line in source.splitlines())


def statements(source: str, where: str) -> list[tuple[int, Any]]:
    """(line, code) of each top-level statement of a cell (see :func:`python_source`)."""
    tree = ast.parse(python_source(source), where)
    out = []
    for node in tree.body:
        module = ast.Module(body=[node], type_ignores=[])
        out.append((node.lineno, compile(module, where, "exec", dont_inherit=True)))
    return out


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


HEADER_SIZE = 4


def read_frame(fd: int) -> bytes:
    """One length-prefixed frame from ``fd`` (the grader's requests)."""
    def exactly(size: int) -> bytes:
        data = b""
        while len(data) < size:
            chunk = os.read(fd, size - len(data))
            if not chunk:
                raise EOFError("the grading process closed the pipe")
            data += chunk
        return data

    return exactly(int.from_bytes(exactly(HEADER_SIZE), "big"))


def write_frame(fd: int, data: bytes) -> None:
    view = memoryview(len(data).to_bytes(HEADER_SIZE, "big") + data)
    while view:
        view = view[os.write(fd, view):]


def _withheld(error: BaseException) -> bool:
    """Did this error come from a function the grading copy withholds (anywhere in the
    chain of causes)?"""
    from ssa_course.grading.withheld import WithheldError

    seen = 0
    while error is not None and seen < 50:
        if isinstance(error, WithheldError):
            return True
        error = error.__cause__ or error.__context__  # type: ignore[assignment]
        seen += 1
    return False


def crash_text(error: BaseException) -> tuple[str, str]:
    """(category, text) of an answer's failure, as the messages say it."""
    from ssa_course.grading.check import Mismatch, _crash_line

    if isinstance(error, MemoryError):
        return "memory", ""
    if isinstance(error, NotImplementedError):
        return "notimpl", ""
    if isinstance(error, Mismatch):
        return "mismatch", str(error)
    try:
        line = _crash_line(error)
    except BaseException:
        line = f"your code raised {type(error).__name__}"
    return ("withheld" if _withheld(error) else "crash"), line


class _Required:
    """Which of the required functions a call entered (a profile hook; exercise 04 asks
    for ``insert_node`` and ``compact``). A hint of the rules, not a boundary: an answer
    that calls them without using them still has to give the right answer."""

    def __init__(self, required: dict[types.CodeType, str]) -> None:
        self.required = required
        self.seen: set[types.CodeType] = set()

    def __call__(self, frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code in self.required:
            self.seen.add(frame.f_code)

    def missing(self) -> list[str]:
        return sorted({name for code, name in self.required.items() if code not in self.seen})


def _required_codes(entries: list[tuple[str, str]]) -> dict[types.CodeType, str]:
    import importlib

    out: dict[types.CodeType, str] = {}
    for module, qualname in entries:
        found: Any = importlib.import_module(module)
        for part in qualname.split("."):
            found = getattr(found, part)
        code = getattr(getattr(found, "__func__", found), "__code__", None)
        if isinstance(code, types.CodeType):
            out[code] = f"{module}.{qualname}"
    return out


def main() -> None:
    request = pickle.loads(read_frame(0))  # from the grading process: trusted
    fd = request["fd"]
    from ssa_course.grading import seccomp
    from ssa_course.grading.detach import detach, fresh
    from ssa_course.grading.wire import message

    out = io.StringIO()
    sys.stdout = sys.stderr = out
    with contextlib.suppress(OSError):  # C code's prints must not reach the grader
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 3000))

    def send(kind: str, value: object = None, text: str = "", category: str = "") -> None:
        output = out.getvalue()
        out.seek(0)
        out.truncate()
        write_frame(fd, message(kind, value, text, category, output))

    ns: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins,
                          "display": _nothing, "get_ipython": _get_ipython}
    required = _required_codes(request["require"])
    unavailable: set[str] = set()  # names a setup statement could not bind here
    with contextlib.suppress(OSError):
        seccomp.install()  # before any line of the learner's: no process, thread, socket
    for gid, source in request["setup"]:
        try:
            found = statements(source, f"<setup:{gid}>")
        except SyntaxError:
            continue
        for _line, code in found:
            try:
                exec(code, ns)
            except Exception:  # (the grader built the inputs with the whole package)
                unavailable.update(code.co_names)
    problems: list[str] = []
    for k, (where, line, code) in enumerate(_compiled(request["cells"], problems)):
        if k in request["skip"] or (where, -1) in request["skip"]:
            continue
        send("statement", text=str(k))
        try:
            exec(code, ns)
        except BaseException as e:
            if _withheld(e) or (isinstance(e, NameError) and e.name in unavailable):
                send("skipped", text=f"line {line} of your cell {where}", category="withheld")
                continue
            problems.append(f"{where}:{line}: {type(e).__name__}")
            request["skip"].add((where, -1))  # as in a kernel, an error ends its cell
    out.seek(0)
    out.truncate()
    name = request["name"]
    if name not in ns:
        send("raised", text=f"your notebook does not define {name} before this test "
                            "(NameError)", category="crash")
        os._exit(0)
    send("ready", text="; ".join(problems))
    watcher = _Required(required)
    while True:
        try:
            args, kwargs = pickle.loads(read_frame(0))
        except EOFError:
            os._exit(0)
        watcher.seen.clear()
        try:
            if required:
                sys.setprofile(watcher)
            try:
                given: Any = (fresh(args), fresh(kwargs))
                result = detach(ns[name](*given[0], **given[1]))
            finally:
                sys.setprofile(None)
            missing = watcher.missing() if required else []
        except BaseException as e:
            category, text = crash_text(e)
            send("memory" if category == "memory" else "raised", text=text,
                 category=category)
            continue
        if missing:
            send("raised", text=f"your {request['label']} must call {', '.join(missing)} "
                                "(the task asks for it)", category="mismatch")
            continue
        try:
            send("value", result)
        except MemoryError:
            send("memory")
        except Exception as e:
            send("raised", text=f"your answer cannot be sent back for checking ({e})",
                 category="crash")


def _compiled(cells: list[tuple[str, str]], problems: list[str]
              ) -> list[tuple[str, int, Any]]:
    compiled: list[tuple[str, int, Any]] = []
    for where, source in cells:
        try:
            compiled += [(where, line, code) for line, code in statements(source, where)]
        except SyntaxError as e:
            problems.append(f"{where}:{e.lineno or 0}: SyntaxError")
    return compiled


if __name__ == "__main__":
    try:
        main()
    finally:
        os._exit(0)
