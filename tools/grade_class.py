"""Autograde a class on a Dask cluster; one process writes the gradebook (docs/instructors.md).

    python tools/grade_class.py out/course 03-ssa                      # 2 local workers
    python tools/grade_class.py out/course 03-ssa --workers 4 --students alice,bob
    python tools/grade_class.py out/course 03-ssa --scheduler tcp://grader1:8786

Each (student, assignment) autograde is a task of a Dask ``distributed`` cluster: a
``LocalCluster`` of ``--workers`` processes by default, or the workers of the scheduler at
``--scheduler`` (started with ``dask scheduler`` / ``dask worker ADDR --nthreads 1`` on
machines with the same environment: ssa_course, nbgrader, bubblewrap). A worker grades a
scratch copy of one submission with plain nbgrader autograde, sandboxed as always, and
sends back the outputs and scores as data; this process records them in the course's
gradebook and writes ``autograded/`` through nbgrader's own autograde
(``ssa_course.grading.classgrade``). Exit status 0 when every student was graded, 1 if
any failed (each failure is printed), 2 on a usage error.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("course", type=Path, help="the course directory (nbgrader_config.py)")
    parser.add_argument("assignment")
    parser.add_argument("--students", help="comma-separated student ids (default: every "
                                           "one with a submission in submitted/)")
    parser.add_argument("--workers", type=int, default=2,
                        help="worker processes of the local cluster (default 2)")
    parser.add_argument("--scheduler", help="a running Dask scheduler, tcp://host:8786 "
                                            "(then --workers is ignored)")
    args = parser.parse_args(argv)
    if not (args.course / "nbgrader_config.py").is_file():
        print(f"error: {args.course} has no nbgrader_config.py", file=sys.stderr)
        return 2
    if args.workers < 1:
        print("error: --workers must be at least 1", file=sys.stderr)
        return 2
    from ssa_course.grading.classgrade import grade_class, students_of

    students = args.students.split(",") if args.students else students_of(
        args.course.resolve(), args.assignment)
    if not students:
        print(f"error: no submissions of {args.assignment} in {args.course}/submitted",
              file=sys.stderr)
        return 2
    where = args.scheduler or f"a local cluster of {args.workers} worker processes"
    print(f"autograding {len(students)} submissions of {args.assignment} on {where}",
          flush=True)
    report = grade_class(args.course, args.assignment, students, args.workers,
                         args.scheduler, say=lambda line: print(line, flush=True))
    print(f"{len(report.graded)} graded, {len(report.failed)} failed, "
          f"{report.wall:.1f} s wall clock")
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
