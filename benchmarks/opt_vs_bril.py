"""``ssa-course opt`` on Bril's core benchmarks, measured by Bril's own tools.

Usage: ``python benchmarks/opt_vs_bril.py BRIL_CHECKOUT [--deno DENO] [NAME ...]``

For every ``benchmarks/core/*.bril`` of a checkout of Bril's repository (or the NAMEs
given), with the arguments of its ``# ARGS:`` line, it prints the dynamic instruction
counts that Bril's reference interpreter (``brili -p``) reports for

* the program itself (``input``),
* the program after ``ssa-course opt`` (``opt``; its output must equal the input's),
* the program after Bril's example local value numbering and dead-code elimination
  (``examples/lvn.py -p -c -f`` then ``examples/tdce.py tdce+``, as Bril's brench
  example configures them),

then how many benchmarks ``opt`` leaves no slower than the input and beats LVN+DCE on,
and the geometric means. The exit status is 1 when ``opt`` executes more instructions
than the input anywhere, changes an output, or writes a program brili rejects. Needs
``deno`` (``pip install deno``); not part of ``make test`` (CI has no checkout).
"""

from __future__ import annotations

import argparse
import math
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ssa_course import passes
from ssa_course.compilation import compile_source
from ssa_course.quads.bril import dumps_json

_ARGS = re.compile(r"^#\s*ARGS:(.*)$", re.M)
_COUNT = re.compile(r"total_dyn_inst: (\d+)")


def brili(bril: Path, deno: str, program_json: str, args: list[str]) -> tuple[str, int | None,
                                                                                 str]:
    """(stdout, dynamic instruction count or None, stderr) of brili on a JSON program."""
    r = subprocess.run([deno, "run", "--quiet", "--no-config", str(bril / "brili.ts"), "-p",
                        *args], input=program_json, capture_output=True, text=True,
                       timeout=600)
    m = _COUNT.search(r.stderr)
    return r.stdout, int(m.group(1)) if m else None, r.stderr.strip()


def lvn_dce(bril: Path, program_json: str) -> str:
    """Bril's example LVN, then its dead-code elimination, on a JSON program."""
    examples = bril / "examples"
    out = subprocess.run([sys.executable, str(examples / "lvn.py"), "-p", "-c", "-f"],
                         input=program_json, capture_output=True, text=True, check=True)
    out = subprocess.run([sys.executable, str(examples / "tdce.py"), "tdce+"],
                         input=out.stdout, capture_output=True, text=True, check=True)
    return out.stdout


def measure(bril: Path, deno: str, path: Path) -> tuple[int, int, int, str]:
    """(input, opt, LVN+DCE) counts of one benchmark, and what went wrong ('' if nothing)."""
    text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
    m = _ARGS.search(text)
    args = m.group(1).split() if m else []
    source = dumps_json(compile_source(text, path.name).quads)
    want, n_in, err = brili(bril, deno, source, args)
    if n_in is None:
        return 0, 0, 0, f"brili rejects the input: {err}"
    optimized = passes.emit(passes.run_pipeline(compile_source(text, path.name)), "bril-json")
    got, n_opt, err = brili(bril, deno, optimized, args)
    _, n_lvn, _ = brili(bril, deno, lvn_dce(bril, source), args)
    if n_opt is None or got != want:
        return n_in, n_opt or 0, n_lvn or 0, f"opt output differs or is rejected: {err}"
    if n_opt > n_in:
        return n_in, n_opt, n_lvn or 0, "opt executes more instructions than the input"
    return n_in, n_opt, n_lvn or 0, ""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bril", type=Path, help="a checkout of Bril's repository")
    ap.add_argument("--deno", default="deno", help="the deno executable")
    ap.add_argument("names", nargs="*", help="benchmarks to run (default: all)")
    opts = ap.parse_args()
    paths = sorted((opts.bril / "benchmarks" / "core").glob("*.bril"))
    if opts.names:
        paths = [p for p in paths if p.stem in opts.names]
    print(f"{'benchmark':28} {'input':>9} {'opt':>9} {'lvn+dce':>9} {'opt/in':>7}")
    rows, failures = [], 0
    for path in paths:
        n_in, n_opt, n_lvn, problem = measure(opts.bril, opts.deno, path)
        failures += bool(problem)
        ratio = f"{n_opt / n_in:7.3f}" if n_in else "      -"
        print(f"{path.stem:28} {n_in:>9} {n_opt:>9} {n_lvn:>9} {ratio} {problem}", flush=True)
        if n_in and n_opt and n_lvn:
            rows.append((n_in, n_opt, n_lvn))
    if rows:
        n = len(rows)
        geo = math.exp(sum(math.log(o / i) for i, o, _ in rows) / n)
        geo_lvn = math.exp(sum(math.log(v / i) for i, _, v in rows) / n)
        print(f"opt <= input: {sum(o <= i for i, o, _ in rows)}/{n}; "
              f"opt < LVN+DCE: {sum(o < v for _, o, v in rows)}/{n}; "
              f"opt <= LVN+DCE: {sum(o <= v for _, o, v in rows)}/{n}; "
              f"geometric mean opt/input {geo:.3f} (LVN+DCE {geo_lvn:.3f})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
