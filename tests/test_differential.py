"""The generic differential test: every corpus program, through every stage.

Each stage must print byte-identical output, end with the same exit status and report
the same error message as the expected files (which were written from LANGUAGE.md, not
from any of our interpreters). A new stage is covered by registering it: nothing here
changes.
"""

from __future__ import annotations

import pytest
from corpus import load_bril_corpus, load_bril_float_corpus, load_corpus, load_float_corpus

from ssa_course import registry, stages
from ssa_course.codegen.isel import FLOAT_REFUSAL, uses_float
from ssa_course.codegen.machines import machine
from ssa_course.compilation import Compilation, compile_source
from ssa_course.runtime import Limits

CASES = load_corpus() + load_float_corpus()
BRIL_CASES = load_bril_corpus() + load_bril_float_corpus()
STAGES = [s.name for s in registry.executors()]
BRIL_STAGES = [s.name for s in registry.executors() if not s.tiny_only]


def _compilation(case) -> Compilation:
    """One Compilation per program, shared by its stages (they are parametrized fastest):
    each stage builds on the cached representations before it, as the CLI and the
    notebooks do, instead of redoing the whole pipeline ~30 times per program."""
    if _LAST.get("name") != str(case.path):
        _LAST.clear()
        _LAST["name"] = str(case.path)
        _LAST["comp"] = compile_source(case.source, case.path.name)
    return _LAST["comp"]


_LAST: dict[str, object] = {}


def _limits(case) -> Limits:
    return Limits(steps=case.steps) if case.steps else Limits()


def _skip_if_unavailable(stage: str) -> None:
    reason = registry.representation(stage).unavailable()
    if reason is not None:
        pytest.skip(f"{stage}: {reason}")


def _skip_float_in_machine_code(comp: Compilation, stage: str, case) -> None:
    """A CPU without float machine code yet (``Machine.floats``: AArch64 until #36 reaches
    it) must refuse a program with floats in one line (status 1), and the stage is then
    skipped, saying so; x86-64's stages run float programs like any other (SSE2)."""
    target = "aarch64" if "aarch64" in stage else "x86-64"
    if registry.representation(stage).lesson != "11" or machine(target).floats or not any(
            uses_float(fn) for fn in comp.quads.functions.values()):
        return
    result = stages.run(comp, case.args, via=stage, limits=_limits(case))
    if result.status != 1 and FLOAT_REFUSAL not in result.error:
        return  # the optimizer left no float to select: compared as usual
    assert result.status == 1 and FLOAT_REFUSAL in result.error, (stage, result.error)
    assert "\n" not in result.error and "Traceback" not in result.error
    pytest.skip(f"{stage}: {target} machine code does not support float yet (#36); "
                "refused cleanly")


def test_corpus_is_big_enough():
    assert len(CASES) >= 60
    assert len(BRIL_CASES) >= 20


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_tiny_program_through_stage(case, stage):
    _skip_if_unavailable(stage)
    comp = _compilation(case)
    _skip_float_in_machine_code(comp, stage, case)
    result = stages.run(comp, case.args, via=stage, limits=_limits(case))
    assert result.stdout == case.stdout, f"{stage}: stdout differs for {case.name}"
    assert result.status == case.exit, f"{stage}: exit status of {case.name}: {result.error}"
    assert result.error == case.stderr.rstrip("\n"), f"{stage}: stderr of {case.name}"


@pytest.mark.parametrize("stage", BRIL_STAGES)
@pytest.mark.parametrize("case", BRIL_CASES, ids=[c.name for c in BRIL_CASES])
def test_bril_program_through_stage(case, stage):
    _skip_if_unavailable(stage)
    comp = _compilation(case)
    _skip_float_in_machine_code(comp, stage, case)
    result = stages.run(comp, case.args, via=stage, limits=_limits(case))
    assert result.stdout == case.stdout, f"{stage}: stdout differs for {case.name}"
    assert result.status == case.exit, f"{stage}: exit status of {case.name}: {result.error}"
    if case.stderr:
        assert result.error == case.stderr.rstrip("\n")
    if case.profile is not None and stage == "quads":
        assert result.steps == case.profile, f"dynamic instruction count of {case.name}"
