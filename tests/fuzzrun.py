"""Run one generated program through every stage and say where it differs from ``ast``.

Used by ``tools/fuzz.py`` (in worker processes) and by the tests. Each stage
runs under a wall-clock alarm, so a stage that hangs becomes a finding instead of stalling
the run; a Python exception escaping a stage is a finding too ("crash"). Besides the Tiny
program itself, the program's quads are written as Bril text and read back as a Bril
program, which then runs through every stage that accepts Bril (named ``bril:<stage>``).
With ``pipelines``, random ``opt -p`` pipelines drawn from the pass registry run too
(stage ``opt:<p1,p2,...>``): what the pipeline writes as Bril text, read back, runs
through ``quads`` (as written) and ``cfg`` (translated out of SSA) like the program itself.
Stages ``undef:<stage>`` run the Bril side of the generator (:mod:`fuzzbril`): the Bril
text with some first assignments removed or made ``undef``, compared with what the
``quads`` stage does with that text (Bril's rules: a read with no value stops the program).
"""

from __future__ import annotations

import random
import signal
from dataclasses import dataclass

from fuzzbril import undefined_variant, variant_seed

from ssa_course import passes, registry, stages
from ssa_course.codegen.isel import FLOAT_REFUSAL, uses_float
from ssa_course.codegen.machines import machine
from ssa_course.compilation import Compilation, compile_source
from ssa_course.errors import SourceError, SsaCourseError
from ssa_course.quads.bril import to_bril_text
from ssa_course.runtime import Limits, RunResult

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


# A stage's budget is CPU time (the process's own, every thread): on a loaded machine a
# niced fuzz run gets a fraction of a core, and a wall-clock budget made slow stages
# look like hangs (seed 51786: 0.6 s of CPU, over 20 s of wall clock at load 12). The
# wall clock stays as a backstop, this many times longer, for a stage that waits without
# computing (a native child has its own timeout).
WALL_FACTOR = 10


def guarded(thunk, seconds: float) -> tuple[Outcome, str | None]:
    """Run ``thunk() -> RunResult`` with ``seconds`` of CPU time (and ``WALL_FACTOR``
    times that of wall clock); (outcome, crash/hang category or None)."""
    old = signal.signal(signal.SIGALRM, _on_alarm)
    old_prof = signal.signal(signal.SIGPROF, _on_alarm)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    signal.setitimer(signal.ITIMER_REAL, seconds * WALL_FACTOR)
    try:
        r = thunk()
        return Outcome(r.stdout, r.status, r.error), None
    except StageTimeout:
        return Outcome("", -1, f"no answer within {seconds:g} s of CPU time"), "hang"
    except RecursionError:
        return Outcome("", -1, "RecursionError"), "crash"
    except Exception as e:
        return Outcome("", -1, f"{type(e).__name__}: {e}"[:300]), "crash"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGALRM, old)
        signal.signal(signal.SIGPROF, old_prof)


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
        names += [f"{UNDEF_PREFIX}{s.name}" for s in every
                  if not s.tiny_only and s.name != "quads"]  # quads is their reference
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


OPT_PREFIX = "opt:"
UNDEF_PREFIX = "undef:"  # the Bril variant with reads that may find no value
PIPELINE_EXECUTORS = ("quads", "cfg")  # the written text as written, and out of SSA


def random_pipeline(rng: random.Random, max_length: int = 7) -> list[str]:
    """A pipeline ``opt`` accepts (each pass takes the form the one before it makes),
    drawn from the registry: 1 to ``max_length`` passes."""
    form, names = "source", []
    for _ in range(rng.randint(1, max_length)):
        p = rng.choice(passes.accepting(form))
        names.append(p.name)
        form = p.makes
    return names


def pipeline_seeds(seed: int, count: int) -> list[str]:
    """The ``opt:`` stage names of program ``seed``'s ``count`` random pipelines."""
    rng = random.Random(seed * 7919 + 17)
    return [OPT_PREFIX + ",".join(random_pipeline(rng)) for _ in range(count)]


def optimized_text(comp: Compilation, names: list[str]) -> str:
    """What ``opt -p NAMES --emit quads`` writes (raises what ``opt`` would report)."""
    return passes.emit(passes.run_pipeline(comp, names), "quads", "text")


def run_pipeline_stage(comp: Compilation, names: list[str], args: list[str] | None,
                       limits: Limits) -> RunResult:
    """``opt -p NAMES`` on ``comp``, the text it writes read back and run through each of
    :data:`PIPELINE_EXECUTORS`: the first that differs from the first executor, or
    the first executor's result. A refusal or a broken invariant is the result itself
    (status 1 / 3, as ``opt`` exits)."""
    try:
        text = optimized_text(comp, names)
    except SourceError as e:
        return RunResult("", 1, e.render())
    except SsaCourseError as e:
        return RunResult("", e.exit_status, e.render())
    back = compile_source(text, "opt.bril", kind="bril")
    first = None
    for via in PIPELINE_EXECUTORS:
        got = stages.run(back, args, via=via, limits=limits)
        if first is None:
            first = got
        elif (got.stdout, got.status, got.error) != (first.stdout, first.status, first.error):
            return RunResult(got.stdout, got.status, f"[{via}] {got.error}")
    return first  # type: ignore[return-value]


class Runner:
    """Runs one program's stages, building the Bril text once."""

    def __init__(self, source: str, seconds: float, steps: int = STEP_LIMIT):
        self.source = source
        self.seconds = seconds
        self.steps = steps
        self.comp = compile_source(source, "fuzz.tiny")
        self.args = self.comp.default_args()
        self._bril: str | None = None
        self._variant: str | None = None
        self._variant_ref: tuple[Outcome, str | None] | None = None
        # one Compilation per Bril text, shared by the stages as in the CLI: each stage
        # builds on the representations the stages before it cached (parsing the text
        # again for each of ~25 stages was a third of the fuzzer's time)
        self._bril_comps: dict[str, Compilation] = {}

    def bril_text(self) -> str:
        if self._bril is None:
            self._bril = to_bril_text(self.comp.quads)
        return self._bril

    def variant_text(self) -> str:
        """The Bril variant with reads that may find no value ("" when there is none)."""
        if self._variant is None:
            program = undefined_variant(self.comp.quads, variant_seed(self.source))
            self._variant = to_bril_text(program) if program is not None else ""
        return self._variant

    def variant_reference(self) -> tuple[Outcome, str | None]:
        """What the ``quads`` stage does with the variant (the ``undef:`` reference)."""
        if self._variant_ref is None:
            self._variant_ref = self._run_bril(self.variant_text(), "quads")
        return self._variant_ref

    def _run_bril(self, text: str, name: str) -> tuple[Outcome, str | None]:
        limits = Limits(steps=self.steps)

        def thunk():
            return stages.run(self._bril_comp(text), self.args, via=name, limits=limits)
        return guarded(thunk, self.seconds)

    def _bril_comp(self, text: str) -> Compilation:
        comp = self._bril_comps.get(text)
        if comp is None:
            comp = self._bril_comps[text] = compile_source(text, "fuzz.bril", kind="bril")
        return comp

    def run(self, stage: str) -> tuple[Outcome, str | None]:
        limits = Limits(steps=self.steps)
        if stage.startswith(UNDEF_PREFIX):
            return self._run_bril(self.variant_text(), stage[len(UNDEF_PREFIX):])
        if stage.startswith(OPT_PREFIX):
            names = stage[len(OPT_PREFIX):].split(",")

            def thunk():
                return run_pipeline_stage(self.comp, names, self.args, limits)
        elif stage.startswith("bril:"):
            name = stage[len("bril:"):]

            def thunk():
                return stages.run(self._bril_comp(self.bril_text()), self.args, via=name,
                                  limits=limits)
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
    floats = uses_floats(runner.comp)
    for stage in names:
        want = ref
        if stage.startswith(UNDEF_PREFIX):
            if not runner.variant_text():
                continue  # no variable assigned twice: no variant
            want, bad = runner.variant_reference()
            if bad or "limit exceeded" in want.error:
                continue  # the variant itself does not end: nothing to compare
        got, bad = runner.run(stage)
        kind = judge(stage, want, got, bad, floats)
        if kind:
            found.append(Mismatch(stage, kind, want, got))
    return ref, found


def judge(stage: str, want: Outcome, got: Outcome, bad: str | None, floats: bool) -> str | None:
    """How ``got`` differs from ``want`` (None: it does not). A program with floats is
    skipped in the machine code of a CPU without floats (``Machine.floats``: AArch64
    until #36 reaches it): there the stage must refuse it in one line (status 1), unless
    it agrees anyway (a compile error). x86-64 is compared like any other stage."""
    kind = bad or category(want, got)
    if kind and floats and machine_stage(stage) and not float_machine(stage):
        refused = not bad and got.status == 1 and FLOAT_REFUSAL in got.error \
            and "\n" not in got.error
        return None if refused else "float refusal"
    return kind


def uses_floats(comp: Compilation) -> bool:
    """Does the program compute with floats (which AArch64 machine code refuses)?"""
    return any(uses_float(fn) for fn in comp.quads.functions.values())


def machine_stage(stage: str) -> bool:
    """Is ``stage`` (``bril:``/``undef:``/``opt:`` prefixes allowed) machine code?"""
    name = stage.split(":", 1)[1] if stage.startswith((UNDEF_PREFIX, "bril:")) else stage
    if name.startswith(OPT_PREFIX) or ":" in name:
        return False
    return registry.representation(name).lesson == "11"


def float_machine(stage: str) -> bool:
    """Does the CPU of machine-code ``stage`` select floats (x86-64: SSE2)?"""
    return machine("aarch64" if "aarch64" in stage else "x86-64").floats


def still_fails(source: str, stage: str, kind: str, seconds: float) -> bool:
    """Shrinking predicate: the program compiles, and ``stage`` still differs the same way."""
    runner = Runner(source, seconds, SHRINK_STEP_LIMIT)
    ref, bad = reference(runner.comp, seconds, SHRINK_STEP_LIMIT)
    if bad or not usable(ref):
        return False
    if stage.startswith(UNDEF_PREFIX):
        if not runner.variant_text():
            return False
        ref, bad = runner.variant_reference()
        if bad:
            return False
    got, bad = runner.run(stage)
    return judge(stage, ref, got, bad, uses_floats(runner.comp)) == kind
