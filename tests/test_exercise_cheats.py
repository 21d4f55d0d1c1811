"""In a learner's own kernel: answers that call the engine or run away fail, honest
answers that mutate their inputs score in full.

Each graded call runs in a child process (ssa_course.grading.sandbox): these tests run
the exercises' cells as a kernel does (the harness of test_exercise_fakes) with answers
that reach the engine in roundabout ways (a reloaded module, a signal handler, threads),
start programs or processes, or eat memory and time, and check that each fails its test
cell, against the visible tests *and* the hidden ones, with one line that says what
happened. That is advice for the learner, not what grades rest on: at grading time every
line a student wrote runs in the grading sandbox (tests/test_grading_boundary.py). A
correct answer that changes the data it is given (``join`` doing ``a[k] |= b[k]`` and
returning ``a``) must pass: every call gets data no earlier call has touched.
"""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from test_exercise_fakes import NOTEBOOKS, ROOT, _cells, _graded_of, outcome, tasks

from ssa_course.grading.sandbox import can_isolate

pytestmark = pytest.mark.skipif(not can_isolate(), reason="grading children need Linux")

_LEADERS = "Function('f', [], None, list(body))"

# (notebook, answer cell, label, code, what the message must say). A program, a process
# or a thread is refused by the child's seccomp filter (it would outlive the child's
# limits); a call of the engine gets the watch's advice.
CHEATS = [
    ("01-quads.ipynb", "leaders", "settrace", f"""
import sys
from ssa_course.quads.cfg import find_leaders
def leaders(body):
    sys.settrace(None)
    return find_leaders({_LEADERS})
""", "calls ssa_course's own find_leaders"),
    ("01-quads.ipynb", "leaders", "a thread started at the top level", f"""
import queue, threading
from ssa_course.quads.cfg import find_leaders
_jobs, _answers = queue.Queue(), queue.Queue()
def _serve():
    while True:
        body = _jobs.get()
        _answers.put(find_leaders({_LEADERS}))
threading.Thread(target=_serve, daemon=True).start()
def leaders(body):
    _jobs.put(body)
    return _answers.get(timeout=1)
""", "Empty"),
    ("01-quads.ipynb", "leaders", "a thread of its own", f"""
import threading
from ssa_course.quads.cfg import find_leaders
def leaders(body):
    out = []
    t = threading.Thread(target=lambda: out.append(find_leaders({_LEADERS})))
    t.start()
    t.join()
    return out[0]
""", "can't start new thread"),
    ("01-quads.ipynb", "leaders", "_thread directly", f"""
import _thread, time
from ssa_course.quads.cfg import find_leaders
def leaders(body):
    out = []
    _thread.start_new_thread(lambda: out.append(find_leaders({_LEADERS})), ())
    while not out:
        time.sleep(0.01)
    return out[0]
""", "can't start new thread"),
    ("01-quads.ipynb", "leaders", "a signal handler that fires after the answer", f"""
import signal
from ssa_course.quads.cfg import find_leaders
def leaders(body):
    def later(*args):
        print("the handler ran", find_leaders({_LEADERS}))
    signal.signal(signal.SIGALRM, later)
    signal.setitimer(signal.ITIMER_REAL, 0.001)
    return [0]
""", ("wrong leaders", "calls ssa_course's own find_leaders")),  # when the timer fires
    # first: under load 1 ms can end before the answer has returned
    ("01-quads.ipynb", "leaders", "a new import of the engine", f"""
import sys
def leaders(body):
    sys.modules.pop("ssa_course.quads.cfg_copy", None)
    import importlib
    m = importlib.import_module("ssa_course.quads.cfg")
    importlib.reload(m)
    return m.find_leaders({_LEADERS})
""", "calls ssa_course's own"),
    ("01-quads.ipynb", "leaders", "python -c", """
import subprocess, sys
def leaders(body):
    out = subprocess.run([sys.executable, "-c", "print([0])"], capture_output=True, text=True)
    return eval(out.stdout)
""", "Operation not permitted"),
    ("01-quads.ipynb", "leaders", "os.fork", """
import os
def leaders(body):
    if os.fork() == 0:
        os._exit(0)
    return [0]
""", "Operation not permitted"),
    ("02-peepholes.ipynb", "fold_constant", "python -c", """
import subprocess, sys
def fold_constant(op, a, b):
    code = f"from ssa_course.quads.fold import fold; print(repr(fold({op!r}, {a!r}, {b!r})))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return eval(out.stdout)
""", "Operation not permitted"),
    ("02-peepholes.ipynb", "fold_constant", "the ssa-course command line", """
import subprocess, sys, tempfile
def fold_constant(op, a, b):
    with tempfile.NamedTemporaryFile("w", suffix=".tiny", delete=False) as f:
        f.write(f"fn main() {{ print({a} {op} {b}); }}")
    out = subprocess.run([sys.executable, "-m", "ssa_course", "run", f.name],
                         capture_output=True, text=True)
    return int(out.stdout)
""", "Operation not permitted"),
    ("10-escape.ipynb", "glyphs", "the command line's escape listing", """
import subprocess, sys
def glyphs(fn):
    out = subprocess.run([sys.executable, "-m", "ssa_course", "--help"], capture_output=True)
    return {}
""", "Operation not permitted"),
    ("11-codegen.ipynb", "interference", "the command line's interference", """
import os
def interference(blocks, live_out):
    os.popen("ssa-course --help").read()
    return set()
""", "Operation not permitted"),
]


@pytest.mark.parametrize("name,answer,label,code,says", CHEATS,
                         ids=[f"{c[0][:2]}-{c[1]}-{c[2]}" for c in CHEATS])
def test_a_cheat_fails_on_visible_and_hidden_tests(name, answer, label, code, says):
    graded = _graded_of(name, answer)
    for released in (True, False):
        verdict = outcome(name, graded, {answer: code}, released=released)
        assert verdict is not None, f"the cheat scores ({'visible' if released else 'hidden'})"
        first = verdict.splitlines()[0]  # one line, then the input: not a traceback
        assert any(n in first for n in ((says,) if isinstance(says, str) else says)), verdict
        assert "Traceback" not in verdict, verdict


def test_a_memory_hungry_answer_is_stopped_and_the_grader_survives():
    code = """
def unreachable(succs, entry):
    return "x" * (3 << 30)
"""
    verdict = outcome("01-quads.ipynb", "test_unreachable", {"unreachable": code},
                      released=True)
    assert verdict is not None and "used more than 2 GB of memory" in verdict, verdict
    code = """
import itertools
def unreachable(succs, entry):
    return list(itertools.count())
"""
    verdict = outcome("01-quads.ipynb", "test_unreachable", {"unreachable": code},
                      released=True)  # whichever limit it meets first
    assert verdict is not None and ("used more than 2 GB" in verdict
                                    or "did not finish in 10 s" in verdict), verdict


def test_a_fork_bomb_is_refused():
    code = """
import os
def unreachable(succs, entry):
    while True:
        os.fork()
"""
    verdict = outcome("01-quads.ipynb", "test_unreachable", {"unreachable": code},
                      released=True)
    assert verdict is not None and "PermissionError: [Errno 1] Operation not permitted" \
        in verdict, verdict


def test_an_endless_loop_that_swallows_every_interruption_is_stopped():
    code = """
def unreachable(succs, entry):
    while True:
        try:
            while True:
                pass
        except BaseException:
            pass
"""
    verdict = outcome("01-quads.ipynb", "test_unreachable", {"unreachable": code},
                      released=True)
    assert verdict is not None and "did not finish in 10 s" in verdict, verdict


# ---------------------------------------------------------------- answers that mutate

_MUTATE = '''
def _reach(value, seen):
    work = [value]
    while work:
        v = work.pop()
        if id(v) in seen or not isinstance(v, (dict, list, set, tuple, frozenset)):
            continue
        seen.add(id(v))
        work.extend(v.items() if isinstance(v, dict) else v)

def _scramble(value, keep):
    work = [value]
    while work:
        v = work.pop()
        if id(v) in keep:
            continue
        keep.add(id(v))
        if isinstance(v, dict):
            work.extend(v.values())
            v.clear()
        elif isinstance(v, (list, set)):
            work.extend(v)
            v.clear()
        elif isinstance(v, tuple):
            work.extend(v)

def _mutating(honest):
    """The honest answer, which then destroys every container it was given (except
    what its answer holds)."""
    def answer(*args, **kwargs):
        result = honest(*args, **kwargs)
        keep = set()
        _reach(result, keep)
        for arg in (*args, *kwargs.values()):
            _scramble(arg, keep)
        return result
    return answer
'''


def _mutating_answers() -> list[tuple[str, str, str]]:
    out = []
    for name in NOTEBOOKS:
        for kind, gid, src in _cells("solutions", name):
            if kind != "answer":
                continue
            functions = re.findall(r"^def (\w+)\(", src, flags=re.M)
            wrap = "\n".join(f"{f} = _mutating({f})" for f in functions)
            out.append((name, gid, f"{src}\n{_MUTATE}\n{wrap}\n"))
    return out


MUTATING = _mutating_answers()


@pytest.mark.parametrize("name,answer,code", MUTATING, ids=[f"{m[0][:2]}-{m[1]}" for m in MUTATING])
def test_a_correct_answer_that_destroys_its_inputs_passes(name, answer, code):
    graded = _graded_of(name, answer)
    assert outcome(name, graded, {answer: code}, released=True) is None
    assert outcome(name, graded, {answer: code}) is None


def test_every_task_has_a_mutating_answer():
    assert {(n, a) for n, a, _ in MUTATING} == {(n, a) for n in NOTEBOOKS for a, _ in tasks(n)}


def test_join_that_updates_its_first_state_in_place_passes():
    code = """
def join(a, b):
    for k, v in b.items():
        if k in a:
            a[k] |= v
        else:
            a[k] = set(v)
    return a
"""
    graded = _graded_of("10-escape.ipynb", "join")
    solution = dict((gid, src) for kind, gid, src in _cells("solutions", "10-escape.ipynb")
                    if kind == "answer")["join"]
    if "|=" not in code or "def join" not in solution:
        pytest.fail("the test lost its point")
    assert outcome("10-escape.ipynb", graded, {"join": code}, released=True) is None
    assert outcome("10-escape.ipynb", graded, {"join": code}) is None


# ---------------------------------------------------------------- what students install


def test_the_wheel_holds_the_package_and_no_solutions(tmp_path):
    # built as a student's pip would (in its own build environment: it fetches setuptools)
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
                             "-w", str(tmp_path), str(ROOT)],
                            capture_output=True, text=True, timeout=600)
    if result.returncode != 0 and re.search(r"Could not find a version|No matching distrib"
                                            r"|NewConnectionError|Network is unreachable",
                                            result.stderr):
        pytest.skip("no package index to fetch the build backend from")
    assert result.returncode == 0, result.stderr[-2000:]
    (wheel,) = Path(tmp_path).glob("ssa_course-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "ssa_course/grading/sandbox.py" in names
    for folder in ("solutions/", "exercises/", "notebooks/", "tests/", "tools/", "source/"):
        assert not any(n.startswith(folder) or f"/{folder}" in n for n in names), folder
    assert not any(n.endswith(".ipynb") for n in names)


def test_every_intro_says_what_is_checked_with_the_grader_s_own_numbers():
    import nbformat

    from ssa_course.grading.check import DEFAULT_TIME_LIMIT
    from ssa_course.grading.sandbox import MEMORY_GB

    for name in NOTEBOOKS:
        for folder in ("solutions", "exercises"):
            intro = nbformat.read(ROOT / folder / name, as_version=4).cells[0].source
            assert "**What is checked, and how.**" in intro, (folder, name)
            assert f"{DEFAULT_TIME_LIMIT:g} s and {MEMORY_GB:g} GB of memory" in intro, name
            assert "runs in a separate process" in intro, name


# ---------------------------------------------------------------- the child itself


def test_no_expected_answer_is_ever_in_the_child(capsys):
    import os

    from ssa_course.grading import check_against

    computed: list[int] = []  # the reference's calls, as the process that made them saw

    def reference(n: int) -> int:
        computed.append(n)
        return n * n

    def answer(n: int) -> int:
        print(f"child {os.getpid()} saw {len(computed)} expected answers")
        return n * n

    check_against(answer, reference, [3, 1, 2])
    assert computed == [3, 1, 2]  # in this process (equal sizes keep their order)
    printed = capsys.readouterr().out
    assert printed.count("saw 0 expected answers") == 3, printed  # shown by the parent
    assert f"child {os.getpid()} " not in printed  # and run elsewhere


def test_answers_cross_back_as_data_only():
    from ssa_course.grading import sandbox

    class Mine:
        def __reduce__(self):  # would run in the grader if it were unpickled there
            return (print, ("unpickled in the grader",))

    outcome = sandbox.call(lambda: [Mine()])
    assert outcome.kind == "died" and "could not be read back" in outcome.text
    assert sandbox.call(lambda: {"a": [1, (2, 3)], "b": {4}}).value == {"a": [1, (2, 3)],
                                                                        "b": {4}}


def test_autograding_kernels_shut_the_instructor_s_files_away(tmp_path, monkeypatch):
    """make_course's configuration runs every autograding kernel in the sandbox
    (grading/nbgrader_box.py): a notebook that reads the course's source/ at its top level
    (to copy a solution, or the hidden tests) finds nothing there, cannot write into the
    package, and cannot start a process."""
    pytest.importorskip("nbgrader")
    import json as _json

    import nbformat
    from nbgrader.api import Gradebook
    from nbgrader.apps import NbGraderAPI
    from traitlets.config.loader import PyFileConfigLoader

    for var in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "IPYTHONDIR"):
        monkeypatch.setenv(var, str(tmp_path / var.lower()))
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + ":" + __import__("os")
                       .environ["PATH"])
    course = tmp_path / "course"
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "make_course.py"), "--out",
                           str(course), "--exchange", str(tmp_path / "exchange"),
                           "--assignments", "01-quads"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "nbgrader_box.BoxedExecute" in (course / "nbgrader_config.py").read_text()
    cfg = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    cfg.GenerateAssignment.force = True
    api = NbGraderAPI(config=cfg)
    assert api.generate_assignment("01-quads")["success"]
    snoop = '''
import json
try:
    _nb = json.load(open("../../../source/01-quads/01-quads.ipynb"))
    print("read the source")
except OSError as e:
    print(type(e).__name__, e.errno)
    _nb = {"cells": []}
for _cell in _nb["cells"]:
    if "def leaders" in "".join(_cell["source"]):
        exec("".join(_cell["source"]).replace("### BEGIN SOLUTION", ""))
import os, ssa_course
try:  # something the regrade that follows would import
    open(os.path.join(os.path.dirname(ssa_course.__file__), "planted.py"), "w").close()
    print("wrote into the package")
except OSError as e:
    print(type(e).__name__, e.errno)
try:  # a process that outlives the kernel
    if os.fork() == 0:
        os._exit(0)
    print("forked")
except OSError as e:
    print(type(e).__name__, e.errno)
'''
    nb = nbformat.read(course / "release" / "01-quads" / "01-quads.ipynb", as_version=4)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "leaders":
            cell.source = snoop
    folder = course / "submitted" / "snooper" / "01-quads"
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / "01-quads.ipynb")
    result = api.autograde("01-quads", "snooper")
    assert result["success"], result["log"]
    graded = _json.loads((course / "autograded" / "snooper" / "01-quads" / "01-quads.ipynb")
                         .read_text())
    printed = "".join("".join(o.get("text", "")) for c in graded["cells"]
                      for o in c.get("outputs", []))
    assert "read the source" not in printed
    assert "FileNotFoundError 2" in printed, printed[-2000:]  # no source/ in the sandbox
    assert "wrote into the package" not in printed and "forked" not in printed
    assert "OSError 30" in printed, printed[-2000:]  # EROFS: the package is read-only
    assert "PermissionError 1" in printed, printed[-2000:]  # EPERM: seccomp, no fork
    assert not (ROOT / "ssa_course" / "planted.py").exists()
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        assert gb.find_grade("test_leaders", "01-quads", "01-quads", "snooper").score == 0


def test_a_runaway_recursion_under_the_watch_is_told_as_one():
    # the interpreter may drop a profile function that overflows the stack
    code = "def liveness(blocks, succs):\n    return liveness(blocks, succs)\n"
    for released in (True, False):
        verdict = outcome("11-codegen.ipynb", "test_liveness", {"liveness": code},
                          released=released)
        assert verdict is not None and "called itself too deeply (RecursionError)" in verdict
