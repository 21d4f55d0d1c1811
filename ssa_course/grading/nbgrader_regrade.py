"""nbgrader's side of a regrade (:mod:`ssa_course.grading.regrade`): after the kernel has
run a submission, grade its test cells again where the learner's code cannot reach.

The course's ``nbgrader_config.py`` (``tools/make_course.py``) puts
:class:`RegradeOutsideKernel` right after nbgrader's ``Execute`` in
``Autograde.autograde_preprocessors``. For each submitted notebook it starts a fresh
grading process (``python -I -S``) with the submission's cells and, from the gradebook,
the instructor's own source of every locked cell (setup and tests), waits for its
verdicts, and puts each test cell's regraded outputs in place of the kernel's -- so
nbgrader's ``SaveAutoGrades`` scores the regrade, and the feedback shows its messages. The
kernel's own results never count (its checks do not even run: ``check_against`` says
"checked outside this kernel"): a test cell that could not be regraded fails with the
reason, and if the regrade itself fails, every test cell fails with one line saying why.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import tempfile
import time
from typing import Any

import nbformat
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Integer

from ssa_course.grading.timing import record

_BOOT = ("import sys; sys.path[:] = {path!r}; from ssa_course.grading.regrade import main; "
         "raise SystemExit(main(sys.argv[1:]))")


def trusted_sources(db_url: str, notebook: str, assignment: str) -> dict[str, str]:
    """The instructor's source of each locked code cell of ``notebook``, by grade id."""
    from nbgrader.api import Gradebook

    with Gradebook(db_url) as gb:
        found = gb.find_notebook(notebook, assignment)
        return {c.name: c.source for c in found.source_cells
                if c.locked and c.cell_type == "code"}


class Pending:
    """A grading process started by :func:`start`, running while nbgrader's kernel runs
    the same submission (the regrade needs nothing the kernel computes)."""

    def __init__(self, cells: list[dict], trusted: dict[str, str], cwd: str,
                 assignment: str = "", hide: tuple[str, ...] = ()) -> None:
        from ssa_course.grading.regrade import _path

        self.started = time.perf_counter()
        self.tmp = tempfile.TemporaryDirectory(prefix="ssa-regrade-")
        self.request = os.path.join(self.tmp.name, "request")
        self.result = os.path.join(self.tmp.name, "result")
        with open(self.request, "wb") as f:
            pickle.dump((cells, trusted, cwd, assignment, list(hide)), f)
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _BOOT.format(path=_path()), self.request,
             self.result], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True)

    def verdicts(self, timeout: float) -> dict[str, tuple[bool, list[dict], bool, str]]:
        """Wait for the grading process (``timeout`` seconds from its start):
        ``{grade id: (passed, outputs, kept, flag)}``."""
        try:
            left = max(timeout - (time.perf_counter() - self.started), 0.1)
            try:
                _out, err = self.process.communicate(timeout=left)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.communicate()
                raise
            if self.process.returncode != 0 or not os.path.exists(self.result):
                last = (err.strip().splitlines() or ["no message"])[-1]
                raise RuntimeError(f"the regrade stopped (exit status "
                                   f"{self.process.returncode}): {last}")
            with open(self.result, "rb") as f:
                return {gid: (passed, outputs, kept, flag)
                        for gid, passed, outputs, kept, flag in pickle.load(f)}
        finally:
            record("regrade", time.perf_counter() - self.started)
            self.close()

    def __del__(self) -> None:  # never collected (no RegradeOutsideKernel after it)
        self.close()

    def close(self) -> None:
        if getattr(self, "process", None) is None:
            return
        if self.process.poll() is None:
            self.process.kill()
            self.process.communicate()
        self.process = None  # type: ignore[assignment]
        self.tmp.cleanup()


def regrade(cells: list[dict], trusted: dict[str, str], cwd: str, timeout: float,
            assignment: str = "", hide: tuple[str, ...] = ()
            ) -> dict[str, tuple[bool, list[dict], bool, str]]:
    """Run a grading process on ``cells``: ``{grade id: (passed, outputs, kept, flag)}``
    (``flag``: why the answer needs a manual look, for the instructor only)."""
    return Pending(cells, trusted, cwd, assignment, hide).verdicts(timeout)


def _cells(nb: Any) -> list[dict]:
    return [{"cell_type": c.cell_type, "source": c.source,
             "metadata": {"nbgrader": dict(c.metadata.get("nbgrader", {}))}}
            for c in nb.cells]


def start(nb: Any, resources: dict) -> None:
    """Start the regrade of ``nb`` now (BoxedExecute calls it before its kernel starts);
    :class:`RegradeOutsideKernel` collects it. A failure to start is left to it."""
    info = resources["nbgrader"]
    cwd = resources.get("metadata", {}).get("path") or os.getcwd()
    try:
        trusted = trusted_sources(info["db_url"], info["notebook"], info["assignment"])
        root = os.path.dirname(os.path.realpath(info["db_url"].removeprefix("sqlite:///")))
        resources[PENDING] = (Pending(_cells(nb), trusted, cwd, exercise_of(info), (root,)),
                              _cells(nb))
    except Exception:  # RegradeOutsideKernel starts it again and reports the failure
        resources.pop(PENDING, None)


PENDING = "ssa_course_regrade"  # resources' key of the grading process started early


def exercise_of(info: dict) -> str:
    """Which exercise a notebook under autograde is, for its grading copy: the notebook's
    name (``01-quads``) when the course knows it, else the assignment's (an instructor may
    release ``01-quads.ipynb`` as assignment ``ps1``)."""
    from ssa_course.grading.withheld import WITHHELD

    notebook, assignment = str(info.get("notebook", "")), str(info.get("assignment", ""))
    return notebook if notebook in WITHHELD else assignment


class RegradeOutsideKernel(NbGraderPreprocessor):
    """Grade the test cells again outside the kernel (see the module's docstring)."""

    timeout = Integer(1800, help="seconds the regrade of one notebook may take").tag(
        config=True)

    def preprocess(self, nb: Any, resources: dict) -> tuple[Any, dict]:
        info = resources["nbgrader"]
        cwd = resources.get("metadata", {}).get("path") or os.getcwd()
        cells = _cells(nb)
        pending, started_on = resources.pop(PENDING, (None, None))
        try:
            if pending is not None and started_on == cells:  # started with the kernel
                verdicts = pending.verdicts(self.timeout)
            else:
                if pending is not None:
                    pending.close()
                trusted = trusted_sources(info["db_url"], info["notebook"],
                                          info["assignment"])
                # the gradebook lies in the course's root, which the sandbox never shows
                root = os.path.dirname(os.path.realpath(
                    info["db_url"].removeprefix("sqlite:///")))
                verdicts = regrade(cells, trusted, cwd, self.timeout, exercise_of(info),
                                   (root,))
            failure = None
        except (Exception, subprocess.TimeoutExpired) as e:
            verdicts, failure = {}, f"{type(e).__name__}: {e}"
            self.log.error("regrade of %s failed: %s", info["notebook"], failure)
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader", {})
            if cell.cell_type != "code" or not meta.get("grade") or meta.get("solution"):
                continue
            found = verdicts.get(meta.get("grade_id"))
            if found is None:
                cell.outputs = [nbformat.v4.new_output(
                    "error", ename="RegradeError",
                    evalue=failure or "this test cell was not regraded (its source is not "
                                      "the instructor's)",
                    traceback=[f"RegradeError: {failure or 'not regraded'}"])]
                continue
            _passed, outputs, kept, flag = found
            if flag:  # kept for FlagForManualGrade, after SaveAutoGrades; never shown
                resources.setdefault("ssa_course_flags", {})[meta.get("grade_id")] = flag
            cell.outputs = [nbformat.from_dict(o) for o in outputs]
            if kept:  # its error output (CannotSend) fails the cell: the kernel's result
                # is never trusted, and the exercise needs a check that can be sent
                self.log.error("test cell %s of %s could not be regraded",
                               meta.get("grade_id"), info["notebook"])
        return nb, resources


class FlagForManualGrade(NbGraderPreprocessor):
    """After ``SaveAutoGrades``: a test cell whose answer is the engine's own code
    (:mod:`ssa_course.grading.similarity`) is marked "needs manual grade" in the
    gradebook, with one line in autograde's log and in ``<course>/flagged-answers.tsv``
    (student, notebook, cell, reason). The student's feedback says nothing about it."""

    def preprocess(self, nb: Any, resources: dict) -> tuple[Any, dict]:
        from nbgrader.api import Gradebook

        flags = resources.get("ssa_course_flags") or {}
        if not flags:
            return nb, resources
        info = resources["nbgrader"]
        db = str(info["db_url"])
        with Gradebook(db) as gb:
            for gid, reason in flags.items():
                grade = gb.find_grade(gid, info["notebook"], info["assignment"],
                                      info["student"])
                grade.needs_manual_grade = True
                gb.db.commit()
                self.log.warning("needs manual grade: %s, %s, %s: %s", info["student"],
                                 info["notebook"], gid, reason)
        report = os.path.join(os.path.dirname(db.removeprefix("sqlite:///")),
                              "flagged-answers.tsv")
        with open(report, "a", encoding="utf-8") as f:
            for gid, reason in flags.items():
                f.write(f"{info['student']}\t{info['notebook']}\t{gid}\t{reason}\n")
        return nb, resources
