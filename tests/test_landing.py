"""Landing pads (``ssa_course.quads.landing``): what only the loop needs is not paid for
when the loop is skipped, and nothing moves that would change what a path computes."""

from __future__ import annotations

import pytest

from ssa_course.compilation import compile_source
from ssa_course.passes import run_pipeline
from ssa_course.quads import bril
from ssa_course.quads.interp import run_quads
from ssa_course.quads.landing import landing_pads
from ssa_course.runtime import Limits, Output
from ssa_course.stages import run as run_stage

LOOP = """
fn main(n: int, k: int) {
    var s = 0;
    var i = 0;
    while (i < n) { s = s + k * 3 + 7; i = i + 1; }
    print(s);
}
"""


def _count(program, *args) -> tuple[str, int]:
    out = Output()
    steps = run_quads(program, list(args), out, Limits())
    return out.text(), steps


@pytest.mark.parametrize("n", [0, 1, 2, 7])
def test_a_skipped_loop_costs_no_more_than_in_the_input(n):
    comp = compile_source(LOOP, "loop.tiny")
    before = run_stage(comp, [str(n), "5"], via="quads")
    optimized = run_pipeline(comp).quads
    text, steps = _count(optimized, n, 5)
    assert text == before.stdout
    assert steps <= before.steps, (n, steps, before.steps)


def _fn(text: str):
    return bril.parse_bril_text(text, "t.bril").functions["main"]


def test_the_tail_of_the_test_block_sinks_into_a_pad():
    fn = _fn("""@main(n: int) {
  c: int = const 3;
  m: int = mul n c;
  z: int = const 0;
  b: bool = lt z n;
  br b .body .exit;
.body:
  print m;
.exit:
  print z;
}
""")
    text = bril.to_bril_text(bril.Program({"main": landing_pads(fn)}, {}))
    assert "br b .body.pad .exit;\n.body.pad:\n  c: int = const 3;\n  m: int = mul n c;\n" \
        in text
    assert text.index("z: int = const 0") < text.index("br b")  # live on the other edge


@pytest.mark.parametrize("line, reason", [
    ("  m: int = div n c;", "a division may fail: it stays"),
    ("  m: int = add w c;", "w may be unassigned: the read stays where it was"),
])
def test_what_must_not_sink_stays(line, reason):
    fn = _fn(f"""@main(n: int, f: bool) {{
  br f .a .b;
.a:
  w: int = const 1;
.b:
  c: int = const 3;
{line}
  z: int = const 0;
  b: bool = lt z n;
  br b .body .exit;
.body:
  print m;
.exit:
  print z;
}}
""")
    body = landing_pads(fn).body
    where = {getattr(x, "dest", None): i for i, x in enumerate(body)}
    entry_test = next(i for i, x in enumerate(body)
                      if getattr(x, "op", "") == "br" and x.args == ["b"])
    assert where["m"] < entry_test, reason


def test_functions_with_handlers_are_left_alone():
    fn = _fn("""@main(n: int) {
  enter .t .h;
.t:
  leave;
  c: int = const 3;
  b: bool = lt c n;
  br b .body .exit;
.body:
  print c;
.exit:
  ret;
.h:
  e: int = catch;
  print e;
}
""")
    assert landing_pads(fn) is fn
