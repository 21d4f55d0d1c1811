"""Build a ready nbgrader course directory from ``solutions/`` (``make course``).

    python tools/make_course.py                       # out/course, exchange out/exchange
    python tools/make_course.py --out /srv/ssa --exchange /srv/nbgrader/exchange
    python tools/make_course.py --assignments 01-quads,06-types-and-peepholes

The result, for the instructor's account (docs/instructors.md says what to run next):

* ``<out>/nbgrader_config.py``: course id, course root, the exchange directory, a cell
  timeout for autograding, students created on first autograde, and feedback without
  hidden tests;
* ``<out>/source/<assignment>/<assignment>.ipynb``: one assignment per exercise notebook,
  copied from ``solutions/`` (the nbgrader source version: solutions and hidden tests);
* ``<out>/student_nbgrader_config.py``: what students' accounts need to fetch and submit
  (the same course id and exchange); on a shared machine it goes to
  ``/etc/jupyter/nbgrader_config.py``;
* ``<out>/instructor_nbgrader_config.py``: for grading in JupyterLab's Formgrader on a hub,
  the instructor's ``~/.jupyter/nbgrader_config.py`` (this course's root and settings);
* the exchange directory, created world-writable with the sticky bit (``1777``, like
  ``/tmp``) so every student can submit but nobody can remove another's files.

Existing source notebooks are replaced; the gradebook, releases and submissions of an
existing course are left alone. Exit status 0 on success, 1 on a usage error.
"""

from __future__ import annotations

import argparse
import re
import shutil
import stat
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_COURSE_ID = "ssa_course"
CELL_TIMEOUT = 120  # seconds per cell while autograding; check_against stops a case at 10
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")

CONFIG = '''\
# nbgrader configuration of the {course_id} course (written by tools/make_course.py).
# Run nbgrader commands from this directory (see docs/instructors.md).
c = get_config()  # noqa: F821 - nbgrader provides it

c.CourseDirectory.course_id = {course_id!r}
c.CourseDirectory.root = {root!r}
# Where release/fetch/submit/collect meet: shared by the instructor and every student.
c.Exchange.root = {exchange!r}
# A graded cell that runs longer than this is interrupted and scores 0; the rest of the
# notebook is still graded. (check_against also stops each case after 10 s.)
c.ExecutePreprocessor.timeout = {timeout}
# Grade submissions of students who are not in the gradebook yet (submitted/<name>/).
c.Autograde.create_student = True
# Feedback shows the graded notebook without its hidden tests (nbgrader's default keeps
# them): the messages of failed hidden checks stay, their source goes.
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "nbgrader.preprocessors.ClearHiddenTests",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]
# Every line a student wrote runs in a sandbox (bubblewrap: no course files, no
# gradebook, no other submission, no network; docs/grading.md): the kernel that executes
# a submission, and the learner's processes of the regrade, in which the test cells are
# graded again by a process that runs none of the student's code: what a notebook does
# to the grader inside its kernel does not count.
c.Autograde.autograde_preprocessors = [
    "ssa_course.grading.nbgrader_box.BoxedExecute",
    "ssa_course.grading.nbgrader_regrade.RegradeOutsideKernel",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades",
    "ssa_course.grading.nbgrader_regrade.FlagForManualGrade",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]
'''

INSTRUCTOR_CONFIG = '''\
# nbgrader configuration for the instructor's account on a hub: copy to the instructor's
# ~/.jupyter/nbgrader_config.py so Formgrader (in their JupyterLab) finds this course.
c = get_config()  # noqa: F821 - nbgrader provides it

c.CourseDirectory.root = {root!r}
load_subconfig({config!r})  # noqa: F821 - the course's own settings
'''

STUDENT_CONFIG = '''\
# nbgrader configuration for students' accounts: copy to /etc/jupyter/nbgrader_config.py
# (or ~/.jupyter/nbgrader_config.py of each student) so fetch and submit find the course.
c = get_config()  # noqa: F821 - nbgrader provides it

c.CourseDirectory.course_id = {course_id!r}
c.Exchange.root = {exchange!r}
'''


def build_course(out: Path, exchange: Path, course_id: str = DEFAULT_COURSE_ID,
                 assignments: list[str] | None = None, solutions: Path = ROOT / "solutions",
                 timeout: int = CELL_TIMEOUT) -> list[str]:
    """Write the course directory; returns the assignment names it holds."""
    available = {p.stem: p for p in sorted(solutions.glob("*.ipynb"))}
    names = assignments or sorted(available)
    unknown = [n for n in names if n not in available]
    if unknown:
        raise ValueError(f"no exercise named {', '.join(unknown)} in {solutions} "
                         f"(there are: {', '.join(sorted(available))})")
    if not _ID.match(course_id):
        raise ValueError(f"course id {course_id!r}: use letters, digits, '_', '-', '.'")
    out, exchange = out.resolve(), exchange.resolve()
    for name in names:
        folder = out / "source" / name
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(available[name], folder / f"{name}.ipynb")
    (out / "nbgrader_config.py").write_text(CONFIG.format(
        course_id=course_id, root=str(out), exchange=str(exchange), timeout=timeout))
    (out / "student_nbgrader_config.py").write_text(STUDENT_CONFIG.format(
        course_id=course_id, exchange=str(exchange)))
    (out / "instructor_nbgrader_config.py").write_text(INSTRUCTOR_CONFIG.format(
        root=str(out), config=str(out / "nbgrader_config.py")))
    _make_exchange(exchange)
    return names


def _make_exchange(exchange: Path) -> None:
    """Create the exchange: everyone may write, only owners may delete (mode 1777)."""
    exchange.mkdir(parents=True, exist_ok=True)
    try:
        exchange.chmod(stat.S_IRWXU | stat.S_IRWXG | stat.S_IRWXO | stat.S_ISVTX)
    except PermissionError:  # someone else's directory: leave its mode to its owner
        print(f"note: could not make {exchange} world-writable; see docs/instructors.md",
              file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "out" / "course",
                        help="the course directory to write (default: out/course)")
    parser.add_argument("--exchange", type=Path, default=None,
                        help="the exchange directory (default: <out>/../exchange)")
    parser.add_argument("--course-id", default=DEFAULT_COURSE_ID)
    parser.add_argument("--assignments", default="",
                        help="comma-separated exercise names (default: all of solutions/)")
    parser.add_argument("--timeout", type=int, default=CELL_TIMEOUT,
                        help="seconds per cell while autograding (default: %(default)s)")
    ns = parser.parse_args(argv)
    exchange = ns.exchange or ns.out.resolve().parent / "exchange"
    wanted = [a.strip() for a in ns.assignments.split(",") if a.strip()] or None
    try:
        names = build_course(ns.out, exchange, ns.course_id, wanted, timeout=ns.timeout)
    except (ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"course '{ns.course_id}' in {ns.out.resolve()} with {len(names)} assignments: "
          f"{', '.join(names)}\nexchange: {exchange.resolve()}\n"
          f"next: cd {ns.out} && nbgrader generate_assignment {names[0]} --force")
    return 0


if __name__ == "__main__":
    sys.exit(main())
