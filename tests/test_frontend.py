"""The Tiny front end: tokens, the tree the parser builds, what the checker annotates."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from tiny_gen import programs

from ssa_course.errors import SourceError
from ssa_course.tiny import ast, compile_tiny, parse
from ssa_course.tiny.lexer import tokenize
from ssa_course.tiny.printer import format_ast, format_source
from ssa_course.tiny.types import BOOL, INT, ArrayType, StructType

CORPUS = sorted((Path(__file__).parent / "programs").glob("*.tiny"))


def test_tokens_and_positions():
    toks = tokenize("fn main() {\n  x <= -12; // c\n /* b */ y }")
    assert [(t.kind, t.text) for t in toks[:6]] == [
        ("keyword", "fn"), ("name", "main"), ("symbol", "("), ("symbol", ")"),
        ("symbol", "{"), ("name", "x")]
    le = toks[6]
    assert (le.text, le.pos.line, le.pos.col, le.pos.length) == ("<=", 2, 5, 2)
    y = toks[10]
    assert (y.text, y.pos.line, y.pos.col) == ("y", 3, 10)
    assert toks[-1].kind == "eof"


def test_precedence_and_associativity():
    prog = parse("fn main() { var x = 1 - 2 - 3 * 4 % 5; var b = !a || c && d == e; }")
    x = prog.functions["main"].body.stmts[0].init
    assert isinstance(x, ast.Binary) and x.op == "-"
    assert isinstance(x.left, ast.Binary) and x.left.op == "-"      # (1 - 2) - ...
    assert x.right.op == "%" and x.right.left.op == "*"              # (3 * 4) % 5
    b = prog.functions["main"].body.stmts[1].init
    assert b.op == "||" and b.right.op == "&&" and b.right.right.op == "=="


def test_positions_follow_the_table():
    prog = parse("fn main() {\n  a[i] = p.f + g(1) / new int[2][0];\n}")
    assign = prog.functions["main"].body.stmts[0]
    assert (assign.target.pos.line, assign.target.pos.col) == (2, 4)        # the '['
    plus = assign.value
    assert plus.pos.col == 14 and plus.left.pos.col == 12                  # "+", field "f"
    div = plus.right
    assert div.pos.col == 21 and div.left.pos.col == 16                    # '/', call name


def test_checker_annotations():
    prog = compile_tiny("""
struct P { x: int; }
fn f(a: int) -> [int] { var r = new int[a]; return r; }
fn main() {
    var x = 1;
    { var x = x + 1; print(x); }
    var p = new P { x: 2 };
    print(len(f(3)), p.x == x);
}""")
    main = prog.functions["main"]
    outer, block = main.body.stmts[0], main.body.stmts[1]
    inner = block.stmts[0]
    assert outer.var.unique_name() == "x" and inner.var.unique_name() == "x.1"
    assert inner.init.left.var is outer.var          # the initialiser sees the outer x
    assert block.stmts[1].args[0].var is inner.var
    call = main.body.stmts[3].args[0].operand
    assert call.fn is prog.functions["f"] and call.ty == ArrayType(INT)
    assert main.body.stmts[2].var.ty == StructType("P")
    assert main.body.stmts[3].args[1].ty == BOOL


def test_int_min_literal_is_folded():
    prog = compile_tiny("fn main() { var m = -9223372036854775808; }")
    init = prog.functions["main"].body.stmts[0].init
    assert isinstance(init, ast.IntLit) and init.value == -(2**63)


@pytest.mark.parametrize("src", [
    "fn main() { var x = -(9223372036854775808); }",
    "fn main() { var x = 9223372036854775808; }",
    "fn main() { var x = 1 - 9223372036854775808; }",
])
def test_too_large_literals(src):
    with pytest.raises(SourceError, match="too large"):
        compile_tiny(src)


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_source_printer_round_trips(path):
    prog = parse(path.read_text())
    printed = format_source(prog)
    assert format_source(parse(printed)) == printed
    # and the checked trees print the same
    assert format_ast(compile_tiny(printed)) .count("\n") == \
        format_ast(compile_tiny(path.read_text())).count("\n")


@settings(max_examples=60, deadline=None)
@given(programs())
def test_generated_programs_print_back(source):
    printed = format_source(parse(source))
    assert format_source(parse(printed)) == printed


def test_format_ast_is_stable():
    src = (Path(__file__).parent / "programs" / "structs.tiny").read_text()
    assert format_ast(compile_tiny(src)) == format_ast(compile_tiny(src))
