"""Landing pads (``ssa_course.quads.landing``): what only the loop needs is not paid for
when the loop is skipped, and nothing moves that would change what a path computes."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tiny_gen import programs

from ssa_course.compilation import compile_source
from ssa_course.passes import DEFAULT_PIPELINE, run_pipeline
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


def _landing_in_place(fn):
    """The pass as first written (each pad spliced into the body in place, the scan going
    on at the next lower index of the changed body): the reference the one-pass assembly
    must equal."""
    from ssa_course.quads.analyses import liveness
    from ssa_course.quads.cfg import build_cfg
    from ssa_course.quads.ir import Function, Instr, Label
    from ssa_course.quads.landing import _block_start, _label_blocks, _sinkable
    from ssa_course.quads.names import Names

    if any(i.op in ("phi", "enter") for i in fn.instrs()):
        return fn
    live_in = liveness(build_cfg(fn, copy=False)).top
    block_of = _label_blocks(fn.body)
    params = {name for name, _ in fn.params}
    labels = Names(block_of)
    body = list(fn.body)
    k = len(body) - 2
    while k >= 0:
        item, after = body[k], body[k + 1]
        if isinstance(item, Instr) and item.op == "br" and isinstance(after, Label) \
                and len(set(item.labels)) == 2 and after.name in item.labels:
            other = next(lb for lb in item.labels if lb != after.name)
            start = _block_start(body, k)
            moved = _sinkable(body[start:k], item, live_in.get(block_of.get(other, other),
                                                               set()), params)
            if moved:
                pad = labels.fresh(f"{after.name}.pad", sep="")
                br = item.copy()
                br.labels = [pad if lb == after.name else lb for lb in item.labels]
                kept = [x for j, x in enumerate(body[start:k]) if j not in moved]
                sunk = [body[start + j] for j in sorted(moved)]
                body[start:k + 1] = kept + [br, Label(pad)] + sunk
        k -= 1
    return Function(fn.name, list(fn.params), fn.ret, body)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(), st.booleans())
def test_the_pads_are_those_of_splicing_in_place(source, optimized):
    # landing_pads collects its rewrites and assembles the body once; on the function it
    # receives in the pipeline (and on plain quads) it must give the text splicing each
    # pad in place gave.
    from ssa_course.quads.bril_write import format_function

    comp = compile_source(source, "gen.tiny")
    names = [p for p in DEFAULT_PIPELINE if p != "landing"] if optimized else []
    program = run_pipeline(comp, names).quads if names else comp.quads
    for fn in program.functions.values():
        assert format_function(landing_pads(fn)) == format_function(_landing_in_place(fn))


def test_a_hundred_loops_get_every_pad_of_splicing_in_place():
    # LOOP's shape a hundred times in one function: a pad before each loop (the pads are
    # assembled into the body at once, not spliced one by one)
    loop = "var i{k} = 0; while (i{k} < n) {{ s = s + k * {k} + 7; i{k} = i{k} + 1; }}"
    source = ("fn main(n: int, k: int) {\n    var s = 0;\n"
              + "\n".join(loop.format(k=k) for k in range(1, 100)) + "\n    print(s);\n}\n")
    program = run_pipeline(compile_source(source, "loops.tiny"),
                           [p for p in DEFAULT_PIPELINE if p != "landing"]).quads
    from ssa_course.quads.bril_write import format_function

    fn = program.functions["main"]
    new, old = format_function(landing_pads(fn)), format_function(_landing_in_place(fn))
    assert new == old and new.count(".pad:") == 98
