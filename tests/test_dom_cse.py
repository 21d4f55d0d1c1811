"""The ``dom-cse`` pass (``ssa_course.ssa.dom_cse``): an operation that a dominating
block already computed is reused -- divisions too, which GVN keeps pinned."""

from __future__ import annotations

import pytest
from corpus import load_bril_corpus, load_corpus

from ssa_course import passes
from ssa_course.compilation import compile_source
from ssa_course.quads import bril
from ssa_course.ssa.dom_cse import dom_cse
from ssa_course.stages import run

BEFORE = """@main(a: int, b: int) {
  q: int = div a b;
  c: bool = lt a b;
  br c .then .else;
.then:
  r: int = div a b;
  t: int = div b a;
  print r t;
.else:
  s: int = div a b;
  u: int = div b a;
  print s u q;
}
"""

AFTER = """@main(a: int, b: int) {
  q: int = div a b;  # at 2:12
  c: bool = lt a b;
  br c .then .else;
.then:
  t: int = div b a;  # at 7:12
  print q t;
.else:
  u: int = div b a;  # at 11:12
  print q u q;
}
"""


def test_golden_dominated_duplicates_go_siblings_stay():
    fn = bril.parse_bril_text(BEFORE, "t.bril").functions["main"]
    assert bril.to_bril_text(bril.Program({"main": dom_cse(fn)}, {})) == AFTER


def test_phi_arguments_read_the_surviving_name():
    text = """@main(n: int) {
  two: int = const 2;
  h: int = div n two;
  c: bool = lt n two;
  br c .a .b;
.a:
  x: int = div n two;
  jmp .join;
.b:
  y: int = const 2;
  jmp .join;
.join:
  z: int = phi x y .a .b;
  print z h;
}
"""
    out = bril.to_bril_text(bril.Program(
        {"main": dom_cse(bril.parse_bril_text(text, "t.bril").functions["main"])}, {}))
    assert "phi h two .a .b" in out and out.count("div") == 1
    assert "div n two;  # at 3:12\n  c" in out  # the one that runs first stays, with its line


def test_the_division_that_traps_first_still_does():
    source = ("fn main(a: int, b: int) {\n  var q = a / b;\n  print(a);\n"
              "  if (a < 3) { print(a / b); }\n}\n")
    comp = compile_source(source, "d.tiny")
    for args in (["1", "0"], ["1", "2"], ["5", "0"]):
        want, got = run(comp, args, via="quads"), run(comp, args, via="optimized")
        assert (got.stdout, got.status, got.error) == (want.stdout, want.status, want.error)
    assert "at 2:13" in run(comp, ["1", "0"], via="optimized").error


CASES = [(c.name, c.source, c.path.name, c.args) for c in load_corpus() + load_bril_corpus()]
WITHOUT = [p for p in passes.DEFAULT_PIPELINE if p != "dom-cse"]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0])
def test_every_corpus_program_with_and_without_the_pass(case):
    """Same output, status and error as the input; never more instructions than the
    pipeline without ``dom-cse``."""
    name, source, filename, args = case
    comp = compile_source(source, filename)
    want = run(comp, args, via="quads")
    if want.status == 1:
        return
    got = run(passes.result(passes.run_pipeline(compile_source(source, filename))), args)
    base = run(passes.result(passes.run_pipeline(compile_source(source, filename), WITHOUT)),
               args)
    assert (got.stdout, got.status) == (want.stdout, want.status), name
    if filename.endswith(".tiny"):
        assert got.error == want.error, name
    assert got.steps <= base.steps, name
