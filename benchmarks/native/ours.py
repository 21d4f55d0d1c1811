"""Our compiler as the native benchmark sees it: how it is called, whether it is there,
its spill counts, and its compile time per statement (the third table of ``bench.py``).

Everything here is tolerant: the code generator may not be merged yet, and a benchmark
reports what it cannot measure instead of stopping.
"""

from __future__ import annotations

import shlex
import subprocess
import time
from pathlib import Path

from native_kernels import Kernel, cli

DASH = "-"
COMPILE_SIZES = (1_000, 100_000)
# How our compiler is called: COMPILER + [SRC, "-o", EXE]; bench.main() sets it from
# ``--compiler`` (default: ``ssa-course compile`` of this Python).
DEFAULT_COMPILER = (*cli(), "compile")
COMPILER: list[str] = list(DEFAULT_COMPILER)


def compiler_name() -> str:
    """How the table names our compiler: ``ssa-course compile`` unless replaced."""
    return "ssa-course compile" if tuple(COMPILER) == DEFAULT_COMPILER else shlex.join(COMPILER)


def codegen_missing() -> str | None:
    """None when ``ssa-course compile`` exists, else the one-line reason it cannot be used."""
    try:
        p = subprocess.run([*COMPILER, "--help"], capture_output=True, text=True)
    except OSError as e:  # no such program
        return f"our native columns are '-': cannot run {COMPILER[0]!r}: {e.strerror}"
    if p.returncode != 0:
        return (f"our native columns are '-': '{compiler_name()}' does not work yet "
                "(the code generator of issue #11 has not landed)")
    return None


def build_native(source: Path, exe: Path) -> str | None:
    """``ssa-course compile source -o exe``; None on success, else the error text."""
    p = subprocess.run([*COMPILER, str(source), "-o", str(exe)],
                       capture_output=True, text=True)
    if p.returncode != 0:
        return (p.stderr.strip() or p.stdout.strip() or f"status {p.returncode}")
    return None


def spills(k: Kernel) -> str:
    """The number of values the register allocator spilled over ``k``'s functions
    (:func:`ssa_course.codegen.stats.program_stats` of the compiled program)."""
    from ssa_course.codegen.stats import program_stats
    from ssa_course.compilation import load_file
    from ssa_course.lessons.l11_codegen import compile_machine

    try:
        stats = program_stats(compile_machine(load_file(str(k.tiny)), fuel=False))
    except Exception as e:
        return f"error: {type(e).__name__}"
    return str(stats["spills"])



def timed_compile(source: str, path: Path, repeat: int) -> tuple[float, str | None]:
    """The best of ``repeat`` timed ``ssa-course compile`` runs of ``source`` (written to
    ``path``); each run gets a different trailing comment, so no cache keyed by the source
    can answer for the compiler. Returns (seconds, the first error or None)."""
    best = float("inf")
    for i in range(repeat):
        path.write_text(f"{source}// timing run {i}\n")
        t0 = time.perf_counter()
        error = build_native(path, path.with_suffix(""))
        best = min(best, time.perf_counter() - t0)
        if error is not None:
            return best, error
    return best, None


def compile_time_table(shape_names: list[str], sizes: tuple[int, ...], tmp: Path) -> None:
    """Table 3: ``ssa-course compile`` time per statement at 1k and 100k statements."""
    from shapes import SHAPES

    base, error = timed_compile("fn main() {\n}\n", tmp / "empty.tiny", 3)
    if error is not None:
        print(f"Compile time: 'ssa-course compile' failed on an empty program: {error}")
        return
    print(f"Compile time per statement: '{compiler_name()}' on generated programs, less "
          f"{base:.3f} s for an empty program (start-up, runtime, assembler, linker)")
    print(f"{'shape':>12} {'statements':>10} {'seconds':>8} {'us/stmt':>8} {'ratio':>6}")
    for name in shape_names:
        first = None
        for n in sizes:
            t, error = timed_compile(SHAPES[name](n), tmp / f"{name}-{n}.tiny",
                                     3 if n <= 10_000 else 1)
            if error is not None:
                print(f"{name:>12} {n:>10,}  FAILED: {error.splitlines()[0]}")
                break
            per = max(t - base, 0.0) / n * 1e6
            first = per if first is None else first
            # Below the empty program's time there is nothing to compare: no ratio.
            rel = f"{per / first:.2f}" if first > 0 else DASH
            print(f"{name:>12} {n:>10,} {t:>8.3f} {per:>8.1f} {rel:>6}")
    print(f"(target: the ratio at {sizes[-1]:,} statements within 2)")
    print()
