"""Lesson 09's numbers: bounds checks removed and what it saves, per program.

    python benchmarks/bce.py [FILE.tiny ARGS...]   (default: the native kernels at their
                                                    small size, and tests/programs/bce_*)

For each program: its bounds checks before and after elimination (``opt --stats``), the
steps of the graph interpreter with the checks (``son-opt``) and without (``son-ranges``),
and the array accesses of the scheduled program that still test their index in machine
code (a failing path's ``aload`` is not counted). A run that ends in an error reports no
steps (0).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ssa_course import stages  # noqa: E402
from ssa_course.compilation import load_file  # noqa: E402
from ssa_course.lessons.l09_ranges import check_stats, machine_tests  # noqa: E402


def _default_programs() -> list[tuple[Path, list[str]]]:
    sys.path.insert(0, str(ROOT / "benchmarks" / "native"))
    from native_kernels import KERNELS

    out = [(k.tiny, list(k.test)) for k in KERNELS]
    for path in sorted((ROOT / "tests" / "programs").glob("bce_*.tiny")):
        args = next((line.split(":", 1)[1].split() for line in path.read_text().splitlines()
                     if line.startswith("// ARGS:")), [])
        out.append((path, args))
    return out


def main(argv: list[str]) -> int:
    programs = [(Path(argv[0]), argv[1:])] if argv else _default_programs()
    print(f"{'program':24} {'checks':>9} {'steps with':>11} {'without':>9} {'saved':>6} "
          f"{'accesses':>9} {'tested':>7}")
    totals = [0, 0, 0, 0]
    for path, args in programs:
        comp = load_file(str(path))
        stats = check_stats(comp)
        before = sum(b for b, _ in stats.values())
        after = sum(a for _, a in stats.values())
        with_checks = stages.run(comp, args, via="son-opt").steps
        without = stages.run(comp, args, via="son-ranges").steps
        accesses, tested = machine_tests(comp)
        saved = f"{1 - without / with_checks:.0%}" if with_checks else "-"
        print(f"{path.stem:24} {before:>4} → {after:<3} {with_checks:>11} {without:>9} "
              f"{saved:>6} {accesses:>9} {tested:>7}")
        for i, v in enumerate((before, after, with_checks, without)):
            totals[i] += v
    b, a, w, wo = totals
    print(f"{'total':24} {b:>4} → {a:<3} {w:>11} {wo:>9} {1 - wo / max(w, 1):>6.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
