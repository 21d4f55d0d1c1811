"""x86-64: instructions executed by our code and by ``gcc -O1`` on the kernels of
``native_kernels.py`` (valgrind's callgrind counts them), the exact measure of the code.

Run by ``make bench-native`` after the AArch64 table, or alone:
``python benchmarks/native/x86_counts.py [--kernels fib,nqueens] [--count-size interp]``.

Wall clock on a shared machine moves a kernel by +-0.1 between runs (``bench.py``), and
code placement alone moves a tight loop that much; an instruction count does not move.
Both executables run under ``valgrind --tool=callgrind`` at the ``interp`` size (our
static executable as ``ssa-course compile`` makes it, without fuel checks; the C twin
as ``bench.py`` builds it, dynamically linked), and from each count the count of an empty
program built the same way is subtracted (our runtime's start-up; libc's, plus one
``printf``), so the ratio is the kernels' own. Fewer instructions is not always less
time (a three-component ``lea`` is one instruction and three cycles), so ``bench.py``
stays the judge of speed; this table says what a change did to the code.
"""

from __future__ import annotations

import argparse
import math
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent.parent))

from native_kernels import KERNELS, Kernel, compile_c, gcc, kernel  # noqa: E402
from ours import build_native  # noqa: E402

EMPTY_C = '#include <stdio.h>\nint main(int c, char **v) { printf("%d\\n", c); return 0; }\n'
EMPTY_TINY = "fn main() {\n}\n"


def missing() -> str | None:
    """None when the table can be made, else the one-line reason."""
    if shutil.which("valgrind") is None:
        return "no valgrind: install valgrind for the x86-64 instruction table"
    if gcc() is None:
        return "no gcc: the x86-64 instruction table compares with gcc -O1"
    if sys.platform != "linux" or not _x86_64():
        return "the x86-64 instruction table needs an x86-64 Linux machine"
    return None


def _x86_64() -> bool:
    import platform

    return platform.machine() in ("x86_64", "AMD64")


def count(exe: Path, args: tuple[str, ...]) -> tuple[int, str]:
    """Instructions ``exe args`` executed (callgrind's ``Ir``) and what it printed."""
    p = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                        str(exe), *args], capture_output=True, text=True, timeout=1800)
    m = re.search(r"Collected : (\d+)", p.stderr)
    if p.returncode != 0 or m is None:
        raise RuntimeError(f"{exe.name} {' '.join(args)}: status {p.returncode}: "
                           f"{p.stderr.strip()[-300:]}")
    return int(m.group(1)), p.stdout


def table(kernels: list[Kernel], size: str) -> list[str]:
    """Print the table; returns loud lines (mismatches)."""
    loud: list[str] = []
    with tempfile.TemporaryDirectory(prefix="ssa-bench-x86-") as d:
        tmp = Path(d)
        (tmp / "empty.c").write_text(EMPTY_C)
        (tmp / "empty.tiny").write_text(EMPTY_TINY)
        subprocess.run([gcc() or "gcc", "-O1", "-o", str(tmp / "empty-c"),
                        str(tmp / "empty.c")], check=True)
        error = build_native(tmp / "empty.tiny", tmp / "empty-ours")
        if error is not None:
            raise RuntimeError(f"ssa-course compile of an empty program: {error}")
        base_c = count(tmp / "empty-c", ())[0]
        base_ours = count(tmp / "empty-ours", ())[0]
        print(f"x86-64: ours vs gcc -O1 ({size} size: instructions executed under valgrind "
              f"--tool=callgrind, less an empty program's: ours {base_ours}, C {base_c})")
        print(f"{'kernel':>15} {'args':>12} {'ours':>11} {'gcc-O1':>11} {'ours/O1':>8}")
        ratios: list[float] = []
        for k in kernels:
            c_exe = compile_c(k, "O1", tmp)
            ours_exe = tmp / f"{k.name}-ours"
            error = build_native(k.tiny, ours_exe)
            if error is not None:
                loud.append(f"!!! FAILED {k.name}: ssa-course compile: {error}")
                continue
            args = k.args(size)
            n_c, out_c = count(c_exe, args)
            n_ours, out_ours = count(ours_exe, args)
            if out_c != out_ours:
                loud.append(f"!!! MISMATCH {k.name}: gcc printed {out_c.strip()!r}, ours "
                            f"{out_ours.strip()!r}")
            r = (n_ours - base_ours) / max(1, n_c - base_c)
            ratios.append(r)
            print(f"{k.name:>15} {' '.join(args):>12} {n_ours - base_ours:>11} "
                  f"{n_c - base_c:>11} {r:>8.2f}")
        if ratios:
            g = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
            print(f"{'geometric mean':>15} {'':>12} {'':>11} {'':>11} {g:>8.2f}")
    return loud


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", help="comma-separated kernel names (default: all)")
    ap.add_argument("--count-size", default="interp", choices=("test", "interp", "bench"),
                    help="the kernels' argument size (default: interp)")
    args, _ = ap.parse_known_args(argv)  # bench.py's options (make NATIVE_ARGS) pass by
    try:
        kernels = ([kernel(n) for n in args.kernels.split(",")] if args.kernels
                   else list(KERNELS))
    except KeyError as e:
        print(f"error: {e.args[0]}", file=sys.stderr)
        return 2
    reason = missing()
    if reason is not None:
        print(f"note: {reason}")
        return 0
    loud = table(kernels, args.count_size)
    for line in loud:
        print(line)
    return 1 if loud else 0


if __name__ == "__main__":
    sys.exit(main())
