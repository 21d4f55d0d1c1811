"""Run one generated program through every stage and say where it differs from ``ast``.

Used by ``tools/fuzz.py`` (in worker processes) and by the tests. Each stage
runs under a wall-clock alarm, so a stage that hangs becomes a finding instead of stalling
the run; a Python exception escaping a stage is a finding too ("crash"). Besides the Tiny
program itself, the program's quads are written as Bril text and read back as a Bril
program, which then runs through every stage that accepts Bril (named ``bril:<stage>``).
"""

from __future__ import annotations

import signal
from dataclasses import dataclass

from ssa_course import registry, stages
from ssa_course.compilation import Compilation, compile_source
from ssa_course.quads.bril import to_bril_text
from ssa_course.runtime import Limits

STEP_LIMIT = 2_000_000
# Shrinking tries many candidates and some loop forever (a bound replaced by a constant):
# generated programs stay far below this, so such candidates are rejected quickly.
SHRINK_STEP_LIMIT = 200_000


class StageTimeout(BaseException):
    """Raised by the alarm; a BaseException so no ``except Exception`` can swallow it."""


@dataclass(frozen=True, slots=True)
class Outcome:
    stdout: str
    status: int
    error: str

    def show(self) -> str:
        return f"status {self.status}, error: {self.error or '-'}\n  stdout: {self.stdout!r}"


@dataclass(frozen=True, slots=True)
class Mismatch:
    stage: str
    category: str  # stdout | status | error | crash | hang
    expected: Outcome
    actual: Outcome


def _on_alarm(signum, frame):
    raise StageTimeout


def guarded(thunk, seconds: float) -> tuple[Outcome, str | None]:
    """Run ``thunk() -> RunResult`` under an alarm; (outcome, crash/hang category or None)."""
    old = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        r = thunk()
        return Outcome(r.stdout, r.status, r.error), None
    except StageTimeout:
        return Outcome("", -1, f"no answer within {seconds:g} s"), "hang"
    except RecursionError:
        return Outcome("", -1, "RecursionError"), "crash"
    except Exception as e:
        return Outcome("", -1, f"{type(e).__name__}: {e}"[:300]), "crash"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def category(expected: Outcome, actual: Outcome) -> str | None:
    if actual.status != expected.status:
        return "status"
    if actual.stdout != expected.stdout:
        return "stdout"
    if actual.error != expected.error:
        return "error"
    return None


def stage_names(bril: bool = True) -> list[str]:
    """Every stage to compare: the Tiny stages, then ``bril:<stage>`` for Bril input."""
    # the representations that run on their own, where this machine can run them
    every = [r for r in registry.executors() if r.unavailable() is None]
    names = [s.name for s in every if s.name != "ast"]
    if bril:
        names += [f"bril:{s.name}" for s in every if not s.tiny_only]
    return names


def reference(comp: Compilation, seconds: float,
              steps: int = STEP_LIMIT) -> tuple[Outcome, str | None]:
    """The ``ast`` outcome and, if the reference itself crashed or hung, that category."""
    limits = Limits(steps=steps)
    return guarded(lambda: stages.run(comp, comp.default_args(), via="ast", limits=limits),
                   seconds)


def usable(ref: Outcome) -> bool:
    """Programs worth comparing: they compile and end (normally or with a runtime error)."""
    return ref.status in (0, 2) and "limit exceeded" not in ref.error


class Runner:
    """Runs one program's stages, building the Bril text once."""

    def __init__(self, source: str, seconds: float, steps: int = STEP_LIMIT):
        self.source = source
        self.seconds = seconds
        self.steps = steps
        self.comp = compile_source(source, "fuzz.tiny")
        self.args = self.comp.default_args()
        self._bril: str | None = None

    def bril_text(self) -> str:
        if self._bril is None:
            self._bril = to_bril_text(self.comp.quads)
        return self._bril

    def run(self, stage: str) -> tuple[Outcome, str | None]:
        limits = Limits(steps=self.steps)
        if stage.startswith("bril:"):
            name = stage[len("bril:"):]

            def thunk():
                comp = compile_source(self.bril_text(), "fuzz.bril", kind="bril")
                return stages.run(comp, self.args, via=name, limits=limits)
        else:
            def thunk():
                return stages.run(self.comp, self.args, via=stage, limits=limits)
        return guarded(thunk, self.seconds)


def compare(source: str, names: list[str], seconds: float) -> tuple[Outcome | None,
                                                                       list[Mismatch]]:
    """The reference outcome (None if unusable) and every stage of ``names`` that differs.

    A reference that crashes or hangs is itself reported, as stage ``ast``.
    """
    runner = Runner(source, seconds)
    ref, bad = reference(runner.comp, seconds)
    if bad:
        return None, [Mismatch("ast", bad, ref, ref)]
    if not usable(ref):
        return None, []
    found = []
    for stage in names:
        got, bad = runner.run(stage)
        kind = bad or category(ref, got)
        if kind:
            found.append(Mismatch(stage, kind, ref, got))
    return ref, found


def still_fails(source: str, stage: str, kind: str, seconds: float) -> bool:
    """Shrinking predicate: the program compiles, and ``stage`` still differs the same way."""
    runner = Runner(source, seconds, SHRINK_STEP_LIMIT)
    ref, bad = reference(runner.comp, seconds, SHRINK_STEP_LIMIT)
    if bad or not usable(ref):
        return False
    got, bad = runner.run(stage)
    return (bad or category(ref, got)) == kind
