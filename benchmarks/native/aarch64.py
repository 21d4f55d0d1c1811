"""AArch64: our code against ``aarch64-linux-gnu-gcc -O1`` on the kernels of
``native_kernels.py``, as instructions executed and as time under qemu.

Run by ``make bench-native`` after the x86-64 table (``bench.py``), or alone:
``python benchmarks/native/aarch64.py [--kernels fib,sieve] [--size interp]``.

* **instructions**: both executables run under unicorn's ARM64 CPU
  (:func:`ssa_course.codegen.aarch64.emulate.run_counted`: a block hook adds each executed
  block's length), at the ``interp`` size; from each count the count of an empty program
  built the same way is subtracted (our runtime's start-up; the shim's), so the ratio is
  the kernels' own. The C side is freestanding: ``aarch64_shim/`` gives it ``strtoll``,
  ``calloc``, a ``printf`` for ``%lld`` and ``_start`` over the same three system calls as
  our runtime, so no libc start-up is counted and both run under the same emulator.
* **time**: both executables under ``qemu-aarch64`` at the ``bench`` size, best of 3,
  the children's user + system CPU time (the machine is shared: wall-clock time is noise).

Goal (issue #21): geometric mean of ours/O1 instructions at most 1.3.
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent.parent))

from native_kernels import KERNELS, Kernel, kernel  # noqa: E402

TARGET = 1.3
SHIM = HERE / "aarch64_shim"
EMPTY_C = "int main(int argc, char **argv) { (void)argc; (void)argv; return 0; }\n"
EMPTY_TINY = "fn main() {\n}\n"


def cross_gcc() -> str | None:
    return shutil.which("aarch64-linux-gnu-gcc")


def build_c(source: Path, out: Path) -> Path:
    subprocess.run([cross_gcc() or "aarch64-linux-gnu-gcc", "-O1", "-static", "-nostdlib",
                    "-ffreestanding", "-fno-stack-protector", f"-I{SHIM}", "-o", str(out),
                    str(source), str(SHIM / "shim.c"), "-lgcc"], check=True)
    return out


def build_ours(source: Path, out: Path) -> Path:
    from ssa_course.cli import main

    status = main(["compile", "--target", "aarch64", "-o", str(out), str(source)])
    if status != 0:
        raise RuntimeError(f"ssa-course compile --target aarch64 {source} failed ({status})")
    return out


def count(exe: Path, args: tuple[str, ...]) -> tuple[int, str]:
    from ssa_course.codegen.aarch64.emulate import run_counted

    result, n = run_counted(exe.read_bytes(), list(args), timeout_s=600)
    if result.status != 0:
        raise RuntimeError(f"{exe.name} {' '.join(args)}: status {result.status}: "
                           f"{result.stderr.strip()}")
    return n, result.stdout


def cpu_seconds(exe: Path, args: tuple[str, ...], repeat: int) -> tuple[float, str]:
    """Best user + system CPU time of ``qemu-aarch64 exe args`` over ``repeat`` runs."""
    qemu = shutil.which("qemu-aarch64") or "qemu-aarch64"
    best, out = math.inf, ""
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        done = subprocess.run([qemu, str(exe), *args], capture_output=True, text=True,
                              timeout=600, check=False)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            raise RuntimeError(f"{exe.name}: status {done.returncode}: {done.stderr.strip()}")
        best = min(best, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        out = done.stdout
    return best, out


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else math.nan


def missing() -> str | None:
    from ssa_course.codegen.aarch64 import toolchain

    if cross_gcc() is None:
        return ("no aarch64-linux-gnu-gcc: install gcc-aarch64-linux-gnu for the aarch64 "
                "table")
    return toolchain.emulator_missing()


def table(kernels: list[Kernel], size: str, time_size: str, repeat: int) -> list[str]:
    """Print the aarch64 table; returns loud lines (mismatches)."""
    from ssa_course.codegen.aarch64 import toolchain

    have_qemu = toolchain.qemu_missing() is None
    loud: list[str] = []
    with tempfile.TemporaryDirectory(prefix="ssa-bench-a64-") as d:
        tmp = Path(d)
        (tmp / "empty.c").write_text(EMPTY_C)
        (tmp / "empty.tiny").write_text(EMPTY_TINY)
        base_c = count(build_c(tmp / "empty.c", tmp / "empty-c"), ())[0]
        base_ours = count(build_ours(tmp / "empty.tiny", tmp / "empty-ours"), ())[0]
        print(f"AArch64: ours vs aarch64-linux-gnu-gcc -O1 ({size} size: instructions "
              f"executed under unicorn, less an empty program's: ours {base_ours}, "
              f"C {base_c}; {time_size} size: qemu-aarch64 CPU seconds, best of {repeat})")
        print(f"{'kernel':>15} {'args':>12} {'ours':>11} {'gcc-O1':>11} {'ours/O1':>8} "
              f"{'args':>12} {'ours s':>7} {'O1 s':>7} {'ours/O1':>8}")
        ratios: list[float] = []
        times: list[float] = []
        for k in kernels:
            c_exe = build_c(k.c, tmp / f"{k.name}-c")
            ours_exe = build_ours(k.tiny, tmp / f"{k.name}-ours")
            args = k.args(size)
            n_c, out_c = count(c_exe, args)
            n_ours, out_ours = count(ours_exe, args)
            if out_c != out_ours:
                loud.append(f"!!! MISMATCH {k.name}: gcc printed {out_c.strip()!r}, ours "
                            f"{out_ours.strip()!r}")
            r = (n_ours - base_ours) / max(1, n_c - base_c)
            ratios.append(r)
            t_cells = f"{'-':>12} {'-':>7} {'-':>7} {'-':>8}"
            if have_qemu:
                targs = k.args(time_size)
                t_ours, o1 = cpu_seconds(ours_exe, targs, repeat)
                t_c, o2 = cpu_seconds(c_exe, targs, repeat)
                if o1 != o2:
                    loud.append(f"!!! MISMATCH {k.name} under qemu at {' '.join(targs)}")
                rt = t_ours / t_c if t_c > 0 else math.nan
                times.append(rt)
                t_cells = f"{' '.join(targs):>12} {t_ours:>7.3f} {t_c:>7.3f} {rt:>8.2f}"
            print(f"{k.name:>15} {' '.join(args):>12} {n_ours - base_ours:>11} "
                  f"{n_c - base_c:>11} {r:>8.2f} {t_cells}")
        g = geomean(ratios)
        gt = f"{geomean(times):>8.2f}" if times else f"{'-':>8}"
        print(f"{'geometric mean':>15} {'':>12} {'':>11} {'':>11} {g:>8.2f} {'':>12} "
              f"{'':>7} {'':>7} {gt}")
        verdict = "met" if g <= TARGET else "MISSED"
        print(f"target: geometric mean of ours/O1 instructions <= {TARGET}: {verdict} "
              f"({g:.2f})")
        if not have_qemu:
            print(f"note: {toolchain.qemu_missing()}")
    return loud


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", help="comma-separated kernel names (default: all)")
    ap.add_argument("--count-size", default="interp", choices=("test", "interp", "bench"),
                    help="size of the instruction counts (default: interp)")
    ap.add_argument("--time-size", default="bench", choices=("test", "interp", "bench"),
                    help="size of the qemu times (default: bench)")
    ap.add_argument("--repeat", type=int, default=3, help="qemu runs per time (best of)")
    # bench.py's options come along from make bench-native: the ones this table does
    # not have are its own business
    opts, _ = ap.parse_known_args(argv)
    try:
        kernels = [kernel(n) for n in opts.kernels.split(",")] if opts.kernels else \
            list(KERNELS)
    except KeyError as e:
        print(f"error: {e.args[0]}", file=sys.stderr)
        return 2
    why = missing()
    if why:
        print(f"note: {why}: no aarch64 table")
        return 0
    os.environ.setdefault("SSA_COURSE_NATIVE_DIR", tempfile.gettempdir())
    loud = table(kernels, opts.count_size, opts.time_size, opts.repeat)
    for line in loud:
        print(line)
    return 1 if loud else 0


if __name__ == "__main__":
    sys.exit(main())
