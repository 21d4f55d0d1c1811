"""The quads interpreter: Bril semantics, Tiny's runtime errors, limits, exceptions."""

from __future__ import annotations

import pytest

import ssa_course
from ssa_course.errors import RuntimeTrap
from ssa_course.quads.interp import run_quads
from ssa_course.quads.ir import Function, Instr, Label, Program
from ssa_course.runtime import Limits, Output
from ssa_course.tiny.types import INT


def run(program: Program, args=(), **limits) -> tuple[str, int]:
    out = Output()
    steps = run_quads(program, list(args), out, Limits(**limits))
    return out.text(), steps


def prog(*fns: Function) -> Program:
    return Program({f.name: f for f in fns})


def test_dynamic_count_counts_instructions_not_labels():
    main = Function("main", [], None, [
        Instr("const", "x", INT, value=2), Label("a"), Label("b"),
        Instr("print", args=["x"]), Instr("nop")])
    assert run(prog(main)) == ("2\n", 3)


def test_falling_off_the_end_returns():
    show = Function("show", [("v", INT)], None, [Instr("print", args=["v"])])
    main = Function("main", [], None, [Instr("const", "x", INT, value=4),
                                       Instr("call", args=["x"], funcs=["show"]),
                                       Instr("call", args=["x"], funcs=["show"])])
    assert run(prog(main, show)) == ("4\n4\n", 5)


def test_deep_recursion_and_stack_overflow():
    src = ("fn down(n: int) -> int { if (n == 0) { return 0; } return 1 + down(n - 1); }\n"
           "fn main(n: int) { print(down(n)); }")
    quads = ssa_course.compile(src).quads
    assert run(quads, [60_000])[0] == "60000\n"
    with pytest.raises(RuntimeTrap) as info:
        run(quads, [60_000], depth=1000)
    assert info.value.render() == "error: stack overflow"


def test_step_limit():
    loop = Function("main", [], None, [Label("top"), Instr("jmp", labels=["top"])])
    with pytest.raises(RuntimeTrap) as info:
        run(prog(loop), steps=500)
    assert info.value.message == "step limit exceeded"


def test_exception_unwinds_frames_to_the_handler():
    src = """
fn inner(x: int) -> int { throw x + 1; }
fn outer(x: int) -> int { var r = inner(x); print(999); return r; }
fn main() {
    try { print(outer(1)); } catch (e) { print(e); }
    try { throw 5; } catch (e) { print(e * 2); }
}"""
    assert run(ssa_course.compile(src).quads)[0] == "2\n10\n"


def test_uncaught_exception():
    main = Function("main", [], None, [Instr("const", "v", INT, value=-3),
                                       Instr("throw", args=["v"])])
    with pytest.raises(RuntimeTrap) as info:
        run(prog(main))
    assert info.value.render() == "error: uncaught exception -3"


def test_leave_pops_the_handler():
    src = """
fn main() {
    try { print(1); } catch (e) { print(e); }
    try { throw 7; } catch (e) { print(e); }
}"""
    assert run(ssa_course.compile(src).quads)[0] == "1\n7\n"


@pytest.mark.parametrize("op, a, b, want", [
    ("add", 2**63 - 1, 1, -(2**63)), ("sub", -(2**63), 1, 2**63 - 1),
    ("mul", 2**62, 4, 0), ("div", -7, 2, -3), ("div", -(2**63), -1, -(2**63)),
    ("rem", -7, 2, -1), ("rem", 7, -2, 1), ("rem", -(2**63), -1, 0),
])
def test_arithmetic(op, a, b, want):
    main = Function("main", [], None, [Instr("const", "a", INT, value=a),
                                       Instr("const", "b", INT, value=b),
                                       Instr(op, "r", INT, ["a", "b"]),
                                       Instr("print", args=["r"])])
    assert run(prog(main))[0] == f"{want}\n"


def test_undefined_variable_is_a_runtime_error():
    main = Function("main", [], None, [Instr("print", args=["nope"])])
    with pytest.raises(RuntimeTrap) as info:
        run(prog(main))
    assert "undefined variable 'nope'" in info.value.message


@pytest.mark.parametrize("src, message", [
    ("fn main() { var a = new int[2]; print(a[2]); }", "index out of bounds at 1:40"),
    ("fn main() { var n = -1; var a = new int[n]; }", "negative array length at 1:33"),
    ("fn main() { var z = 0; print(5 % z); }", "division by zero at 1:32"),
    ("fn main() { var a = new [int][1]; print(a[0][0]); }", "unset element at 1:42"),
])
def test_runtime_errors_point_at_the_source(src, message):
    with pytest.raises(RuntimeTrap) as info:
        run(ssa_course.compile(src).quads)
    assert info.value.render() == f"error: {message}"


def test_an_instruction_renamed_is_a_copy_only_when_it_names_a_renamed_argument():
    from ssa_course.quads.ir import Instr

    add = Instr("add", "c", None, ["a", "b"])
    assert add.renamed({"x": "y"}) is add  # nothing to rename: the same instruction
    new = add.renamed({"a": "a2"})
    assert new is not add and new.args == ["a2", "b"] and add.args == ["a", "b"]
    assert (new.op, new.dest) == ("add", "c")
