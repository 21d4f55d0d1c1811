"""The ``copies`` pass (``ssa_course.quads.copy_forward``): a read of a copy made earlier in
the same block reads the copy's source, so the copy can go."""

from __future__ import annotations

import pytest
from corpus import load_bril_corpus, load_corpus
from hypothesis import HealthCheck, given, settings
from tiny_gen import programs

from ssa_course import passes
from ssa_course.compilation import compile_source
from ssa_course.quads import bril
from ssa_course.quads.copy_forward import forward_copies
from ssa_course.runtime import Limits
from ssa_course.stages import run

# Bril's gcd after layout: each arm copies the two values, then subtracts the copies
GCD = """@main(op1: int, op2: int) {
  zero: int = const 0;
  lt: bool = lt op1 op2;
  br lt .left .right;
.left:
  a: int = id op2;
  b: int = id op1;
  d: int = sub a b;
  z: bool = eq d zero;
  br z .done .setb;
.right:
  a: int = id op1;
  b: int = id op2;
  d: int = sub a b;
  z: bool = eq d zero;
  br z .done .seta;
.setb:
  op2: int = id d;
  lt: bool = lt op1 op2;
  br lt .left .right;
.seta:
  op1: int = id d;
  lt: bool = lt op1 op2;
  br lt .left .right;
.done:
  print op2;
}
"""

GCD_FORWARDED = """@main(op1: int, op2: int) {
  zero: int = const 0;
  lt: bool = lt op1 op2;
  br lt .left .right;
.left:
  a: int = id op2;
  b: int = id op1;
  d: int = sub op2 op1;
  z: bool = eq d zero;
  br z .done .setb;
.right:
  a: int = id op1;
  b: int = id op2;
  d: int = sub op1 op2;
  z: bool = eq d zero;
  br z .done .seta;
.setb:
  op2: int = id d;
  lt: bool = lt op1 d;
  br lt .left .right;
.seta:
  op1: int = id d;
  lt: bool = lt d op2;
  br lt .left .right;
.done:
  print op2;
}
"""


def _forwarded(text: str) -> str:
    program = bril.parse_bril_text(text, "t.bril")
    return bril.to_bril_text(bril.Program(
        {name: forward_copies(fn) for name, fn in program.functions.items()}, {}))


def test_golden_reads_of_copies_read_their_sources():
    assert _forwarded(GCD) == GCD_FORWARDED


def test_then_dce_removes_the_copies_and_the_loop_costs_less():
    comp = compile_source(GCD, "t.bril")
    after = passes.result(passes.run_pipeline(compile_source(GCD, "t.bril"), ["copies", "dce"]))
    assert "id op2" not in after.source
    for args in (["4", "20"], ["1071", "462"], ["7", "7"]):
        want, got = run(comp, args, via="quads"), run(after, args, via="quads")
        assert got.stdout == want.stdout and got.steps < want.steps


@pytest.mark.parametrize("text", [
    # the source changes between the copy and the read: the read keeps the copy
    "@main(x: int) {\n  c: int = id x;\n  one: int = const 1;\n  x: int = add x one;\n"
    "  print c;\n}\n",
    # the copy itself is written again
    "@main(x: int) {\n  c: int = id x;\n  c: int = const 5;\n  print c;\n}\n",
    # a label between: another path may reach the read
    "@main(x: int) {\n  c: int = id x;\n.l:\n  print c;\n}\n",
])
def test_reads_that_may_see_another_value_keep_the_copy(text):
    fn = bril.parse_bril_text(text, "t.bril").functions["main"]
    assert forward_copies(fn) is fn


def test_functions_without_copies_come_back_as_they_were():
    fn = bril.parse_bril_text("@main(a: int) {\n  print a;\n}\n", "t.bril").functions["main"]
    assert forward_copies(fn) is fn


WITHOUT = [p for p in passes.DEFAULT_PIPELINE if p != "copies"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_generated_programs_print_the_same_and_cost_no_more(source):
    """The default pipeline with and without ``copies``: the same output, status and
    error, and never more instructions executed with it."""
    limits = Limits(steps=200_000)
    with_ = passes.result(passes.run_pipeline(compile_source(source, "g.tiny")))
    without = passes.result(passes.run_pipeline(compile_source(source, "g.tiny"), WITHOUT))
    want, got = run(without, None, limits=limits), run(with_, None, limits=limits)
    assert (got.stdout, got.status, got.error) == (want.stdout, want.status, want.error)
    if want.status == 0:
        assert got.steps <= want.steps, source


CASES = [(c.name, c.source, c.path.name, c.args) for c in load_corpus() + load_bril_corpus()]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0])
def test_every_corpus_program_through_the_pass_alone(case):
    """Alone (run as quads) the pass keeps output, status and error."""
    name, source, filename, args = case
    comp = compile_source(source, filename)
    want = run(comp, args, via="quads")
    if want.status == 1:
        return
    got = run(passes.result(passes.run_pipeline(comp, ["copies"])), args, via="quads")
    assert (got.stdout, got.status) == (want.stdout, want.status), name
    if filename.endswith(".tiny"):
        assert got.error == want.error, name
