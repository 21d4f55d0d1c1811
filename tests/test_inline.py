"""The ``inline`` pass (``ssa_course.quads.inline``): small leaf callees copied into their
callers, only where the call depth limit, undefined reads and handlers cannot tell."""

from __future__ import annotations

import pytest
from corpus import load_bril_corpus, load_corpus

from ssa_course import passes
from ssa_course.compilation import compile_source
from ssa_course.quads import bril
from ssa_course.quads.call_depth import deep_functions
from ssa_course.quads.inline import inline_calls
from ssa_course.runtime import Limits
from ssa_course.stages import run


def _inlined(text: str) -> tuple[str, int]:
    program, count = inline_calls(bril.parse_bril_text(text, "t.bril"))
    return bril.to_bril_text(program), count


SQUARE = """@main(n: int) {
  a: int = call @sq n;
  print a;
}
@sq(x: int): int {
  y: int = mul x x;
  ret y;
}
"""

SQUARE_INLINED = """@main(n: int) {
  x.i1: int = id n;
  y.i1: int = mul x.i1 x.i1;
  a: int = id y.i1;
  jmp .sq.done.i1;
.sq.done.i1:
  print a;
}
@sq(x: int): int {
  y: int = mul x x;
  ret y;
}
"""


def test_golden_a_leaf_call_becomes_its_renamed_body():
    text, count = _inlined(SQUARE)
    assert (text, count) == (SQUARE_INLINED, 1)


def test_leaves_of_leaves_go_bottom_up_and_names_never_clash():
    text, count = _inlined("""@main(n: int) {
  a: int = call @quad n;
  b: int = call @quad a;
  print a b;
}
@quad(x: int): int {
  y: int = call @sq x;
  z: int = call @sq y;
  ret z;
}
@sq(x: int): int {
  y: int = mul x x;
  ret y;
}
""")
    main = text.split("@quad")[0]
    assert "call" not in main and count == 4  # sq twice into quad, quad twice into main
    again = compile_source(text, "t.bril")
    assert run(again, ["3"]).stdout == "81 43046721\n"


def test_deep_functions_are_cycles_and_what_they_call():
    program = bril.parse_bril_text("""@main { call @a; call @leaf; }
@a { call @b; }
@b { call @a; call @c; }
@c { call @leaf; }
@leaf { }
""", "t.bril")
    assert deep_functions(program) == {"a", "b", "c", "leaf"}


DEPTH = """
fn leaf(x: int) -> int { return x + 1; }
fn down(n: int) -> int {
    if (n == 0) { return leaf(n); }
    return down(n - 1) + 1;
}
fn main(n: int) { print(7); print(down(n)); }
"""


@pytest.mark.parametrize("depth", [3, 4, 5, 100])
def test_a_call_that_overflows_the_stack_still_does(depth):
    # main is depth 1, down(0) depth 4, leaf depth 5: a limit of 3 stops entering down(0),
    # a limit of 4 when entering leaf -- so leaf must not be inlined into down
    comp = compile_source(DEPTH, "d.tiny")
    want = run(comp, ["2"], via="quads", limits=Limits(depth=depth))
    got = run(comp, ["2"], via="optimized", limits=Limits(depth=depth))
    assert (got.stdout, got.status, got.error) == (want.stdout, want.status, want.error)
    assert want.status == (2 if depth <= 4 else 0)


def test_in_a_recursive_function_a_leaf_call_next_to_a_recursive_call_is_inlined():
    text, count = _inlined("""@main(n: int) { call @rec n; }
@rec(n: int) {
  z: int = const 0;
  stop: bool = eq n z;
  br stop .end .more;
.more:
  two: int = const 2;
  a: int = call @half n two;
  b: int = div n two;
  call @rec b;
  c: int = call @half n two;
  print a c;
  br stop .end .last;
.last:
  d: int = call @half n b;
  print d;
.end:
  e: int = call @half n two;
  print e;
}
@half(x: int, y: int): int {
  q: int = div x y;
  ret q;
}
""")
    rec = text.split("\n@rec(")[1].split("\n@half(")[0]
    # a: the recursive call follows with nothing observable between (the division is by
    # a constant); c and d: the recursive call came first, at the same depth; e: neither
    assert count == 3 and rec.count("call @half") == 1
    assert rec.index("call @half") > rec.index(".end:")


CHAIN = """
fn a(x: int) -> int { return x + 1; }
fn b(x: int) { print(x); }
fn f(n: int) { if (n == 0) { return; } var t = a(n); b(t); f(n - 1); }
fn main(n: int) { f(n); }
"""


@pytest.mark.parametrize("depth", [2, 3, 4, 5, 6])
def test_a_call_that_only_an_inlined_call_follows_stays(depth):
    # a is followed by b, which prints: if a overflowed, nothing was printed; with both
    # inlined, b would print before f overflowed. Only calls of recursive functions vouch.
    comp = compile_source(CHAIN, "c.tiny")
    want = run(comp, ["3"], via="quads", limits=Limits(depth=depth))
    got = run(comp, ["3"], via="optimized", limits=Limits(depth=depth))
    assert (got.stdout, got.status, got.error) == (want.stdout, want.status, want.error)
    text, _ = inline_calls(comp.quads)
    assert "call @a" in bril.to_bril_text(text).split("\n@f(")[1].split("\n@")[0]


@pytest.mark.parametrize("callee", [
    # reads a variable that one path leaves unassigned: a fresh frame each time
    "@f(c: bool): int {\n  br c .set .use;\n.set:\n  v: int = const 5;\n.use:\n"
    "  w: int = id v;\n  ret w;\n}\n",
    # its own handler belongs to its frame
    "@f(c: bool): int {\n  enter .body .h;\n.body:\n  v: int = const 5;\n  leave;\n"
    "  ret v;\n.h:\n  e: int = catch;\n  ret e;\n}\n",
])
def test_callees_that_a_copy_could_change_stay_calls(callee):
    text, count = _inlined("@main(c: bool) {\n  x: int = call @f c;\n  print x;\n}\n"
                           + callee)
    assert count == 0 and "call @f" in text


def test_a_throw_in_an_inlined_callee_reaches_the_callers_handler():
    source = """
fn check(x: int) -> int { if (x > 3) { throw x * 10; } return x; }
fn main(n: int) {
    var s = 0;
    try { for (var i = 0; i < n; i = i + 1) { s = s + check(i); } } catch (e) { print(e); }
    print(s);
    print(check(n));
}
"""
    comp = compile_source(source, "t.tiny")
    state = passes.run_pipeline(comp, ["inline"])
    assert "call" not in bril.to_bril_text(state.quads).split("@check")[0]
    for n in ("2", "6"):
        want = run(comp, [n], via="quads")
        got = run(passes.result(passes.run_pipeline(comp, ["inline"])), [n], via="quads")
        assert (got.stdout, got.status, got.error) == (want.stdout, want.status, want.error)


def test_a_callee_that_always_throws_leaves_its_result_assigned():
    """Inlined, ``t = call @fail`` assigns ``t`` nowhere; Bril's flow-insensitive type rule
    rejects the read of ``t`` after the copy (dead code, but the printed program would not
    read back): the copy ends with a placeholder for an int or bool, and a result of
    another type keeps the call."""
    source = ("fn fail(x: int) -> int { throw x; }\n"
              "fn show(a: int, b: int) { print(a, b); }\n"
              "fn main() { try { show(1, fail(2)); } catch (e) { print(e); } }\n")
    comp = compile_source(source, "t.tiny")
    text = passes.emit(passes.run_pipeline(comp, ["inline"]), "quads")
    assert "call" not in text.split("@main")[1]
    got = run(compile_source(text, "inlined.bril"), [], via="quads")
    assert (got.stdout, got.status) == ("2\n", 0)
    arrays = source.replace("-> int { throw x; }", "-> [int] { throw x; }").replace(
        "show(1, fail(2))", "var a = fail(2); show(1, a[0])")
    text = passes.emit(passes.run_pipeline(compile_source(arrays, "a.tiny"), ["inline"]),
                       "quads")
    assert "call @fail" in text.split("@main")[1]
    got = run(compile_source(text, "inlined.bril"), [], via="quads")
    assert (got.stdout, got.status) == ("2\n", 0)
    # without a try region too: the type rule wants ``t`` assigned somewhere (fuzz seed
    # 4561: ``f2`` always throws once ``thread`` dropped its dead ``ret``)
    text, count = _inlined("@main {\n  two: int = const 2;\n  t: int = call @fail two;\n"
                           "  print t;\n}\n@fail(x: int): int {\n  throw x;\n}\n")
    assert count == 1 and "call" not in text.split("@fail")[0]
    assert "t: int = const 0" in text
    bril.parse_bril_text(text, "inlined.bril")  # reads back, type rule included


CASES = [(c.name, c.source, c.path.name, c.args) for c in load_corpus() + load_bril_corpus()]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0])
def test_every_corpus_program_through_the_pass_alone(case):
    """The pass alone (run as quads): same output, status and error. (Alone it may run
    more instructions -- an ``id`` per argument; ``tests/test_opt.py`` checks that the
    whole pipeline never does.)"""
    name, source, filename, args = case
    comp = compile_source(source, filename)
    want = run(comp, args, via="quads")
    if want.status == 1:
        return  # a compile error: nothing to inline
    # run as written: the Bril text ``opt -p inline`` prints, read back (its checks too)
    text = passes.emit(passes.run_pipeline(comp, ["inline"]), "quads")
    got = run(compile_source(text, "inlined.bril"), args, via="quads")
    assert (got.stdout, got.status) == (want.stdout, want.status), name
    if filename.endswith(".tiny"):  # Bril's messages name variables, which inlining renames
        assert got.error == want.error, name


def _rec_with(tail: str) -> str:
    return f"""@main(n: int) {{ call @rec n; }}
@rec(n: int) {{
  z: int = const 0;
  two: int = const 2;
  stop: bool = eq n z;
  br stop .end .more;
.more:
  e: bool = call @even n two;
{tail}
.end:
}}
@even(x: int, y: int): bool {{
  q: int = div x y;
  b: int = mul q y;
  r: bool = eq b x;
  ret r;
}}
"""


@pytest.mark.parametrize(("tail", "inlined"), [
    # both ways reach a call, through a division by a constant: inlined
    ("  h: int = div n two;\n  br e .a .b;\n.a:\n  call @rec h;\n  jmp .end;\n"
     ".b:\n  k: int = sub n z;\n  call @rec k;\n  jmp .end;", True),
    # one way prints first
    ("  br e .a .b;\n.a:\n  call @rec z;\n  jmp .end;\n.b:\n  print n;\n"
     "  call @rec z;\n  jmp .end;", False),
    # a division by a variable may trap first
    ("  h: int = div two n;\n  call @rec h;", False),
    # a loop without a call may never end (the step limit instead of the depth limit)
    ("  jmp .spin;\n.spin:\n  br e .spin .go;\n.go:\n  call @rec z;", False),
])
def test_a_recursive_caller_needs_a_call_on_every_path_after_the_inlined_one(tail, inlined):
    text, count = _inlined(_rec_with(tail))
    assert count == int(inlined)
    assert ("call @even" not in text.split("\n@even(")[0]) == inlined


DEPTH_CASES = [c for c in load_corpus() + load_bril_corpus() if "call" in c.source
               or ("fn " in c.source and c.source.count("fn ") > 1)]


@pytest.mark.parametrize("case", DEPTH_CASES, ids=lambda c: c.name)
def test_small_depth_limits_stop_the_optimized_program_where_they_stop_the_input(case):
    """Limits from 3 up (above every non-recursive chain of calls in the corpus: the
    documented assumption of ``quads.call_depth``): the same output, status and error."""
    comp = compile_source(case.source, case.path.name)
    for depth in (3, 5, 8):
        want = run(comp, case.args, via="quads", limits=Limits(depth=depth))
        if want.status == 1:
            return
        got = run(comp, case.args, via="optimized", limits=Limits(depth=depth))
        assert (got.stdout, got.status) == (want.stdout, want.status), (case.name, depth)
        if case.path.name.endswith(".tiny"):
            assert got.error == want.error, (case.name, depth)
