"""Compile time and peak memory of ``ssa-course compile`` on a long straight-line ``main``
(issue #39 item 5; run with ``make bench``).

Each program is ``fn f1(x: int) -> int { ... }`` and a ``main`` of N statements
``t = t + f1(n + k);`` (k = 1..N), then ``print(t)``: after inlining, one block of N
independent values summed into one chain. Before the in-block order of the global code
motion placed each value just before its first use, every ``n + k`` was computed at the
top of the block and stayed live to its use. Each cell compiles in a fresh process
(``os.wait4`` gives that process's own peak RSS and CPU time) and prints wall and CPU
seconds, peak MB, MB and milliseconds per statement (of CPU time: on a shared machine the
wall clock also counts the other processes' turns), and the ratios to the 1k row (flat is
linear).

Shapes: ``square`` (``return x * x;``) and ``issue`` (``return x * 2 + 1;``, the issue's
own program). Knobs (environment variables): ``COMPILE_MEMORY_SIZES`` (default
``1000,10000,30000``), ``COMPILE_MEMORY_SHAPES`` (default ``square,issue``),
``COMPILE_MEMORY_LIMIT`` (seconds per cell, default 600); a row whose cell failed or took
longer than ``COMPILE_MEMORY_SKIP`` seconds (default 120) skips its larger sizes.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BODIES = {"square": "return x * x;", "issue": "return x * 2 + 1;"}


def program(statements: int, body: str) -> str:
    """The generated program: ``statements`` calls of ``f1`` summed in ``main``."""
    lines = [f"fn f1(x: int) -> int {{ {body} }}", "fn main(n: int) {", "    var t = 0;"]
    lines += [f"    t = t + f1(n + {k});" for k in range(1, statements + 1)]
    lines += ["    print(t);", "}", ""]
    return "\n".join(lines)


def measure(source: Path, out: Path, limit: float) -> tuple[float, float, float, int, str]:
    """(wall seconds, CPU seconds, peak MB, exit status, last line of stderr) of one
    compile."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "ssa_course", "compile", str(source), "-o", str(out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT)
    killer = threading.Timer(limit, lambda: proc.send_signal(signal.SIGKILL))
    killer.start()
    try:
        assert proc.stderr is not None
        err = proc.stderr.read().decode(errors="replace")
        # wait4, not wait: this child's own rusage (RUSAGE_CHILDREN is the max over all)
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        killer.cancel()
    seconds = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    proc.returncode = code  # reaped by wait4: Popen must not wait again
    last = err.strip().splitlines()[-1] if err.strip() else ""
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, code, last


def main() -> int:
    sizes = [int(s) for s in os.environ.get("COMPILE_MEMORY_SIZES", "1000,10000,30000")
             .split(",")]
    shapes = os.environ.get("COMPILE_MEMORY_SHAPES", "square,issue").split(",")
    limit = float(os.environ.get("COMPILE_MEMORY_LIMIT", "600"))
    skip = float(os.environ.get("COMPILE_MEMORY_SKIP", "120"))
    print("Compile time and peak memory: `ssa-course compile`, main of N statements "
          "t = t + f1(n + k)")
    print(f"{'shape':>7} {'statements':>10} {'seconds':>8} {'CPU s':>8} {'peak MB':>8} "
          f"{'MB/stmt':>8} {'ms/stmt':>8} {'ratio MB':>8} {'ratio ms':>8}  status")
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for shape in shapes:
            base: tuple[float, float] | None = None
            skipping = ""
            for n in sizes:
                if skipping:
                    print(f"{shape:>7} {n:>10}  skipped ({skipping})")
                    continue
                src = Path(tmp) / f"{shape}{n}.tiny"
                src.write_text(program(n, BODIES[shape]))
                secs, cpu, mb, code, last = measure(src, Path(tmp) / "a.out", limit)
                per_mb, per_ms = mb / n, 1000 * cpu / n
                if base is None:
                    base = (per_mb, per_ms)
                status = "ok" if code == 0 else f"exit {code}: {last[:70]}"
                print(f"{shape:>7} {n:>10} {secs:>8.2f} {cpu:>8.2f} {mb:>8.1f} {per_mb:>8.4f} "
                      f"{per_ms:>8.2f} {per_mb / base[0]:>8.2f} {per_ms / base[1]:>8.2f}  "
                      f"{status}", flush=True)
                if code != 0:
                    failed = True
                    skipping = f"{n} failed"
                elif secs > skip:
                    skipping = f"{n} took {secs:.0f} s"
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
