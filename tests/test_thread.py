"""The ``thread`` pass (``ssa_course.quads.thread``): tests that the branches before them
already decided become jumps, and edges skip blocks that only repeat such a test."""

from __future__ import annotations

import pytest
from corpus import load_bril_corpus, load_corpus
from hypothesis import HealthCheck, given, settings
from tiny_gen import programs

from ssa_course import passes
from ssa_course.compilation import compile_source
from ssa_course.quads import bril
from ssa_course.quads.thread import thread_jumps
from ssa_course.runtime import Limits
from ssa_course.stages import run

# Euclid by subtraction (Bril's gcd benchmark): ``.again`` tests ``lt`` again, which
# ``.left`` and ``.right`` already know. (Layout then copies ``.top`` onto the back edges.)
EUCLID = """@main(a: int, b: int) {
  zero: int = const 0;
.top:
  lt: bool = lt a b;
  br lt .left .right;
.left:
  d: int = sub b a;
  z: bool = eq d zero;
  br z .done .again;
.right:
  d: int = sub a b;
  z: bool = eq d zero;
  br z .done .again;
.again:
  br lt .setb .seta;
.setb:
  b: int = id d;
  jmp .top;
.seta:
  a: int = id d;
  jmp .top;
.done:
  print b;
}
"""

EUCLID_THREADED = """@main(a: int, b: int) {
.b0:
  zero: int = const 0;
  lt: bool = lt a b;
  br lt .left .right;
.left:
  d: int = sub b a;
  z: bool = eq d zero;
  br z .done .setb;
.right:
  d: int = sub a b;
  z: bool = eq d zero;
  br z .done .seta;
.setb:
  b: int = id d;
  lt: bool = lt a b;
  br lt .left .right;
.seta:
  a: int = id d;
  lt: bool = lt a b;
  br lt .left .right;
.done:
  print b;
}
"""

# A loop test copied onto a back edge (what layout's rotation makes): ``num`` and ``one``
# did not change since the test that led here, so ``more`` is still true.
RETEST = """@main(num: int) {
  one: int = const 1;
  fac: int = const 2;
  more: bool = gt num one;
  br more .body .end;
.body:
  q: int = div num fac;
  p: int = mul q fac;
  z: bool = eq p num;
  br z .yes .no;
.yes:
  print fac;
  num: int = id q;
  more: bool = gt num one;
  br more .body .end;
.no:
  fac: int = add fac one;
  more: bool = gt num one;
  br more .body .end;
.end:
}
"""


def _threaded(text: str) -> str:
    program = bril.parse_bril_text(text, "t.bril")
    return bril.to_bril_text(bril.Program(
        {name: thread_jumps(fn) for name, fn in program.functions.items()}, {}))


def test_golden_a_block_that_repeats_a_known_test_is_skipped():
    assert _threaded(EUCLID) == EUCLID_THREADED


def test_a_recomputed_test_is_deleted_and_its_branch_becomes_a_jump():
    out = _threaded(RETEST)
    no = out.split(".no:")[1].split(".body:")[0]
    assert no == "\n  fac: int = add fac one;\n"  # then the body: nothing to test
    assert out.count("gt num one") == 2  # the entry's test and the one after num changed


@pytest.mark.parametrize("text", [EUCLID, RETEST])
def test_threaded_programs_print_the_same_and_run_fewer_instructions(text):
    before, after = compile_source(text, "t.bril"), compile_source(_threaded(text), "t.bril")
    for args in (["1071", "462"], ["89", "55"], ["12", "12"], ["360"], ["97"], ["1"]):
        args = args[:2] if text is EUCLID else args[:1]
        if len(args) != (2 if text is EUCLID else 1):
            continue
        want, got = run(before, args, via="quads"), run(after, args, via="quads")
        assert got.stdout == want.stdout
        assert got.steps <= want.steps


def test_a_test_whose_operand_changed_stays():
    text = RETEST.replace("fac: int = add fac one;", "num: int = add num one;")
    assert _threaded(text).split(".no:")[1].count("gt num one") == 1


def test_untouched_functions_come_back_as_they_were():
    fn = bril.parse_bril_text("@main(a: int) {\n  print a;\n}\n", "t.bril").functions["main"]
    assert thread_jumps(fn) is fn


UP_TO_LAYOUT = list(passes.DEFAULT_PIPELINE[:passes.DEFAULT_PIPELINE.index("layout") + 1])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_generated_programs_print_the_same_with_and_without_the_pass(source):
    """After layout (where loop tests are copied), threading keeps the output, status and
    error of generated programs, and never adds to the instructions executed."""
    limits = Limits(steps=200_000)
    without = passes.result(passes.run_pipeline(compile_source(source, "g.tiny"),
                                                UP_TO_LAYOUT))
    with_ = passes.result(passes.run_pipeline(compile_source(source, "g.tiny"),
                                              [*UP_TO_LAYOUT, "thread"]))
    want, got = run(without, None, limits=limits), run(with_, None, limits=limits)
    assert (got.stdout, got.status, got.error) == (want.stdout, want.status, want.error)
    if want.status == 0:
        assert got.steps <= want.steps, source


CASES = [(c.name, c.source, c.path.name, c.args) for c in load_corpus() + load_bril_corpus()]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0])
def test_every_corpus_program_through_the_pass_alone(case):
    """Alone (run as quads) the pass keeps output, status and error. (Steps are compared
    in the generated-programs test: here the pass's input carries the checks of reads
    that may be undefined, which the plain quads run does not.)"""
    name, source, filename, args = case
    comp = compile_source(source, filename)
    want = run(comp, args, via="quads")
    if want.status == 1:
        return
    got = run(passes.result(passes.run_pipeline(comp, ["thread"])), args, via="quads")
    assert (got.stdout, got.status) == (want.stdout, want.status), name
    if filename.endswith(".tiny"):
        assert got.error == want.error, name


# ``.again`` computes ``c`` once more (the same instruction: rule 1 may delete it) before
# testing it: the edge ``.left -> .again`` knows ``c`` is true and goes straight to ``.yes``.
RECOMPUTED_THEN_TESTED = """@main(a: int, b: int) {
  c: bool = lt a b;
  br c .left .right;
.left:
  print a;
  jmp .again;
.right:
  print b;
  jmp .again;
.again:
  c: bool = lt a b;
  br c .yes .no;
.yes:
  print a;
  ret;
.no:
  print b;
}
"""


def test_an_edge_skips_a_block_that_recomputes_then_tests_a_known_condition():
    out = _threaded(RECOMPUTED_THEN_TESTED)
    # both edges skip ``.again`` (layout then merges each side with the block it reaches)
    assert ".again" not in out and out.count("lt a b") == 1, out
    assert out.split(".left:")[1].split(".right:")[0] == "\n  print a;\n  print a;\n  ret;\n"
    for args in (["1", "2"], ["2", "1"], ["3", "3"]):
        want = run(compile_source(RECOMPUTED_THEN_TESTED, "t.bril"), args, via="quads")
        got = run(compile_source(out, "t.bril"), args, via="quads")
        assert got.stdout == want.stdout


def _elif_chain(arms: int) -> str:
    lines = ["fn main(n: int) {", "    var y = 0;"]
    for i in range(arms):
        lines.append(("    if" if i == 0 else "    } else if") + f" (n == {i}) {{")
        lines.append(f"        y = y + {i * 3 % 17};")
    lines += ["    } else {", "        y = 0 - 1;", "    }", "    print(y);", "}"]
    return "\n".join(lines) + "\n"


def test_the_facts_of_an_else_if_chain_do_not_pile_up(monkeypatch):
    """Each arm's "false" is only carried where its condition is tested again (nowhere):
    the facts at the blocks' tops stay a few per block, not one per arm above (which
    made ``thread`` quadratic: 10,000 arms, 50 million set entries)."""
    from ssa_course.quads import thread

    sizes: list[tuple[int, int]] = []
    solve = thread.solve

    def counting(cfg, analysis):
        facts = solve(cfg, analysis)
        if analysis.name == "known":
            sizes.append((len(facts.top), sum(len(f) for f in facts.top.values())))
        return facts

    monkeypatch.setattr(thread, "solve", counting)
    comp = compile_source(_elif_chain(300), "chain.tiny")
    state = passes.run_pipeline(comp, [*UP_TO_LAYOUT, "thread"])
    assert sizes
    for blocks, held in sizes:
        assert blocks > 300 and held <= 2 * blocks, (blocks, held)
    assert run(passes.result(state), ["7"], via="quads").stdout == \
        run(comp, ["7"], via="quads").stdout
