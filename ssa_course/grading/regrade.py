"""Grade a notebook where the learner's code cannot reach the grader: a *regrade*.

Autograding runs a submission in a kernel, and the kernel is the learner's process: a
notebook can rebind ``check_against``, replace a module's function or tell IPython to
swallow errors, and its test cells then "pass". A regrade decides the grade of each test
cell elsewhere:

* the **grading process** (this module, started afresh by the autograder for each
  notebook) runs the instructor's cells only: the setup cells and the test cells, whose
  sources come from the gradebook, not from the submission. It never runs a line of the
  learner's. The names the learner's cells define are bound to :class:`Remote` stand-ins;
* each call of a learner's function -- a guarded call (:func:`forbid.guard`), a
  ``check_against`` over many inputs -- is sent to a **learner's process**
  (:mod:`ssa_course.grading.learner`) inside the sandbox (:mod:`ssa_course.grading.box`:
  bubblewrap, with the assignment's grading copy of the package, from which the
  functions the exercise asks for are absent), which runs the setup cells and then the
  learner's cells and answers as JSON of a fixed schema (:mod:`ssa_course.grading.wire`).
  Expected answers are computed here, after the answers come back, and never leave this
  process.

So whatever a learner's cell does -- rebind the checker, monkeypatch ``ssa_course``,
start a thread at the top level, forge messages -- it does it in a sandbox whose only
output is data, validated and judged here. A statement at a cell's top level that needs
what the grading copy withholds (say, ``print(build_cfg(f))`` to compare with one's
own) is left out of the regrade, and the test cell's output says so; the kernel's run
still shows its output. A test cell whose answer copies a withheld function's code gets
a flag for the instructor (:mod:`ssa_course.grading.similarity`).

:func:`grade_notebook` returns, per test cell, its outputs (in nbformat's form) as they
came out here; the nbgrader preprocessor
(:mod:`ssa_course.grading.nbgrader_regrade`) puts them in place of the kernel's, so the
grades and the feedback are the regrade's.
"""

from __future__ import annotations

import ast
import base64
import builtins
import contextlib
import io
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ssa_course.grading import sandbox
from ssa_course.grading.learner import python_source
from ssa_course.grading.sandbox import MEMORY_GB, Outcome
from ssa_course.grading.timing import record, timed

RESTARTS = 12  # statements left out (each a new learner's process) before giving up
LABEL_TOP = "code at the top level of a cell"


@dataclass
class Cell:
    """One code cell of the submission: ``kind`` is ``setup`` (the instructor's, run in
    both processes), ``test`` (the instructor's, run here) or ``learner``."""

    kind: str
    gid: str
    source: str


@dataclass
class Verdict:
    """The regrade of one test cell: did it pass, and its outputs (nbformat dicts)."""

    gid: str
    passed: bool
    outputs: list[dict] = field(default_factory=list)
    kept: bool = False  # could not be regraded (see CannotSend): it fails
    flag: str = ""  # for the instructor only: why this answer needs a manual look


# ------------------------------------------------------------------ the learner's names


class CannotSend(BaseException):
    """A test cell gives the learner's function something that cannot be sent to
    another process (an object of a local class, a closure): this cell cannot be
    regraded, and fails with this message (the exercise's check must change)."""


class RemoteFailure(Exception):
    """A call of the learner's function gave no value; ``outcome`` says why.
    ``check_against`` turns it into its usual message (with the input and its picture)."""

    def __init__(self, outcome: Outcome, label: str) -> None:
        super().__init__(outcome.text)
        self.outcome, self.label = outcome, label


def _value(outcome: Outcome, label: str) -> Any:
    """The value of a call, or its failure raised as a guarded call in the kernel would."""
    from ssa_course.grading.forbid import _returned

    if outcome.kind == "value":
        return outcome.value
    if outcome.kind == "raised" and outcome.category == "crash" or outcome.kind in (
            "timeout", "memory", "died"):
        raise RemoteFailure(outcome, label)
    return _returned(outcome, label)


@dataclass(frozen=True)
class _Spec:
    """A guard's rules as the learner's process needs them: the label its messages use
    and the functions the answer must call (``(module, qualname)`` pairs). What an answer
    may not call is not a rule there: the sandbox's grading copy does not hold it."""

    label: str
    advice: str
    require: tuple[tuple[str, str], ...] = ()


class Remote:
    """A name the learner's cells define, as the grading process sees it: calling it runs
    the learner's function in a learner's process, in the sandbox."""

    def __init__(self, name: str, run: Run) -> None:
        self.name, self.run = name, run
        self.__name__ = self.__qualname__ = name
        self.spec = _Spec(name, "write it yourself")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        outcome = self.run.session(self.name, self.spec).call(args, kwargs)
        return _value(outcome, self.spec.label)

    def __repr__(self) -> str:
        return f"<your {self.name}>"


def _describe(entry: object) -> tuple[str, str]:
    if isinstance(entry, (Remote, RemoteGuarded)):
        raise TypeError("a guard's rules cannot name the learner's own functions")
    module, qualname = getattr(entry, "__module__", None), getattr(entry, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str):
        raise TypeError(f"cannot send the rule {entry!r} to the learner's process")
    return (module, qualname)


class RemoteGuarded(Remote):
    """What :func:`forbid.guard` gives for a :class:`Remote`: each call runs in a
    learner's process under the task's rules."""

    def __init__(self, remote: Remote, forbid: Iterable[object], allow: Iterable[object],
                 require: Iterable[object], label: str, advice: str) -> None:
        super().__init__(remote.name, remote.run)
        self.spec = _Spec(label, advice, tuple(map(_describe, require)))
        # started now, in the test cell's own time: the learner's cells (which may take
        # their 30 s per statement) are not part of the first input's time limit
        self.run.session(self.name, self.spec)

    def __repr__(self) -> str:
        return f"<your {self.name}, guarded>"


# ------------------------------------------------------------------ the learner's process


_BOOT = ("import sys; sys.path[:] = {path!r}; "
         "from ssa_course.grading.learner import main; main()")
CALL_SECONDS = 10.0  # per call, as check_against's default limit per case


def _path(package: str | None = None) -> list[str]:
    """A learner's process's ``sys.path`` (it runs with ``-I -S``): the grading copy (or,
    with none, the directory holding this ``ssa_course``) first, then this process's
    path without the checkout (which the sandbox does not show)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    rest = [p for p in sys.path if p and os.path.realpath(p) != os.path.realpath(root)]
    return [package or root] + rest


class Run:
    """The regrade of one notebook: the cells seen so far, the learner's processes of the
    test cell being run, and the notes for its output. ``package`` is the assignment's
    grading copy (:mod:`ssa_course.grading.gradingcopy`), ``hide`` the course's root."""

    def __init__(self, cwd: str, package: str | None = None,
                 hide: tuple[str, ...] = ()) -> None:
        self.cwd, self.package, self.hide = cwd, package, hide
        self.setup: list[tuple[str, str]] = []
        self.cells: list[tuple[str, str]] = []  # (where, source) of the learner's cells
        self.notes: list[str] = []
        self.sessions: dict[tuple[str, _Spec], _Session] = {}
        self.skip: set[Any] = set()  # statements left out, for every later process

    def statement_cells(self) -> list[tuple[str, int]]:
        """(cell, line) of each statement of the learner's cells, in order."""
        from ssa_course.grading.learner import statements

        out = []
        for where, source in self.cells:
            try:
                found = statements(source, where)
            except SyntaxError:
                continue
            out += [(where.strip("<>").removeprefix("cell "), line) for line, _ in found]
        return out

    def session(self, name: str, spec: _Spec) -> _Session:
        found = self.sessions.get((name, spec))
        if found is None or found.dead:
            found = self.sessions[(name, spec)] = _Session(self, name, spec)
        return found

    def end_cell(self) -> None:
        for session in self.sessions.values():
            session.stop()
        self.sessions.clear()


def _outcome(frame: bytes) -> Outcome:
    """A learner's process's message as an :class:`Outcome` (validated JSON: see
    :mod:`ssa_course.grading.wire`)."""
    from ssa_course.grading.wire import WireError, read

    try:
        got = read(frame)
    except WireError as e:
        return Outcome("died", text=f"your answer could not be read back ({e})")
    return Outcome(got.kind, value=got.value, text=got.text, category=got.category,
                   output=got.output)


class _Session:
    """A learner's process, in the sandbox, serving calls of one function. A statement of
    the learner's cells that runs past its time is stopped, the rest of its cell left out
    (a note says so) and the process started again without it."""

    def __init__(self, run: Run, name: str, spec: _Spec) -> None:
        self.run, self.name, self.spec = run, name, spec
        self.dead = False
        self.failed: Outcome | None = None
        self.home: tempfile.TemporaryDirectory[str] | None = None
        self.call_seconds = 0.0
        for _ in range(RESTARTS):
            if not self._start():
                return
        self._fail(Outcome("refused", text=f"more than {RESTARTS} statements of your "
                                           "notebook's cells were left out while grading"))

    def _spawn(self, write_end: int) -> subprocess.Popen[bytes]:
        from ssa_course.grading import box

        how = box.mode()
        self.home = tempfile.TemporaryDirectory(prefix="ssa-learner-")
        home = Path(self.home.name)
        with timed("learner.home"):
            box.prepare_home(home, Path(self.run.cwd), how)
        package = self.run.package if how == "bwrap" or self.run.package else None
        argv = [sys.executable, "-I", "-S", "-c", _BOOT.format(path=_path(package))]
        limits = box.Limits(memory_bytes=int((MEMORY_GB + 1.5) * (1 << 30)))
        command = box.command(argv, box.Box(
            home=home, package=Path(package) if package else None, limits=limits,
            hide=[Path(p) for p in self.run.hide]))
        return subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
            stderr=None if os.environ.get("SSA_COURSE_REGRADE_DEBUG") else
            subprocess.DEVNULL, pass_fds=(write_end,), start_new_session=True)

    def _start(self) -> bool:
        """Start the process and run the learner's cells: False when it is ready (or has
        failed for good), True when a statement was left out and it must start again."""
        from ssa_course.grading.learner import STATEMENT_SECONDS as DEFAULT

        STATEMENT_SECONDS = float(os.environ.get("SSA_COURSE_STATEMENT_SECONDS", DEFAULT))
        started = time.perf_counter()
        record("learner.process", 1)
        read_end, write_end = os.pipe()
        request = {"fd": write_end, "setup": self.run.setup, "cells": self.run.cells,
                   "name": self.name, "label": self.spec.label,
                   "require": list(self.spec.require), "skip": set(self.run.skip)}
        try:
            self.process = self._spawn(write_end)
        finally:
            os.close(write_end)
        self.fd, self.reader = read_end, sandbox._Frames(read_end)
        self._send(pickle.dumps(request))
        current: int | None = None
        while True:
            frame = self.reader.next(STATEMENT_SECONDS)
            if frame is None and current is not None and self.reader.timed_out:
                cells = self.run.statement_cells()
                where, line = cells[current]
                self.run.skip.update(k for k in range(current, len(cells))
                                     if cells[k][0] == where)
                self.run.notes.append(
                    f"note: while grading, your cell {where} did not finish in "
                    f"{STATEMENT_SECONDS:g} s from line {line}: the rest of it was left out")
                self.stop()
                return True
            if frame is None:
                ended = self._ended(STATEMENT_SECONDS, "while running your notebook's cells")
                if current is None and ended.kind == "died":
                    ended.text = ("the grader could not start the process that runs your "
                                  f"notebook's code ({ended.text.split('(')[-1]}")
                self._fail(ended)
                return False
            outcome = _outcome(frame)
            if outcome.kind == "statement" and outcome.text.isdigit():
                current = int(outcome.text)
                continue
            if outcome.kind == "skipped" and current is not None:
                where, line = self.run.statement_cells()[current]
                self.run.skip.add(current)
                note = (f"note: while grading, line {line} of your cell {where} was left "
                        "out: it needs a part of ssa_course that is not available while "
                        "this exercise is graded (the engine's own version of a task)")
                if note not in self.run.notes:
                    self.run.notes.append(note)
                continue
            if outcome.kind == "ready":
                record("learner.ready", time.perf_counter() - started)
                return False
            self._fail(outcome)
            return False

    def _send(self, data: bytes) -> None:
        """One frame (pickled data: the grader's own) to the learner's process."""
        from ssa_course.grading.learner import write_frame

        try:
            assert self.process.stdin is not None
            write_frame(self.process.stdin.fileno(), data)
        except (OSError, ValueError):  # it has ended: its pipe says how
            pass

    def _fail(self, outcome: Outcome) -> None:
        self.failed = outcome
        self.dead = True
        self.stop()

    def call(self, args: tuple, kwargs: dict) -> Outcome:
        """The learner's function on ``(args, kwargs)``: its Outcome."""
        if self.failed is not None:
            return self.failed
        try:
            data = pickle.dumps((args, kwargs))
        except Exception as e:
            raise CannotSend(f"{self.name}'s arguments cannot be sent to the learner's "
                             f"process ({e})") from None
        started = time.perf_counter()
        self._send(data)
        try:
            frame = self.reader.next(CALL_SECONDS)
        except BaseException:  # the checker's own time limit: this call is abandoned
            self._fail(Outcome("timeout", text=f"did not finish in {CALL_SECONDS:g} s"))
            raise
        finally:
            self.call_seconds += time.perf_counter() - started
        if frame is None:
            outcome = self._ended(CALL_SECONDS, "")
            self.dead = True
            return outcome
        outcome = _outcome(frame)
        if outcome.output:
            sys.stdout.write(outcome.output)
        if outcome.kind not in ("value", "raised"):
            self._fail(outcome)
        return outcome

    def _ended(self, seconds: float | None, during: str) -> Outcome:
        if self.reader.timed_out or self.reader.too_big:
            self.stop()
        outcome = sandbox._ended(self.process.pid, self.reader, seconds, MEMORY_GB)
        self.stop()
        if during and outcome.kind == "timeout":
            outcome.text = f"did not finish in {seconds:g} s {during}"
        return outcome

    def stop(self) -> None:
        if getattr(self, "process", None) is None:
            return
        if self.call_seconds:
            record("learner.calls", self.call_seconds)
            self.call_seconds = 0.0
        with timed("learner.stop"):
            self._stop()

    def _stop(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.close(self.fd)
        with contextlib.suppress(Exception):
            assert self.process.stdin is not None
            self.process.stdin.close()
        with contextlib.suppress(Exception):
            self.process.wait(timeout=5)
        self.process = None  # type: ignore[assignment]
        if self.home is not None:
            with contextlib.suppress(OSError):
                self.home.cleanup()
            self.home = None


# ------------------------------------------------------------------ the grading process


def bound_names(source: str) -> set[str]:
    """The names a cell binds at its top level (in ``if``/``try``/``for``/``with`` too)."""
    try:
        tree = ast.parse(python_source(source))
    except SyntaxError:
        return set()
    names: set[str] = set()
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names
                         if a.name != "*")
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        if isinstance(node, (ast.Lambda, ast.GeneratorExp, ast.ListComp, ast.SetComp,
                             ast.DictComp)):
            continue
        stack.extend(ast.iter_child_nodes(node))
    return names


def task_names(test_source: str) -> set[str]:
    """The answers a test cell checks: the first argument of each ``guard(...)`` and
    ``check_against(...)`` call, when it is a plain name."""
    try:
        tree = ast.parse(test_source)
    except SyntaxError:
        return set()
    found = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Name)
                and isinstance(node.func, (ast.Name, ast.Attribute))
                and (node.func.id if isinstance(node.func, ast.Name) else node.func.attr)
                in ("guard", "check_against")):
            found.add(node.args[0].id)
    return found


def classify(cells: list[dict], trusted: dict[str, str]) -> list[Cell]:
    """The submission's code cells, in order, as setup / test / learner. A cell counts as
    the instructor's only if its grade id is one of ``trusted`` (locked and test cells
    of the gradebook), once; its source is then the trusted one."""
    out, used = [], set()
    for i, cell in enumerate(cells):
        if cell.get("cell_type") != "code":
            continue
        meta = cell.get("metadata", {}).get("nbgrader", {}) or {}
        gid = str(meta.get("grade_id") or f"cell-{i}")
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        if gid in trusted and gid not in used and not meta.get("solution"):
            used.add(gid)
            out.append(Cell("test" if meta.get("grade") else "setup", gid, trusted[gid]))
        else:
            out.append(Cell("learner", gid, source))
    return out


def grading_copy(assignment: str) -> str:
    """The directory of ``assignment``'s grading copy of the package (built once, then
    cached: :func:`ssa_course.grading.gradingcopy.copy_for`)."""
    from ssa_course.grading.box import ACCOUNT_ENV
    from ssa_course.grading.gradingcopy import copy_for

    cache = os.environ.get("SSA_COURSE_GRADING_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "ssa_course",
        "grading-copies")
    if os.environ.get(ACCOUNT_ENV) and not os.environ.get("SSA_COURSE_GRADING_CACHE"):
        # the grader account must read the copy: not under a private home directory
        cache = os.path.join(tempfile.gettempdir(), f"ssa_course-grading-{os.getuid()}")
    return str(copy_for(assignment, Path(cache)))


def grade_notebook(cells: list[dict], trusted: dict[str, str], cwd: str,
                   assignment: str = "", hide: tuple[str, ...] = ()) -> list[Verdict]:
    """Regrade a submission of ``assignment`` (``cells`` as nbformat dicts; ``hide``: the
    course's root, kept out of the sandbox); see the module's docstring."""
    sandbox.REGRADE = True  # this process runs no learner's code: nothing to fork
    code = classify(cells, trusted)
    tasks = set().union(*(task_names(c.source) for c in code if c.kind == "test"))
    run = Run(cwd, grading_copy(assignment), hide)
    ns: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    ours: set[str] = set()  # names the instructor's cells bound
    # every setup cell runs first in a learner's process (before the learner's cells)
    run.setup = [(c.gid, c.source) for c in code if c.kind == "setup"]
    verdicts = []
    for cell in code:
        if cell.kind == "learner":
            run.cells.append((f"<cell {cell.gid}>", cell.source))
            for name in bound_names(cell.source):
                if name in tasks or (name not in ours and not hasattr(builtins, name)):
                    ns[name] = Remote(name, run)
            continue
        ours |= bound_names(cell.source)
        run.notes = []
        try:
            outputs, passed = _execute(cell, ns, run)
        finally:
            run.end_cell()
        if cell.kind == "test":
            kept = any(o.get("ename") == "CannotSend" for o in outputs)
            flag = _copied(task_names(cell.source), run.cells, assignment)
            verdicts.append(Verdict(cell.gid, passed, outputs, kept, flag))
    return verdicts


def _copied(names: set[str], cells: list[tuple[str, str]], exercise: str) -> str:
    """Why the learner's cells that define ``names`` need a manual look (their code is
    the engine's own, :mod:`ssa_course.grading.similarity`), or ``""``."""
    from ssa_course.grading.similarity import copied_from

    for where, source in cells:
        if not names & bound_names(source):
            continue
        found = copied_from(source, exercise)
        if found is not None:
            entry, score = found
            return (f"{where.strip('<>')} matches ssa_course's own {entry.replace(':', '.')} "
                    f"({score:.0%} of its code, names and layout aside)")
    return ""


def _execute(cell: Cell, ns: dict, run: Run) -> tuple[list[dict], bool]:
    """Run an instructor's cell here: its outputs as nbformat dicts, and whether it
    raised nothing."""
    from ssa_course.grading import check

    out, err = io.StringIO(), io.StringIO()
    shown: list[object] = []
    error: BaseException | None = None
    value: object = None
    previous_sink = check.DISPLAY_SINK
    check.DISPLAY_SINK = shown
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            tree = ast.parse(cell.source, f"<{cell.gid}>")
            last = tree.body[-1] if tree.body else None
            if isinstance(last, ast.Expr):
                tree.body.pop()
            else:
                last = None
            exec(compile(tree, f"<{cell.gid}>", "exec", dont_inherit=True), ns)
            if last is not None:
                value = eval(compile(ast.Expression(last.value), f"<{cell.gid}>", "eval",
                                     dont_inherit=True), ns)
    except BaseException as e:
        error = e
    finally:
        check.DISPLAY_SINK = previous_sink
    outputs: list[dict] = []
    text = "".join(f"{n}\n" for n in run.notes) + out.getvalue()
    if text:
        outputs.append({"output_type": "stream", "name": "stdout", "text": text})
    outputs += [_display_data(obj) for obj in shown]
    if err.getvalue():
        outputs.append({"output_type": "stream", "name": "stderr", "text": err.getvalue()})
    if error is not None:
        outputs.append(_error(error))
    elif value is not None:
        outputs.append({"output_type": "execute_result", "execution_count": None,
                        "metadata": {}, "data": {"text/plain": repr(value)}})
    return outputs, error is None and not err.getvalue()


def _display_data(obj: object) -> dict:
    data: dict[str, Any] = {"text/plain": repr(obj)}
    for method, mime in (("_repr_html_", "text/html"), ("_repr_svg_", "image/svg+xml"),
                         ("_repr_png_", "image/png")):
        try:
            found = getattr(obj, method)() if hasattr(obj, method) else None
        except Exception:  # a picture that fails is left out, as IPython does
            found = None
        if isinstance(found, bytes):
            found = base64.b64encode(found).decode("ascii")
        if found:
            data[mime] = found
    return {"output_type": "display_data", "metadata": {}, "data": data}


def _error(error: BaseException) -> dict:
    render = getattr(error, "_render_traceback_", None)
    if callable(render):
        lines = list(render())
    else:
        lines = traceback.format_exception_only(type(error), error)
    return {"output_type": "error", "ename": type(error).__name__,
            "evalue": str(error), "traceback": [line.rstrip("\n") for line in lines]}


def main(argv: list[str] | None = None) -> int:
    """``python -m ssa_course.grading.regrade REQUEST RESULT``: REQUEST is a pickle of
    ``(cells, trusted, cwd, assignment, hide)`` (written by the instructor's nbgrader
    process); RESULT gets a pickle of the verdicts (plain strings and numbers)."""
    args = sys.argv[1:] if argv is None else argv
    with open(args[0], "rb") as f:
        cells, trusted, cwd, assignment, hide = pickle.load(f)
    verdicts = grade_notebook(cells, trusted, cwd, assignment, tuple(hide))
    with open(args[1], "wb") as f:
        pickle.dump([(v.gid, v.passed, v.outputs, v.kept, v.flag) for v in verdicts], f)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
