"""The native benchmark kernels: Tiny programs with a C twin each, and how to run them.

Every kernel lives in ``kernels/NAME.tiny`` and ``kernels/NAME.c``; both compute the same
thing with Tiny's semantics (64-bit wrapping ``+ - *`` through ``uint64_t`` in C, ``/``
and ``%`` truncating) and print the same line. A kernel has three sizes (``main``'s
arguments): ``test`` for the differential test (a fraction of a second interpreted),
``interp`` for the interpreter column of the benchmark (about a second interpreted) and
``bench`` for the native columns (about 0.2-0.5 s for ``gcc -O0``).

Used by ``benchmarks/native/bench.py`` and ``tests/test_native_kernels.py``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

KERNEL_DIR = Path(__file__).resolve().parent / "kernels"


@dataclass(frozen=True, slots=True)
class Kernel:
    """One kernel: its name (the file stem) and its three argument lists."""

    name: str
    what: str
    test: tuple[str, ...]
    interp: tuple[str, ...]
    bench: tuple[str, ...]

    @property
    def tiny(self) -> Path:
        return KERNEL_DIR / f"{self.name}.tiny"

    @property
    def c(self) -> Path:
        return KERNEL_DIR / f"{self.name}.c"

    def args(self, size: str) -> tuple[str, ...]:
        """The arguments of size ``test``, ``interp`` or ``bench``."""
        return {"test": self.test, "interp": self.interp, "bench": self.bench}[size]


KERNELS: tuple[Kernel, ...] = (
    Kernel("prefix_sums", "array loads/stores, 20 prefix-sum passes",
           ("2000",), ("16000",), ("8000000",)),
    Kernel("lattice", "nested loops, a branch per point", ("60",), ("400",), ("16000",)),
    Kernel("fib", "recursion", ("16",), ("22",), ("38",)),
    Kernel("sieve", "sieve of Eratosthenes, repeated", ("2000", "3"), ("20000", "4"),
           ("2000000", "30")),
    Kernel("matmul", "matrix multiply, arrays of rows", ("12",), ("50",), ("500",)),
    Kernel("matmul_flat", "matrix multiply, flat arrays (a[i * n + k])", ("12",), ("50",),
           ("500",)),
    Kernel("collatz", "collatz trajectory lengths", ("300",), ("3000",), ("1000000",)),
    Kernel("hash_mix", "wrapping LCG, div/mod mixing", ("3000",), ("100000",),
           ("40000000",)),
    Kernel("insertion_sort", "insertion sort", ("150",), ("800",), ("20000",)),
    Kernel("nqueens", "backtracking recursion over bool arrays", ("6",), ("9",), ("13",)),
)


def kernel(name: str) -> Kernel:
    """The kernel called ``name`` (a ``KeyError`` naming the known ones otherwise)."""
    for k in KERNELS:
        if k.name == name:
            return k
    raise KeyError(f"no kernel {name!r}; known: {', '.join(k.name for k in KERNELS)}")


def gcc() -> str | None:
    """The path of gcc, or None: gcc is a benchmark/test tool only, never a dependency."""
    return shutil.which("gcc")


def compile_c(k: Kernel, opt: str, out_dir: Path) -> Path:
    """Compile ``k``'s C twin with ``gcc -<opt>`` into ``out_dir``; the executable."""
    exe = out_dir / f"{k.name}-c{opt}"
    if exe.exists():  # built earlier in this directory (the tables share one)
        return exe
    subprocess.run([gcc() or "gcc", f"-{opt}", "-o", str(exe), str(k.c)], check=True,
                   capture_output=True, text=True)
    return exe


@dataclass(frozen=True, slots=True)
class Run:
    """One process run: what it printed, how it ended, how long it took (wall clock)."""

    stdout: str
    status: int
    stderr: str
    seconds: float


def run_exe(exe: Path, args: tuple[str, ...], timeout: float = 300.0) -> Run:
    """Run an executable once with ``args``; a timeout becomes status -1, not an exception."""
    t0 = time.perf_counter()
    try:
        p = subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return Run("", -1, f"timed out after {timeout:.0f} s", time.perf_counter() - t0)
    return Run(p.stdout, p.returncode, p.stderr.strip(), time.perf_counter() - t0)


def best_runs(exes: dict[str, Path], args: tuple[str, ...], repeat: int = 3
              ) -> dict[str, Run]:
    """The fastest of ``repeat`` runs of each executable, taken in turns (a, b, c, a, b,
    c, ...) so that a busy machine slows them all alike. An executable whose run fails
    is not run again (that run is its result), and one printing something else than its
    first run did fails too."""
    best: dict[str, Run] = {}
    for _ in range(repeat):
        for name, exe in exes.items():
            if name in best and best[name].status != 0:
                continue
            r = run_exe(exe, args)
            first = best.get(name)
            if first is not None and r.status == 0 and r.stdout != first.stdout:
                r = Run(r.stdout, -2, f"printed {r.stdout.strip()!r} after "
                        f"{first.stdout.strip()!r} in an earlier run", r.seconds)
            if first is None or r.status != 0 or r.seconds < first.seconds:
                best[name] = r
    return best


def best_run(exe: Path, args: tuple[str, ...], repeat: int = 3) -> Run:
    """The fastest of ``repeat`` runs of one executable (see :func:`best_runs`)."""
    return best_runs({"exe": exe}, args, repeat)["exe"]


def interpret(k: Kernel, args: tuple[str, ...]) -> Run:
    """Run ``k`` through the reference quads interpreter in process (step limit lifted:
    the kernels are long on purpose); ``seconds`` covers the run only, not the compile."""
    from ssa_course.compilation import load_file
    from ssa_course.runtime import Limits
    from ssa_course.stages import run

    comp = load_file(str(k.tiny))
    comp.quads  # noqa: B018 - build the quads first, so the timing is of the run
    t0 = time.perf_counter()
    r = run(comp, list(args), via="quads", limits=Limits(steps=10**12))
    return Run(r.stdout, r.status, r.error, time.perf_counter() - t0)


def cli() -> list[str]:
    """The command that runs this interpreter's ``ssa-course`` CLI."""
    return [sys.executable, "-m", "ssa_course"]
