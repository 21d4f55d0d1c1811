"""A class graded on a Dask cluster (``tools/grade_class.py``) scores as plain autograde.

A course of exercise 01 with four students -- ``correct`` (the solutions), ``blank``
(the released notebook), ``wrong`` (one task answered wrong) and ``copier`` (one task
answered with the engine's own code, flagged for a manual look) -- is autograded twice:
once with nbgrader's own ``autograde``, student by student, in a copy of the course, and
once by ``tools/grade_class.py`` on a ``LocalCluster`` of two worker processes, which
grade scratch copies and send back data while the driver alone writes the gradebook.
Every cell's score, every "needs manual grade" mark and every regraded test cell's
output must be the same.
"""

from __future__ import annotations

import re
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from test_nbgrader_class import _answer_cells, _api, _make_course

ROOT = Path(__file__).resolve().parent.parent
ASSIGNMENT = "01-quads"
STUDENTS = ("correct", "blank", "wrong", "copier")


def _copied_leaders() -> str:
    """Task 1 answered with the engine's own find_leaders, renamed: flagged for a look."""
    import inspect

    from ssa_course.quads.cfg import find_leaders

    return (inspect.getsource(find_leaders).replace("find_leaders", "my_leaders")
            + "\n\ndef leaders(body):\n"
              "    return my_leaders(Function('f', [], None, list(body)))\n")


def _submit(course: Path, student: str) -> None:
    source = course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    released = course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    nb = nbformat.read(released, as_version=4)
    if student != "blank":
        answers = _answer_cells(nbformat.read(source, as_version=4))
        broken = False
        for cell in nb.cells:
            gid = cell.metadata.get("nbgrader", {}).get("grade_id")
            if gid in answers:
                cell.source = answers[gid]
                if student == "copier" and re.search(r"^def leaders\(", cell.source, re.M):
                    cell.source = _copied_leaders()
                name = re.search(r"^def (\w+)\((.*?)\):", answers[gid], flags=re.M)
                if student == "wrong" and not broken and name:
                    cell.source += (f"\n\ndef {name.group(1)}({name.group(2)}):\n"
                                    "    return None  # wrong\n")
                    broken = True
    target = course / "submitted" / student / ASSIGNMENT
    target.mkdir(parents=True)
    nbformat.write(nb, target / f"{ASSIGNMENT}.ipynb")
    (target / "timestamp.txt").write_text("2026-11-23 12:00:00 UTC\n")
    (target / "submission_secret.txt").write_text(secrets.token_hex(64))


def _grades(course: Path) -> dict:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        return {(s, g.name): (g.score, g.max_score, g.needs_manual_grade)
                for s in STUDENTS
                for nb in gb.find_submission(ASSIGNMENT, s).notebooks for g in nb.grades}


def _test_outputs(course: Path, student: str) -> list:
    nb = nbformat.read(course / "autograded" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb",
                       as_version=4)
    return [c.outputs for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]


def test_a_class_on_a_dask_cluster_scores_as_plain_autograde(tmp_path, jupyter_env):
    pytest.importorskip("distributed")
    course = _make_course(tmp_path, [ASSIGNMENT])
    generated = _api(course).generate_assignment(ASSIGNMENT)
    assert generated["success"], generated["log"]
    for student in STUDENTS:
        _submit(course, student)
    plain = tmp_path / "plain"
    shutil.copytree(course, plain)
    api = _api(plain)
    api.coursedir.root = str(plain)
    for student in STUDENTS:
        done = api.autograde(ASSIGNMENT, student)
        assert done["success"], done["log"]

    done = subprocess.run([sys.executable, str(ROOT / "tools" / "grade_class.py"), str(course),
                           ASSIGNMENT, "--workers", "2"], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr[-5000:]
    assert "4 graded, 0 failed" in done.stdout

    want, got = _grades(plain), _grades(course)
    assert got == want
    scores = {s: sum(v[0] for (who, _), v in got.items() if who == s) for s in STUDENTS}
    top = sum(v[1] for (who, _), v in got.items() if who == "correct")
    assert scores["correct"] == top and scores["blank"] == 0
    assert 0 < scores["wrong"] < top
    assert got[("copier", "test_leaders")][2] is True  # needs manual grade, as plain
    flagged = (course / "flagged-answers.tsv").read_text()
    assert flagged.startswith("copier\t01-quads\ttest_leaders\t")
    assert flagged == (plain / "flagged-answers.tsv").read_text()
    for student in STUDENTS:
        assert _test_outputs(course, student) == _test_outputs(plain, student)


def test_grade_class_says_what_is_missing(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "grade_class.py"),
                           str(tmp_path), ASSIGNMENT], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2
    assert "has no nbgrader_config.py" in done.stderr
