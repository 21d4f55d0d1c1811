"""The ``unroll`` pass (``ssa_course.quads.unroll``): small innermost loops that rotate
their variables run twice per trip, so that coalescing leaves no copy in them."""

from __future__ import annotations

import pytest
from corpus import load_bril_corpus, load_corpus

from ssa_course import passes
from ssa_course.compilation import compile_source
from ssa_course.quads import bril
from ssa_course.quads.unroll import unroll_loops
from ssa_course.stages import run

GCD = """@gcd(a: int, b: int): int {
  zero: int = const 0;
.head:
  done: bool = eq b zero;
  br done .exit .body;
.body:
  q: int = div a b;
  m: int = mul q b;
  r: int = sub a m;
  a: int = id b;
  b: int = id r;
  jmp .head;
.exit:
  ret a;
}
"""

GCD_UNROLLED = """@gcd(a: int, b: int): int {
.b0:
  zero: int = const 0;
.head:
  done: bool = eq b zero;
  br done .exit .body;
.body:
  q: int = div a b;  # at 7:12
  m: int = mul q b;
  r: int = sub a m;
  a: int = id b;
  b: int = id r;
  jmp .head.u;
.head.u:
  done: bool = eq b zero;
  br done .exit .body.u;
.body.u:
  q: int = div a b;  # at 7:12
  m: int = mul q b;
  r: int = sub a m;
  a: int = id b;
  b: int = id r;
  jmp .head;
.exit:
  ret a;
}
"""


def _unrolled(text: str) -> str:
    program = bril.parse_bril_text(text, "t.bril")
    fns = {name: unroll_loops(fn) for name, fn in program.functions.items()}
    return bril.to_bril_text(bril.Program(fns, program.structs))


def test_golden_a_rotating_loop_is_copied_once_and_the_copies_alternate():
    assert _unrolled(GCD) == GCD_UNROLLED


@pytest.mark.parametrize("loop", [
    # the new value is computed after the old one's last use: coalescing needs no help
    "  i: int = add i one;\n  s: int = add s i;\n",
    # a copy of a temporary is only a name
    "  t: int = add i one;\n  i: int = id t;\n  s: int = add s i;\n",
])
def test_loops_that_leave_no_copy_stay_as_they_are(loop):
    text = ("@main(n: int) {\n  one: int = const 1;\n  i: int = const 0;\n  s: int = const 0;\n"
            ".head:\n  c: bool = lt i n;\n  br c .body .exit;\n.body:\n" + loop
            + "  jmp .head;\n.exit:\n  print s;\n}\n")
    assert ".u" not in _unrolled(text)


def test_a_value_numbered_rotation_counts_too():
    # h and the new a are the same division: the sea of nodes merges them, and the old a
    # is read after h is computed -- a copy out of SSA, unless the loop is unrolled
    text = ("@main(a: int) {\n  two: int = const 2;\n  zero: int = const 0;\n"
            "  s: int = const 0;\n.head:\n  c: bool = gt a zero;\n  br c .body .exit;\n"
            ".body:\n  h: int = div a two;\n  d: int = mul h two;\n  r: int = sub a d;\n"
            "  s: int = add s r;\n  a: int = div a two;\n  jmp .head;\n.exit:\n"
            "  print s;\n}\n")
    assert ".head.u" in _unrolled(text)


def test_loops_with_handlers_or_nested_loops_are_left_alone():
    with_handler = GCD.replace("  zero: int = const 0;\n", "  zero: int = const 0;\n"
                               "  enter .head .h;\n").replace(
        ".exit:\n  ret a;\n", ".exit:\n  leave;\n  ret a;\n.h:\n  e: int = catch;\n  ret e;\n")
    assert ".u" not in _unrolled(with_handler)


def _pipeline_without(name: str) -> list[str]:
    return [p for p in passes.DEFAULT_PIPELINE if p != name]


def test_after_the_whole_pipeline_the_loop_has_no_copy_and_runs_fewer_instructions():
    main = "@main(x: int, y: int) {\n  g: int = call @gcd x y;\n  print g;\n}\n"
    comp = compile_source(main + GCD, "g.bril")
    with_unroll = passes.result(passes.run_pipeline(comp))
    without = passes.result(passes.run_pipeline(compile_source(main + GCD, "g.bril"),
                                                _pipeline_without("unroll")))
    inlined = bril.to_bril_text(with_unroll.quads).split("@gcd")[0]
    assert inlined.count(" id ") <= 1  # a copy where the first half leaves the loop
    for args in (["1071", "462"], ["89", "55"], ["7", "0"]):
        a, b = run(with_unroll, args), run(without, args)
        assert a.stdout == b.stdout == run(comp, args).stdout
        assert a.steps < b.steps or args[1] == "0"


CASES = [(c.name, c.source, c.path.name, c.args) for c in load_corpus() + load_bril_corpus()]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0])
def test_every_corpus_program_through_the_pass_alone(case):
    """Alone (run as quads) the pass keeps output, status and error; it may add the
    jumps that a copied loop needs (layout removes them), never an operation."""
    name, source, filename, args = case
    comp = compile_source(source, filename)
    want = run(comp, args, via="quads")
    if want.status == 1:
        return
    got = run(passes.result(passes.run_pipeline(comp, ["unroll"])), args, via="quads")
    assert (got.stdout, got.status) == (want.stdout, want.status), name
    if filename.endswith(".tiny"):
        assert got.error == want.error, name


def test_loop_bodies_come_in_layout_order():
    """Each body is sorted by block position (not found by a scan of every block per
    loop, which was quadratic in a function of many loops): the same lists."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    from shapes import array_loops, diamonds

    from ssa_course.quads.cfg import build_cfg
    from ssa_course.quads.unroll import single_latch_loops

    for source in (array_loops(120), diamonds(200)):
        fn = compile_source(source, "shape.tiny").quads.functions["main"]
        cfg = build_cfg(fn)
        loops = single_latch_loops(cfg)
        assert len(loops) >= 5
        for _, _, blocks in loops:
            assert blocks == [n for n in cfg.blocks if n in set(blocks)]
