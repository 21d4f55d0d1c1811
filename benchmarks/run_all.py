"""Front-end and interpreter speed, printed as tables with ratios (run with ``make bench``).

1. parse + check + lower for generated programs of 1k, 10k and 100k statements: the time
   per statement should stay flat as programs grow (the ratio column compares with 1k).
2. Interpreter speed in executed quads per second (and the AST interpreter alongside).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gen import CALL_PROGRAM, LOOP_PROGRAM, straight_line_program  # noqa: E402

from ssa_course.quads.interp import run_quads  # noqa: E402
from ssa_course.quads.lower import lower_program  # noqa: E402
from ssa_course.runtime import Limits, Output  # noqa: E402
from ssa_course.tiny import compile_tiny  # noqa: E402
from ssa_course.tiny.interp import run_ast  # noqa: E402


def best_of(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def front_end_table() -> None:
    print("Front end: parse + check + lower (best of 3)")
    print(f"{'statements':>10} {'lines':>8} {'parse+check':>12} {'lower':>9} "
          f"{'us/stmt':>8} {'ratio':>6}")
    base = None
    for size in (1_000, 10_000, 100_000):
        src = straight_line_program(size)
        t_check = best_of(lambda src=src: compile_tiny(src), 1 if size > 10_000 else 3)
        prog = compile_tiny(src)
        t_lower = best_of(lambda prog=prog: lower_program(prog), 1 if size > 10_000 else 3)
        per = (t_check + t_lower) / size * 1e6
        base = base or per
        print(f"{size:>10,} {src.count(chr(10)):>8,} {t_check:>11.3f}s {t_lower:>8.3f}s "
              f"{per:>8.1f} {per / base:>6.2f}")
    print()


def interpreter_table() -> None:
    print("Interpreters: executed operations per second (best of 3)")
    print(f"{'program':>14} {'executor':>9} {'ops':>12} {'seconds':>8} {'ops/s':>12} "
          f"{'vs quads':>8}")
    for label, src, arg in (("loop n=200000", LOOP_PROGRAM, 200_000),
                            ("fib(22)", CALL_PROGRAM, 22)):
        prog = compile_tiny(src)
        quads = lower_program(prog)
        results = {}
        for name, runner, program in (("quads", run_quads, quads), ("ast", run_ast, prog)):
            steps = 0

            def go(runner=runner, program=program, arg=arg) -> None:
                nonlocal steps
                steps = runner(program, [arg], Output(), Limits(steps=10**9))

            secs = best_of(go)
            results[name] = secs
            print(f"{label:>14} {name:>9} {steps:>12,} {secs:>8.3f} {steps / secs:>12,.0f} "
                  f"{secs / results['quads']:>8.2f}")
    print()


def main() -> None:
    front_end_table()
    interpreter_table()


if __name__ == "__main__":
    main()
