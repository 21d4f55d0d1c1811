"""The ``try-merge`` pass: the calls of one try share one enter/leave and one handler."""

from __future__ import annotations

from ssa_course.compilation import compile_source
from ssa_course.quads import bril
from ssa_course.quads.ir import Label, Program
from ssa_course.quads.layout import layout
from ssa_course.quads.peephole import on_program
from ssa_course.quads.try_merge import merge_try_regions
from ssa_course.stages import run

# @f throws its argument when it is negative
F = """@f(k: int) {
  z: int = const 0;
  b: bool = lt k z;
  br b .bad .ok;
.bad:
  throw k;
.ok:
  ret;
}
"""


def _program(main: str) -> Program:
    return compile_source(F + main, "t.bril", kind="bril").quads_as_written


def _shape(program: Program) -> list[str]:
    """``main`` as ops and ``.labels``, copies with their names (``x=id:one``)."""
    out = []
    for item in program.functions["main"].body:
        if isinstance(item, Label):
            out.append("." + item.name)
        elif item.op == "id":
            out.append(f"{item.dest}=id:{item.args[0]}")
        else:
            out.append(item.op)
    return out


def _same_behaviour(before: Program, after: Program, args_list=((3,), (-4,))) -> list[tuple]:
    """Run both for each argument: same output and status, never more instructions;
    returns the (before, after) instruction counts."""
    counts = []
    for args in args_list:
        argv = [str(a) for a in args]
        want = run(compile_source(bril.to_bril_text(before), "a.bril"), argv, via="quads")
        got = run(compile_source(bril.to_bril_text(after), "b.bril"), argv, via="quads")
        assert (got.stdout, got.status) == (want.stdout, want.status), args
        assert got.steps <= want.steps, args
        counts.append((want.steps, got.steps))
    return counts


TWO_CALLS = """@main(n: int) {
.entry:
  one: int = const 1;
  two: int = const 2;
  enter .x1 .h1;
.x1:
  call @f one;
  leave;
  jmp .s;
.s:
  enter .x2 .h2;
.x2:
  call @f n;
  leave;
  x: int = id two;
  print x;
  ret;
.h1:
  e: int = catch;
  x: int = id one;
  jmp .join;
.h2:
  e: int = catch;
  x: int = id n;
  jmp .join;
.join:
  print e x;
}
"""


def test_handler_copies_are_hoisted_and_the_regions_merged():
    before = _program(TWO_CALLS)
    after = on_program(merge_try_regions, before)
    assert _shape(after) == [
        ".entry", "const", "const", "x=id:one", "enter",
        ".x1", "call", "jmp",
        ".s", "x=id:n",
        ".x2", "call", "leave", "x=id:two", "print", "ret",
        ".h1", "catch", "jmp", ".join", "print"]
    # normal path: two copies more, one enter and one leave less; a throw from the second
    # call skips the leave and the enter
    assert _same_behaviour(before, after) == [(20, 20), (20, 19)]
    laid_out = on_program(layout, after)  # layout then drops the jumps
    assert all(b < a for a, b in _same_behaviour(before, laid_out))


def test_a_copy_whose_destination_the_normal_path_reads_is_not_hoisted():
    # x is printed after the second call: writing it before that call would change it
    src = TWO_CALLS.replace("  leave;\n  x: int = id two;\n  print x;",
                            "  leave;\n  print x;\n  x: int = id two;")
    src = src.replace("  two: int = const 2;\n", "  two: int = const 2;\n  x: int = const 9;\n")
    before = _program(src)
    after = on_program(merge_try_regions, before)
    assert _shape(after) == _shape(before)
    assert _same_behaviour(before, after) == [(21, 21), (21, 21)]


def test_a_copy_of_the_caught_value_is_not_hoisted():
    before = _program(TWO_CALLS.replace("x: int = id n;", "x: int = id e;"))
    after = on_program(merge_try_regions, before)
    assert _shape(after).count("enter") == 2
    _same_behaviour(before, after)


def test_handlers_that_do_the_same_merge_without_hoisting():
    # the handler reads x, which changes between the calls: it sees the value at the throw
    src = """@main(n: int) {
.entry:
  x: int = const -10;
  enter .x1 .h1;
.x1:
  call @f n;
  leave;
  x: int = add x n;
  enter .x2 .h2;
.x2:
  call @f x;
  leave;
  print x;
  ret;
.h1:
  e: int = catch;
  jmp .join;
.h2:
  e: int = catch;
  jmp .join;
.join:
  print e x;
}
"""
    before = _program(src)
    after = on_program(merge_try_regions, before)
    assert _shape(after) == [".entry", "const", "enter", ".x1", "call", "add", ".x2", "call",
                             "leave", "print", "ret", ".h1", "catch", "jmp", ".join", "print"]
    # no throw, a throw from the first call, from the second
    assert _same_behaviour(before, after, ((20,), (-4,), (3,))) == [(18, 16), (10, 10),
                                                                    (18, 16)]


def test_no_merge_when_hoisting_would_lengthen_the_normal_path():
    # three copies in each handler: six more on the normal path for two instructions saved
    src = TWO_CALLS.replace("  x: int = id one;\n", "  x: int = id one;\n  y: int = id one;\n"
                            "  w: int = id one;\n")
    src = src.replace("  x: int = id n;\n", "  x: int = id n;\n  y: int = id n;\n"
                      "  w: int = id n;\n").replace("print e x;", "print e x y w;")
    before = _program(src)
    after = on_program(merge_try_regions, before)
    assert _shape(after) == _shape(before)


def test_no_merge_when_another_path_enters_between_the_regions():
    # .s is also reached by a branch from the entry, with no handler pushed
    src = TWO_CALLS.replace("  enter .x1 .h1;\n", "  c: bool = lt n one;\n  br c .s .pre;\n"
                            ".pre:\n  enter .x1 .h1;\n")
    before = _program(src)
    after = on_program(merge_try_regions, before)
    assert _shape(after) == _shape(before)
    _same_behaviour(before, after, ((3,), (-4,), (0,)))


def test_the_default_pipeline_gives_each_straight_try_one_enter():
    from pathlib import Path

    from ssa_course import passes

    path = Path(__file__).parent / "programs" / "try_plain_calls.tiny"
    comp = compile_source(path.read_text(), str(path))
    assert "try-merge" in passes.DEFAULT_PIPELINE
    # without inlining, which copies these small callees in and leaves no call to guard
    calls_stay = [name for name in passes.DEFAULT_PIPELINE if name != "inline"]
    text = passes.emit(passes.run_pipeline(comp, calls_stay), "bril")
    # two try statements, each with two calls: one enter and one leave each
    assert text.count("enter ") == 2 and text.count("leave;") == 2


def test_coalescing_lets_a_call_in_a_try_write_the_variable_its_handler_reads():
    from ssa_course.quads.coalesce import coalesce_copies

    src = """@main(n: int) {
.entry:
  x: int = const 0;
  enter .body .h;
.body:
  v: int = call @g x;
  leave;
  x: int = id v;
  print x;
  ret;
.h:
  e: int = catch;
  print e x;
}
@g(k: int): int {
  one: int = const 1;
  r: int = add k one;
  ret r;
}
"""
    before = compile_source(src, "t.bril", kind="bril").quads_as_written
    after = on_program(coalesce_copies, before)
    # a throw from @g leaves x as it was (the call writes x only when it returns)
    call = next(i for i in after.functions["main"].instrs() if i.op == "call")
    assert call.dest == call.args[0]
    assert "id" not in [i.op for i in after.functions["main"].instrs()]
