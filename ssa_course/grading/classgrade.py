"""A class autograded on a Dask ``distributed`` cluster, the gradebook written by one process.

``tools/grade_class.py COURSE ASSIGNMENT`` (docs/instructors.md) makes each (student,
assignment) autograde a task of a Dask cluster -- a :class:`distributed.LocalCluster`
on this machine by default, or the scheduler at ``--scheduler tcp://host:8786`` whose
workers may run on many machines:

* a **worker** (:func:`autograde_one`) builds a private scratch course: the course's
  ``nbgrader_config.py`` (root moved there), a copy of the gradebook as it was when the
  run began, the assignment's ``source/`` and that one student's submission. It runs
  nbgrader's autograde there (its Python API, in the worker's process, one student at a
  time, saving a process start per student): the kernel and the regrade are sandboxed
  exactly as in any autograde (docs/grading.md), since the worker runs the same code.
  One preprocessor is added right after ``RegradeOutsideKernel``: :class:`KeepOutputs`
  writes the notebook's outputs at that point (and the answers
  flagged for a manual look) to a file of the scratch course. The task returns **data**:
  those outputs, the autograded notebook's JSON and the cell scores of the scratch
  gradebook. Nothing on the worker touches the real course directory.
* the **driver** (:func:`grade_class`, one process) records each result as it arrives
  through nbgrader's own code path: an ``nbgrader autograde`` run of that student whose
  first preprocessors (``BoxedExecute``, ``RegradeOutsideKernel``) are replaced by
  :class:`ReplayOutputs`, which puts the returned outputs in place instead of executing.
  nbgrader's sanitizing, ``SaveAutoGrades``, ``FlagForManualGrade``, late penalties and
  the writing of ``autograded/<student>/<assignment>/`` then run as usual, in this one
  process: the sqlite gradebook is never written by a worker.

The driver then checks that the gradebook's scores equal the worker's.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Unicode

EXECUTE = "ssa_course.grading.nbgrader_box.BoxedExecute"
REGRADE = "ssa_course.grading.nbgrader_regrade.RegradeOutsideKernel"
KEEP = "ssa_course.grading.classgrade.KeepOutputs"
REPLAY = "ssa_course.grading.classgrade.ReplayOutputs"


# ------------------------------------------------------------------ the preprocessors


def _kept(nb: Any, resources: dict) -> dict:
    return {"cells": [{"cell_type": c.cell_type, "source": c.source,
                       "outputs": [dict(o) for o in c.get("outputs", [])]
                       if c.cell_type == "code" else [],
                       "execution_count": c.get("execution_count")} for c in nb.cells],
            "flags": dict(resources.get("ssa_course_flags") or {})}


class KeepOutputs(NbGraderPreprocessor):
    """On a worker, right after ``RegradeOutsideKernel``: write each cell's outputs (the
    regrade's, for test cells) and the flagged answers to ``<directory>/<notebook>.json``."""

    directory = Unicode("", help="where the outputs are written").tag(config=True)

    def preprocess(self, nb: Any, resources: dict) -> tuple[Any, dict]:
        name = resources["nbgrader"]["notebook"]
        os.makedirs(self.directory, exist_ok=True)
        with open(os.path.join(self.directory, f"{name}.json"), "w", encoding="utf-8") as f:
            json.dump(_kept(nb, resources), f)
        return nb, resources


class ReplayOutputs(NbGraderPreprocessor):
    """In the driver, in place of ``BoxedExecute`` and ``RegradeOutsideKernel``: each code
    cell gets the outputs a worker returned (``<directory>/<student>/<notebook>.json``),
    and the flagged answers go on to ``FlagForManualGrade``. The cells must be the ones the
    worker graded (same kinds, same sources after nbgrader's sanitizing), else this
    student's autograde fails."""

    directory = Unicode("", help="where the workers' outputs were put").tag(config=True)

    def preprocess(self, nb: Any, resources: dict) -> tuple[Any, dict]:
        import nbformat

        info = resources["nbgrader"]
        path = os.path.join(self.directory, info["student"], f"{info['notebook']}.json")
        with open(path, encoding="utf-8") as f:
            kept = json.load(f)
        cells = kept["cells"]
        if len(cells) != len(nb.cells) or any(
                k["cell_type"] != c.cell_type or k["source"] != c.source
                for k, c in zip(cells, nb.cells, strict=True)):
            raise RuntimeError(f"{info['student']}'s {info['notebook']}: the cells the worker "
                               "graded are not the submission's")
        for k, cell in zip(cells, nb.cells, strict=True):
            if cell.cell_type == "code":
                cell.outputs = [nbformat.from_dict(o) for o in k["outputs"]]
                cell.execution_count = k["execution_count"]
        if kept["flags"]:
            resources["ssa_course_flags"] = dict(kept["flags"])
        return nb, resources


# ------------------------------------------------------------------ the worker's side


def _files(top: Path) -> dict[str, bytes]:
    """Every regular file under ``top`` (symlinks not followed), by relative path."""
    out: dict[str, bytes] = {}
    if not top.is_dir():
        return out
    for root, dirs, names in os.walk(top):
        dirs[:] = [d for d in dirs if d != ".ipynb_checkpoints"]
        for name in names:
            path = Path(root) / name
            if path.is_file() and not path.is_symlink():
                out[str(path.relative_to(top))] = path.read_bytes()
    return out


def _write(top: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        path = (top / rel).resolve()
        if not str(path).startswith(str(top.resolve()) + os.sep):
            raise ValueError(f"a file outside the scratch course: {rel}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


_ONE_AT_A_TIME = threading.Lock()  # nbgrader's API is not safe in two threads at once


def _steps(cfg: Any, error: type[BaseException], where: str) -> list[str]:
    """The names of the course's autograde preprocessors; ``error`` when the regrade is
    not one of them (a course not made by tools/make_course.py)."""
    pre = [p if isinstance(p, str) else f"{p.__module__}.{p.__name__}"
           for p in cfg.Autograde.autograde_preprocessors]
    if REGRADE not in pre:
        raise error(f"{where} does not run {REGRADE}: make the course with "
                    "tools/make_course.py")
    return pre


def worker_config(root: Path, kept: Path) -> Any:
    """A worker's config: the course's (copied to ``root``), its root moved there, and
    :class:`KeepOutputs` right after the regrade."""
    cfg = course_config(root)
    pre = _steps(cfg, RuntimeError, "the course's nbgrader_config.py")
    pre.insert(pre.index(REGRADE) + 1, KEEP)
    cfg.Autograde.autograde_preprocessors = pre
    cfg.KeepOutputs.directory = str(kept)
    return cfg


def autograde_one(kit: dict, assignment: str, student: str,
                  submission: dict[str, bytes]) -> dict:
    """One student's autograde, on a worker: ``kit`` holds the course's config text, its
    gradebook's bytes and the assignment's ``source/`` files; ``submission`` the files of
    ``submitted/<student>/<assignment>/``. nbgrader's autograde runs in this process (one
    at a time); the kernel and the regrade it starts are sandboxed as always. Returns
    plain data (see the module's docstring): ``{"student", "success", "log",
    "kept": {notebook: outputs}, "autograded": {notebook: JSON text},
    "scores": {notebook: {cell: [score, max]}}, "seconds", "host"}``."""
    import socket

    from nbgrader.apps import NbGraderAPI

    start = time.perf_counter()
    with _ONE_AT_A_TIME, tempfile.TemporaryDirectory(prefix="ssa-grade-class-") as tmp:
        root = Path(tmp) / "course"
        kept = Path(tmp) / "kept"
        root.mkdir()
        (root / "gradebook.db").write_bytes(kit["gradebook"])
        (root / "nbgrader_config.py").write_text(kit["config"], encoding="utf-8")
        _write(root / "source" / assignment, kit["source"])
        _write(root / "submitted" / student / assignment, submission)
        result: dict[str, Any] = {"student": student, "kept": {}, "autograded": {},
                                  "scores": {}, "host": socket.gethostname()}
        try:
            api = NbGraderAPI(config=worker_config(root, kept))
            done = api.autograde(assignment, student, force=True, create=True)
            result["success"] = bool(done["success"])
            result["log"] = (str(done.get("log") or "") + str(done.get("error") or ""))[-20_000:]
        except Exception as e:
            result["success"], result["log"] = False, f"{type(e).__name__}: {e}"
        for path in sorted(kept.glob("*.json")):
            result["kept"][path.stem] = json.loads(path.read_text(encoding="utf-8"))
        out = root / "autograded" / student / assignment
        for path in sorted(out.glob("*.ipynb")):
            result["autograded"][path.stem] = path.read_text(encoding="utf-8")
        if result["success"]:
            result["scores"] = cell_scores(f"sqlite:///{root / 'gradebook.db'}", assignment,
                                           student)
    result["seconds"] = time.perf_counter() - start
    return result


def cell_scores(db_url: str, assignment: str, student: str) -> dict[str, dict[str, list]]:
    """``{notebook: {grade id: [auto score, max score]}}`` of one student's submission."""
    from nbgrader.api import Gradebook

    with Gradebook(db_url) as gb:
        sub = gb.find_submission(assignment, student)
        return {nb.name: {g.name: [g.auto_score, g.max_score] for g in nb.grades}
                for nb in sub.notebooks}


# ------------------------------------------------------------------ the driver


@dataclass
class Report:
    """What a class run did: students recorded, failures (student -> why), the worker's
    seconds per student, the wall-clock time, the part of it spent starting the cluster
    (and sending it the course), and the driver's seconds recording results."""

    graded: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    wall: float = 0.0
    startup: float = 0.0
    recording: float = 0.0


def course_config(course: Path) -> Any:
    from traitlets.config.loader import PyFileConfigLoader

    cfg = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    cfg.CourseDirectory.root = str(course)
    return cfg


def replay_config(course: Path, directory: str) -> Any:
    """The course's config with the executing preprocessors replaced by ReplayOutputs."""
    cfg = course_config(course)
    pre = _steps(cfg, SystemExit, f"{course}/nbgrader_config.py")
    cfg.Autograde.autograde_preprocessors = [REPLAY, *pre[pre.index(REGRADE) + 1:]]
    cfg.ReplayOutputs.directory = directory
    return cfg


def students_of(course: Path, assignment: str) -> list[str]:
    top = course / "submitted"
    return sorted(d.name for d in top.iterdir() if (d / assignment).is_dir()) \
        if top.is_dir() else []


def _client(workers: int, scheduler: str | None) -> tuple[Any, Any]:
    from distributed import Client, LocalCluster

    if scheduler:
        return Client(scheduler), None
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                           dashboard_address=None)
    return Client(cluster), cluster


def grade_class(course: Path, assignment: str, students: list[str] | None = None,
                workers: int = 2, scheduler: str | None = None,
                say: Callable[[str], None] = print) -> Report:
    """Autograde ``students`` (default: every one with a submission) of ``assignment``
    on a Dask cluster; record every result in the course's gradebook from this process."""
    from distributed import as_completed
    from nbgrader.apps import NbGraderAPI

    course = course.resolve()
    students = students if students is not None else students_of(course, assignment)
    report = Report()
    db = course / "gradebook.db"
    if not db.exists():
        raise SystemExit(f"{db} does not exist: run 'nbgrader generate_assignment "
                         f"{assignment}' first")
    kit = {"config": (course / "nbgrader_config.py").read_text(encoding="utf-8"),
           "gradebook": db.read_bytes(),
           "source": _files(course / "source" / assignment)}
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ssa-grade-class-replay-") as replay:
        logging.getLogger("traitlets").setLevel(logging.ERROR)
        api = NbGraderAPI(config=replay_config(course, replay))
        client, cluster = _client(workers, scheduler)
        try:
            kit_future = client.scatter(kit, broadcast=True)
            report.startup = time.perf_counter() - start
            futures = []
            for student in students:
                files = _files(course / "submitted" / student / assignment)
                futures.append(client.submit(autograde_one, kit_future, assignment, student,
                                             files, pure=False, retries=1,
                                             key=f"autograde-{assignment}-{student}-"
                                                 f"{os.getpid()}-{time.time_ns()}"))
            for future in as_completed(futures):
                try:
                    result = future.result()
                except Exception as e:  # the worker's process died twice: say so
                    student = students[futures.index(future)]
                    report.failed[student] = f"{type(e).__name__}: {e}"
                    say(f"{student}: FAILED on the cluster ({e})")
                    continue
                begun = time.perf_counter()
                _record(api, course, assignment, replay, result, report, say)
                report.recording += time.perf_counter() - begun
        finally:
            report.wall = time.perf_counter() - start
            client.close()
            if cluster is not None:
                cluster.close()
    return report


def _record(api: Any, course: Path, assignment: str, replay: str, result: dict,
            report: Report, say: Callable[[str], None]) -> None:
    """One worker's result into the gradebook, through nbgrader's autograde (replayed)."""
    student = result["student"]
    report.seconds[student] = result["seconds"]
    if not result["success"] or not result["kept"]:
        report.failed[student] = "autograde failed on the worker:\n" + result["log"][-3000:]
        say(f"{student}: FAILED (autograde on {result['host']}):\n{result['log'][-1500:]}")
        return
    folder = Path(replay) / student
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for name, kept in result["kept"].items():
        (folder / f"{name}.json").write_text(json.dumps(kept), encoding="utf-8")
    done = api.autograde(assignment, student, force=True, create=True)
    if not done["success"]:
        report.failed[student] = "recording failed:\n" + (done.get("error") or done["log"])
        say(f"{student}: FAILED to record:\n{report.failed[student][-1500:]}")
        return
    got = cell_scores(f"sqlite:///{course / 'gradebook.db'}", assignment, student)
    if got != result["scores"]:
        report.failed[student] = (f"the gradebook's scores {got} are not the worker's "
                                  f"{result['scores']}")
        say(f"{student}: FAILED: {report.failed[student]}")
        return
    report.graded.append(student)
    total = sum(s for cells in got.values() for s, _ in cells.values())
    top = sum(m for cells in got.values() for _, m in cells.values())
    say(f"{student}: {total:g} / {top:g}  ({result['seconds']:.1f} s on {result['host']})")
    with contextlib.suppress(OSError):
        shutil.rmtree(folder)
