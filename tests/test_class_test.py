"""The parts of ``make class-test`` (tools/class_test.py) that run without root or a hub.

The class test itself needs root, Unix accounts and JupyterHub, so it is outside ``make
test``; here: it refuses to start without root in one line (the script and the make
target), and the notebook helpers it grades with do what they claim on the real exercises.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

from classroom.notebooks import answered, answers_of, hidden_lines  # noqa: E402


def _nb(path: Path) -> dict:
    return json.loads(path.read_text())


def test_the_script_needs_root_and_says_so_in_one_line(monkeypatch, capsys):
    import class_test

    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert class_test.main([]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: the class test must run as root")


def test_make_class_test_needs_root_and_says_so_in_one_line(tmp_path):
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "id").write_text("#!/bin/sh\necho 1000\n")  # `id -u` of an ordinary user
    (fake / "id").chmod(0o755)
    done = subprocess.run(["make", "--no-print-directory", "class-test"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PATH": f"{fake}:{os.environ['PATH']}"})
    assert done.returncode != 0
    assert done.stdout.startswith("error: make class-test must run as root")
    assert done.stdout.count("\n") == 1, done.stdout
    assert "pip" not in done.stdout + done.stderr  # nothing was installed first


@pytest.mark.parametrize("name", ["01-quads", "06-types-and-peepholes", "11-codegen"])
def test_hidden_lines_are_exactly_what_the_released_notebook_lacks(name):
    source = _nb(ROOT / "solutions" / f"{name}.ipynb")
    released = "\n".join("".join(c["source"])
                          for c in _nb(ROOT / "exercises" / f"{name}.ipynb")["cells"])
    secret = hidden_lines(source)
    assert secret and "def _hidden():" in secret
    assert not [line for line in secret if line in released]
    assert not [line for line in secret if line.startswith("###")]


@pytest.mark.parametrize("name", ["01-quads", "11-codegen"])
def test_answered_writes_the_solutions_into_the_released_cells(name):
    source = _nb(ROOT / "solutions" / f"{name}.ipynb")
    released = _nb(ROOT / "exercises" / f"{name}.ipynb")
    answers = answers_of(source)
    assert answers and not any("SOLUTION" in a for a in answers.values())
    first = next(iter(answers))
    nb = answered(released, {**answers, first: "def nothing():\n    pass\n"})
    by_id = {c["metadata"].get("nbgrader", {}).get("grade_id"): c for c in nb["cells"]}
    assert by_id[first]["source"] == "def nothing():\n    pass\n"
    for grade_id, code in answers.items():
        if grade_id != first:
            assert by_id[grade_id]["source"] == code
    assert released != nb and _nb(ROOT / "exercises" / f"{name}.ipynb") == released
