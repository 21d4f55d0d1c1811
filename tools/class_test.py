"""``make class-test``: a real class on a real JupyterHub, end to end (run as root).

One instructor and three students get Unix accounts; JupyterHub (PAM logins, every server
running as its own user) serves them on 127.0.0.1; each person logs in with their password
and drives nbgrader through their own server, exactly the requests JupyterLab's nbgrader
panels send:

* the instructor (Formgrader's API): generate and release the assignment;
* the students (the Assignment List's API): fetch it, write their answers through the
  contents API, submit -- ``mallory`` an attacker (graded first: she tries to write the
  gradebook, overwrite and rename ``victor``'s submission and read the hidden tests),
  ``alice`` correct, ``bob`` with one wrong task, ``carol`` with a cheat (her ``leaders``
  calls the engine's own ``find_leaders``, and her notebook rebinds ``check_against`` and
  ``guard``, so her own kernel's test cells raise nothing), ``victor`` correct;
* the instructor: collect, autograde each submission, generate and release feedback;
* the students: fetch their feedback.

Then it checks: the grades (alice and victor full marks, mallory 0, none of her attacks
worked, bob exactly the wrong task's points fewer,
carol less than full marks, at least the cheated task's points fewer -- true of today's
grader, which refuses the engine in that task, and of a stricter one that scores the
cheat 0); that the feedback shows no hidden test source;
that each student sees only their own files (other homes, the exchange's inbound and
feedback folders and the instructor's course are closed to them); that a wrong password is
refused; and that ``fetch`` without a course config fails with the message
``docs/instructors.md`` quotes. Accounts are removed at the end (and leftovers of an
interrupted run at the start), so the test can run again at once. Exit 0 when every check
holds, 1 with one line per failed check, 2 on a set-up error.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from classroom import accounts, environment

try:  # JupyterHub and its client side (requests): the `class` extra of the project
    import jupyterhub
    from classroom.hub import Hub, HubError, Person, write_role_configs
except ImportError as missing:
    NOT_INSTALLED: ImportError | None = missing
    Hub = Person = None  # type: ignore[assignment,misc]
    HubError = RuntimeError  # type: ignore[assignment,misc]
else:
    NOT_INSTALLED = None
from classroom.notebooks import answered, answers_of, hidden_lines

ROOT = Path(__file__).resolve().parent.parent
COURSE_ID = "ssa_course"
NO_CONFIG = "Unwritable directory, please contact your instructor: "
# mallory attacks, graded first: she writes the gradebook, overwrites and renames victor's
# submission (collected before anyone is graded) and reads the hidden tests, from her
# notebook's top level (the kernel) and from inside her answers (the regrade's processes).
ATTACK = """
import os, shutil, sqlite3
def _attack():
    for _try in (
        lambda: sqlite3.connect('{course}/gradebook.db').execute(
            'update grade set manual_score = 100').connection.commit(),
        lambda: shutil.copy('{course}/release/{a}/{a}.ipynb',
                            '{course}/submitted/{victim}/{a}/{a}.ipynb'),
        lambda: os.rename('{course}/submitted/{victim}/{a}/{a}.ipynb', '/tmp/stolen.ipynb'),
        lambda: print(open('{course}/source/{a}/{a}.ipynb').read()[:100])):
        try:
            _try()
            print('ATTACK WORKED')
        except Exception:
            pass
_attack()
"""
STUB = "def {name}(*args):\n    _attack()\n    raise NotImplementedError\n"
CHANGES = {  # student -> {grade_id of an answer cell: its code}; alice has none
    "mallory": {"leaders": ATTACK + STUB.format(name="leaders"),
                "successors": STUB.format(name="successors"),
                "unreachable": STUB.format(name="unreachable")},
    "alice": {},
    "bob": {"unreachable": "def unreachable(succs, entry):\n    return set()  # forgot it\n"},
    "carol": {"leaders": "from ssa_course.quads.cfg import find_leaders\n"
                         "from ssa_course.quads.ir import Function\n"
                         "import ssa_course.grading.check as _c, ssa_course.grading.forbid as _f\n"
                         "# her kernel's test cells then raise nothing (the regrade decides)\n"
                         "check_against = _c.check_against = lambda *a, **k: None\n"
                         "guard = _f.guard = lambda fn, **k: fn\n\n"
                         "def leaders(body):  # the engine's own answer\n"
                         "    return find_leaders(Function('f', [], None, body))\n"},
    "victor": {},  # correct; mallory's victim, graded last
}


FORMGRADER = "nbgrader.server_extensions.formgrader"  # the instructor's alone: server side
LAB_PLUGINS = ["@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment"]


class Run:
    """The class: accounts, the hub, and the checks that failed so far."""

    def __init__(self, ns: argparse.Namespace) -> None:
        self.ns, self.failures, self.t0 = ns, [], time.monotonic()
        self.base = Path(ns.dir)
        self.exchange, self.jupyter = self.base / "exchange", self.base / "jupyter"
        self.hub = Hub(self.base / "hub")
        self.names = {r: f"{ns.prefix}-{r}" for r in ["teacher", *CHANGES]}
        self.accounts: dict[str, accounts.Account] = {}

    def say(self, text: str) -> None:
        print(f"[class-test {time.monotonic() - self.t0:6.1f}s] {text}", flush=True)

    def check(self, ok: bool, what: str) -> None:
        print(f"  {'ok  ' if ok else 'FAIL'} {what}", flush=True)
        if not ok:
            self.failures.append(what)

    # ------------------------------------------------------------------ set-up
    def set_up(self) -> None:
        self.base.mkdir(parents=True, exist_ok=True)
        self.base.chmod(0o755)
        self.say(f"class environment in {self.base / 'env'} (first run: a few minutes)")
        self.bin = environment.build(self.base / "env", ROOT, jupyterhub.__version__,
                                     self.base / "env.log")
        self.hub.stop_leftover()
        for folder in (self.exchange, self.hub.state, self.jupyter):
            shutil.rmtree(folder, ignore_errors=True)
        self.say("accounts: " + ", ".join(self.names.values()))
        for role, name in self.names.items():
            self.accounts[role] = accounts.create(name)
        teacher = self.accounts["teacher"]
        self.course = teacher.home / "course"
        made = subprocess.run(
            [sys.executable, str(ROOT / "tools" / "make_course.py"), "--out", str(self.course),
             "--exchange", str(self.exchange), "--assignments", self.ns.assignment],
            capture_output=True, text=True)
        if made.returncode != 0:
            raise accounts.AccountError(f"make_course.py: {made.stderr.strip()}")
        dot_jupyter = teacher.home / ".jupyter"
        dot_jupyter.mkdir()
        shutil.copy(self.course / "instructor_nbgrader_config.py",
                    dot_jupyter / "nbgrader_config.py")
        accounts.give(teacher, teacher.home)
        # Each role's system-wide Jupyter config (/etc/jupyter/ on a one-role machine).
        write_role_configs(self.jupyter, self.course / "student_nbgrader_config.py",
                           {FORMGRADER}, LAB_PLUGINS)

    def start_hub(self) -> None:
        self.say(f"JupyterHub (log: {self.hub.log})")
        self.hub.start(Path(sys.executable).parent / "jupyterhub", Path(self.ns.proxy),
                       list(self.names.values()), [self.names["teacher"]], self.bin,
                       self.jupyter)
        self.people = {r: Person(self.hub, a.name, a.password)
                       for r, a in self.accounts.items()}
        self.check(self.people["bob"].login("not-his-password") != 302,
                   "a wrong password is refused at the hub's login")
        for person in self.people.values():
            status = person.login()
            if status != 302:
                raise HubError(f"{person.name} could not log in (HTTP {status})")
        self.say("servers start (each as its own Unix user)")
        for person in self.people.values():
            person.request("POST", f"/hub/api/users/{person.name}/server")
        for person in self.people.values():
            person.start_server()

    # --------------------------------------------------------------- the loop
    def formgrader(self, action: str) -> dict:
        r = self.people["teacher"].server("POST", f"formgrader/api/{action}").json()
        if not r.get("success"):
            raise HubError(f"formgrader {action}: {r.get('error') or r.get('log')}")
        return r

    def assignments(self, role: str, action: str) -> dict:
        data = {"course_id": COURSE_ID, "assignment_id": self.ns.assignment}
        r = self.people[role].server("POST", f"assignments/{action}", data=data).json()
        if isinstance(r, dict) and r.get("success") is False:
            raise HubError(f"{role}: {action}: {str(r.get('value'))[-300:]}")
        return r

    def loop(self) -> None:
        a = self.ns.assignment
        self.say("instructor: generate and release")
        self.formgrader(f"assignment/{a}/assign")
        self.formgrader(f"assignment/{a}/release")
        source = json.loads((self.course / "source" / a / f"{a}.ipynb").read_text())
        correct = answers_of(source)
        for role, changes in CHANGES.items():
            self.say(f"{role}: fetch, answer, submit")
            student = self.people[role]
            self.assignments(role, "fetch")
            path = f"api/contents/{a}/{a}.ipynb"
            released = student.server("GET", path).json()["content"]
            changes = {k: v.replace("{course}", str(self.course)).replace("{a}", a)
                       .replace("{victim}", self.names["victor"]) for k, v in changes.items()}
            student.server("PUT", path, json={
                "type": "notebook", "format": "json",
                "content": answered(released, {**correct, **changes})})
            self.assignments(role, "submit")
        self.say("instructor: collect, autograde, generate and release feedback")
        self.formgrader(f"assignment/{a}/collect")
        for role in CHANGES:
            self.formgrader(f"submission/{a}/{self.names[role]}/autograde")
        self.formgrader(f"assignment/{a}/generate_feedback")
        self.formgrader(f"assignment/{a}/release_feedback")
        self.say("students: fetch feedback")
        for role in CHANGES:
            self.assignments(role, "fetch_feedback")
        self.check_grades(source)
        self.check_feedback(source)

    # ---------------------------------------------------------------- checks
    def check_grades(self, source: dict) -> None:
        a = self.ns.assignment
        got = {s["student"]: s for s in
               self.people["teacher"].server("GET", f"formgrader/api/submissions/{a}").json()}
        full = sum(c["metadata"]["nbgrader"]["points"] for c in source["cells"]
                   if c["metadata"].get("nbgrader", {}).get("grade"))
        lost, cheated = (sum(c["metadata"]["nbgrader"]["points"] for c in source["cells"]
                             if c["metadata"].get("nbgrader", {}).get("grade")
                             and re.search(rf"\b{task}\b", "".join(c["source"])))
                         for task in ("unreachable", "leaders"))
        score = {r: got.get(self.names[r], {}).get("score") for r in CHANGES}
        self.say(f"scores out of {full}: {score}")
        self.check(set(got) == {self.names[r] for r in CHANGES},
                   f"the gradebook holds exactly the {len(CHANGES)} students (has {sorted(got)})")
        self.check(score["alice"] == full, f"alice (correct) has full marks: {score['alice']}")
        self.check(score["victor"] == full,
                   f"victor (correct, attacked by mallory) has full marks: {score['victor']}")
        self.check(score["mallory"] == 0, f"mallory (an attacker) scores 0: {score['mallory']}")
        self.check(not Path("/tmp/stolen.ipynb").exists(), "victor's notebook was not moved")
        graded = self.course / "autograded" / self.names["mallory"] / a / f"{a}.ipynb"
        outputs = json.dumps([c.get("outputs", []) for c in
                              json.loads(graded.read_text())["cells"]]) if graded.exists() else ""
        self.check(graded.exists() and "ATTACK WORKED" not in outputs,
                   "no attack of mallory's worked (her autograded notebook's outputs say so)")
        self.check(score["bob"] == full - lost,
                   f"bob (one wrong task) loses exactly its {lost} points: {score['bob']}")
        # Less than full marks, at least the cheated task's points fewer: true of today's
        # grader (it refuses the engine in that task) and of one that scores a cheat 0.
        self.check(score["carol"] is not None and score["carol"] <= full - cheated,
                   f"carol (a cheat) has less than full marks, at least the {cheated} points "
                   f"of leaders fewer: {score['carol']}")

    def check_feedback(self, source: dict) -> None:
        secret = hidden_lines(source)
        for role in CHANGES:
            page = self.feedback_page(role)
            text = html.unescape(re.sub(r"<[^>]+>", "", page))  # the page's words
            leaked = [line for line in secret if line in text]
            self.check(bool(page) and "HIDDEN TESTS" not in page and not leaked,
                       f"{role}'s feedback arrived and holds no hidden test source"
                       + (f" (found {leaked[0]!r})" if leaked else ""))
            self.check("check_against(" in text and "Score" in page,
                       f"{role}'s feedback shows the visible tests and the score")
            if role == "bob":
                self.check("unreachable" in text and "expected" in text.lower(),
                           "bob's feedback says what his unreachable() got wrong")

    def feedback_page(self, role: str) -> str:
        """The newest feedback HTML in the student's ``<assignment>/feedback/<time>/``."""
        a = self.ns.assignment
        runs = self.people[role].listing(f"{a}/feedback")
        return self.people[role].read(f"{a}/feedback/{runs[-1]}/{a}.html") if runs else ""

    def check_privacy(self) -> None:
        course = self.ns.assignment
        closed = {
            "other students' homes": [str(self.accounts[r].home) for r in CHANGES],
            "the instructor's home": [str(self.accounts["teacher"].home)],
            "the exchange's inbound": [str(self.exchange / COURSE_ID / "inbound")],
            "the exchange's feedback": [str(self.exchange / COURSE_ID / "feedback")],
        }
        python = str(self.bin / "python")
        for role in CHANGES:
            me = self.accounts[role]
            paths = [p for ps in closed.values() for p in ps] + [
                str(me.home / course), str(self.exchange / COURSE_ID / "outbound" / course)]
            seen = accounts.listable(me, python, paths)
            for what, ps in closed.items():
                ps = [p for p in ps if p != str(me.home)]
                self.check(all(seen.get(p) == "closed" for p in ps),
                           f"{role} cannot list {what}")
            self.check(seen.get(str(me.home / course)) == "open"
                       and seen.get(paths[-1]) == "open",
                       f"{role} can list their own work and the released assignment")
        where = accounts.run_as(self.accounts["alice"], [python, "-c", (
            "import pathlib, ssa_course\n"
            "print((pathlib.Path(ssa_course.__file__).parents[1] / 'solutions').exists())")])
        self.check(where.stdout.strip() == "False",
                   "the students' ssa_course is an installed package, no solutions/ beside it")

    def check_formgrader_is_the_instructors(self) -> None:
        for role, person in self.people.items():
            status = person.request("GET", f"/user/{person.name}/formgrader/api/status")
            page = person.server("GET", "lab").text
            config = re.search(r'<script id="jupyter-config-data" type="application/json">'
                               r'(.*?)</script>', page, re.S)
            disabled = set(json.loads(config.group(1)).get("disabledExtensions", [])
                           if config else [])
            mine = role == "teacher"
            self.check((status.status_code == 200) == mine
                       and disabled.isdisjoint(LAB_PLUGINS) == mine,
                       f"{role}'s JupyterLab {'has' if mine else 'has no'} Formgrader "
                       f"(HTTP {status.status_code}, Lab plugins off: "
                       f"{sorted(disabled & set(LAB_PLUGINS))})")

    def check_fetch_without_config(self) -> None:
        """``nbgrader fetch_assignment`` by a student whose account has no course config."""
        default = Path("/usr/local/share/nbgrader/exchange")  # nbgrader 0.9's Exchange.root
        if default.exists():
            print(f"  skip fetch without a config: {default} exists on this machine")
            return
        done = accounts.run_as(self.accounts["alice"],
                               [str(self.bin / "nbgrader"), "fetch_assignment",
                                self.ns.assignment], env={"PATH": f"{self.bin}:/usr/bin:/bin"})
        said = (done.stdout + done.stderr).strip().splitlines() or ["no output"]
        line = next((ln for ln in said if NO_CONFIG in ln), said[-1])
        doc = (ROOT / "docs" / "instructors.md").read_text()
        self.check(done.returncode != 0 and f"{NO_CONFIG}{default}" in line
                   and f"{NO_CONFIG}{default}" in doc,
                   f"fetch without a config fails with the message the doc quotes: {line!r}")

    # --------------------------------------------------------------- tear-down
    def tear_down(self) -> None:
        self.hub.stop()
        for name in self.names.values():
            try:
                accounts.remove(name)
            except accounts.AccountError as e:
                print(f"warning: {e}", file=sys.stderr)
        shutil.rmtree(self.exchange, ignore_errors=True)
        shutil.rmtree(self.jupyter, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--proxy", default=str(
        ROOT / "out" / "hub" / "node_modules" / ".bin" / "configurable-http-proxy"),
        help="configurable-http-proxy (make class-test installs it with npm)")
    parser.add_argument("--dir", default="/opt/ssa_course-class-test",
                        help="the class's environment, exchange and hub state "
                             "(every account must be able to reach it)")
    parser.add_argument("--prefix", default="ssa", help="account names: PREFIX-teacher, ...")
    parser.add_argument("--assignment", default="01-quads")
    parser.add_argument("--keep", action="store_true",
                        help="leave the hub running and the accounts in place (Ctrl-C ends)")
    ns = parser.parse_args(argv)
    if os.geteuid() != 0:
        print("error: the class test must run as root (it creates Unix accounts and starts "
              "JupyterHub, which starts each user's server as that user)", file=sys.stderr)
        return 2
    if NOT_INSTALLED is not None:
        print(f"error: {NOT_INSTALLED}: run it as `make class-test`, which installs what it "
              "needs", file=sys.stderr)
        return 2
    if not Path(ns.proxy).exists():
        print(f"error: no configurable-http-proxy at {ns.proxy} (make class-test installs it)",
              file=sys.stderr)
        return 2
    run = Run(ns)
    try:
        run.set_up()
        run.check_fetch_without_config()
        run.start_hub()
        run.check_formgrader_is_the_instructors()
        run.loop()
        run.check_privacy()
        if ns.keep:
            run.say(f"hub at {run.hub.url}; Ctrl-C stops it and removes the accounts")
            while True:
                time.sleep(3600)
    except (accounts.AccountError, environment.ClassEnvError, HubError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        pass
    finally:
        run.say("stopping the hub, removing the accounts")
        run.tear_down()
    if run.failures:
        print(f"class test FAILED: {len(run.failures)} check(s): " + "; ".join(run.failures))
        return 1
    run.say("class test passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
