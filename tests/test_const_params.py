"""The ``const-params`` pass (``ssa_course.quads.const_params``): a self-recursive
function's constants become parameters its recursive calls pass along."""

from __future__ import annotations

import pytest
from corpus import load_bril_corpus, load_corpus

from ssa_course import passes
from ssa_course.compilation import compile_source
from ssa_course.quads import bril
from ssa_course.quads.const_params import thread_constants
from ssa_course.runtime import Limits
from ssa_course.stages import run

FACT = """@main(n: int) {
  f: int = call @fact n;
  print f;
}
@fact(n: int): int {
  zero: int = const 0;
  stop: bool = eq n zero;
  br stop .base .step;
.base:
  one: int = const 1;
  ret one;
.step:
  one: int = const 1;
  m: int = sub n one;
  r: int = call @fact m;
  p: int = mul n r;
  ret p;
}
"""

FACT_THREADED = """@main(n: int) {
  const.arg: int = const 0;
  const.arg.1: int = const 1;
  f: int = call @fact n const.arg const.arg.1;
  print f;
}
@fact(n: int, const.0: int, const.1: int): int {
  zero: int = id const.0;
  stop: bool = eq n zero;
  br stop .base .step;
.base:
  one: int = id const.1;
  ret one;
.step:
  one: int = id const.1;
  m: int = sub n one;
  r: int = call @fact m const.0 const.1;
  p: int = mul n r;
  ret p;
}
"""


def test_golden_the_recursion_passes_its_constants_along():
    program, count = thread_constants(bril.parse_bril_text(FACT, "f.bril"))
    assert (bril.to_bril_text(program), count) == (FACT_THREADED, 1)


def test_main_and_functions_that_do_not_recurse_keep_their_signatures():
    text = """@main(n: int) {
  one: int = const 1;
  m: int = sub n one;
  call @main m;
  x: int = call @leaf n;
  print x;
}
@leaf(n: int): int {
  two: int = const 2;
  r: int = mul n two;
  ret r;
}
"""
    program, count = thread_constants(bril.parse_bril_text(text, "t.bril"))
    assert count == 0 and bril.to_bril_text(program) == bril.to_bril_text(
        bril.parse_bril_text(text, "t.bril"))


def test_after_the_pipeline_the_recursion_makes_no_constant():
    comp = compile_source(FACT, "f.bril")
    text = passes.emit(passes.run_pipeline(comp), "bril")
    fact = text.split("@fact(")[1]
    assert "= const" not in fact.split("{", 1)[1]
    without = [p for p in passes.DEFAULT_PIPELINE if p != "const-params"]
    for n in ("0", "1", "12"):
        got = run(compile_source(text, "o.bril"), [n])
        base = run(passes.result(passes.run_pipeline(compile_source(FACT, "f.bril"),
                                                     without)), [n])
        assert got.stdout == run(comp, [n]).stdout
        assert got.steps < base.steps or n == "0"


@pytest.mark.parametrize("depth", [5, 6, 7])
def test_the_depth_of_the_recursion_is_unchanged(depth):
    # fact(5) needs depth 7 (main, fact 5 .. fact 0): the same limit stops it
    comp = compile_source(FACT, "f.bril")
    want = run(comp, ["5"], via="quads", limits=Limits(depth=depth))
    got = run(comp, ["5"], via="optimized", limits=Limits(depth=depth))
    assert (got.stdout, got.status, got.error) == (want.stdout, want.status, want.error)
    assert want.status == (0 if depth >= 7 else 2)


CASES = [(c.name, c.source, c.path.name, c.args) for c in load_corpus() + load_bril_corpus()]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0])
def test_every_corpus_program_through_the_pass_alone(case):
    """Alone (run as quads): same output, status and error (an outside call site makes
    the constants the callee made: the same count, placed by GCM in the pipeline)."""
    name, source, filename, args = case
    comp = compile_source(source, filename)
    want = run(comp, args, via="quads")
    if want.status == 1:
        return
    got = run(passes.result(passes.run_pipeline(comp, ["const-params"])), args, via="quads")
    assert (got.stdout, got.status) == (want.stdout, want.status), name
    if filename.endswith(".tiny"):
        assert got.error == want.error, name


def test_a_constant_made_on_one_branch_only_stays_in_the_callee():
    text = """@main(n: int) {
  call @bits n;
}
@bits(n: int) {
  zero: int = const 0;
  stop: bool = eq n zero;
  br stop .end .more;
.more:
  two: int = const 2;
  high: int = div n two;
  call @bits high;
  print high;
.end:
}
"""
    program, count = thread_constants(bril.parse_bril_text(text, "b.bril"))
    bits = program.functions["bits"]
    assert count == 1 and [p for p, _ in bits.params] == ["n", "const.0"]
    assert any(i.op == "const" and i.value == 2 for i in bits.instrs())
    comp = compile_source(text, "b.bril")
    for n in ("0", "9"):  # n = 0: the caller makes one constant, as the callee did
        got = run(passes.result(passes.run_pipeline(comp)), [n])
        want = run(comp, [n])
        assert got.stdout == want.stdout and got.steps <= want.steps
