"""Where ``ssa-course opt``'s time goes on one large program: CPU seconds per pass.

    python benchmarks/opt_passes.py SHAPE SIZE [--pipeline P1,P2,...] [--profile N]

SHAPE is one of :data:`shapes.SHAPES` (diamonds, straight, expression, elif, arrays), SIZE
its statements. Runs the same work as the ``opt`` cell of :mod:`scaling` (a fresh
compilation that already holds its quads, the default pipeline, the Bril text) and prints
the quads build, the whole cell (microseconds per quads instruction and the ratio to the
build) and each pass's CPU seconds; then the collection of the garbage the pipeline left
(it runs with the collector paused, :class:`ssa_course.runtime.paused_gc`, so the first
collection after it finds every graph, CFG and copy the passes dropped: here it is started
by hand so it is counted on its own line; in ``opt`` it happens on the way to the text);
the rest of the cell is the check at the end and the text. ``--pipeline`` runs other
passes instead of the default ones: ``--pipeline parse`` is the sea-of-nodes round trip
with no optimization (the graph built, scheduled by ``gcm``, printed as Bril), the least
any pipeline through the graph costs. ``--profile N`` adds cProfile's N most expensive
functions (by their own time, then cumulative) -- about 6x slower than the plain run, so
read it for proportions only.

Last measured: docs/benchmarks.md, "`opt` at 10k statements" (the default pipeline and
``--pipeline parse`` on every shape, and where the time goes).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from shapes import SHAPES  # noqa: E402

from ssa_course import passes  # noqa: E402
from ssa_course.compilation import compile_source  # noqa: E402
from ssa_course.errors import UsageError  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("shape", choices=sorted(SHAPES))
    parser.add_argument("size", type=int)
    parser.add_argument("--pipeline", default=",".join(passes.DEFAULT_PIPELINE),
                        metavar="P1,P2,...", help="passes to run (default: opt's own)")
    parser.add_argument("--profile", type=int, default=0, metavar="N")
    ns = parser.parse_args()
    pipeline = [name for name in ns.pipeline.split(",") if name]
    try:
        passes.check_pipeline(pipeline)
    except UsageError as err:
        parser.error(str(err))
    comp = compile_source(SHAPES[ns.shape](ns.size), f"{ns.shape}.tiny", "tiny")
    t0 = time.process_time()
    quads = comp.quads
    build = time.process_time() - t0
    n = sum(len(fn.instrs()) for fn in quads.functions.values())
    spent: dict[str, float] = {}
    run_pass = passes.run_pass

    def timed_pass(state: passes.PassState, p: passes.Pass, *args: object,
                   **kwargs: object) -> None:
        t = time.process_time()
        try:
            run_pass(state, p, *args, **kwargs)  # type: ignore[arg-type]
        finally:
            spent[p.name] = spent.get(p.name, 0.0) + time.process_time() - t

    passes.run_pass = timed_pass  # type: ignore[assignment]
    profile = cProfile.Profile() if ns.profile else None
    try:
        t0 = time.process_time()
        if profile is not None:
            profile.enable()
        state = passes.run_pipeline(comp, pipeline)
        t = time.process_time()
        gc.collect()
        garbage = time.process_time() - t
        passes.emit(state, "bril")
        if profile is not None:
            profile.disable()
        total = time.process_time() - t0
    finally:
        passes.run_pass = run_pass  # type: ignore[assignment]
    what = "" if pipeline == list(passes.DEFAULT_PIPELINE) else f" -p {','.join(pipeline)}"
    print(f"{ns.shape} at {ns.size} statements: {n:,} quads instructions, built in "
          f"{build:.2f} s; opt{what} {total:.2f} s CPU = {total / n * 1e6:.0f} us per instruction, "
          f"{total / build:.1f}x the build")
    for name, secs in spent.items():
        print(f"  {name:<14} {secs:7.2f} s")
    print(f"  {'(garbage)':<14} {garbage:7.2f} s")
    print(f"  {'(check, text)':<14} {total - garbage - sum(spent.values()):7.2f} s")
    if profile is not None:
        stats = pstats.Stats(profile)
        stats.sort_stats("tottime").print_stats(ns.profile)
        stats.sort_stats("cumtime").print_stats(ns.profile)


if __name__ == "__main__":
    main()
