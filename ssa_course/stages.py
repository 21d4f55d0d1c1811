"""The registry of executable stages: every representation that can *run* a program.

A stage takes a :class:`~ssa_course.pipeline.Compilation`, builds its representation
(cached on the compilation) and executes it. ``ssa-course run --via NAME`` and the
differential tests drive every registered stage, and each must print byte-identical
output, end with the same exit status and report the same error as the reference
(``ast``). Later lessons add their stages by calling :func:`register` in their module.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ssa_course.errors import RuntimeTrap, SourceError, SsaCourseError, UsageError
from ssa_course.pipeline import Compilation
from ssa_course.runtime import Limits, Output, RunResult

Executor = Callable[[Compilation, list[object], Output, Limits], int]


@dataclass(frozen=True, slots=True)
class Stage:
    """A named way of running a program. ``tiny_only`` stages need Tiny source."""

    name: str
    description: str
    execute: Executor
    tiny_only: bool = False


_STAGES: dict[str, Stage] = {}


def register(name: str, description: str, *, tiny_only: bool = False):
    """Decorator: register ``fn(comp, args, out, limits) -> steps`` as stage ``name``."""

    def wrap(fn: Executor) -> Executor:
        if name in _STAGES:
            raise ValueError(f"stage {name!r} registered twice")
        _STAGES[name] = Stage(name, description, fn, tiny_only)
        return fn

    return wrap


def _load_builtin_stages() -> None:
    # Importing the modules registers their stages (each module owns its registration).
    from ssa_course import builtin_stages  # noqa: F401
    from ssa_course.son import stages as son_stages  # noqa: F401
    from ssa_course.ssa import stages as ssa_stages  # noqa: F401


def all_stages() -> list[Stage]:
    """Every registered stage, in pipeline order."""
    _load_builtin_stages()
    return list(_STAGES.values())


def get_stage(name: str) -> Stage:
    # The lessons 00-02 stages first: a plain ``run`` must not import the later lessons'
    # modules (the sea of nodes, networkx): start-up time is most of a small run.
    from ssa_course import builtin_stages  # noqa: F401

    if name in _STAGES:
        return _STAGES[name]
    _load_builtin_stages()
    try:
        return _STAGES[name]
    except KeyError:
        names = ", ".join(_STAGES)
        raise UsageError(f"unknown stage '{name}' (known stages: {names})") from None


def stages_for(comp: Compilation) -> list[Stage]:
    """The stages that can run ``comp`` (Bril programs skip Tiny-only stages)."""
    return [s for s in all_stages() if comp.kind == "tiny" or not s.tiny_only]


def run(
    comp: Compilation,
    argv: list[str] | None = None,
    *,
    via: str = "quads",
    limits: Limits | None = None,
    sink: Callable[[str], object] | None = None,
) -> RunResult:
    """Compile and run ``comp`` through stage ``via``; never raises for a user's mistake.

    Compile errors and bad arguments give status 1, runtime errors status 2; ``error``
    holds the rendered message (what goes to standard error). ``sink`` receives output
    as it is printed (the CLI streams it).
    """
    from ssa_course.args import parse_main_args

    stage = get_stage(via)
    out = Output(sink)
    if stage.tiny_only and comp.kind != "tiny":
        return RunResult("", 1, f"error: stage '{via}' needs a Tiny program, not {comp.kind}")
    try:
        comp.check()
        if argv is None:
            argv = comp.default_args() or []
        args = parse_main_args(comp.main_params(), argv)
    except SourceError as e:
        return RunResult("", 1, e.render())
    except UsageError as e:
        return RunResult("", 1, e.render())
    try:
        steps = stage.execute(comp, args, out, limits or Limits())
    except RuntimeTrap as e:
        return RunResult(out.text(), 2, e.render())
    except SsaCourseError as e:  # e.g. a stage's verifier: still a clean message
        return RunResult(out.text(), e.exit_status, e.render())
    return RunResult(out.text(), 0, "", steps)
