"""Conformance with Bril's reference tools, over Bril's own core benchmarks.

Usage: ``python tools/bril_conformance.py BRIL_CHECKOUT [-j N] [-k SUBSTRING]``
(``make bril-conformance BRIL=...`` installs deno and lark first).

For every ``BRIL_CHECKOUT/benchmarks/{core,float,mem,mixed}/NAME.bril``, with the
arguments of its ``# ARGS:`` line:

(a) ``ssa-course run --profile`` prints ``NAME.out`` and the ``total_dyn_inst`` of
    ``NAME.prof`` (the reference interpreter's numbers, stored in the checkout);
(b) ``ssa-course opt NAME.bril --emit bril-json`` is accepted by brili, prints the same
    output, and executes no more instructions (``brili -p``) than the input does;
(d) ``ssa-course run --via native`` prints ``NAME.out`` (x86-64 machine code, lesson 11),
    when this machine can run it (``--via STAGE``: another machine-code stage, e.g.
    ``emulated-aarch64`` or ``qemu-aarch64``); a program the machine code refuses in one
    line ("does not support ... yet") is a note, not a failure;
(c) for comparison, the count after Bril's own local value numbering and dead code
    elimination (``lvn.py -p -c -f | tdce.py tdce+``, as Bril's brench example runs them),
    when the checkout has ``examples/lvn.py`` and ``examples/tdce.py``.

It also runs Bril's own interpreter tests (``test/interp/{core,ssa,float,mem,char,mixed,
bitcast}`` and ``test/interp-error/{core,ssa,mem,char}-error``) through brili and ``ssa-course
run --profile`` and compares status, output and ``total_dyn_inst``; an error brili finds while
running that our static checks reject at load (status 1, nothing printed) is reported as
"rejected at load" (``bitcast``, which the checkout's brili does not run, is compared with
its stored ``.out``). A table gives, per folder: programs run, stdout equal, dyn_inst equal,
errors matched.

It prints one row per benchmark and totals -- the geometric mean of opt/input over the core
benchmarks, and over mem + float + mixed (issue #36's figure) -- and exits 1 when any (a)
or (b) check fails or an interpreter test differs (2 when the checkout or the tools are
missing). It is not part of ``make test``: it needs a Bril checkout, deno and lark, none of
which the project depends on.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

BENCHMARK_STEPS = "1000000000"
TIMEOUT = 300  # seconds per tool run; the slowest core benchmark takes a few seconds
_ARGS_LINE = re.compile(r"^\s*#\s*ARGS:(.*)$")  # Bril writes "# ARGS:" and sometimes "#ARGS:"
_PROFILE = re.compile(r"total_dyn_inst:\s*(\d+)")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")  # deno colours its own crash reports


class SetupError(Exception):
    """The checkout or a tool is missing: nothing can be compared."""


@dataclass(slots=True)
class Tools:
    """How to run each program the comparison needs (argument lists for subprocess)."""

    checkout: Path
    python: str
    deno: str
    native: bool = False  # can this machine run the machine code (lesson 11)?
    via: str = "native"  # the machine-code stage of (d)

    def brili(self, profile: bool, args: list[str]) -> list[str]:
        # brili recurses in JavaScript once per Bril call: `tail-call` (1500 deep) overflows
        # V8's default stack of about 1 MB now and then (deterministically on some
        # machines), for the input as for any output. 4 MB stays well inside the 8 MB a
        # process's main thread gets by default.
        return [self.deno, "run", "--quiet", "--no-config", "--v8-flags=--stack-size=4000",
                str(self.checkout / "brili.ts"), *(["-p"] if profile else []), *args]

    def bril2json(self) -> list[str]:
        code = ("import sys; sys.path.insert(0, sys.argv[1]); import briltxt; "
                "briltxt.bril2json()")
        return [self.python, "-c", code, str(self.checkout / "bril-txt")]

    def ours(self, *argv: str) -> list[str]:
        return [sys.executable, "-m", "ssa_course", *argv]

    def example(self, script: str, *argv: str) -> list[str] | None:
        path = self.checkout / "examples" / script
        return [self.python, str(path), *argv] if path.exists() else None


@dataclass(slots=True)
class Row:
    """What one benchmark gave; ``problems`` lists every failed (a)/(b) check."""

    name: str
    folder: str = "core"  # the benchmarks/ folder it comes from
    ref_count: int | None = None
    our_count: int | None = None
    input_count: int | None = None
    opt_count: int | None = None
    lvn_count: int | None = None
    native: bool | None = None  # (d): None when native runs are impossible here
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ratio(self) -> float | None:
        if self.opt_count is None or not self.input_count:
            return None
        return self.opt_count / self.input_count

    @property
    def lvn_ratio(self) -> float | None:
        if self.lvn_count is None or not self.input_count:
            return None
        return self.lvn_count / self.input_count


@dataclass(slots=True)
class Result:
    status: int
    stdout: str
    stderr: str

    def count(self) -> int | None:
        m = _PROFILE.search(self.stderr)
        return int(m.group(1)) if m else None

    def first_error_line(self) -> str:
        lines = [ln for ln in self.stderr.splitlines() if ln.strip()
                 and not _PROFILE.search(ln)]
        return _ANSI.sub("", lines[0])[:120] if lines else f"exit status {self.status}"


def run(argv: list[str], stdin: str = "") -> Result:
    try:
        done = subprocess.run(argv, input=stdin, capture_output=True, text=True,
                              timeout=TIMEOUT, check=False, env={**os.environ, "NO_COLOR": "1"})
    except subprocess.TimeoutExpired:
        return Result(124, "", f"timed out after {TIMEOUT} s: {' '.join(argv[:3])} ...")
    except OSError as e:
        return Result(127, "", f"cannot run {argv[0]}: {e.strerror}")
    return Result(done.returncode, done.stdout, done.stderr)


def pipe(stages: list[list[str]], stdin: str) -> Result:
    """Run ``stages`` as a shell-free pipeline; stops at the first failing stage."""
    result = Result(0, stdin, "")
    for argv in stages:
        result = run(argv, result.stdout)
        if result.status != 0:
            return result
    return result


def args_of(source: str) -> list[str]:
    for line in source.splitlines():
        m = _ARGS_LINE.match(line.rstrip("\r"))
        if m:
            return m.group(1).split()
    return []


def check_benchmark(path: Path, tools: Tools) -> Row:
    row = Row(path.stem, path.parent.name)
    source = path.read_text()
    args = args_of(source)
    expected = path.with_suffix(".out").read_text() if path.with_suffix(".out").exists() \
        else None
    prof = path.with_suffix(".prof")
    if prof.exists():
        m = _PROFILE.search(prof.read_text())
        row.ref_count = int(m.group(1)) if m else None

    # (a) our interpreter against the stored reference output and count
    # a step limit above the default 10 million: harmonic-sum and leibniz (benchmarks/float)
    # execute 11 and 12.5 million instructions
    ours = run(tools.ours("run", "--profile", "--steps", BENCHMARK_STEPS, str(path), *args))
    row.our_count = ours.count()
    if ours.status != 0:
        row.problems.append(f"run: {ours.first_error_line()}")
    elif expected is not None and ours.stdout != expected:
        row.problems.append("run: output differs from .out")
    if row.ref_count is not None and ours.status == 0 and row.our_count != row.ref_count:
        row.problems.append(f"run: total_dyn_inst {row.our_count} != {row.ref_count}")

    # (d) the machine code (lesson 11), when this machine can run it
    if tools.native:
        native = run(tools.ours("run", "--via", tools.via, "--steps", BENCHMARK_STEPS,
                                str(path), *args))
        row.native = native.status == 0 and (expected is None or native.stdout == expected)
        if native.status == 1 and "does not support" in native.stderr:
            row.native = None  # refused in one line
            row.notes.append(f"{tools.via}: {native.first_error_line()}")
        elif not row.native:
            row.problems.append(f"{tools.via}: "
                                f"{native.first_error_line() or 'output differs'}")

    # the input as brili sees it (Bril's own text-to-JSON), and its dynamic count
    as_json = run(tools.bril2json(), source)
    if as_json.status != 0:
        row.notes.append(f"bril2json: {as_json.first_error_line()}")
        return row
    base = run(tools.brili(True, args), as_json.stdout)
    row.input_count = base.count() if base.status == 0 else None
    if base.status != 0:
        row.notes.append(f"brili on the input: {base.first_error_line()}")

    # (b) our optimizer's output, run by brili
    opt = run(tools.ours("opt", str(path), "--emit", "bril-json"))
    if opt.status != 0:
        row.problems.append(f"opt: {opt.first_error_line()}")
    else:
        on_brili = run(tools.brili(True, args), opt.stdout)
        row.opt_count = on_brili.count() if on_brili.status == 0 else None
        if on_brili.status != 0:
            row.problems.append(f"brili rejects opt output: {on_brili.first_error_line()}")
        elif expected is not None and on_brili.stdout != expected:
            row.problems.append("opt output prints something else under brili")
        elif (row.opt_count is not None and row.input_count is not None
              and row.opt_count > row.input_count):
            row.problems.append(f"opt executes more: {row.opt_count} > {row.input_count}")

    # (c) Bril's own LVN + trivial DCE, for comparison only
    lvn = tools.example("lvn.py", "-p", "-c", "-f")
    tdce = tools.example("tdce.py", "tdce+")
    if lvn and tdce:
        done = pipe([lvn, tdce, tools.brili(True, args)], as_json.stdout)
        row.lvn_count = done.count() if done.status == 0 else None
        if done.status != 0:
            row.notes.append(f"lvn+dce: {done.first_error_line()}")
    return row


# Bril's own interpreter tests (all of them: ssa_course reads every extension but imports).
INTERP_TEST_DIRS = ("test/interp/core", "test/interp/ssa", "test/interp/float",
                    "test/interp/mem", "test/interp/char", "test/interp/mixed",
                    "test/interp/bitcast", "test/interp-error/core-error",
                    "test/interp-error/ssa-error", "test/interp-error/mem-error",
                    "test/interp-error/char-error")
# Every benchmark folder goes through the full comparison; issue #36's figure is the
# geometric mean over the last three.
BENCHMARK_DIRS = ("benchmarks/core", "benchmarks/float", "benchmarks/mem", "benchmarks/mixed")
FULL_BRIL = ("float", "mem", "mixed")
# the stages check (d) may run (``--via``): machine code of either CPU
MACHINE_STAGES = ("native", "emulated", "native-aarch64", "emulated-aarch64", "qemu-aarch64")
# The checkout's brili does not run these (brilirs does): their stored .out stands for it.
_BITCAST = re.compile(r"\bbits2float\b|\bfloat2bits\b")


@dataclass(slots=True)
class InterpCase:
    """brili and ``ssa-course run`` on one of Bril's interpreter tests (or a benchmark of
    an extra folder, whose stored .out/.prof stand for brili)."""

    name: str
    folder: str
    brili: Result
    ours: Result

    def verdict(self) -> str:
        b, o = self.brili, self.ours
        if b.status == 0:
            return "same" if (o.status, o.stdout) == (0, b.stdout) else "DIFF"
        if o.status == 0:
            return "DIFF"
        if o.status == 1 and not o.stdout:
            return "rejected at load"  # our static check; brili finds it while running
        return "same" if (o.status, o.stdout) == (b.status, b.stdout) else "DIFF"

    def counts_equal(self) -> bool | None:
        """Same total_dyn_inst (None: not comparable, e.g. an error run)."""
        if self.brili.status != 0 or self.ours.status != 0 or self.brili.count() is None:
            return None  # (a stored .out without a .prof: bitcast)
        return self.brili.count() == self.ours.count()


def check_interp_test(path: Path, tools: Tools) -> InterpCase:
    source = path.read_text()
    args = args_of(source)
    if _BITCAST.search(source):
        return check_stored_benchmark(path, tools)
    brili = pipe([tools.bril2json(), tools.brili(True, args)], source)
    ours = run(tools.ours("run", "--profile", str(path), *args))
    folder = str(path.parent.relative_to(tools.checkout))
    return InterpCase(f"{folder}/{path.stem}", folder, brili, ours)


def check_stored_benchmark(path: Path, tools: Tools) -> InterpCase:
    """A benchmark of an extra folder against its stored .out and .prof (brili's)."""
    source = path.read_text()
    args = args_of(source)
    expected = path.with_suffix(".out").read_text() if path.with_suffix(".out").exists() \
        else ""
    prof = path.with_suffix(".prof")
    stored = Result(0, expected, prof.read_text() if prof.exists() else "")
    ours = run(tools.ours("run", "--profile", str(path), *args))
    folder = str(path.parent.relative_to(tools.checkout))
    return InterpCase(f"{folder}/{path.stem}", folder, stored, ours)


def interp_report(cases: list[InterpCase]) -> str:
    lines = ["", "Bril's interpreter tests (status and output, brili vs ssa-course run):"]
    width = max(len(c.name) for c in cases)
    for c in cases:
        lines.append(f"  {c.name:<{width}}  brili {c.brili.status}  ours {c.ours.status}  "
                     f"{c.verdict():<16}  {c.ours.first_error_line() if c.ours.status else ''}")
    counts: dict[str, int] = {}
    for c in cases:
        counts[c.verdict()] = counts.get(c.verdict(), 0) + 1
    lines.append("  " + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())))
    return "\n".join(lines) + "\n" + folder_table(cases)


def folder_table(cases: list[InterpCase]) -> str:
    """One row per folder: programs run, stdout equal (runs that succeed in brili),
    total_dyn_inst equal, errors matched (brili stops with an error and so do we, at run
    time with its status or at load)."""
    folders: dict[str, list[InterpCase]] = {}
    for c in cases:
        folders.setdefault(c.folder, []).append(c)
    head = ("folder", "ran", "stdout equal", "dyn_inst equal", "errors matched")
    table = [head]
    for name, group in folders.items():
        good = [c for c in group if c.brili.status == 0]
        bad = [c for c in group if c.brili.status != 0]
        out_eq = sum(1 for c in good if c.verdict() == "same")
        counted = [c for c in good if c.counts_equal() is not None]
        dyn_eq = sum(1 for c in counted if c.counts_equal())
        err_eq = sum(1 for c in bad if c.verdict() != "DIFF")
        table.append((name, str(len(group)), f"{out_eq}/{len(good)}",
                      f"{dyn_eq}/{len(counted)}", f"{err_eq}/{len(bad)}"))
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    lines = ["", "Per folder:"]
    for row in table:
        lines.append("  " + "  ".join(cell.ljust(w) if i == 0 else cell.rjust(w)
                                      for i, (cell, w) in enumerate(zip(row, widths,
                                                                        strict=True))))
    return "\n".join(lines)


def _fmt(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def geomean(values: list[float]) -> float | None:
    values = [v for v in values if v > 0]
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def report(rows: list[Row], via: str = "native") -> str:
    head = ("benchmark", "ref", "ours", "input", "opt", "opt/in", "lvn+dce", "lvn/in", "check")
    table = [head]
    for r in rows:
        table.append((r.name, _fmt(r.ref_count), _fmt(r.our_count), _fmt(r.input_count),
                      _fmt(r.opt_count), _fmt(r.ratio), _fmt(r.lvn_count), _fmt(r.lvn_ratio),
                      "ok" if not r.problems else "FAIL"))
    widths = [max(len(line[i]) for line in table) for i in range(len(head))]
    lines = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w)
                       for i, (cell, w) in enumerate(zip(line, widths, strict=True)))
             for line in table]
    lines.insert(1, "-" * len(lines[0]))
    n = len(rows)
    equal = sum(1 for r in rows if not any(p.startswith("run") for p in r.problems))
    no_worse = sum(1 for r in rows if r.ratio is not None and r.opt_count <= r.input_count)
    accepted = sum(1 for r in rows if r.opt_count is not None)
    with_lvn = [r for r in rows if r.lvn_count is not None and r.opt_count is not None]
    beats = sum(1 for r in with_lvn if r.opt_count < r.lvn_count)
    ties = sum(1 for r in with_lvn if r.opt_count == r.lvn_count)
    native = [r for r in rows if r.native is not None]
    refused = sum(1 for r in rows if any(x.startswith(f"{via}: ") for x in r.notes))
    core = [r for r in rows if r.folder == "core"]
    full = [r for r in rows if r.folder in FULL_BRIL]
    gm = geomean([r.ratio for r in core if r.ratio is not None])
    gm_lvn = geomean([r.lvn_ratio for r in core if r.lvn_ratio is not None])
    gm_full = geomean([r.ratio for r in full if r.ratio is not None])
    per_folder = ", ".join(
        f"{f} {_fmt(geomean([r.ratio for r in rows if r.folder == f and r.ratio is not None]))}"
        for f in FULL_BRIL if any(r.folder == f for r in rows))
    lines += [
        "",
        f"benchmarks: {n}",
        f"(a) output and total_dyn_inst equal to .out/.prof: {equal}/{n}",
        f"(b) opt output accepted by brili: {accepted}/{n}; opt <= input: {no_worse}/{n}",
        f"opt < LVN+DCE: {beats}/{len(with_lvn)} (equal: {ties})",
        f"(d) --via {via} prints .out: {sum(1 for r in rows if r.native)}/{len(native)}"
        f" ({refused} refused in one line)"
        if native or refused else f"(d) {via} runs: not on this machine",
        f"geometric mean opt/input (core): {_fmt(gm)}; LVN+DCE/input: {_fmt(gm_lvn)}",
        f"geometric mean opt/input (mem + float + mixed, {len(full)}): {_fmt(gm_full)} "
        f"({per_folder})",
    ]
    failures = [r for r in rows if r.problems]
    if failures:
        lines += ["", "failures:"]
        lines += [f"  {r.name}: {'; '.join(r.problems)}" for r in failures]
    notes = [r for r in rows if r.notes]
    if notes:
        lines += ["", "notes (not failures):"]
        lines += [f"  {r.name}: {'; '.join(r.notes)}" for r in notes]
    return "\n".join(lines)


def find_tools(checkout: Path, via: str = "native") -> Tools:
    if not checkout.is_dir():
        raise SetupError(f"{checkout} is not a directory (give a checkout of "
                         "https://github.com/sampsyo/bril)")
    for needed in ("brili.ts", "bril-txt/briltxt.py", "benchmarks/core"):
        if not (checkout / needed).exists():
            raise SetupError(f"{checkout} does not look like a Bril checkout: "
                             f"no {needed} in it")
    here = Path(sys.executable).parent
    deno = str(here / "deno") if (here / "deno").exists() else shutil.which("deno")
    if deno is None:
        raise SetupError("deno not found: install it with 'pip install deno'")
    try:
        import lark  # noqa: F401 - bril2json needs it; checked here to say so plainly
    except ImportError:
        raise SetupError("lark not found (Bril's text parser needs it): "
                         "install it with 'pip install lark'") from None
    from ssa_course import registry

    return Tools(checkout, sys.executable, deno,
                 registry.representation(via).unavailable() is None, via)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", metavar="BRIL_CHECKOUT", nargs="?",
                        help="a checkout of Bril's repository (sampsyo/bril)")
    parser.add_argument("-j", "--jobs", type=int, default=2, help="benchmarks run at once")
    parser.add_argument("--via", default="native", choices=MACHINE_STAGES,
                        help="the machine-code stage of check (d) (default: native)")
    parser.add_argument("-k", dest="only", default="", metavar="SUBSTRING",
                        help="only the benchmarks whose name contains SUBSTRING")
    ns = parser.parse_args(argv)
    if not ns.checkout:
        print("error: give a checkout of Bril's repository, e.g. "
              "'make bril-conformance BRIL=/path/to/bril'", file=sys.stderr)
        return 2
    try:
        tools = find_tools(Path(ns.checkout).resolve(), ns.via)
    except SetupError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    paths = [p for d in BENCHMARK_DIRS
             for p in sorted((tools.checkout / d).glob("*.bril")) if ns.only in p.stem]
    tests = sorted(p for d in INTERP_TEST_DIRS
                   for p in (tools.checkout / d).glob("*.bril") if ns.only in p.stem)
    if not paths and not tests:
        print(f"error: no benchmarks found in {tools.checkout / 'benchmarks'}",
              file=sys.stderr)
        return 2
    with ThreadPoolExecutor(max_workers=max(1, ns.jobs)) as pool:
        rows = list(pool.map(lambda p: check_benchmark(p, tools), paths))
        cases = list(pool.map(lambda p: check_interp_test(p, tools), tests))
    if rows:
        print(report(rows, tools.via))
    if cases:
        print(interp_report(cases))
    failed = any(r.problems for r in rows) or any(c.verdict() == "DIFF" for c in cases) \
        or any(c.counts_equal() is False for c in cases)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
