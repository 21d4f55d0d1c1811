"""The regrade: test cells graded where the learner's code cannot reach the grader.

A notebook that rebinds ``check_against``, replaces the grader's modules or the audit
function, or precomputes answers with the engine at its top level passes its test cells
*in its own kernel* (the first test shows it with the in-process harness of
test_exercise_fakes); the regrade (``ssa_course.grading.nbgrader_regrade.regrade``: a
grading process that runs only the instructor's cells, learner's processes that run the
learner's cells under the task's watch) fails them, while every solution keeps full marks
and honest exploration at a cell's top level only earns a note.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
from test_exercise_fakes import NOTEBOOKS, outcome

from ssa_course.grading.nbgrader_regrade import regrade
from ssa_course.grading.regrade import bound_names, classify, task_names
from ssa_course.grading.sandbox import can_isolate

pytestmark = pytest.mark.skipif(not can_isolate(), reason="learner's processes need Linux")

ROOT = Path(__file__).resolve().parent.parent


@functools.cache
def _notebook(folder: str, name: str) -> tuple:
    return tuple(json.loads((ROOT / folder / name).read_text())["cells"])


def _trusted(name: str) -> dict[str, str]:
    """What the gradebook holds: the instructor's source of every locked code cell."""
    out = {}
    for cell in _notebook("solutions", name):
        meta = cell["metadata"].get("nbgrader", {})
        if cell["cell_type"] == "code" and meta.get("locked"):
            out[meta["grade_id"]] = "".join(cell["source"])
    return out


def _submission(name: str, answers: dict[str, str] | None = None,
                folder: str = "solutions", before: dict[str, dict] | None = None
                ) -> list[dict]:
    """The notebook's cells with the answer cells of ``answers`` replaced (grade id ->
    code), and extra cells (``before``: grade id -> a cell put in front of that cell)."""
    cells = []
    for cell in _notebook(folder, name):
        cell = json.loads(json.dumps(cell))
        gid = cell["metadata"].get("nbgrader", {}).get("grade_id")
        if before and gid in before:
            cells.append(before[gid])
        if answers and gid in answers:
            cell["source"] = answers[gid]
        cells.append(cell)
    return cells


def _grade(name: str, cells: list[dict], tmp_path: Path, flags: bool = False) -> dict:
    """{test cell: (passed, outputs, kept)} (and the instructor's flag, with ``flags``)."""
    found = regrade(cells, _trusted(name), str(tmp_path), timeout=600,
                    assignment=name.removesuffix(".ipynb"))
    return found if flags else {gid: v[:3] for gid, v in found.items()}


def _text(outputs: list[dict]) -> str:
    return "\n".join(str(o.get("text", "")) + str(o.get("evalue", "")) for o in outputs)


# ---------------------------------------------------------------- honest notebooks


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_solution_keeps_full_marks(name, tmp_path):
    verdicts = _grade(name, _submission(name), tmp_path)
    graded = [c["metadata"]["nbgrader"]["grade_id"] for c in _notebook("solutions", name)
              if c["metadata"].get("nbgrader", {}).get("grade")]
    assert sorted(verdicts) == sorted(graded)
    for gid, (passed, outputs, kept) in verdicts.items():
        assert not kept, gid  # every check can be run outside the kernel
        assert passed, (gid, _text(outputs))
        assert "agree with the reference" in _text(outputs)


def test_the_released_notebook_scores_nothing(tmp_path):
    name = "01-quads.ipynb"
    verdicts = _grade(name, _submission(name, folder="exercises"), tmp_path)
    assert len(verdicts) == 3
    for passed, outputs, _ in verdicts.values():
        assert not passed
        assert "not implemented yet" in _text(outputs)


def test_exploring_with_the_engine_at_the_top_of_a_cell_is_only_noted(tmp_path):
    name = "01-quads.ipynb"
    solution = "".join(next(c["source"] for c in _notebook("solutions", name)
                            if c["metadata"].get("nbgrader", {}).get("grade_id") == "leaders"))
    explore = ("\nprint(build_cfg(FUNCTIONS['while/main']).blocks.keys())  # compare\n"
               "print(leaders(FUNCTIONS['while/main'].body))\n"
               "display(cfg_to_dot(build_cfg(FUNCTIONS['while/main'])))\n")
    # IPython's display() and get_ipython() exist there too (do nothing): the def after
    # them still runs
    first = "display('exploring')\nget_ipython().run_line_magic('time', '1')\n"
    verdicts = _grade(name, _submission(name, {"leaders": first + solution + explore}),
                      tmp_path)
    passed, outputs, _ = verdicts["test_leaders"]
    assert passed, _text(outputs)
    row = 1 + (first + solution + explore).splitlines().index(explore.splitlines()[1])
    assert f"line {row} of your cell leaders was left out" in _text(outputs)
    assert "was left out: it needs a part of ssa_course that is not available while" \
        in _text(outputs)
    assert all(v[0] for v in verdicts.values())


# ---------------------------------------------------------------- cheats

REBIND = """
import ssa_course.grading as _g, ssa_course.grading.check as _c
import ssa_course.grading.forbid as _f
_nothing = lambda *a, **k: None
check_against = _g.check_against = _c.check_against = _nothing
guard = _f.guard = lambda fn, **k: fn
def leaders(body):
    return [0]
"""

CHEATS = {
    "rebinds the checker and the guard": REBIND,
    "replaces sys.audit, then uses the engine": """
import sys
sys.audit = lambda *a: None
from ssa_course.quads.cfg import find_leaders
def leaders(body):
    return find_leaders(Function('f', [], None, list(body)))
""",
    "precomputes the answers with the engine at its top level": """
from ssa_course.quads.cfg import find_leaders
_ANSWERS = {repr(f.body): find_leaders(f) for f in FUNCTIONS.values()}
def leaders(body):
    return _ANSWERS[repr(body)]
""",
    "a thread started at its top level does the work": """
import queue, threading
from ssa_course.quads.cfg import find_leaders
_jobs, _answers = queue.Queue(), queue.Queue()
def _serve():
    while True:
        _answers.put(find_leaders(Function('f', [], None, list(_jobs.get()))))
threading.Thread(target=_serve, daemon=True).start()
def leaders(body):
    _jobs.put(body)
    return _answers.get(timeout=1)
""",
    "switches the watch off at its top level": """
import sys
sys.setprofile(None)
from ssa_course.quads.cfg import find_leaders
def leaders(body):
    return find_leaders(Function('f', [], None, list(body)))
""",
    "feeds the grader's input its own requests": """
import os, pickle, struct
_r, _w = os.pipe()
_data = pickle.dumps(((), {}))
os.write(_w, struct.pack('!I', len(_data)) + _data)
os.dup2(_r, 0)
def leaders(body):
    return [0]
""",
    "forges the grader's messages on every descriptor": """
import json, os
_msg = json.dumps({"kind": "value", "value": {"obj": "ssa_course.grading.box:Box",
                   "id": 0, "state": {}}, "text": "", "category": "", "output": ""}).encode()
for _fd in range(3, 64):
    try:
        os.write(_fd, len(_msg).to_bytes(4, "big") + _msg)
    except OSError:
        pass
def leaders(body):
    return [0]
""",
    "replaces the engine's stand-in with a copy of its own": """
import ssa_course.quads.cfg as _cfg
def leaders(body):
    return _cfg.find_leaders.__wrapped__(body) if hasattr(_cfg.find_leaders, '__wrapped__') \
        else _cfg.find_leaders(Function('f', [], None, list(body)))
""",
}


@pytest.fixture
def grader_restored(monkeypatch):
    """The in-process harness runs a rebinding cheat in this very process: put the
    grader's functions back afterwards, or every later test here would pass."""
    import ssa_course.grading as grading
    from ssa_course.grading import check, forbid

    for module, name in ((grading, "check_against"), (check, "check_against"),
                         (forbid, "guard")):
        monkeypatch.setattr(module, name, getattr(module, name))


def test_rebinding_the_grader_passes_in_the_kernel(grader_restored):
    """The cheat is real: in the learner's own process the test cell raises nothing."""
    assert outcome("01-quads.ipynb", "test_leaders", {"leaders": REBIND}) is None


@pytest.mark.parametrize("label", list(CHEATS))
def test_a_cheat_scores_nothing(label, tmp_path):
    name = "01-quads.ipynb"
    stub = "".join(next(c["source"] for c in _notebook("exercises", name)
                        if c["metadata"].get("nbgrader", {}).get("grade_id") == "leaders"))
    verdicts = _grade(name, _submission(name, {"leaders": stub + CHEATS[label]}), tmp_path)
    passed, outputs, _ = verdicts["test_leaders"]
    assert not passed, _text(outputs)
    if "uses the engine" in label or "off" in label:  # the grading copy holds no find_leaders
        assert "is not available while exercise 01-quads is graded" in _text(outputs)
    if "precomputes" in label:  # the statement is left out: _ANSWERS is never bound
        assert "needs a part of ssa_course that is not available" in _text(outputs)
    if "forges" in label:  # a message out of the schema is the learner's own loss
        assert "could not be read back" in _text(outputs) or "your leaders" in \
            _text(outputs), _text(outputs)
    if "input" in label or "forges" in label:  # it breaks its own processes only
        return
    # the other tasks, answered honestly, keep their points
    assert verdicts["test_successors"][0] and verdicts["test_unreachable"][0]


def test_a_cell_dressed_as_a_test_cell_is_still_the_learners(tmp_path):
    """A cell with a test cell's metadata put before the real one runs as the learner's
    code; the test cell's verdict is the instructor's check of the real answer."""
    name = "01-quads.ipynb"
    fake = {"cell_type": "code", "source": "check_against = lambda *a, **k: None\n",
            "metadata": {"nbgrader": {"grade": True, "grade_id": "test_leaders_x",
                                      "locked": True, "solution": False, "points": 3}},
            "outputs": [], "execution_count": None}
    wrong = "def leaders(body):\n    return [0]\n"
    verdicts = _grade(name, _submission(name, {"leaders": wrong},
                                        before={"test_leaders": fake}), tmp_path)
    assert not verdicts["test_leaders"][0]
    assert "test_leaders_x" not in verdicts


def test_an_endless_loop_at_the_top_of_a_cell_costs_that_cell_only(tmp_path, monkeypatch):
    # longer than a case's 10 s: the learner's cells are not timed as an input
    monkeypatch.setenv("SSA_COURSE_STATEMENT_SECONDS", "11")
    name = "01-quads.ipynb"
    solution = "".join(next(c["source"] for c in _notebook("solutions", name)
                            if c["metadata"].get("nbgrader", {}).get("grade_id") == "leaders"))
    verdicts = _grade(name, _submission(name, {"leaders": "while True:\n    pass\n"
                                                          + solution}), tmp_path)
    passed, outputs, _ = verdicts["test_leaders"]
    assert not passed
    assert "did not finish in 11 s from line 1: the rest of it was left out" in _text(outputs)
    assert verdicts["test_successors"][0] and verdicts["test_unreachable"][0]


# ---------------------------------------------------------------- the pieces


def test_bound_names_and_task_names():
    assert bound_names("import a.b as c, d.e\nfrom f import g\nx, (y, z) = 1, (2, 3)\n"
                       "def h(): w = 1\nclass K: v = 2\nif q:\n    r = 1\n"
                       "for s in t: pass\n[u for u in v]\n") == \
        {"c", "d", "g", "x", "y", "z", "h", "K", "r", "s"}
    assert task_names("_a = guard(leaders, forbid=[x])\ncheck_against(lambda f: 1, g, [])\n"
                      "ssa_course.grading.check_against(successors, ref, cases)\n") == \
        {"leaders", "successors"}


def test_only_gradebook_cells_are_the_instructors():
    cells = [{"cell_type": "code", "source": "changed", "metadata": {"nbgrader": {
                 "grade_id": "setup", "locked": True}}},
             {"cell_type": "code", "source": "mine", "metadata": {}},
             {"cell_type": "code", "source": "copy", "metadata": {"nbgrader": {
                 "grade_id": "setup", "locked": True}}},
             {"cell_type": "code", "source": "t", "metadata": {"nbgrader": {
                 "grade_id": "test_a", "grade": True, "locked": True}}},
             {"cell_type": "code", "source": "s", "metadata": {"nbgrader": {
                 "grade_id": "test_b", "grade": True, "solution": True}}}]
    kinds = [(c.kind, c.source) for c in classify(cells, {"setup": "orig", "test_a": "T",
                                                           "test_b": "X"})]
    assert kinds == [("setup", "orig"), ("learner", "mine"), ("learner", "copy"),
                     ("test", "T"), ("learner", "s")]


def test_the_course_config_regrades_after_the_kernel():
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_course",
                                                  ROOT / "tools" / "make_course.py")
    assert spec is not None and spec.loader is not None
    make_course = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_course)
    text = make_course.CONFIG.format(course_id="c", root="/r", exchange="/e", timeout=1)
    steps = [line.strip().strip('",') for line in text.splitlines()
             if line.strip().startswith('"') and "." in line]
    at = steps.index("ssa_course.grading.nbgrader_regrade.RegradeOutsideKernel")
    assert steps[at - 1] == "ssa_course.grading.nbgrader_box.BoxedExecute"
    assert steps.index("nbgrader.preprocessors.SaveAutoGrades") > at


def test_exercise_06_s_graph_rule_is_regraded_too(tmp_path, grader_restored):
    """idealize_add gets a node of a graph being built: the learner's process gets a copy
    and the node it returns is taken over by id, so a rebinding notebook fails there too."""
    name = "06-types-and-peepholes.ipynb"
    cheat = ("import ssa_course.grading.check as _c\n"
             "check_against = _c.check_against = lambda *a, **k: None\n"
             "def idealize_add(node):\n    return None\n")
    assert outcome(name, "test_idealize_add", {"idealize_add": cheat}) is None  # in-kernel
    verdicts = _grade(name, _submission(name, {"idealize_add": cheat}), tmp_path)
    passed, outputs, kept = verdicts["test_idealize_add"]
    assert not kept and not passed
    assert "wrong (printed expression, outputs)" in _text(outputs)


def test_no_learner_s_process_outlives_the_grading_process(tmp_path, monkeypatch):
    """A regrade killed for its time (the learner's top level loops) takes the learner's
    process with it (PR_SET_PDEATHSIG), instead of leaving it to burn its CPU limit."""
    import os
    import subprocess
    import time

    monkeypatch.setenv("SSA_COURSE_STATEMENT_SECONDS", "120")
    name = "01-quads.ipynb"
    cells = _submission(name, {"leaders": "while True:\n    pass\n"})
    with pytest.raises(subprocess.TimeoutExpired):
        regrade(cells, _trusted(name), str(tmp_path), timeout=6)

    def here() -> list[str]:
        found = []
        for proc in Path("/proc").iterdir():
            try:
                if proc.name.isdigit() and os.readlink(proc / "cwd") == str(tmp_path):
                    found.append(proc.name)
            except OSError:
                continue
        return found

    deadline = time.monotonic() + 5
    while here() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert here() == []


def test_the_autograding_kernel_s_filter_allows_threads_not_processes():
    """seccomp.install_no_processes (nbgrader_box installs it in every autograding
    kernel): threads still start (the kernel has some), no process does -- not by
    os.fork, not by subprocess, not by the C code behind it."""
    import os
    import platform

    from ssa_course.grading import seccomp

    if platform.machine() not in ("x86_64", "aarch64"):
        pytest.skip("no filter for this machine")
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child reports one letter per check, then ends
        code = b""
        try:
            import subprocess
            import threading

            code += b"I" if seccomp.install_no_processes() else b"i"
            box: list = []
            t = threading.Thread(target=lambda: box.append(1))
            t.start()
            t.join()
            code += b"T" if box == [1] else b"t"
            for start in (os.fork, lambda: subprocess.Popen(["true"])):
                try:
                    if start() == 0:
                        os._exit(0)
                    code += b"p"  # a process started
                except OSError:
                    code += b"P"
        finally:
            os.write(write_end, code)
            os._exit(0)
    os.close(write_end)
    os.waitpid(pid, 0)
    assert os.read(read_end, 16) == b"ITPP"
    os.close(read_end)
