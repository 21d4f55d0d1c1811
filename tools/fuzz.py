"""Differential fuzzing: N generated programs through every stage, mismatches shrunk.

    python tools/fuzz.py -n 10000 [--seed S] [--jobs J] [--pipelines K] [--out DIR]
    make fuzz N=10000 [SEED=...] [JOBS=2] [PIPELINES=2]

Program ``i`` is ``tests/fuzzgen.generate(seed + i)``, so every finding can be reproduced
from its seed (with ``--floats``, ``generate(seed + i, floats=True)``: programs with floats,
which the machine-code stages must refuse in one line, and are otherwise skipped).
Each program runs through the ``ast`` reference and every other registered
stage, and once more as Bril text through every stage that reads Bril (``bril:<stage>``);
stdout, exit status and error message must all agree. With ``--pipelines K`` each program
also goes through K random ``opt -p`` pipelines drawn from the pass registry (stage
``opt:<p1,p2,...>``, seeded by the program's seed; the table sums them as ``opt:random``):
the Bril text each writes, read back, must run like the program. The iterative peepholes
take their worklist in a random order seeded by the program's seed plus ``--worklist-seed``
(Simple's habit: a rewrite that only works in one order shows up as a mismatch) and check at
the end that the graph has no progress left; ``--fifo`` keeps the lessons' first-in,
first-out order. Worker processes run the programs
(each stage under a limit of CPU time, with a wall clock ten times longer as a
backstop, so a hang is a finding, not a stall, and a loaded machine does not make one). A few
mismatches of each kind (stage and category) are then shrunk to small programs and written
to ``--out`` (``NNN-<stage>.tiny``, plus ``.bril`` for Bril findings) with a header saying
what was expected and what the stage did. Exit status: 0 when every stage agreed, 1 when
something differed, 2 for bad command-line arguments.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tools")]

from fuzzgen import generate  # noqa: E402
from fuzzreport import summary, write_finding  # noqa: E402
from fuzzrun import Mismatch, compare, pipeline_seeds, stage_names, still_fails  # noqa: E402
from fuzzshrink import shrink  # noqa: E402

from ssa_course.memlimit import cap_address_space  # noqa: E402
from ssa_course.son.worklist import peephole_order  # noqa: E402

# per worker, beyond its size at the fork: a runaway allocation is a MemoryError, not the
# OOM killer
MEMORY_LIMIT = 3 << 30


@dataclass(frozen=True, slots=True)
class Config:
    stages: list[str]
    timeout: float
    size: int
    shrink_seconds: float
    pipelines: int = 0
    worklist_seed: int | None = 0  # None: first in, first out
    floats: bool = False  # programs with floats too (tests/fuzzgen.py, issue #36)


def _order(cfg: Config, seed: int):
    """The iterative peepholes' worklist order for program ``seed`` (checked when done)."""
    base = cfg.worklist_seed
    return peephole_order(None if base is None else base + seed, check=True)


_CONFIG: list[Config] = []  # the worker's copy, set once by _init_worker


def _init_worker(config: Config) -> None:
    _CONFIG[:] = [config]
    cap_address_space(MEMORY_LIMIT)  # on top of its size at the fork (ssa_course.memlimit)


def check_seed(seed: int) -> tuple[int, str, list[Mismatch], float]:
    """Worker: generate and compare one program -> (seed, reference kind, mismatches, time)."""
    cfg, start = _CONFIG[0], time.monotonic()
    names = cfg.stages + pipeline_seeds(seed, cfg.pipelines)
    with _order(cfg, seed):
        ref, found = compare(generate(seed, cfg.size, cfg.floats), names, cfg.timeout)
    kind = "skipped" if ref is None else "ok" if ref.status == 0 else "runtime error"
    return seed, kind, found, time.monotonic() - start


def shrink_one(task: tuple[int, str, str]) -> tuple[int, str, str, str, list[Mismatch]]:
    """Worker: shrink seed's program while ``stage`` still differs with ``kind``."""
    seed, stage, kind = task
    cfg = _CONFIG[0]
    with _order(cfg, seed):
        small = shrink(generate(seed, cfg.size, cfg.floats),
                       lambda s: still_fails(s, stage, kind, cfg.timeout),
                       seconds=cfg.shrink_seconds)
        _, again = compare(small, cfg.stages + ([stage] if stage not in cfg.stages else []),
                           cfg.timeout)
    return seed, stage, kind, small, again


def _args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="fuzz", description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=1000, help="programs to generate (default 1000)")
    ap.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    ap.add_argument("--timeout", type=float, default=20.0,
                    help="seconds of CPU time one stage may take on one program (default 20)")
    ap.add_argument("--size", type=int, default=30, help="statements in main (default 30)")
    ap.add_argument("--out", default=str(ROOT / "out" / "fuzz"), help="findings directory")
    ap.add_argument("--shrink", type=int, default=2,
                    help="programs shrunk per (stage, kind) of mismatch (default 2)")
    ap.add_argument("--shrink-seconds", type=float, default=120.0,
                    help="time limit for shrinking one program (default 120)")
    ap.add_argument("--no-bril", action="store_true", help="skip the Bril-text variants")
    ap.add_argument("--stages", help="comma-separated stages to compare (default: all)")
    ap.add_argument("--pipelines", type=int, default=0,
                    help="random opt pipelines per program (default 0)")
    ap.add_argument("--worklist-seed", type=int, default=0,
                    help="added to each program's seed to seed the iterative peepholes' "
                         "random worklist order (default 0)")
    ap.add_argument("--floats", action="store_true",
                    help="programs with float variables and expressions too: NaN, infinities, "
                         "-0.0, huge and tiny values (machine code stages must refuse them)")
    ap.add_argument("--fifo", action="store_true",
                    help="first-in, first-out worklist order instead of a random one")
    args = ap.parse_args(argv)
    if args.n < 0 or args.jobs < 1 or args.timeout <= 0 or args.size < 1 \
            or args.pipelines < 0:
        ap.error("N must be >= 0, JOBS >= 1, timeout > 0, size >= 1 and pipelines >= 0")
    return args


def _selected(args: argparse.Namespace) -> list[str] | str:
    """The stages to compare, or the message naming unknown ones."""
    every = stage_names(bril=not args.no_bril)
    if not args.stages:
        return every
    chosen = [s.strip() for s in args.stages.split(",") if s.strip()]
    unknown = [s for s in chosen if s not in every]
    if unknown:
        return f"unknown stage(s) {', '.join(unknown)}; known: {', '.join(every)}"
    return chosen


def main(argv: list[str] | None = None) -> int:
    args = _args(argv)
    names = _selected(args)
    if isinstance(names, str):
        print(f"fuzz: error: {names}", file=sys.stderr)
        raise SystemExit(2)
    config = Config(names, args.timeout, args.size, args.shrink_seconds, args.pipelines,
                    None if args.fifo else args.worklist_seed, args.floats)
    # A whole program gets every stage's time limit plus slack before the parent gives up
    # on a worker (a hang below Python, where the alarm cannot reach).
    patience = args.timeout * (len(names) + args.pipelines + 2) + 60
    start = time.monotonic()
    kinds: Counter[str] = Counter()
    mismatches: list[tuple[int, Mismatch]] = []
    stalled = False
    seeds = range(args.seed, args.seed + args.n)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    log = open(Path(args.out) / "mismatches.log", "w")  # noqa: SIM115 - written as we go
    with multiprocessing.get_context("fork").Pool(args.jobs, _init_worker, (config,)) as pool:
        results = pool.imap_unordered(check_seed, seeds)  # chunksize 1: .next(timeout)
        for done in range(args.n):
            try:
                seed, kind, found, _ = results.next(timeout=patience)
            except multiprocessing.TimeoutError:
                print(f"fuzz: no result for {patience:.0f} s after {done} programs; "
                      "a worker is stuck (reported as a hang)", file=sys.stderr)
                stalled = True
                break
            kinds[kind] += 1
            mismatches += [(seed, m) for m in found]
            for m in found:  # as found, so an interrupted run still leaves its evidence
                print(seed, m.stage, m.category, file=log, flush=True)
            if (done + 1) % 100 == 0:
                print(f"  {done + 1} programs, {len(mismatches)} mismatches, "
                      f"{time.monotonic() - start:.0f} s", file=sys.stderr, flush=True)
        if stalled:
            pool.terminate()
        run_time = time.monotonic() - start
        written = [] if stalled else _shrink_all(pool, args, mismatches)
    log.close()
    shown = names + (["opt:random"] if args.pipelines else [])
    print(summary(args, shown, kinds, mismatches, written, run_time,
                  time.monotonic() - start))
    return 1 if mismatches or stalled else 0


def _shrink_all(pool, args: argparse.Namespace,
                mismatches: list[tuple[int, Mismatch]]) -> list[str]:
    """Shrink up to ``--shrink`` programs per (stage, kind), smallest programs first."""
    by_seed: dict[int, list[Mismatch]] = {}
    for seed, m in mismatches:
        by_seed.setdefault(seed, []).append(m)
    # A seed shrunk for one (stage, kind) also counts for the others it showed, so the
    # same program is not shrunk twice for stages that fail together.
    covered: Counter[tuple[str, str]] = Counter()
    chosen: dict[tuple[str, str], list[int]] = {}
    for seed in sorted(by_seed, key=lambda s: len(generate(s, args.size, args.floats))):
        fresh = [m for m in by_seed[seed] if covered[m.stage, m.category] < args.shrink]
        if not fresh:
            continue
        chosen.setdefault((fresh[0].stage, fresh[0].category), []).append(seed)
        for m in by_seed[seed]:
            covered[m.stage, m.category] += 1
    tasks = [(seed, stage, kind) for (stage, kind), seeds in sorted(chosen.items())
             for seed in seeds]
    out = Path(args.out)
    written = []
    for number, result in enumerate(pool.imap_unordered(shrink_one, tasks), start=1):
        written += write_finding(out, number, *result)
    return written


if __name__ == "__main__":
    sys.exit(main())
