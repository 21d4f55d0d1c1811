"""The lessons and exercises, run the way learners and instructors run them.

* every lesson in ``notebooks/`` executes top to bottom without an error;
* every source notebook in ``solutions/`` passes all of its autograder cells;
* every released exercise, executed unchanged, fails each graded cell (so each test tests
  something);
* ``exercises/`` equals a fresh regeneration from ``solutions/``;
* a real ``nbgrader autograde`` gives the solution full marks and the blank release zero.

Which Python runs the notebooks: every kernel these tests start (nbclient's and nbgrader's)
is the notebooks' ``python3`` kernel, and a ``python3`` kernelspec written to a temporary
directory at the head of ``JUPYTER_PATH`` maps that name to *this* interpreter
(``sys.executable``), so neither a kernelspec in the user's home nor another ``python`` on
the PATH can sneak in.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parent.parent
LESSONS = sorted((ROOT / "notebooks").glob("*.ipynb"))
SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))
EXERCISES = sorted((ROOT / "exercises").glob("*.ipynb"))


CELL_TIMEOUT = 120  # seconds per cell


@pytest.fixture(scope="module", autouse=True)
def venv_kernel(tmp_path_factory):
    """A ``python3`` kernelspec running this interpreter, first on ``JUPYTER_PATH``."""
    pytest.importorskip("ipykernel", reason="ipykernel is a dev dependency: make venv")
    root = tmp_path_factory.mktemp("jupyter-path")
    spec = root / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (ssa_course tests)",
        "language": "python",
    }))
    paths = [str(root)] + [p for p in os.environ.get("JUPYTER_PATH", "").split(os.pathsep) if p]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_PATH", os.pathsep.join(paths))
        mp.setenv("JUPYTER_DATA_DIR", str(root / "data"))
        yield spec


def _execute(path: Path, allow_errors: bool = False) -> nbformat.NotebookNode:
    return _run(nbformat.read(path, as_version=4), path.parent, allow_errors)


def _run(nb: nbformat.NotebookNode, cwd: Path, allow_errors: bool = False
         ) -> nbformat.NotebookNode:
    client = NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3",
                            allow_errors=allow_errors, resources={"metadata": {"path": str(cwd)}})
    client.execute()
    return nb


def test_notebook_kernels_run_this_interpreter(tmp_path):
    from jupyter_client.kernelspec import KernelSpecManager

    assert KernelSpecManager().get_kernel_spec("python3").argv[0] == sys.executable
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell("import sys, ssa_course\nprint(sys.executable)"))
    _run(nb, tmp_path)
    ran = nb.cells[0].outputs[0]["text"].strip()
    assert os.path.realpath(ran) == os.path.realpath(sys.executable)


def _errors(nb: nbformat.NotebookNode) -> list[str]:
    return [f"cell {i}: {o.get('ename')}: {o.get('evalue')}"
            for i, cell in enumerate(nb.cells) if cell.cell_type == "code"
            for o in cell.get("outputs", []) if o.get("output_type") == "error"]


def _graded(cell) -> bool:
    return cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("grade", False)


def test_the_folders_hold_lessons_and_exercises():
    assert [p.name for p in LESSONS][:2] == ["00-tour.ipynb", "01-quads.ipynb"]
    assert {p.name for p in SOLUTIONS} == {p.name for p in EXERCISES}
    assert SOLUTIONS


@pytest.mark.parametrize("path", LESSONS, ids=[p.stem for p in LESSONS])
def test_lesson_runs_headless(path):
    try:
        nb = _execute(path)
    except CellExecutionError as e:
        pytest.fail(f"{path.name} failed:\n{str(e)[-3000:]}")
    assert not _errors(nb)
    # Lessons show things: at least one picture or text output per notebook.
    kinds = {key for cell in nb.cells if cell.cell_type == "code"
             for o in cell.get("outputs", []) for key in o.get("data", {})}
    assert "image/svg+xml" in kinds or "image/png" in kinds
    # What a lesson prints fits 100 columns: tables and listings are wrapped, or cut at a
    # line boundary with ssa_course.lessons.printing.clip, never in the middle of a line.
    wide = [f"cell {i}, {len(line)} columns: {line[:70]}..."
            for i, cell in enumerate(nb.cells) if cell.cell_type == "code"
            for o in cell.get("outputs", []) if o.get("output_type") == "stream"
            for line in o.get("text", "").splitlines() if len(line) > 100]
    assert not wide, f"{path.name} prints lines wider than 100 columns:\n" + "\n".join(wide)


@pytest.mark.parametrize("path", LESSONS[1:], ids=[p.stem for p in LESSONS[1:]])
def test_lesson_names_the_papers_it_follows(path):
    """Every lesson after the tour ends with a reference list: authors, title, year."""
    nb = nbformat.read(path, as_version=4)
    refs = [c.source for c in nb.cells if c.cell_type == "markdown"
            and "## References" in c.source]
    assert len(refs) == 1, f"{path.name}: one '## References' section expected"
    body = "\n" + refs[0].split("## References", 1)[1].strip()
    items = [" ".join(item.split()) for item in body.split("\n* ")[1:]]
    assert items, f"{path.name}: the reference list is empty"
    for item in items:  # an italic title, or a repository to find the code in
        assert re.search(r"\*[^*]+\*", item) or "github.com/" in item, item
    dated = [item for item in items if re.search(r"\b(19[6-9][0-9]|20[0-2][0-9])\b", item)]
    assert dated, f"{path.name}: no reference says when it was published"


@pytest.mark.parametrize("path", SOLUTIONS, ids=[p.stem for p in SOLUTIONS])
def test_solution_passes_every_autograder_cell(path):
    nb = _execute(path, allow_errors=True)
    assert not _errors(nb), f"{path.name}: {_errors(nb)}"
    assert sum(_graded(c) for c in nb.cells) >= 3


@pytest.mark.parametrize("path", EXERCISES, ids=[p.stem for p in EXERCISES])
def test_unchanged_exercise_fails_every_graded_cell(path):
    nb = _execute(path, allow_errors=True)
    graded = [(i, c) for i, c in enumerate(nb.cells) if _graded(c)]
    assert len(graded) >= 3
    for i, cell in graded:
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        assert errors, f"{path.name}: graded cell {i} passes without any work"
    # and the release holds no solution and no hidden test
    text = path.read_text()
    assert "BEGIN SOLUTION" not in text and "HIDDEN TESTS" not in text


def test_exercises_are_generated_from_solutions():
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "make_exercises.py"), "--check"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def test_nbgrader_autograde_gives_full_marks_and_zero(tmp_path):
    from nbgrader.api import Gradebook
    from nbgrader.apps import NbGraderAPI
    from traitlets.config import Config

    course = tmp_path / "course"
    for path in SOLUTIONS:
        (course / "source" / "ps1").mkdir(parents=True, exist_ok=True)
        shutil.copy(path, course / "source" / "ps1" / path.name)
    cfg = Config()
    cfg.CourseDirectory.root = str(course)
    cfg.CourseDirectory.course_id = "ssa_course"
    cfg.Exchange.root = str(tmp_path / "exchange")
    cfg.GenerateAssignment.force = True
    cfg.Autograde.create_student = True
    cfg.ExecutePreprocessor.timeout = CELL_TIMEOUT
    api = NbGraderAPI(config=cfg)
    generated = api.generate_assignment("ps1")
    assert generated["success"], generated["log"]
    for student, folder in (("alice", course / "source" / "ps1"),
                            ("bob", course / "release" / "ps1")):
        target = course / "submitted" / student / "ps1"
        target.mkdir(parents=True)
        for path in SOLUTIONS:
            shutil.copy(folder / path.name, target / path.name)
        (target / "timestamp.txt").write_text("2026-11-22 12:00:00.000000 UTC")
        graded = api.autograde("ps1", student)
        assert graded["success"], graded["log"]
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        alice = gb.find_submission("ps1", "alice")
        bob = gb.find_submission("ps1", "bob")
        assert alice.max_score > 0
        assert alice.score == alice.max_score
        assert bob.score == 0


def test_solution_notebooks_declare_nbgrader_metadata():
    for path in SOLUTIONS:
        nb = json.loads(path.read_text())
        ids = [c["metadata"]["nbgrader"]["grade_id"] for c in nb["cells"]
               if "nbgrader" in c["metadata"]]
        assert len(ids) == len(set(ids)), f"{path.name}: duplicate grade ids"
        for c in nb["cells"]:
            src = "".join(c["source"])
            if "### BEGIN SOLUTION" in src:
                assert c["metadata"]["nbgrader"]["solution"]
