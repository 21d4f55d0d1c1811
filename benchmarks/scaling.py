"""Scaling of every stage on large single-function programs (run with ``make bench``).

For each shape of :mod:`shapes` and each size (1k, 10k, 100k statements) this times:

* ``quads`` -- building the quads from source (parse, check, lower; Bril: read), the yardstick;
* every representation of the registry -- building it (by running it on a tiny argument
  with a small step limit, so the run itself costs nothing) and its text face;
* ``opt`` -- the default ``ssa-course opt`` pipeline and its Bril text (``--emit bril``,
  printed; outside the tests it is not read back: ``passes._bril_text``),
  ``opt:emit-quads`` -- the same pipeline printed as ``ssa-course opt`` prints it by default
  (quads as written: the same text for this pipeline), and
  ``opt:quads-half`` -- its passes after the graph (pruned SSA, phi coalescing, out of
  SSA, copy coalescing, DCE, closed forms, try merging, layout, jump threading, DCE,
  landing pads) on the ``ssa`` pass's SSA.

Each cell starts from a fresh :class:`Compilation` that already holds the quads, so a stage
pays only for what it adds. The table prints microseconds of CPU time (the machine may be
shared) per statement at each size, the 100k/1k ratio (flat is 1.0: linear time) and the
ratio of the largest size's time to the quads build time (the build: the best of 3 runs at
every size; a cell above 1k statements runs once). Knobs (environment variables):

* ``SCALING_MAX`` -- the largest size (``10000`` for a quick run; default ``100000``);
* ``SCALING_SHAPES`` / ``SCALING_STAGES`` -- comma-separated subsets (default: all);
* ``SCALING_LIMIT`` -- seconds a cell may take before it is abandoned (default 300);
* ``SCALING_SKIP`` -- a row whose previous size took longer than this many seconds skips
  the next size (default 60), printing ``skipped (10k took N s)``.

Start-up time of ``ssa-course run examples/sum.tiny 10`` (best of 5) is printed last.
"""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from shapes import SHAPES, as_bril  # noqa: E402

from ssa_course import registry, views  # noqa: E402
from ssa_course.compilation import Compilation, compile_source  # noqa: E402
from ssa_course.runtime import Limits  # noqa: E402

SIZES = (1_000, 10_000, 100_000)
# stages whose text face is a view under another name
# the Tiny shapes, and one Bril function (the diamonds shape printed as Bril)
BRIL_SHAPES = ("diamonds",)


class CellTimeout(Exception):
    """A cell ran past ``SCALING_LIMIT`` seconds."""


def _env_int(name: str, default: int) -> int:
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default


def _env_list(name: str) -> list[str] | None:
    text = os.environ.get(name, "").strip()
    return [w.strip() for w in text.split(",") if w.strip()] or None


def _alarm(signum: int, frame: object) -> None:
    raise CellTimeout


def timed(fn: Callable[[], object], limit: int) -> float:
    """CPU seconds ``fn()`` took (this process's: on a shared machine the load of others
    must not enter a ratio of two cells); raises :class:`CellTimeout` past ``limit``
    seconds of wall time."""
    gc.collect()  # start every cell from the same heap, not the previous cell's garbage
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(limit)
    try:
        t0 = time.process_time()
        fn()
        return time.process_time() - t0
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def best_of(fn: Callable[[], object], repeat: int, limit: int) -> float:
    return min(timed(fn, limit) for _ in range(repeat))


def fresh(base: Compilation) -> Compilation:
    """A new compilation of ``base``'s program that already holds its AST and quads."""
    comp = compile_source(base.source, base.filename, base.kind)
    for key in ("ast", "quads-as-written", "quads"):
        if key in base._cache:
            comp._cache[key] = base._cache[key]
    return comp


def _stage_cell(name: str) -> Callable[[Compilation], object]:
    """Build the representation, run it briefly and print its text face."""
    from ssa_course.stages import run

    def cell(comp: Compilation) -> None:
        result = run(comp, ["3"], via=name, limits=Limits(steps=200))
        if result.status not in (0, 2):  # 2: the step limit, expected on big programs
            raise RuntimeError(f"stage {name}: {result.error}")
        views.render(comp, name, "text")

    return cell


def _opt_cell(comp: Compilation) -> object:
    from ssa_course.passes import DEFAULT_PIPELINE, emit, run_pipeline

    return emit(run_pipeline(comp, DEFAULT_PIPELINE), "bril")


def _opt_default_cell(comp: Compilation) -> object:
    """``ssa-course opt`` as run with no ``--emit``: the result printed as quads. The
    ``opt`` row's ``--emit bril`` prints the same text here (it reads it back only when
    ``SSA_COURSE_VERIFY_EACH`` is set, as in the tests: a parse of the whole output, once
    20-30% of the row on the cheap shapes)."""
    from ssa_course.passes import DEFAULT_PIPELINE, emit, run_pipeline

    return emit(run_pipeline(comp, DEFAULT_PIPELINE), "quads")


# ``opt``'s passes after the sea of nodes, on the SSA the ``ssa`` pass builds: the quads
# half of the default pipeline, timed apart from the graph half
QUADS_HALF = ("ssa", "coalesce-phis", "out-of-ssa", "coalesce", "dce", "closed-form",
              "try-merge", "layout", "thread", "dce", "landing")


def _opt_quads_cell(comp: Compilation) -> object:
    from ssa_course.passes import emit, run_pipeline

    return emit(run_pipeline(comp, QUADS_HALF), "bril")


def rows(kind: str) -> list[tuple[str, Callable[[Compilation], object]]]:
    """Every row of the table: each representation (built, run, printed), then ``opt``."""
    wanted = _env_list("SCALING_STAGES")
    out = [(r.name, _stage_cell(r.name)) for r in registry.representations()
           if kind == "tiny" or not r.tiny_only]
    out.append(("opt", _opt_cell))
    out.append(("opt:emit-quads", _opt_default_cell))
    out.append(("opt:quads-half", _opt_quads_cell))
    if wanted:
        out = [r for r in out if r[0] in wanted]
    return out


def program(shape: str, size: int, bril: bool) -> Compilation:
    source = SHAPES[shape](size)
    if bril:
        return compile_source(as_bril(source), f"{shape}.bril", "bril")
    return compile_source(source, f"{shape}.tiny", "tiny")


def statements(comp: Compilation) -> int:
    return sum(len(fn.instrs()) for fn in comp.quads.functions.values())


def _fmt_time(per: float | None, note: str) -> str:
    return f"{per:>9.1f}" if per is not None else f"{note:>9}"


def scale_shape(shape: str, bril: bool, sizes: tuple[int, ...], limit: int, skip: int) -> None:
    label = f"{shape} (Bril)" if bril else shape
    comps: list[tuple[int, Compilation, float, int]] = []
    for size in sizes:
        base = program(shape, size, bril)
        # the yardstick is the best of 3 at every size: one run of it varied 2x with the
        # load of a shared machine, and every ratio of the table divides by it
        repeat = 3

        def build(base: Compilation = base) -> object:
            return fresh_source(base).quads

        try:
            t_quads = best_of(build, repeat, limit)
        except CellTimeout:
            print(f"{label}: building quads at {_k(size)} took over {limit} s; stopping here")
            break
        _ = base.quads
        comps.append((size, base, t_quads, statements(base)))
    if not comps:
        return
    sizes = tuple(size for size, _, _, _ in comps)
    heads = " ".join(f"{_k(s):>9}" for s in sizes)
    print(f"{label}: quads instructions " +
          ", ".join(f"{_k(s)}: {n:,}" for s, _, _, n in comps) +
          "  (us per quad instruction; ratio = largest/1k; xquads = time / quads build)")
    print(f"  {'row':<22} {heads} {'ratio':>6} {'xquads':>7}")
    quad_pers = [t / n * 1e6 for _, _, t, n in comps]
    _print_row("quads (build)", quad_pers, [""] * len(sizes), 1.0)
    for name, cell in rows("bril" if bril else "tiny"):
        pers: list[float | None] = []
        notes: list[str] = []
        last = 0.0
        xquads = None
        for size, base, t_quads, n in comps:
            if last > skip:
                pers.append(None)
                notes.append("skipped")
                took = "timed out" if last == float("inf") else f"took {last:.0f} s"
                print(f"  ({name} {_k(size)} skipped: {_k(size // 10)} {took})")
                continue
            repeat = 3 if size <= 1_000 else 1
            try:
                secs = best_of(lambda base=base, cell=cell: cell(fresh(base)), repeat, limit)
            except CellTimeout:
                pers.append(None)
                notes.append(f">{limit}s")
                last = float("inf")
                xquads = None
                continue
            last = secs
            pers.append(secs / n * 1e6)
            notes.append("")
            xquads = secs / t_quads
        _print_row(name, pers, notes, xquads)
    print(flush=True)


def fresh_source(base: Compilation) -> Compilation:
    return compile_source(base.source, base.filename, base.kind)


def _k(size: int) -> str:
    return f"{size // 1000}k" if size >= 1000 else str(size)


def _print_row(name: str, pers: list[float | None], notes: list[str],
               xquads: float | None) -> None:
    cells = " ".join(_fmt_time(p, n) for p, n in zip(pers, notes, strict=True))
    ratio = f"{pers[-1] / pers[0]:>6.2f}" if pers[0] and pers[-1] else f"{'-':>6}"
    xq = f"{xquads:>7.1f}" if xquads is not None else f"{'-':>7}"
    print(f"  {name:<22} {cells} {ratio} {xq}", flush=True)


def startup_time(repeat: int = 5) -> float:
    """Best wall time of ``ssa-course run examples/sum.tiny 10`` in a fresh interpreter."""
    cmd = [sys.executable, "-m", "ssa_course.cli", "run", str(ROOT / "examples" / "sum.tiny"),
           "10"]
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, cwd=ROOT)
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    largest = _env_int("SCALING_MAX", SIZES[-1])
    sizes = tuple(s for s in SIZES if s <= largest) or SIZES[:1]
    limit = _env_int("SCALING_LIMIT", 300)
    skip = _env_int("SCALING_SKIP", 60)
    shapes = _env_list("SCALING_SHAPES") or list(SHAPES)
    print(f"Scaling on single-function programs, sizes {', '.join(map(_k, sizes))} "
          f"(cell limit {limit} s; set SCALING_MAX=10000 for a quick run)")
    print()
    for shape in shapes:
        scale_shape(shape, False, sizes, limit, skip)
    for shape in BRIL_SHAPES:
        if shape in shapes:
            scale_shape(shape, True, sizes, limit, skip)
    print(f"start-up: ssa-course run examples/sum.tiny 10 takes {startup_time():.3f} s "
          "(best of 5)")
    print()


if __name__ == "__main__":
    main()
