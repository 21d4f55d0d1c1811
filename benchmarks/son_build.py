"""How building the sea of nodes scales with program size, per shape.

Prints microseconds per statement (best of ``--repeat`` runs) of one stage (``son-raw`` and
``son`` by default) at each size, and the ratio to the smallest size: a linear builder keeps
the ratio near 1. Front-end work (parsing, checking) is done once, outside the timing.

    .venv/bin/python benchmarks/son_build.py --sizes 1000 10000 100000
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from shapes import SHAPES  # noqa: E402

from ssa_course.compilation import compile_source  # noqa: E402
from ssa_course.registry import build  # noqa: E402


def time_stage(source: str, stage: str, repeat: int) -> float:
    """Best wall time in seconds of building ``stage`` from a fresh compilation."""
    best = float("inf")
    for _ in range(repeat):
        comp = compile_source(source)
        comp.ast  # noqa: B018 - the front end (parse, check) is not what is measured
        start = time.perf_counter()
        build(comp, stage)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", nargs="+", default=["diamonds", "arrays", "elif"])
    ap.add_argument("--stages", nargs="+", default=["son-raw", "son"])
    ap.add_argument("--sizes", nargs="+", type=int, default=[1000, 10000])
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    print(f"{'shape':10} {'stage':8} {'n':>7} {'us/stmt':>9} {'ratio':>6}")
    for shape in args.shapes:
        for stage in args.stages:
            first = None
            for n in args.sizes:
                per = time_stage(SHAPES[shape](n), stage, args.repeat) / n * 1e6
                first = first or per
                print(f"{shape:10} {stage:8} {n:>7} {per:>9.1f} {per / first:>6.2f}",
                      flush=True)


if __name__ == "__main__":
    main()
