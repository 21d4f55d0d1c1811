"""What ``tools/fuzz.py`` prints and writes: the summary table and one file per finding."""

from __future__ import annotations

from argparse import Namespace
from collections import Counter, defaultdict
from pathlib import Path

from fuzzrun import Mismatch, Outcome

from ssa_course.compilation import compile_source
from ssa_course.quads.bril import to_bril_text

CATEGORIES = ("stdout", "status", "error", "crash", "hang")


def summary(args: Namespace, names: list[str], kinds: Counter[str],
            mismatches: list[tuple[int, Mismatch]], written: list[str],
            run_time: float, total_time: float) -> str:
    """The table: programs run, then per stage its mismatches by category."""
    programs = sum(kinds.values())
    lines = [
        f"fuzz: {programs} programs (seeds {args.seed}..{args.seed + args.n - 1}, size "
        f"{args.size}), {args.jobs} jobs, {run_time:.1f} s running, "
        f"{total_time:.1f} s with shrinking; peephole worklist: " + (
            "first in, first out" if getattr(args, "fifo", True) else
            f"random, seeded by the program's seed + {args.worklist_seed}, settled graphs "
            "checked"),
        "reference (ast): " + ", ".join(f"{kinds[k]} {k}" for k in
                                        ("ok", "runtime error", "skipped")),
    ]
    per: dict[str, Counter[str]] = defaultdict(Counter)
    for _, m in mismatches:  # random pipelines (``opt:...``) are summed in one row
        per["opt:random" if m.stage.startswith("opt:") else m.stage][m.category] += 1
    width = max(len(n) for n in ["stage", "ast", *names])
    lines.append(f"{'stage':<{width}}  mismatches  " + "  ".join(CATEGORIES))
    for name in ["ast", *names]:
        if name == "ast" and not per.get("ast"):
            continue
        counts = per.get(name, Counter())
        cells = "  ".join(f"{counts[c]:>{len(c)}}" for c in CATEGORIES)
        lines.append(f"{name:<{width}}  {sum(counts.values()):>10}  {cells}")
    bad_programs = len({seed for seed, _ in mismatches})
    lines.append(f"programs with a mismatch: {bad_programs}; total mismatches: "
                 f"{len(mismatches)}")
    if written:
        lines.append("shrunk findings:")
        lines += [f"  {w}" for w in written]
    return "\n".join(lines)


def _comment(prefix: str, label: str, outcome: Outcome) -> list[str]:
    # an error of several lines (a located one: the source line and its caret) stays a
    # comment on every line, so the finding still compiles
    error, *rest = (outcome.error or "-").splitlines() or ["-"]
    out = [f"{prefix} {label}: status {outcome.status}, error: {error}"]
    out += [f"{prefix}   {line}" for line in rest]
    text = outcome.stdout.splitlines() or ["(no output)"]
    out += [f"{prefix}   | {line}" for line in text[:40]]
    if len(text) > 40:
        out.append(f"{prefix}   | ... ({len(text) - 40} more lines)")
    return out


def header(prefix: str, seed: int, mismatches: list[Mismatch]) -> list[str]:
    """Comment lines: the stages, what ``ast`` printed, what each stage did instead."""
    stages = ", ".join(f"{m.stage} ({m.category})" for m in mismatches)
    lines = [f"{prefix} fuzz finding (seed {seed}): {stages}"]
    lines += _comment(prefix, "expected (ast)", mismatches[0].expected)
    for m in mismatches:
        lines += _comment(prefix, f"actual ({m.stage})", m.actual)
    return lines


def write_finding(out: Path, number: int, seed: int, stage: str, kind: str, small: str,
                  again: list[Mismatch]) -> list[str]:
    """Write the shrunk program (and its Bril text for Bril findings); return the paths."""
    if not again:  # the shrunk program no longer fails (flaky); keep the original facts
        return [f"(seed {seed}: {stage} {kind} did not reproduce after shrinking)"]
    safe = stage.replace(":", "-")
    tiny = out / f"{number:03d}-{safe}.tiny"
    args = next((ln for ln in small.splitlines() if ln.startswith("// ARGS:")), "")
    body = [ln for ln in small.splitlines() if not ln.startswith("// ARGS:")]
    tiny.write_text("\n".join(header("//", seed, again) + [args] + body) + "\n")
    paths = [f"{tiny}  ({len(body)} lines; {kind})"]
    if stage.startswith("bril:"):
        bril = out / f"{number:03d}-{safe}.bril"
        quads = compile_source(small, "fuzz.tiny").quads
        bril_args = args.replace("// ARGS:", "# ARGS:")
        bril.write_text("\n".join(header("#", seed, again) + [bril_args])
                        + "\n" + to_bril_text(quads))
        paths.append(str(bril))
    return paths
