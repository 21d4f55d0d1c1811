"""Grading at class scale: nbgrader autograde, seconds per submission, per exercise.

For each exercise it builds a course (``tools/make_course.py``), releases the exercise,
writes generated submissions straight into ``submitted/<student>/`` -- correct ones, and
ones where one task is wrong, loops forever or crashes (which task turns round) -- and
autogrades them with nbgrader, ``--jobs`` students at a time (each worker a process of its
own with its own nbgrader API; they share the course's gradebook). It prints a table: the
wall-clock seconds per submission, the mean autograde time of each kind of submission,
where the time goes (the grading processes write their steps to the file named by
``SSA_COURSE_GRADING_TIMES``, ``ssa_course/grading/timing.py``): the sandbox's share --
bubblewrap's start for each kernel and learner's process, measured here against the same
process unsandboxed, homes copied, sandboxed processes stopped and their homes removed --,
the kernel's start, the learner's processes, their start until ready, their calls; the
minutes for ``--class-size`` submissions (a straight extrapolation), and whether every
score is what it must be (full for correct, less for the others). Then the first
exercise's submissions are graded again with ``tools/grade_class.py``'s engine on a Dask
``LocalCluster`` of 1, then 2 workers: the speed-up.

    python benchmarks/grading.py                           # 30 per exercise, 2 at a time
    python benchmarks/grading.py --exercises 10-escape --submissions 8 --jobs 2

Not part of ``make test``: it takes minutes per exercise (``make bench-grading``, and
``make bench`` runs it last).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TIMES_ENV = "SSA_COURSE_GRADING_TIMES"  # ssa_course.grading.timing.ENV

ROOT = Path(__file__).resolve().parent.parent
KINDS = ("correct", "wrong", "looping", "crashing", "correct")  # turned round: 2/5 correct
BROKEN = {
    "wrong": "    return None  # the generated wrong answer\n",
    "looping": "    while True:  # the generated endless loop\n        pass\n",
    "crashing": "    raise ValueError('the generated crash')\n",
}


def _answers(source: Path) -> list[tuple[str, str]]:
    """(grade id, correct code) of each answer cell, nbgrader's markers removed."""
    import nbformat

    out = []
    for cell in nbformat.read(source, as_version=4).cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("solution") and not meta.get("grade"):
            out.append((meta["grade_id"], "\n".join(
                line for line in cell.source.splitlines() if "### " not in line)))
    return out


def submission(released: Path, source: Path, kind: str, task: int) -> object:
    """The released notebook answered: correctly, or with answer ``task`` broken."""
    import nbformat

    nb = nbformat.read(released, as_version=4)
    answers = dict(_answers(source))
    ids = list(answers)
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid not in answers:
            continue
        code = answers[gid]
        if kind != "correct" and gid == ids[task % len(ids)]:
            name = re.search(r"^def (\w+)\((.*?)\):", code, flags=re.M)
            if name:
                code += f"\n\ndef {name.group(1)}({name.group(2)}):\n{BROKEN[kind]}"
        cell.source = code
    return nb


def _config(course: Path):
    from traitlets.config.loader import PyFileConfigLoader

    cfg = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    cfg.GenerateAssignment.force = True
    return cfg


def _worker(course: str, assignment: str, students: list[str]) -> None:
    """Autograde ``students`` one after the other; one JSON line each on stdout."""
    import logging

    from nbgrader.apps import NbGraderAPI

    logging.disable(logging.WARNING)
    api = NbGraderAPI(config=_config(Path(course)))
    for student in students:
        start = time.perf_counter()
        result = api.autograde(assignment, student)
        print(json.dumps({"student": student, "seconds": time.perf_counter() - start,
                          "success": result["success"], "error": result.get("error")}),
              flush=True)


def grade_class(course: Path, assignment: str, students: list[str], jobs: int
                ) -> tuple[float, dict[str, float]]:
    """Autograde with ``jobs`` worker processes: (wall seconds, seconds per student)."""
    groups = [students[i::jobs] for i in range(jobs)]
    start = time.perf_counter()
    workers = [subprocess.Popen([sys.executable, __file__, "--worker", str(course), assignment,
                                 *group], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
               for group in groups if group]
    seconds: dict[str, float] = {}
    for worker in workers:
        out, err = worker.communicate()
        if worker.returncode:
            raise RuntimeError(f"an autograde worker failed:\n{err[-3000:]}")
        for line in out.splitlines():
            if line.startswith("{"):
                row = json.loads(line)
                if not row["success"]:
                    raise RuntimeError(f"autograde of {row['student']} failed: {row['error']}")
                seconds[row["student"]] = row["seconds"]
    return time.perf_counter() - start, seconds


def _scores(course: Path, assignment: str, students: list[str]) -> dict[str, tuple[float, float]]:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        return {s: (gb.find_submission(assignment, s).score,
                    gb.find_submission(assignment, s).max_score) for s in students}


def bench_exercise(tmp: Path, assignment: str, count: int, jobs: int) -> dict:
    import nbformat
    from nbgrader.apps import NbGraderAPI

    course = tmp / assignment
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "make_course.py"), "--out",
                           str(course), "--exchange", str(tmp / f"exchange-{assignment}"),
                           "--assignments", assignment], capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(done.stdout + done.stderr)
    api = NbGraderAPI(config=_config(course))
    result = api.generate_assignment(assignment)
    if not result["success"]:
        raise RuntimeError(result["log"])
    source = course / "source" / assignment / f"{assignment}.ipynb"
    released = course / "release" / assignment / f"{assignment}.ipynb"
    students, kinds = [], {}
    for i in range(count):
        kind = KINDS[i % len(KINDS)]
        student = f"s{i:03d}-{kind}"
        folder = course / "submitted" / student / assignment
        folder.mkdir(parents=True)
        nbformat.write(submission(released, source, kind, i // len(KINDS)),
                       folder / f"{assignment}.ipynb")
        students.append(student)
        kinds[student] = kind
    times = tmp / f"times-{assignment}.tsv"
    os.environ[TIMES_ENV] = str(times)
    try:
        wall, seconds = grade_class(course, assignment, students, jobs)
    finally:
        del os.environ[TIMES_ENV]
    steps = _steps(times)
    scores = _scores(course, assignment, students)
    right = all((score == top) == (kinds[s] == "correct") for s, (score, top) in scores.items())
    per_kind = {}
    for kind in dict.fromkeys(KINDS):
        times = [seconds[s] for s in students if kinds[s] == kind]
        per_kind[kind] = sum(times) / len(times) if times else float("nan")
    return {"assignment": assignment, "count": count, "wall": wall, "per_kind": per_kind,
            "scores_right": right, "steps": steps, "busy": sum(seconds.values())}


def _steps(path: Path) -> dict[str, float]:
    """The grading processes' measured steps (ssa_course.grading.timing), summed."""
    out: dict[str, float] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            what, _, value = line.partition("\t")
            out[what] = out.get(what, 0.0) + float(value)
    return out


def start_cost(repeat: int = 5) -> float:
    """What bubblewrap adds to starting one process: a learner's process's interpreter
    started in the sandbox against the same command without it (median seconds)."""
    from ssa_course.grading import box
    from ssa_course.grading.regrade import _path, grading_copy

    package = grading_copy("01-quads")
    argv = [sys.executable, "-I", "-S", "-c",
            f"import sys; sys.path[:] = {_path(package)!r}; import ssa_course.grading.learner"]

    def median(command: list[str]) -> float:
        took = []
        for _ in range(repeat):
            start = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True)
            took.append(time.perf_counter() - start)
        return sorted(took)[repeat // 2]

    with tempfile.TemporaryDirectory() as home:
        boxed = box.command(argv, box.Box(home=Path(home), package=Path(package)))
        return max(median(boxed) - median(argv), 0.0)


def sandbox_share(row: dict, start: float) -> tuple[float, float]:
    """(seconds per submission the sandbox costs, its share of the autograde time):
    copying homes, stopping sandboxed processes and removing their homes, and bubblewrap's
    start cost for each kernel and learner's process."""
    steps = row["steps"]
    processes = steps.get("learner.process", 0.0) + row["count"]  # + one kernel each
    spent = (sum(steps.get(k, 0.0) for k in ("kernel.home", "kernel.stop", "learner.home",
                                              "learner.stop")) + processes * start)
    return spent / row["count"], spent / max(row["busy"], 1e-9)


def cluster_speedup(tmp: Path, assignment: str, count: int) -> bool:
    """The first ``count`` submissions of ``assignment`` (graded above) graded again with
    ``tools/grade_class.py``'s engine on a LocalCluster of 1, then 2 worker processes:
    the wall clock of each and the speed-up. True when every student was recorded."""
    from ssa_course.grading.classgrade import grade_class as on_cluster
    from ssa_course.grading.classgrade import students_of

    course = tmp / assignment
    students = students_of(course, assignment)[:count]
    print(f"\ntools/grade_class.py (Dask LocalCluster) on {len(students)} submissions of "
          f"{assignment}:")
    walls, ok = {}, True
    for workers in (1, 2):
        report = on_cluster(course, assignment, students, workers, say=lambda line: None)
        ok = ok and not report.failed and len(report.graded) == len(students)
        walls[workers] = report.wall - report.startup
        print(f"  {workers} worker{'s' if workers > 1 else ' '}: {report.wall:6.1f} s wall, "
              f"of which {report.startup:.1f} s starting the cluster; then "
              f"{walls[workers] / len(students):.1f} s per submission (recording in the "
              f"gradebook {report.recording / len(students):.2f} s each)"
              f"{'' if not report.failed else f', {len(report.failed)} FAILED'}", flush=True)
    print(f"  speed-up of 2 workers against 1 (after the start): {walls[1] / walls[2]:.2f}x")
    return ok


def _code_cells(path: Path) -> list[str]:
    import nbformat

    return [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]


def _run_solution(name: str, cells: list[str]) -> float:
    """Every code cell of a solution notebook (hidden tests included), in this process:
    the seconds it took."""
    import contextlib
    import io

    ns: dict = {"__name__": "__main__"}
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        for source in cells:
            exec(compile(source, f"<{name}.ipynb:cell>", "exec"), ns)
    return time.perf_counter() - start


def checker_table(names: list[str]) -> None:
    """The graded cells of each solution, run in this process: each check in a grading
    child (as autograding does) against the same checks in-process (the fallback where
    ``os.fork`` is missing) -- what the isolation costs."""
    from unittest import mock

    from ssa_course.grading import sandbox

    print("\nThe checks of each solution notebook (hidden tests included), in one process "
          "(second run)")
    print(f"{'exercise':<28} {'children':>9} {'in-process':>11} {'ratio':>6}")
    for name in names:
        cells = _code_cells(ROOT / "solutions" / f"{name}.ipynb")
        _run_solution(name, cells)  # first imports and caches, for both
        isolated = _run_solution(name, cells)
        with mock.patch.object(sandbox, "can_isolate", lambda: False):
            plain = _run_solution(name, cells)
        print(f"{name:<28} {isolated:>8.1f}s {plain:>10.1f}s {isolated / plain:>6.2f}",
              flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--exercises", default="all",
                        help="comma-separated exercise names (default: all eleven)")
    parser.add_argument("--submissions", type=int, default=30)
    parser.add_argument("--jobs", type=int, default=2, help="students autograded at a time")
    parser.add_argument("--class-size", type=int, default=200,
                        help="the class size to extrapolate to")
    parser.add_argument("--checks-only", action="store_true",
                        help="only the table of checks with and without grading children")
    parser.add_argument("--cluster-submissions", type=int, default=10,
                        help="grade this many of the first exercise's submissions again with "
                             "tools/grade_class.py on 1, then 2 Dask workers (0: skip)")
    parser.add_argument("--skip-checks", action="store_true",
                        help="leave out the table of checks in one process")
    parser.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        _worker(args.worker[0], args.worker[1], args.worker[2:])
        return 0
    names = sorted(p.stem for p in (ROOT / "solutions").glob("*.ipynb"))
    chosen = names if args.exercises == "all" else args.exercises.split(",")
    unknown = [c for c in chosen if c not in names]
    if unknown or args.submissions < 1 or args.jobs < 1:
        print(f"error: unknown exercise {unknown[0]}" if unknown else
              "error: --submissions and --jobs must be at least 1", file=sys.stderr)
        return 1
    if args.checks_only:
        checker_table(chosen)
        return 0
    print(f"nbgrader autograde: {args.submissions} generated submissions per exercise "
          f"(kinds turn round: {', '.join(KINDS)}), {args.jobs} at a time, "
          f"{os.cpu_count()} CPUs")
    print("s/sub: wall clock per submission; by kind: one autograde's seconds; sandbox: "
          "bubblewrap's start, homes copied,\nprocesses stopped and homes removed, per "
          "submission and its share of autograde time; kernel: its start in the sandbox;\n"
          "learners: learner's processes per submission, their start until ready, their "
          "calls; 200: minutes for the class size")
    print(f"{'exercise':<24} {'s/sub':>6} {'correct':>8} {'wrong':>6} {'looping':>8} "
          f"{'crashing':>9} {'sandbox':>13} {'kernel':>7} {'learners':>9} {'ready':>6} "
          f"{'calls':>6} {args.class_size:>5} {'scores':>6}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="ssa-bench-grading-") as tmp_name:
        tmp = Path(tmp_name)
        env = {"JUPYTER_CONFIG_DIR": "jupyter-config", "JUPYTER_DATA_DIR": "jupyter-data",
               "IPYTHONDIR": "ipython"}
        for var, sub in env.items():
            os.environ[var] = str(tmp / sub)
        os.environ["PATH"] = str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"]
        start = start_cost()
        for name in chosen:
            row = bench_exercise(tmp, name, args.submissions, args.jobs)
            rows.append(row)
            k, st, n = row["per_kind"], row["steps"], row["count"]
            per, share = sandbox_share(row, start)
            rate = row["wall"] / n
            print(f"{name:<24} {rate:>6.1f} {k['correct']:>7.1f}s {k['wrong']:>5.1f}s "
                  f"{k['looping']:>7.1f}s {k['crashing']:>8.1f}s {per:>6.2f}s {share:>4.0%} "
                  f"{st.get('kernel.start', 0) / n:>6.2f}s "
                  f"{st.get('learner.process', 0) / n:>9.1f} "
                  f"{st.get('learner.ready', 0) / n:>5.1f}s "
                  f"{st.get('learner.calls', 0) / n:>5.1f}s "
                  f"{rate * args.class_size / 60:>5.1f} "
                  f"{'ok' if row['scores_right'] else 'WRONG':>6}", flush=True)
        print(f"(bubblewrap adds {start * 1000:.0f} ms to starting a process here)")
        cluster = None
        if args.cluster_submissions:
            cluster = cluster_speedup(tmp, chosen[0], args.cluster_submissions)
    if not args.skip_checks:
        checker_table(chosen)
    slowest = max(rows, key=lambda r: r["wall"] / r["count"])
    rate = slowest["wall"] / slowest["count"]
    total = rate * args.class_size
    print(f"\n{args.class_size} submissions of {slowest['assignment']} (the slowest here), "
          f"{args.jobs} at a time: {rate:.1f} s each -> {total / 60:.1f} min "
          f"(goal: under 30 min; extrapolated from {slowest['count']} submissions)")
    if cluster is not None and not cluster:
        return 1
    return 0 if all(r["scores_right"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
