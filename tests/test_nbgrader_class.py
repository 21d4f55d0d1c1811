"""A class through the whole nbgrader loop: make_course, generate, release, autograde.

``tools/make_course.py`` writes a course into a temporary directory (one class takes
exercises 01 and 06, another exercise 11, so ``-k 11`` runs lesson 11's alone); its
own ``nbgrader_config.py`` drives nbgrader's Python API (with a short cell timeout). Seven
students' notebooks go straight into ``submitted/<student>/<assignment>/`` (``collect``
would name every submission after the one Unix user running the tests):

* ``correct``: the source solutions -- full marks;
* ``blank``: the released notebooks unchanged -- zero;
* ``wrong``: correct but one task wrong -- exactly that task's points lost;
* ``faker``: every answer faked with what the released notebook and the installed package
  offer (the engine's own functions, ``ssa_course.grading``'s references) -- zero;
* ``looper``: an endless loop at the top of one answer cell (nbgrader's cell timeout) and
  one inside an answer function (check_against's time limit) -- those tasks lost only;
* ``crasher``: answers that raise, recurse without end, or rewrite forever in
  ``idealize()`` (this used to kill the kernel) -- those tasks lost only;
* ``rebinder``: a wrong answer behind a notebook that rebinds ``check_against`` and
  ``guard`` (its kernel's test cell raises nothing) -- that task lost: the course's
  configuration regrades outside the kernel.

Each graded cell's score is read from the gradebook: a graded cell is expected to score 0
exactly when it mentions a function the student broke.
"""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
ASSIGNMENTS = ["01-quads", "06-types-and-peepholes"]
CLASSES = {"01-06": ASSIGNMENTS, "11": ["11-codegen"]}  # test id -> the class's exercises
CELL_TIMEOUT = 20  # seconds: the looper's top-level loop costs this much
LOOP_FIRST = "while True:\n    pass\n"

# Per assignment: function name -> answer code that replaces the correct one.
WRONG = {
    "06-types-and-peepholes": {
        "idealize_add": "def idealize_add(node):\n    return None  # forgot every rule\n",
    },
    "11-codegen": {  # a copy's two sides made to interfere
        "interference": "def interference(blocks, live_out):\n"
                        "    edges = set()\n"
                        "    for b, instrs in blocks.items():\n"
                        "        live = set(live_out[b])\n"
                        "        for i in reversed(instrs):\n"
                        "            edges |= {frozenset({d, r}) for d in i.defs for r in live\n"
                        "                      if r != d and (is_virtual(d) or is_virtual(r))}\n"
                        "            live = (live - set(i.defs)) | set(i.uses)\n"
                        "    return edges\n",
    },
}
FAKES = {
    "01-quads": {
        "leaders": "from ssa_course.quads.cfg import find_leaders\n"
                   "from ssa_course.quads.ir import Function\n"
                   "def leaders(body):\n"
                   "    return find_leaders(Function('f', [], None, body))\n",
        "successors": "from ssa_course.quads.cfg import build_cfg\n"
                      "from ssa_course.quads.ir import Function, Label\n"
                      "def successors(blocks):\n"
                      "    body = [x for b in blocks for x in [Label(b.name), *b.instrs]]\n"
                      "    cfg = build_cfg(Function('f', [], None, body))\n"
                      "    return {b.name: list(b.succs) for b in cfg.blocks.values()}\n",
        "unreachable": "try:  # whatever the package offers\n"
                       "    from ssa_course.grading.references import *  # noqa\n"
                       "except ImportError:\n    pass\n"
                       "from ssa_course.ssa.dom import immediate_dominators\n"
                       "def unreachable(succs, entry):\n"
                       "    return set(succs) - set(immediate_dominators(succs, entry))\n",
    },
    "06-types-and-peepholes": {
        "mul_type": "from ssa_course.son.data import Mul, Not\n"
                    "from ssa_course.grading.son import engine_compute\n"
                    "def mul_type(a, b):\n    return engine_compute(Mul, a, b)\n"
                    "def not_type(t):\n    return engine_compute(Not, t)\n",
        "idealize_add": "from ssa_course.son.data import Add\n"
                        "def idealize_add(node):  # the engine's own rules\n"
                        "    return Add.idealize(node)\n",
        "gvn_key": "def gvn_key(node):\n    return node.key()\n",
    },
    "11-codegen": {
        "liveness": "from ssa_course.codegen.liveness import Liveness\n"
                    "from ssa_course.codegen.mir_data import FunctionData, function_of_data\n"
                    "def liveness(blocks, succs):\n"
                    "    fn = function_of_data(FunctionData('f', next(iter(blocks)), blocks,"
                    " succs))\n"
                    "    live = Liveness(fn)\n"
                    "    return ({b: {str(r) for r in s} for b, s in live.live_in.items()},\n"
                    "            {b: {str(r) for r in s} for b, s in live.live_out.items()})\n",
        "interference": "from ssa_course.codegen.interference import build_interference\n"
                        "from ssa_course.codegen.mir_data import FunctionData, "
                        "function_of_data\n"
                        "def interference(blocks, live_out):\n"
                        "    fn = function_of_data(FunctionData('f', next(iter(blocks)), "
                        "blocks, {b: [] for b in blocks}))\n"
                        "    return {frozenset((str(a), str(b))) for a, b in "
                        "build_interference(fn).edges()}\n",
        "select": "from ssa_course.codegen.colouring import choose_register\n"
                  "def select(stack, adj, registers, partners):\n"
                  "    colour, spilled = {}, []\n"
                  "    for n in reversed(stack):\n"
                  "        taken = {colour.get(t, t) for t in adj[n]}\n"
                  "        r = choose_register(taken, tuple(registers))\n"
                  "        (spilled.append(n) if r is None else colour.__setitem__(n, r))\n"
                  "    return colour, spilled\n",
    },
}
CRASHES = {
    "01-quads": {
        "successors": "def successors(blocks):\n    return successors(blocks)\n",
        "unreachable": "def unreachable(succs, entry):\n"
                       "    raise ValueError('I give up')\n",
    },
    "06-types-and-peepholes": {
        "not_type": "def not_type(t):\n    return not_type(t)\n",
        "idealize_add": "def idealize_add(node):  # swaps a + b forever\n"
                        "    return type(node)(node.graph, None, node.inputs[2],"
                        " node.inputs[1])\n",
    },
    "11-codegen": {
        "liveness": "def liveness(blocks, succs):\n    return liveness(blocks, succs)\n",
        "select": "def select(stack, adj, registers, partners):\n"
                  "    return adj[stack.pop()] + 1  # a set plus a number\n",
    },
}
LOOPS = {
    "01-quads": {"leaders": LOOP_FIRST},  # before the definition: the cell never ends
    "06-types-and-peepholes": {
        "idealize_add": "def idealize_add(node):\n    while True:\n        pass\n",
    },
    "11-codegen": {
        "interference": LOOP_FIRST,
        "select": "def select(stack, adj, registers, partners):\n"
                  "    while stack:\n        stack.append(stack.pop())\n",
    },
}


_REBIND = ("import ssa_course.grading as _g, ssa_course.grading.check as _c\n"
           "import ssa_course.grading.forbid as _f\n"
           "check_against = _g.check_against = _c.check_against = lambda *a, **k: None\n"
           "guard = _f.guard = lambda fn, **k: fn\n")
# A wrong answer behind a rebound checker: its kernel's test cell raises nothing, the
# regrade (grading/regrade.py) fails it.
REBINDS = {
    "01-quads": {"leaders": _REBIND + "def leaders(body):\n    return [0]\n"},
    "06-types-and-peepholes": {"idealize_add": _REBIND + "def idealize_add(node):\n"
                                                         "    return None\n"},
    "11-codegen": {"select": _REBIND + "def select(stack, adj, registers, partners):\n"
                                       "    return {}, list(stack)\n"},
}


def _make_course(tmp: Path, assignments: list[str]) -> Path:
    course = tmp / "course"
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "make_course.py"), "--out", str(course),
         "--exchange", str(tmp / "exchange"), "--assignments", ",".join(assignments),
         "--timeout", str(CELL_TIMEOUT)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return course


def _api(course: Path):
    from nbgrader.apps import NbGraderAPI
    from traitlets.config.loader import PyFileConfigLoader

    cfg = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    cfg.GenerateAssignment.force = True
    return NbGraderAPI(config=cfg)


def _defined(source: str) -> list[str]:
    return re.findall(r"^def (\w+)\(", source, flags=re.M)


def _answer_cells(source_nb: nbformat.NotebookNode) -> dict[str, str]:
    """grade_id -> the correct answer (the solution cell without nbgrader's markers)."""
    out = {}
    for cell in source_nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("solution") and not meta.get("grade"):
            out[meta["grade_id"]] = "\n".join(
                line for line in cell.source.splitlines()
                if "### BEGIN SOLUTION" not in line and "### END SOLUTION" not in line)
    return out


def _student_notebook(released: Path, source: Path, changes: dict[str, str] | None,
                      fake_all: dict[str, str] | None = None) -> nbformat.NotebookNode:
    """The released notebook with answers: correct ones, changed per function name
    (``LOOP_FIRST`` goes before the cell's code, anything else after it, redefining)."""
    nb = nbformat.read(released, as_version=4)
    correct = _answer_cells(nbformat.read(source, as_version=4))
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        grade_id = meta.get("grade_id")
        if grade_id not in correct:
            continue
        code = correct[grade_id]
        names = _defined(code)
        if fake_all is not None:
            code = "\n".join(fake_all[n] for n in names if n in fake_all)
        for name in names:
            change = (changes or {}).get(name)
            if change == LOOP_FIRST:
                code = LOOP_FIRST + code
            elif change is not None:
                code = code + "\n\n" + change
        cell.source = code
    return nb


def _broken_names(student: str, assignment: str, source: Path) -> set[str]:
    if student == "correct":
        return set()
    if student in ("blank", "faker"):
        names = set()
        for code in _answer_cells(nbformat.read(source, as_version=4)).values():
            names.update(_defined(code))
        return names
    table = {"wrong": WRONG, "looper": LOOPS, "crasher": CRASHES, "rebinder": REBINDS}[student]
    return set(table.get(assignment, {}))


def _mentions(source: str, names: set[str]) -> bool:
    return any(re.search(rf"\b{re.escape(n)}\b", source) for n in names)


@pytest.mark.parametrize("assignments", list(CLASSES.values()), ids=list(CLASSES))
def test_a_class_through_generate_release_and_autograde(tmp_path, jupyter_env, assignments):
    from nbgrader.api import Gradebook

    course = _make_course(tmp_path, assignments)
    config = (course / "nbgrader_config.py").read_text()
    assert "c.CourseDirectory.course_id = 'ssa_course'" in config
    assert str((tmp_path / "exchange").resolve()) in config
    assert oct((tmp_path / "exchange").stat().st_mode & 0o7777) == "0o1777"
    api = _api(course)
    for assignment in assignments:
        assert (course / "source" / assignment / f"{assignment}.ipynb").exists()
        generated = api.generate_assignment(assignment)
        assert generated["success"], generated["log"] + str(generated["error"])
        released = api.release_assignment(assignment)
        assert released["success"], released["log"] + str(released["error"])
        outbound = tmp_path / "exchange" / "ssa_course" / "outbound" / assignment
        assert (outbound / f"{assignment}.ipynb").exists()

    students = {"correct": None, "blank": None, "wrong": WRONG, "faker": FAKES,
                "looper": LOOPS, "crasher": CRASHES, "rebinder": REBINDS}
    for student, table in students.items():
        for assignment in assignments:
            source = course / "source" / assignment / f"{assignment}.ipynb"
            released = course / "release" / assignment / f"{assignment}.ipynb"
            target = course / "submitted" / student / assignment
            target.mkdir(parents=True)
            if student == "blank":
                nb = nbformat.read(released, as_version=4)
            elif student == "faker":
                nb = _student_notebook(released, source, None, FAKES[assignment])
            else:
                nb = _student_notebook(released, source, (table or {}).get(assignment))
            nbformat.write(nb, target / f"{assignment}.ipynb")
            # what docs/instructors.md says to write beside a copied notebook
            (target / "timestamp.txt").write_text("2026-11-23 12:00:00 UTC\n")
            (target / "submission_secret.txt").write_text(secrets.token_hex(64))
            graded = api.autograde(assignment, student)
            assert graded["success"], graded["log"] + str(graded["error"])

    failures = []
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for assignment in assignments:
            source = course / "source" / assignment / f"{assignment}.ipynb"
            test_cells = [c for c in nbformat.read(source, as_version=4).cells
                          if c.metadata.get("nbgrader", {}).get("grade")
                          and c.cell_type == "code"]
            for student in students:
                broken = _broken_names(student, assignment, source)
                for cell in test_cells:
                    meta = cell.metadata["nbgrader"]
                    grade = gb.find_grade(meta["grade_id"], assignment, assignment, student)
                    want = 0 if _mentions(cell.source, broken) else meta["points"]
                    if grade.score != want:
                        failures.append(f"{student} {assignment} {meta['grade_id']}: "
                                        f"{grade.score} points, expected {want}")
    # The looper's endless function was stopped by check_against itself, with a message.
    last = assignments[-1]
    looped = course / "autograded" / "looper" / last / f"{last}.ipynb"
    assert "did not finish in 10 s on this input" in looped.read_text()
    crashed = course / "autograded" / "crasher" / last / f"{last}.ipynb"
    text = crashed.read_text()
    assert "Traceback" not in text
    if last == "06-types-and-peepholes":
        assert "idealize() keeps rewriting" in text
    else:
        assert "called itself too deeply" in text
    assert not failures, "\n".join(failures)
    _feedback_without_hidden_tests(api, course, tmp_path / "exchange", assignments,
                                   list(students))


def _feedback_without_hidden_tests(api, course: Path, exchange: Path, assignments: list[str],
                                   students: list[str]) -> None:
    """generate_feedback strips the hidden tests that autograde ran (the course config's
    ClearHiddenTests); release_feedback finds each copied submission's timestamp.txt."""
    for assignment in assignments:
        done = api.generate_feedback(assignment)
        assert done["success"], done.get("log", "") + str(done.get("error"))
        done = api.release_feedback(assignment)
        assert done["success"], done.get("log", "") + str(done.get("error"))
        for student in students:
            graded = course / "autograded" / student / assignment / f"{assignment}.ipynb"
            assert "### BEGIN HIDDEN TESTS" in graded.read_text()  # what there is to strip
            page = (course / "feedback" / student / assignment / f"{assignment}.html")
            text = page.read_text()
            assert "HIDDEN TESTS" not in text and "def _hidden" not in text, page
            assert "check_against" in text  # the visible tests are still shown
    released = list((exchange / "ssa_course" / "feedback").glob("*.html"))
    assert len(released) == len(students) * len(assignments)
    # docs/instructors.md: a trial submission's row (there: root's) goes before the export
    gone = subprocess.run([sys.executable, "-m", "nbgrader", "db", "student", "remove", "blank",
                           "--force"], cwd=course, capture_output=True, text=True, timeout=120)
    assert gone.returncode == 0, gone.stdout + gone.stderr
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        assert "blank" not in {s.id for s in gb.students}


# ---------------------------------------------------------------- set-up commands


def _make_dry_run(*args: str) -> str:
    import shutil

    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    done = subprocess.run(["make", "-n", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_make_lab_allows_root_only_for_root():
    as_root = [ln for ln in _make_dry_run("lab", "USER_ID=0").splitlines() if "jupyter lab" in ln]
    as_user = [ln for ln in _make_dry_run("lab", "USER_ID=1000").splitlines()
               if "jupyter lab" in ln]
    assert len(as_root) == 1 and "--allow-root" in as_root[0]
    assert len(as_user) == 1 and "--allow-root" not in as_user[0]
    here = [ln for ln in _make_dry_run("lab").splitlines() if "jupyter lab" in ln][0]
    assert ("--allow-root" in here) == (os.getuid() == 0)



def test_make_lab_opens_and_prints_the_tour():
    # JupyterLab's own default_url (/lab, the Launcher) is what it prints with --no-browser
    # and where / leads; the tour replaces it (LabApp's, which overrides ServerApp's)
    line = [ln for ln in _make_dry_run("lab", "LAB_ARGS=--no-browser").splitlines()
            if "jupyter lab" in ln][0]
    assert "--LabApp.default_url=/lab/tree/notebooks/00-tour.ipynb" in line
    assert line.index("default_url") < line.index("--no-browser")  # LAB_ARGS can override
    assert (ROOT / "notebooks" / "00-tour.ipynb").is_file()


def test_make_test_runs_lint_then_the_suite():
    lines = _make_dry_run("test").splitlines()
    ruff = next(i for i, ln in enumerate(lines) if "ruff check" in ln)
    pytest_line = next(i for i, ln in enumerate(lines) if "-m pytest" in ln)
    assert ruff < pytest_line


def test_make_course_rejects_an_unknown_exercise_in_one_line(tmp_path):
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "make_course.py"), "--out", str(tmp_path / "c"),
         "--assignments", "01-quads,99-nothing"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.startswith("error: no exercise named 99-nothing") and "Traceback" \
        not in done.stderr
    assert not (tmp_path / "c").exists()


def test_make_course_writes_config_and_sources(tmp_path):
    from traitlets.config.loader import PyFileConfigLoader

    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "make_course.py"), "--out", str(tmp_path / "c"),
         "--course-id", "cs420"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    cfg = PyFileConfigLoader("nbgrader_config.py", path=str(tmp_path / "c")).load_config()
    assert cfg.CourseDirectory.course_id == "cs420"
    assert cfg.Exchange.root == str((tmp_path / "exchange").resolve())
    sources = sorted(p.name for p in (tmp_path / "c" / "source").iterdir())
    assert sources == sorted(p.stem for p in (ROOT / "solutions").glob("*.ipynb"))
    student = PyFileConfigLoader("student_nbgrader_config.py",
                                 path=str(tmp_path / "c")).load_config()
    assert student.CourseDirectory.course_id == "cs420"


NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen"]


def test_instructors_doc_counts_the_exercise_notebooks():
    notebooks = sorted(p.name for p in (ROOT / "solutions").glob("*.ipynb"))
    doc = (ROOT / "docs" / "instructors.md").read_text()
    said = re.search(r"The (\w+) exercise notebooks \(`solutions/([^`]+)` … "
                     r"`solutions/([^`]+)`\)", doc)
    assert said, "docs/instructors.md no longer opens with 'The N exercise notebooks (...)'"
    assert said.group(1) == NUMBER_WORDS[len(notebooks)], (said.group(1), len(notebooks))
    assert (said.group(2), said.group(3)) == (notebooks[0], notebooks[-1])


def test_course_config_strips_hidden_tests_from_feedback(tmp_path):
    from traitlets.config.loader import PyFileConfigLoader

    course = _make_course(tmp_path, ["01-quads"])
    cfg = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    assert "nbgrader.preprocessors.ClearHiddenTests" in cfg.GenerateFeedback.preprocessors
    teacher = PyFileConfigLoader("instructor_nbgrader_config.py",
                                 path=str(course)).load_config()
    assert teacher.CourseDirectory.root == str(course.resolve())
    assert teacher.GenerateFeedback.preprocessors == cfg.GenerateFeedback.preprocessors
