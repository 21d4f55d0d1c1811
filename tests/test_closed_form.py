"""The ``closed-form`` pass (``ssa_course.quads.closed_form``): a loop that only counts
and sums jumps to the sum's formula when the trip count makes it exact."""

from __future__ import annotations

import pytest
from corpus import load_bril_corpus, load_corpus
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ssa_course import passes
from ssa_course.compilation import compile_source
from ssa_course.quads import bril
from ssa_course.quads.closed_form import LIMIT, MAX_INT, close_loops
from ssa_course.runtime import Limits
from ssa_course.stages import run

MIN_INT = -MAX_INT - 1

TRIANGLE = """@main(n: int) {
  one: int = const 1;
  t: int = const 0;
  c: int = const 1;
.c:
  cond: bool = le c n;
  br cond .body .done;
.body:
  t: int = add t c;
  c: int = add c one;
  jmp .c;
.done:
  print t;
}
"""

TRIANGLE_CLOSED = """@main(n: int) {
.b0:
  one: int = const 1;
  t: int = const 0;
  c: int = const 1;
  jmp .cf.test;
.c:
  cond: bool = le c n;
  br cond .body .done;
.body:
  t: int = add t c;
  c: int = add c one;
  jmp .c;
.done:
  print t;
  ret;
.cf.test:
  cf: bool = le c n;
  br cf .cf.count .done;
.cf.count:
  cf.1: int = sub n c;
  cf.2: int = const 1;
  cf.1: int = add cf.1 cf.2;
  cf.8: int = const 1048576;
  cf.9: bool = le cf.1 cf.8;
  cf.10: int = const 2;
  cf.11: bool = ge cf.1 cf.10;
  cf.12: bool = and cf.9 cf.11;
  cf.13: int = const 9223372036854775807;
  cf.14: bool = lt n cf.13;
  cf.15: bool = and cf.12 cf.14;
  br cf.15 .cf.closed .body;
.cf.closed:
  cf.3: int = sub cf.1 cf.2;
  cf.4: int = mul cf.1 cf.3;
  cf.5: int = const 2;
  cf.6: int = div cf.4 cf.5;
  cf.7: int = mul cf.1 c;
  t: int = add t cf.7;
  t: int = add t cf.6;
  c: int = add c cf.1;
  jmp .done;
}
"""


def _closed(text: str) -> str:
    program = bril.parse_bril_text(text, "t.bril")
    return bril.to_bril_text(bril.Program(
        {name: close_loops(fn) for name, fn in program.functions.items()}, {}))


def test_golden_triangle_enters_through_its_formula():
    assert _closed(TRIANGLE) == TRIANGLE_CLOSED


def test_the_formula_is_what_the_loop_prints_and_costs_less():
    comp = compile_source(TRIANGLE, "t.bril")
    fast = compile_source(_closed(TRIANGLE), "t.bril")
    for n in ("-3", "0", "1", "2", "36", "1000"):
        want, got = run(comp, [n], via="quads"), run(fast, [n], via="quads")
        assert got.stdout == want.stdout, n
        assert got.steps <= want.steps or int(n) < 5, n
    assert run(fast, ["1000"], via="quads").steps < 40


@pytest.mark.parametrize("body", [
    "t: int = add t c;\n  print t;\n  c: int = add c one;",  # an effect in the body
    "t: int = add t c;\n  c: int = add c one;\n  c: int = add c one;",  # a step of 2
    "t: int = add t c;\n  n: int = add n one;\n  c: int = add c one;",  # the bound moves
    "t: int = mul t c;\n  c: int = add c one;",  # a product, not a sum
    "t: int = add t c;",  # no step
])
def test_loops_of_another_shape_are_left_alone(body):
    text = TRIANGLE.replace("t: int = add t c;\n  c: int = add c one;", body)
    assert "cf" not in _closed(text)


def test_a_test_read_after_the_loop_keeps_the_loop():
    text = TRIANGLE.replace("print t;", "print t cond;")
    assert "cf" not in _closed(text)


def _program(inclusive: bool, order: list[str], sums: list[str]) -> str:
    """A counting loop from ``a`` to ``b``: ``order`` places the step ("step") among the
    sums ("s0", "s1", ...: each adds the counter, "iv", or its square, "sq")."""
    body = []
    for item in order:
        if item == "step":
            body.append("i: int = add i one;")
        else:
            k = int(item[1:])
            if sums[k] == "iv":
                body.append(f"{item}: int = add {item} i;")
            else:
                body += [f"q{k}: int = mul i i;", f"{item}: int = add q{k} {item};"]
    inits = "".join(f"  s{k}: int = const {k + 3};\n" for k in range(len(sums)))
    shown = " ".join(f"s{k}" for k in range(len(sums)))
    return (f"@main(a: int, b: int) {{\n  one: int = const 1;\n  i: int = id a;\n{inits}"
            f".h:\n  c: bool = {'le' if inclusive else 'lt'} i b;\n  br c .body .exit;\n"
            f".body:\n  " + "\n  ".join(body) + "\n  jmp .h;\n"
            f".exit:\n  print {shown} i;\n}}\n")


@st.composite
def counting_loops(draw):
    sums = draw(st.lists(st.sampled_from(["iv", "sq"]), min_size=1, max_size=3))
    order = ["step"] + [f"s{k}" for k in range(len(sums))]
    order = draw(st.permutations(order))
    inclusive = draw(st.booleans())
    start = draw(st.one_of(st.integers(-50, 50), st.integers(MIN_INT, MAX_INT),
                           st.sampled_from([MIN_INT, MAX_INT - 3, 1 << 62, -(1 << 62)])))
    trips = draw(st.integers(-3, 300))
    bound = max(MIN_INT, min(MAX_INT, start + trips - (1 if inclusive else 0)))
    return _program(inclusive, order, sums), [str(start), str(bound)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(counting_loops())
def test_generated_counting_loops_print_the_same(case):
    """Wrapping sums (counters near the ends of the int range), zero trips, both tests,
    the step before or after each sum: the closed form prints what the loop prints."""
    text, args = case
    assert "cf" in _closed(text)
    limits = Limits(steps=20_000)
    want = run(compile_source(text, "g.bril"), args, via="quads", limits=limits)
    got = run(compile_source(_closed(text), "g.bril"), args, via="quads", limits=limits)
    assert (got.stdout, got.status, got.error) == (want.stdout, want.status, want.error)
    assert got.steps <= want.steps + 14  # the guard and a jump to it, when the loop is short


@pytest.mark.parametrize("inclusive", [True, False])
@pytest.mark.parametrize("start,bound", [
    (0, MAX_INT),  # le: never ends (every int is <= MAX); lt: 2^63 - 1 trips
    (MAX_INT - 5, MAX_INT),  # six trips for lt, but le never ends
    (MIN_INT, MAX_INT - 1),  # 2^64 - 1 trips: T wraps to -1
    (1, LIMIT + 3),  # just past the limit
])
def test_loops_too_long_for_the_formula_still_run(inclusive, start, bound):
    text = _program(inclusive, ["s0", "step"], ["sq"])
    args = [str(start), str(bound)]
    limits = Limits(steps=5_000)
    want = run(compile_source(text, "g.bril"), args, via="quads", limits=limits)
    got = run(compile_source(_closed(text), "g.bril"), args, via="quads", limits=limits)
    if want.status == 0:  # (only lt from MAX - 5 ends)
        assert got.stdout == want.stdout
    else:
        assert (got.status, got.error) == (want.status, want.error)


def test_after_the_whole_pipeline_a_tiny_sum_costs_a_constant():
    source = ("fn main(n: int) {\n  var s = 0;\n  var i = 1;\n"
              "  while (i <= n) { s = s + i * i; i = i + 1; }\n  print(s);\n}\n")
    comp = compile_source(source, "s.tiny")
    fast = passes.result(passes.run_pipeline(compile_source(source, "s.tiny")))
    without = [p for p in passes.DEFAULT_PIPELINE if p != "closed-form"]
    slow = passes.result(passes.run_pipeline(compile_source(source, "s.tiny"), without))
    for n in ("0", "10", "500"):
        want = run(comp, [n], via="quads")
        assert run(fast, [n]).stdout == run(slow, [n]).stdout == want.stdout
    assert run(fast, ["500"]).steps < 60 < run(slow, ["500"]).steps


CASES = [(c.name, c.source, c.path.name, c.args) for c in load_corpus() + load_bril_corpus()]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0])
def test_every_corpus_program_through_the_pass_alone(case):
    """Alone (run as quads) the pass keeps output, status and error."""
    name, source, filename, args = case
    comp = compile_source(source, filename)
    want = run(comp, args, via="quads")
    if want.status == 1:
        return
    got = run(passes.result(passes.run_pipeline(comp, ["closed-form"])), args, via="quads")
    assert (got.stdout, got.status) == (want.stdout, want.status), name
    if filename.endswith(".tiny"):
        assert got.error == want.error, name
