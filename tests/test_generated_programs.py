"""Property test: random Tiny programs behave identically through every stage.

The reference is the AST interpreter; every other registered stage must print the same
text, end with the same status and report the same error (runtime errors and uncaught
exceptions included).
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from tiny_gen import programs

from ssa_course import stages
from ssa_course.pipeline import compile_source
from ssa_course.runtime import Limits

STAGES = [s.name for s in stages.all_stages() if s.name != "ast"]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_every_stage_agrees_with_the_reference(source):
    comp = compile_source(source, "gen.tiny")
    limits = Limits(steps=200_000)
    reference = stages.run(comp, [], via="ast", limits=limits)
    assert reference.status in (0, 2), reference.error
    for stage in STAGES:
        result = stages.run(comp, [], via=stage, limits=limits)
        assert (result.stdout, result.status, result.error) == \
            (reference.stdout, reference.status, reference.error), f"stage {stage}:\n{source}"


GRAPH_STAGES = ["son", "son-opt", "scheduled", "optimized"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_generated_programs_as_bril_through_the_graph(source):
    """The same programs' quads written as Bril: the graph builder from SSA (the way Bril
    programs enter the sea of nodes), SCCP, GCM and the whole opt pipeline."""
    from ssa_course.quads.bril import to_bril_text

    comp = compile_source(source, "gen.tiny")
    limits = Limits(steps=200_000)
    reference = stages.run(comp, [], via="ast", limits=limits)
    bril = to_bril_text(comp.quads)
    for stage in GRAPH_STAGES:
        result = stages.run(compile_source(bril, "gen.bril", kind="bril"), [], via=stage,
                            limits=limits)
        assert (result.stdout, result.status, result.error) == \
            (reference.stdout, reference.status, reference.error), f"stage {stage}:\n{source}"
