"""Running a program through any representation (``ssa-course run --via NAME``).

A stage is "build this representation, then run it": :func:`run` looks the name up in the
one registry (:mod:`ssa_course.registry`), builds the representation (verified, cached on
the compilation) and executes its run face. Every stage must print byte-identical output,
end with the same exit status and report the same error as the reference (``ast``); the
differential tests drive every registered representation.
"""

from __future__ import annotations

from collections.abc import Callable

from ssa_course import registry
from ssa_course.compilation import Compilation
from ssa_course.errors import RuntimeTrap, SourceError, SsaCourseError, UsageError
from ssa_course.runtime import Limits, Output, RunResult, limit_problem


def run(
    comp: Compilation,
    argv: list[str] | None = None,
    *,
    via: str = "quads",
    limits: Limits | None = None,
    sink: Callable[[str], object] | None = None,
) -> RunResult:
    """Compile and run ``comp`` through representation ``via``; never raises for a user's
    mistake.

    Compile errors and bad arguments give status 1, runtime errors status 2, a broken
    invariant (a verifier) status 3; ``error`` holds the rendered message (what goes to
    standard error). ``sink`` receives output as it is printed (the CLI streams it).
    """
    from ssa_course.args import parse_main_args

    rep = registry.representation(via)
    out = Output(sink)
    if rep.tiny_only and comp.kind != "tiny":
        return RunResult("", 1, f"error: stage '{rep.name}' needs a Tiny program, not "
                         f"{comp.kind}")
    limits = limits or Limits()
    try:
        check_limits(limits)
        comp.check()
        if argv is None:
            argv = comp.default_args() or []
        args = parse_main_args(comp.main_params(), argv)
    except (SourceError, UsageError) as e:
        return RunResult("", 1, e.render())
    try:
        artifact = registry.build(comp, rep.name)
        steps = rep.run(artifact, args, out, limits)
    except RuntimeTrap as e:
        return RunResult(out.text(), 2, e.render())
    except SsaCourseError as e:  # e.g. a verifier: still a clean message
        return RunResult(out.text(), e.exit_status, e.render())
    return RunResult(out.text(), 0, "", steps)


def check_limits(limits: Limits) -> None:
    """The step and depth limits are in the one accepted range (``1..MAX_LIMIT``), or a
    :class:`UsageError` (status 1) before any stage runs: every stage sees the same."""
    for what, value in (("step", limits.steps), ("depth", limits.depth)):
        problem = limit_problem(value) if isinstance(value, int) else "must be an int"
        if problem is not None:
            raise UsageError(f"the {what} limit {problem}")
