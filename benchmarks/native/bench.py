"""Native code against gcc: the kernels of ``native_kernels.py``, side by side.

Run by ``make bench-native`` (and ``make bench``).

1. Native table, at each kernel's benchmark size, best of 3: our executable
   (``ssa-course compile KERNEL.tiny -o EXE``), the C twin under ``gcc -O0`` and ``gcc -O1``,
   the ratios ours/O0 and ours/O1, and the register allocator's spills per kernel
   (``ssa_course.codegen.stats.program_stats(comp)["spills"]``). Then the geometric means
   of the ratios against the targets of issue #11: faster than ``gcc -O0`` on every
   kernel, geometric mean within 1.5x of ``gcc -O1``.
2. Interpreter table, at a reduced size (the interpreter is hundreds of times slower):
   our quads interpreter next to our executable and ``gcc -O0`` at that same size.
3. Compile time per statement: ``ssa-course compile`` on generated programs of 1k and
   100k statements (``benchmarks/shapes.py``), less the time of compiling an empty
   program (start-up, runtime, assembler and linker): the ratio should stay within 2x.

Every run's output is compared with the others at the same size (gcc -O0, gcc -O1, ours,
the interpreter); a mismatch is printed loudly and makes the exit status 1. Without gcc or
without the code generator the missing columns print ``-`` and one line says why.
"""

from __future__ import annotations

import argparse
import math
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent.parent))

from native_kernels import (  # noqa: E402
    KERNELS,
    Kernel,
    Run,
    best_run,
    best_runs,
    compile_c,
    gcc,
    interpret,
)
from ours import (  # noqa: E402
    COMPILE_SIZES,
    COMPILER,
    DASH,
    DEFAULT_COMPILER,
    build_native,
    codegen_missing,
    compile_time_table,
    compiler_name,
    spills,
)

TARGET_O1 = 1.5  # issue #11: geometric mean of ours/gcc -O1 at most this


def geomean(values: list[float]) -> float | None:
    """The geometric mean of positive ``values`` (None for an empty list)."""
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def secs(r: Run | None) -> str:
    """A run's time for the table; ``-`` when it did not happen, ``FAIL`` when it failed."""
    if r is None:
        return DASH
    return "FAIL" if r.status != 0 else f"{r.seconds:.3f}"


def ratio(a: Run | None, b: Run | None) -> float | None:
    """a's time over b's when both ran and succeeded."""
    if a is None or b is None or a.status != 0 or b.status != 0 or b.seconds <= 0:
        return None
    return a.seconds / b.seconds


def fmt_ratio(x: float | None) -> str:
    return DASH if x is None else f"{x:.2f}"


def mismatches(kernel: str, runs: dict[str, Run | None]) -> list[str]:
    """Loud lines for every run whose output or status differs from the first one's."""
    present = [(name, r) for name, r in runs.items() if r is not None]
    lines = []
    for name, r in present:
        if r.status != 0:
            lines.append(f"!!! FAILED {kernel} [{name}]: status {r.status}: {r.stderr}")
    if not present:
        return lines
    ref_name, ref = present[0]
    for name, r in present[1:]:
        if r.status == 0 and ref.status == 0 and r.stdout != ref.stdout:
            lines.append(f"!!! MISMATCH {kernel}: {ref_name} printed {ref.stdout.strip()!r} "
                         f"but {name} printed {r.stdout.strip()!r}")
    return lines


# -- the tables ----------------------------------------------------------------------------

def targets_line(slower_than_o0: list[str], g1: float) -> str:
    """Issue #11's verdict: faster than gcc -O0 on every kernel, geometric mean of
    ours/O1 at most TARGET_O1."""
    ok0 = "met" if not slower_than_o0 else "MISSED on " + ", ".join(slower_than_o0)
    ok1 = "met" if g1 <= TARGET_O1 else "MISSED"
    return (f"targets: faster than gcc -O0 on every kernel: {ok0}; "
            f"geometric mean ours/O1 <= {TARGET_O1}: {ok1} ({g1:.2f})")


def native_table(kernels: list[Kernel], size: str, repeat: int, tmp: Path,
                 have_gcc: bool, native: dict[str, Path]) -> list[str]:
    """Table 1; returns the loud lines (mismatches and failures)."""
    print(f"Native code vs gcc on the C twins ({size} size, best of {repeat} taken in turns; "
          "seconds, wall clock of the whole process)")
    print(f"{'kernel':>15} {'args':>12} {'ours':>7} {'gcc-O0':>7} {'gcc-O1':>7} "
          f"{'ours/O0':>8} {'ours/O1':>8} {'spills':>7}")
    loud: list[str] = []
    to_o0: list[float] = []
    to_o1: list[float] = []
    slower_than_o0: list[str] = []
    for k in kernels:
        args = k.args(size)
        exes = {"O0": compile_c(k, "O0", tmp), "O1": compile_c(k, "O1", tmp)} \
            if have_gcc else {}
        if k.name in native:
            exes["ours"] = native[k.name]
        runs = best_runs(exes, args, repeat)
        o0, o1, ours = runs.get("O0"), runs.get("O1"), runs.get("ours")
        r0, r1 = ratio(ours, o0), ratio(ours, o1)
        if r0 is not None:
            to_o0.append(r0)
            if r0 >= 1.0:
                slower_than_o0.append(k.name)
        if r1 is not None:
            to_o1.append(r1)
        print(f"{k.name:>15} {' '.join(args):>12} {secs(ours):>7} {secs(o0):>7} "
              f"{secs(o1):>7} {fmt_ratio(r0):>8} {fmt_ratio(r1):>8} "
              f"{spills(k) if k.name in native else DASH:>7}")
        loud += mismatches(k.name, {"gcc -O0": o0, "gcc -O1": o1, "ours": ours})
    g0, g1 = geomean(to_o0), geomean(to_o1)
    print(f"{'geometric mean':>15} {'':>12} {'':>7} {'':>7} {'':>7} {fmt_ratio(g0):>8} "
          f"{fmt_ratio(g1):>8}")
    if g0 is not None and g1 is not None and size != "bench":
        print("(the targets are judged at the bench size, where process start-up is noise)")
    elif g0 is not None and g1 is not None:
        print(targets_line(slower_than_o0, g1))
    print()
    return loud


def empty_process_seconds(tmp: Path) -> float:
    """How long starting and ending an empty C program takes (best of 5)."""
    src = tmp / "empty.c"
    src.write_text("int main(void) { return 0; }\n")
    exe = tmp / "empty-c"
    subprocess.run([gcc() or "gcc", "-O1", "-o", str(exe), str(src)], check=True)
    return best_run(exe, (), 5).seconds


def interpreter_table(kernels: list[Kernel], size: str, repeat: int, tmp: Path,
                      have_gcc: bool, native: dict[str, Path]) -> list[str]:
    """Table 2: the quads interpreter at the reduced size; returns the loud lines."""
    startup = empty_process_seconds(tmp) if have_gcc else None
    print(f"Our quads interpreter at a reduced ({size}) size, next to our executable and "
          f"gcc -O0 at that same size (best of {repeat}; the interpreter is timed in "
          "process, the executables as whole processes)")
    if startup is not None:
        print(f"(starting an empty C program takes {startup * 1000:.1f} ms here: at this "
              "size the ratios understate the interpreter's slowdown)")
    print(f"{'kernel':>15} {'args':>12} {'interp':>8} {'ours':>7} {'gcc-O0':>7} "
          f"{'interp/ours':>11} {'interp/O0':>9}")
    loud: list[str] = []
    for k in kernels:
        args = k.args(size)
        runs = [interpret(k, args) for _ in range(repeat)]
        interp = min(runs, key=lambda r: r.seconds) if all(r.status == 0 for r in runs) \
            else next(r for r in runs if r.status != 0)
        exes = {"O0": compile_c(k, "O0", tmp)} if have_gcc else {}
        if k.name in native:
            exes["ours"] = native[k.name]
        runs = best_runs(exes, args, repeat)
        o0, ours = runs.get("O0"), runs.get("ours")
        print(f"{k.name:>15} {' '.join(args):>12} {secs(interp):>8} {secs(ours):>7} "
              f"{secs(o0):>7} {fmt_ratio(ratio(interp, ours)):>11} "
              f"{fmt_ratio(ratio(interp, o0)):>9}")
        loud += mismatches(k.name, {"gcc -O0": o0, "interpreter": interp, "ours": ours})
    print()
    return loud


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", help="comma-separated kernel names (default: all)")
    ap.add_argument("--size", default="bench", choices=("test", "interp", "bench"),
                    help="the size of the native table (default: bench)")
    ap.add_argument("--interp-size", default="interp", choices=("test", "interp"),
                    help="the size of the interpreter table (default: interp)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement (best of)")
    ap.add_argument("--no-interp", action="store_true", help="skip the interpreter table")
    ap.add_argument("--compiler", default=shlex.join(DEFAULT_COMPILER),
                    help="our compiler, called as COMPILER SRC -o EXE (default: %(default)s)")
    ap.add_argument("--compile-sizes", default=",".join(map(str, COMPILE_SIZES)),
                    help="statements of the compile-time programs (default: %(default)s)")
    ap.add_argument("--shapes", default="diamonds",
                    help="shapes for the compile-time table, comma-separated, or 'none'")
    opts = ap.parse_args(argv)
    from native_kernels import kernel
    from shapes import SHAPES

    try:
        kernels = [kernel(n) for n in opts.kernels.split(",")] if opts.kernels else \
            list(KERNELS)
        shapes = [] if opts.shapes == "none" else opts.shapes.split(",")
        for name in shapes:
            if name not in SHAPES:
                raise KeyError(f"no shape {name!r}; known: {', '.join(SHAPES)}")
        sizes = tuple(int(n) for n in opts.compile_sizes.split(","))
    except (KeyError, ValueError) as e:
        print(f"error: {e.args[0]}", file=sys.stderr)
        return 2
    have_gcc = gcc() is not None
    if not have_gcc:
        print("note: gcc not found: the gcc columns are '-' (gcc is a benchmark tool only)")
    COMPILER[:] = shlex.split(opts.compiler)
    missing = codegen_missing()
    if missing:
        print(f"note: {missing}")
    loud: list[str] = []
    with tempfile.TemporaryDirectory(prefix="ssa-bench-native-") as d:
        tmp = Path(d)
        native: dict[str, Path] = {}
        if not missing:
            for k in kernels:
                error = build_native(k.tiny, tmp / f"{k.name}-ours")
                if error is None:
                    native[k.name] = tmp / f"{k.name}-ours"
                else:
                    loud.append(f"!!! FAILED {k.name} [{compiler_name()}]: {error}")
        loud += native_table(kernels, opts.size, opts.repeat, tmp, have_gcc, native)
        if not opts.no_interp:
            loud += interpreter_table(kernels, opts.interp_size, opts.repeat, tmp, have_gcc,
                                      native)
        if shapes and not missing:
            compile_time_table(shapes, sizes, tmp)
    for line in loud:
        print(line)
    return 1 if loud else 0


if __name__ == "__main__":
    sys.exit(main())
