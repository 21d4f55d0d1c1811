"""The Tiny front end: tokens, the tree the parser builds, what the checker annotates,
and the two printers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tiny_gen import programs

from ssa_course.errors import Pos, SourceError
from ssa_course.tiny import Token, ast, check, compile_tiny, parse, tokenize
from ssa_course.tiny.check import ends_path
from ssa_course.tiny.lexer import KEYWORDS
from ssa_course.tiny.printer import format_ast, format_expr, format_source
from ssa_course.tiny.types import BOOL, INT, VOID, ArrayType, StructType

CORPUS = sorted((Path(__file__).parent / "programs").glob("*.tiny"))
INT_MIN = -(2**63)


def main_stmts(prog: ast.Program) -> list[ast.Stmt]:
    return prog.functions["main"].body.stmts


def first_expr(src: str) -> ast.Expr:
    """The initialiser of the first statement of main (parsed, not checked)."""
    stmt = main_stmts(parse(src))[0]
    assert isinstance(stmt, ast.VarDecl)
    return stmt.init


def error_of(src: str) -> SourceError:
    with pytest.raises(SourceError) as info:
        compile_tiny(src)
    return info.value


def at(pos: Pos) -> tuple[int, int]:
    return (pos.line, pos.col)


# ---------------------------------------------------------------- lexer


def test_tokens_and_positions():
    toks = tokenize("fn main() {\n  x <= -12; // c\n /* b */ y }")
    assert [(t.kind, t.text) for t in toks[:6]] == [
        ("keyword", "fn"), ("name", "main"), ("symbol", "("), ("symbol", ")"),
        ("symbol", "{"), ("name", "x")]
    le = toks[6]
    assert (le.text, le.pos.line, le.pos.col, le.pos.length) == ("<=", 2, 5, 2)
    assert [(t.kind, t.text) for t in toks[7:9]] == [("symbol", "-"), ("int", "12")]
    y = toks[10]
    assert (y.text, y.pos.line, y.pos.col) == ("y", 3, 10)
    assert toks[-1].kind == "eof"


def test_every_keyword_is_a_keyword_and_other_words_are_names():
    for word in KEYWORDS:
        assert tokenize(word)[0] == Token("keyword", word, Pos(1, 1, len(word)))
    for word in ("main", "_x1", "Int", "iff", "newer", "fnx"):
        assert tokenize(word)[0].kind == "name"


def test_longest_symbol_wins():
    texts = [t.text for t in tokenize("a->b<=c>=d==e!=f&&g||h=!i")[:-1]]
    assert texts == ["a", "->", "b", "<=", "c", ">=", "d", "==", "e", "!=", "f", "&&", "g",
                     "||", "h", "=", "!", "i"]


def test_comments_are_skipped_and_lines_still_count():
    toks = tokenize("a /* one\ntwo\n */ b // to the end /* not a comment\nc //* line\nd")
    assert [(t.text, at(t.pos)) for t in toks[:-1]] == [
        ("a", (1, 1)), ("b", (3, 5)), ("c", (4, 1)), ("d", (5, 1))]


def test_block_comments_do_not_nest():
    with pytest.raises(SourceError, match="expected"):
        compile_tiny("/* a /* b */ c */ fn main() {}")


def test_eof_position_and_windows_newlines():
    toks = tokenize("x\r\n  y")
    assert at(toks[1].pos) == (2, 3)
    assert toks[-1].kind == "eof" and at(toks[-1].pos) == (2, 4)


def test_tabs_count_one_column():
    assert at(tokenize("\tx")[0].pos) == (1, 2)


@pytest.mark.parametrize("src, col, shown", [
    ("a $ b", 3, "'$'"), ("a\n  é", 3, "'é'"), ("x\x00", 2, "U+0000"), ("1 ` 2", 3, "'`'"),
])
def test_unexpected_character(src, col, shown):
    with pytest.raises(SourceError) as info:
        tokenize(src)
    assert info.value.message == f"unexpected character {shown}"
    assert info.value.pos.col == col


def test_unterminated_comment_points_at_its_start():
    with pytest.raises(SourceError) as info:
        tokenize("a\n  /* b\n c")
    assert info.value.message == "unterminated comment"
    assert info.value.pos == Pos(2, 3, 2)


def test_integer_literals_keep_their_digits():
    toks = tokenize("007 9223372036854775808 123abc")
    assert [(t.kind, t.text) for t in toks[:-1]] == [
        ("int", "007"), ("int", "9223372036854775808"), ("int", "123"), ("name", "abc")]


# ---------------------------------------------------------------- parser: shapes


def test_precedence_and_associativity():
    prog = parse("fn main() { var x = 1 - 2 - 3 * 4 % 5; var b = !a || c && d == e; }")
    x = main_stmts(prog)[0].init
    assert isinstance(x, ast.Binary) and x.op == "-"
    assert isinstance(x.left, ast.Binary) and x.left.op == "-"      # (1 - 2) - ...
    assert x.right.op == "%" and x.right.left.op == "*"              # (3 * 4) % 5
    b = main_stmts(prog)[1].init
    assert b.op == "||" and b.right.op == "&&" and b.right.right.op == "=="
    assert isinstance(b.left, ast.Unary) and b.left.op == "!"


def test_unary_binds_tighter_than_binary_and_postfix_tighter_than_unary():
    e = first_expr("fn main() { var x = -a[0] * -f(1).y; }")
    assert e.op == "*"
    assert isinstance(e.left, ast.Unary) and isinstance(e.left.operand, ast.Index)
    assert isinstance(e.right, ast.Unary) and isinstance(e.right.operand, ast.Field)
    assert isinstance(e.right.operand.base, ast.Call)


def test_parentheses_group():
    e = first_expr("fn main() { var x = (1 + 2) * 3; }")
    assert e.op == "*" and e.left.op == "+"


def test_comparisons_do_not_chain():
    e = error_of("fn main() { var x = 1 < 2 < 3; }")
    assert "expected" in e.message and at(e.pos) == (1, 27)


def test_struct_and_function_definitions():
    prog = parse("struct P { x: int; next: [P]; }\n"
                 "fn f(a: int, b: [[bool]]) -> P { return g(); }\nfn main() {}")
    p = prog.structs["P"]
    assert [(n, t) for n, t, _ in p.fields] == [("x", INT), ("next", ArrayType(StructType("P")))]
    assert at(p.pos) == (1, 8)
    f = prog.functions["f"]
    assert [(x.name, x.ty) for x in f.params] == [("a", INT), ("b", ArrayType(ArrayType(BOOL)))]
    assert f.ret == StructType("P") and at(f.pos) == (2, 4)
    assert prog.functions["main"].ret == VOID and prog.functions["main"].params == []
    assert list(prog.functions) == ["f", "main"]
    assert [(n, at(pos)) for n, pos in prog.type_refs] == [("P", (1, 27)), ("P", (2, 30))]


def test_statement_kinds_and_positions():
    src = """fn main() {
    var x: int = 1;
    x = 2;
    if (true) { } else if (false) { } else { }
    while (false) { break; continue; }
    for (var i = 0; i < 3; i = i + 1) { }
    for (;;) { return; }
    print(1, true);
    print();
    try { throw 3; } catch (err) { }
    f();
    { }
}"""
    stmts = main_stmts(parse(src))
    kinds = [type(s).__name__ for s in stmts]
    assert kinds == ["VarDecl", "Assign", "If", "While", "For", "For", "Print", "Print", "Try",
                     "ExprStmt", "Block"]
    assert [at(s.pos) for s in stmts] == [(i, 5) for i in range(2, 13)]
    var = stmts[0]
    assert var.declared == INT and at(var.name_pos) == (2, 9)
    chain = stmts[2]
    assert isinstance(chain.orelse, ast.If) and isinstance(chain.orelse.orelse, ast.Block)
    assert at(chain.orelse.pos) == (4, 24)
    loop = stmts[3]
    assert [type(s).__name__ for s in loop.body.stmts] == ["Break", "Continue"]
    full, empty = stmts[4], stmts[5]
    assert isinstance(full.init, ast.VarDecl) and isinstance(full.step, ast.Assign)
    assert full.cond.op == "<"
    assert empty.init is None and empty.cond is None and empty.step is None
    assert len(stmts[6].args) == 2 and stmts[7].args == []
    handler = stmts[8]
    assert handler.name == "err" and at(handler.name_pos) == (10, 29)
    assert isinstance(handler.body.stmts[0], ast.Throw)
    assert isinstance(stmts[9].expr, ast.Call)


def test_expression_positions_follow_the_table():
    prog = parse("fn main() {\n  a[i] = p.f + g(1) / new int[2][0] - -x;\n"
                 "  var s = new P { x: 1 };\n  var n = len(a);\n}")
    assign, var_s, var_n = main_stmts(prog)
    assert at(assign.target.pos) == (2, 4)                   # the '['
    minus = assign.value
    assert minus.pos.col == 37 and minus.right.pos.col == 39   # binary '-', unary '-'
    plus = minus.left
    assert plus.pos.col == 14 and plus.left.pos.col == 12    # "+", field "f"
    div = plus.right
    assert div.pos.col == 21 and div.left.pos.col == 16      # '/', the call's name
    index = div.right
    assert isinstance(index, ast.Index) and index.pos.col == 33
    assert isinstance(index.base, ast.NewArray) and index.base.pos.col == 23   # 'new'
    new_s = var_s.init
    assert isinstance(new_s, ast.NewStruct) and at(new_s.pos) == (3, 11)
    assert at(new_s.name_pos) == (3, 15) and at(new_s.fields[0][2]) == (3, 19)
    assert isinstance(var_n.init, ast.Len) and at(var_n.init.pos) == (4, 11)


def test_new_array_of_structs_and_of_arrays():
    prog = parse("fn main() { var a = new P[3]; var b = new [int][2]; var c = new P {}; }")
    a, b, c = (s.init for s in main_stmts(prog))
    assert isinstance(a, ast.NewArray) and a.elem == StructType("P")
    assert isinstance(b, ast.NewArray) and b.elem == ArrayType(INT)
    assert isinstance(c, ast.NewStruct) and c.fields == []


def test_int_min_literal_is_folded():
    for text in ("-9223372036854775808", "- 9223372036854775808", "-/* c */9223372036854775808"):
        init = main_stmts(compile_tiny(f"fn main() {{ var m = {text}; }}"))[0].init
        assert isinstance(init, ast.IntLit) and init.value == INT_MIN and at(init.pos) == (1, 21)
    double = first_expr("fn main() { var m = --9223372036854775808; }")
    assert isinstance(double, ast.Unary) and double.operand.value == INT_MIN
    times = first_expr("fn main() { var m = -9223372036854775808 * 2; }")
    assert times.op == "*" and times.left.value == INT_MIN
    biggest = first_expr("fn main() { var m = 9223372036854775807; }")
    assert biggest.value == 2**63 - 1
    minus_small = first_expr("fn main() { var m = -5; }")
    assert isinstance(minus_small, ast.Unary) and minus_small.operand.value == 5


@pytest.mark.parametrize("src", [
    "fn main() { var x = -(9223372036854775808); }",
    "fn main() { var x = 9223372036854775808; }",
    "fn main() { var x = 1 - 9223372036854775808; }",
    "fn main() { var x = !9223372036854775808; }",
    "fn main() { var x = -9223372036854775808[0]; }",
    "fn main() { var x = -9223372036854775809; }",
    "fn main() { var x = -99999999999999999999999999999999999; }",
])
def test_too_large_literals(src):
    e = error_of(src)
    assert "too large" in e.message
    assert src[e.pos.col - 1:].startswith("9")


def test_calls_name_a_function_directly():
    assert "function name" in error_of("fn main() { (f)(1); }").message
    assert "function name" in error_of("fn main() { a[0](1); }").message
    assert "function name" in error_of("fn main() { f(1)(2); }").message


def test_only_names_fields_and_elements_are_assigned():
    e = error_of("fn main() {\n  f() = 1;\n}")
    assert e.message == "cannot assign to this expression" and at(e.pos) == (2, 3)


def test_expected_points_at_the_token_found_instead():
    e = error_of("fn main() {\n  print(1)\n  print(2);\n}")
    assert e.message == "expected ';', found 'print'" and at(e.pos) == (3, 3)
    e = error_of("fn main() {")
    assert e.message == "expected '}', found end of file" and at(e.pos) == (1, 12)


def test_long_else_if_chain_parses_checks_and_prints():
    n = 3000
    arms = "".join(f" else if (x == {i}) {{ return {i}; }}" for i in range(1, n))
    src = f"fn f(x: int) -> int {{ if (x == 0) {{ return 0; }}{arms} else {{ return 1; }} }}" \
          " fn main() { f(1); }"
    prog = compile_tiny(src)
    chain = prog.functions["f"].body.stmts[0]
    depth = 0
    while isinstance(chain, ast.If):
        depth, chain = depth + 1, chain.orelse
    assert depth == n
    assert ends_path(prog.functions["f"].body.stmts[0])
    chain.stmts.clear()   # now the final else falls through
    assert not ends_path(prog.functions["f"].body.stmts[0])
    printed = format_source(prog)
    assert printed.count("} else if (") == n - 1
    assert format_source(parse(printed)) == printed


# ---------------------------------------------------------------- checker


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


def _all_nodes(prog: ast.Program) -> list[object]:
    """Every statement and expression of every function (explicit stack)."""
    out: list[object] = []
    stack: list[object] = [fn.body for fn in prog.functions.values()]
    while stack:
        node = stack.pop()
        out.append(node)
        for slot in type(node).__slots__:
            value = getattr(node, slot)
            items = value if isinstance(value, list) else [value]
            for item in items:
                if isinstance(item, tuple):
                    item = item[1]
                if isinstance(item, ast.Expr | ast.Stmt):
                    stack.append(item)
    return out


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_every_annotation_is_filled(path):
    prog = compile_tiny(path.read_text())
    for fn in prog.functions.values():
        for p in fn.params:
            assert p.var is not None and p.var.ty == p.ty
    for node in _all_nodes(prog):
        if isinstance(node, ast.Expr):
            assert node.ty is not None, node
        if isinstance(node, ast.Name | ast.VarDecl | ast.Try):
            assert isinstance(node.var, ast.VarInfo), node
        if isinstance(node, ast.Call):
            assert node.fn is prog.functions[node.name]
        if isinstance(node, ast.ExprStmt):
            assert isinstance(node.expr, ast.Call)


def test_uids_count_declarations_of_one_name_per_function():
    prog = compile_tiny("""
fn f(x: int) {
    var y = x;
    { var x = 2; var y = 3; { var x = 4; } }
    try { throw 1; } catch (x) { x = x + 1; }
    for (var x = 0; x < 1; x = x + 1) { }
}
fn main() { var x = 1; f(x); }""")
    f = prog.functions["f"]
    assert f.params[0].var.unique_name() == "x"
    names = [n.var.unique_name() for n in _all_nodes(prog)
             if isinstance(n, ast.VarDecl | ast.Try) and n in _all_nodes_of(f)]
    assert sorted(names) == sorted(["y", "x.1", "y.1", "x.2", "x.3", "x.4"])
    try_stmt = f.body.stmts[2]
    assert try_stmt.var.ty == INT and try_stmt.var.unique_name() == "x.3"
    assign = try_stmt.handler.stmts[0]
    assert assign.target.var is try_stmt.var and assign.value.left.var is try_stmt.var
    main = prog.functions["main"]
    assert main.body.stmts[0].var.unique_name() == "x"     # uids restart per function
    for_stmt = f.body.stmts[3]
    assert for_stmt.step.target.var is for_stmt.init.var   # the step updates the loop's x
    assert for_stmt.cond.left.var is for_stmt.init.var


def _all_nodes_of(fn: ast.FnDef) -> list[object]:
    return _all_nodes(ast.Program({}, {fn.name: fn}))


def test_declaration_info_is_shared_by_uses():
    prog = compile_tiny("fn main(n: int) { var s = 0; s = s + n; print(s); }")
    main = prog.functions["main"]
    decl, assign, show = main.body.stmts
    assert assign.target.var is decl.var and assign.value.left.var is decl.var
    assert assign.value.right.var is main.params[0].var
    assert show.args[0].var is decl.var
    assert decl.var.pos == Pos(1, 23, 1)


@pytest.mark.parametrize("src", [
    # an inner block may shadow; the initialiser reads the outer binding
    "fn main() { var x = 1; { var x = x + 1; print(x); } }",
    # a for loop's init lives in its own scope; the body may shadow it
    "fn main() { for (var i = 0; i < 3; i = i + 1) { var i = 5; print(i); } var i = 2; }",
    # the catch variable may be shadowed in a nested block, read and assigned
    "fn main() { try { throw 1; } catch (e) { e = e + 1; { var e = true; } print(e); } }",
    # functions and structs may be used before their definition; mutual recursion
    "fn main() { print(even(4)); var p = mk(); }\n"
    "fn even(n: int) -> bool { if (n == 0) { return true; } return odd(n - 1); }\n"
    "fn odd(n: int) -> bool { if (n == 0) { return false; } return even(n - 1); }\n"
    "fn mk() -> P { return new P { b: true, a: 1 }; } struct P { a: int; b: bool; }",
    # a variable and a function may share a name
    "fn f() -> int { return 1; } fn main() { var f = f(); print(f); }",
    # a call that returns nothing is a statement; a value call may be one too
    "fn g() { } fn h() -> int { return 1; } fn main() { g(); h(); }",
    # arrays and structs compare by reference with == and !=
    "struct P { x: int; } fn main() { var a = new [P][1]; print(a == a, a[0] != a[0]); }",
    # code after return, break, continue and throw is allowed
    "fn f() -> int { return 1; print(2); } fn main() { while (true) { break; print(1); } }",
    # main's parameters are int or bool
    "fn main(n: int, b: bool) { print(n, b); }",
])
def test_valid_programs_check(src):
    compile_tiny(src)


@pytest.mark.parametrize("body", [
    "return 1;",
    "throw 1;",
    "if (b) { return 1; } else { throw 2; }",
    "if (b) { return 1; } else if (!b) { return 2; } else { return 3; }",
    "try { return 1; } catch (e) { return e; }",
    "while (true) { }",
    "while ((true)) { while (b) { break; } }",
    "for (;;) { for (;;) { break; } }",
    "for (var i = 0; ; i = i + 1) { if (b) { return i; } }",
    "{ { return 1; } }",
    "print(1); return 2; print(3);",
    "while (true) { try { if (b) { return 1; } } catch (e) { continue; } }",
])
def test_bodies_that_end_every_path(body):
    compile_tiny(f"fn f(b: bool) -> int {{ {body} }} fn main() {{ print(f(true)); }}")


@pytest.mark.parametrize("body", [
    "",
    "if (b) { return 1; }",
    "if (b) { return 1; } else if (!b) { return 2; }",
    "if (b) { return 1; } else { }",
    "try { return 1; } catch (e) { }",
    "try { } catch (e) { return 1; }",
    "while (b) { return 1; }",
    "while (true) { break; }",
    "while (true) { if (b) { break; } }",
    "while (true) { try { break; } catch (e) { } }",
    "while (false == false) { }",
    "for (; true; ) { }",
    "for (;;) { { break; } }",
])
def test_bodies_that_miss_a_return(body):
    e = error_of(f"fn f(b: bool) -> int {{ {body} }} fn main() {{ print(f(true)); }}")
    assert e.message == "missing return: 'f' must return an int on every path"
    assert at(e.pos) == (1, 4)


def test_break_and_continue_belong_to_loops_of_their_own_function():
    compile_tiny("fn main() { for (;;) { try { break; } catch (e) { continue; } } }")
    e = error_of("fn g() { continue; } fn main() { while (true) { g(); } }")
    assert e.message == "'continue' outside a loop" and at(e.pos) == (1, 10)


def test_first_error_is_the_leftmost_in_an_expression():
    base = "fn f(a: int, b: int) -> int { return a; }\nfn main() {\n    print({});\n}"
    cases = {
        "f(true, nope)": ("argument 1", 3),
        "f(1, nope) + true": ("undefined variable 'nope'", 6),
        "nope + f(true, 1)": ("undefined variable 'nope'", 1),
        "f(1, 2) + true": ("'+'", 9),
        "f(1)": ("argument", 1),
        "(1 + true) + nope": ("'+'", 4),
    }
    for call, (words, col) in cases.items():
        e = error_of(base.replace("{}", call))
        assert words in e.message and at(e.pos) == (3, 10 + col), call


def test_undefined_struct_names_are_found_wherever_types_are_written():
    for src, col in [("fn main() { var a: [Q] = new int[1]; }", 21),
                     ("fn f() -> Q { } fn main() { }", 11),
                     ("struct S { q: [[Q]]; } fn main() { }", 17),
                     ("fn main() { var a = new Q { }; }", 25)]:
        e = error_of(src)
        assert e.message == "undefined struct 'Q'" and at(e.pos) == (1, col), src


def test_function_name_used_as_a_value_gets_a_hint():
    e = error_of("fn f() { } fn main() { var x = f; }")
    assert e.message.startswith("undefined variable 'f'") and "f(...)" in e.message


def test_check_accepts_a_parsed_program_and_reports_in_its_file():
    prog = parse("fn main() { print(y); }", "here.tiny")
    with pytest.raises(SourceError) as info:
        check(prog)
    assert info.value.render().startswith("here.tiny:1:19: error: undefined variable 'y'")


def test_long_operator_chains_check_without_recursion():
    n = 100_000
    prog = compile_tiny("fn main() { print(" + " + ".join(["1"] * n) + "); }")
    e = main_stmts(prog)[0].args[0]
    depth = 0
    while isinstance(e, ast.Binary):
        assert e.ty == INT
        depth, e = depth + 1, e.left
    assert depth == n - 1
    bad = "fn main() { print(" + " + ".join(["1"] * n) + " + true); }"
    assert "'+'" in error_of(bad).message


# ---------------------------------------------------------------- printers


def test_format_ast_shows_types_and_positions():
    text = format_ast(compile_tiny("fn main() {\n  var x = 1;\n  print(x + 2);\n}"))
    assert text.splitlines() == [
        "fn main()  @1:4",
        "  Block  @1:11",
        "    VarDecl x  @2:3",
        "      init: IntLit 1 : int  @2:11",
        "    Print  @3:3",
        "      Binary + : int  @3:11",
        "        left: Name x : int  @3:9",
        "        right: IntLit 2 : int  @3:13",
    ]


def test_format_ast_is_stable():
    src = (Path(__file__).parent / "programs" / "structs.tiny").read_text()
    assert format_ast(compile_tiny(src)) == format_ast(compile_tiny(src))


def _shape(prog: ast.Program) -> str:
    """The tree without positions: what must survive printing and parsing again."""
    return re.sub(r"  @\d+:\d+", "", format_ast(prog))


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_source_printer_round_trips(path):
    original = path.read_text()
    printed = format_source(parse(original))
    assert format_source(parse(printed)) == printed
    assert _shape(parse(printed)) == _shape(parse(original))
    assert _shape(compile_tiny(printed)) == _shape(compile_tiny(original))


@pytest.mark.parametrize("text, expected", [
    ("(1 + 2) * 3", "(1 + 2) * 3"),
    ("1 + (2 + 3)", "1 + (2 + 3)"),
    ("(1 + 2) + 3", "1 + 2 + 3"),
    ("(a < b) == c", "(a < b) == c"),
    ("-(-x)", "--x"),
    ("-(1 + 2)", "-(1 + 2)"),
    ("!(a && b) || c", "!(a && b) || c"),
    ("a || (b || c)", "a || (b || c)"),
    ("(a || b) && c", "(a || b) && c"),
    ("(-9223372036854775808)", "-9223372036854775808"),
    ("1 - -9223372036854775808", "1 - -9223372036854775808"),
    ("(new int[3])[0]", "new int[3][0]"),
    ("new P { y: 1, x: f(a, b) }.x", "new P { y: 1, x: f(a, b) }.x"),
    ("len(a[0]) % 2", "len(a[0]) % 2"),
])
def test_format_expr_uses_only_needed_parentheses(text, expected):
    assert format_expr(first_expr(f"fn main() {{ var v = {text}; }}")) == expected


def test_format_expr_of_a_long_chain_is_linear():
    e = first_expr("fn main() { var v = " + " - ".join(["x"] * 50_000) + "; }")
    assert format_expr(e) == " - ".join(["x"] * 50_000)


@settings(max_examples=60, deadline=None)
@given(programs())
def test_generated_programs_print_back(source):
    printed = format_source(parse(source))
    assert format_source(parse(printed)) == printed
    assert _shape(compile_tiny(printed)) == _shape(compile_tiny(source))


# Random syntax trees (not necessarily well typed): printing then parsing gives them back.

NAMES = st.sampled_from(["a", "b", "x", "f", "P", "_t1"])
TYPES = st.recursive(st.sampled_from([INT, BOOL, StructType("P")]),
                     lambda inner: inner.map(ArrayType), max_leaves=3)
P0 = Pos(1, 1)


def _exprs() -> st.SearchStrategy[ast.Expr]:
    leaves = st.one_of(
        st.integers(0, 2**63 - 1).map(lambda v: ast.IntLit(P0, v)),
        st.just(ast.IntLit(P0, INT_MIN)),
        st.booleans().map(lambda v: ast.BoolLit(P0, v)),
        NAMES.map(lambda n: ast.Name(P0, n)),
    )

    def grow(inner: st.SearchStrategy[ast.Expr]) -> st.SearchStrategy[ast.Expr]:
        ops = st.sampled_from(["+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=",
                               "&&", "||"])
        return st.one_of(
            st.builds(lambda o, a, b: ast.Binary(P0, o, a, b), ops, inner, inner),
            st.builds(lambda o, a: ast.Unary(P0, o, a), st.sampled_from(["-", "!"]), inner),
            st.builds(lambda n, xs: ast.Call(P0, n, xs), NAMES, st.lists(inner, max_size=3)),
            st.builds(lambda a, i: ast.Index(P0, a, i), inner, inner),
            st.builds(lambda a, n: ast.Field(P0, a, n), inner, NAMES),
            st.builds(lambda a: ast.Len(P0, a), inner),
            st.builds(lambda t, n: ast.NewArray(P0, t, n), TYPES, inner),
            st.builds(lambda fs: ast.NewStruct(P0, "P", [(n, x, P0) for n, x in fs]),
                      st.lists(st.tuples(NAMES, inner), max_size=3)),
        )

    return st.recursive(leaves, grow, max_leaves=12)


EXPRS = _exprs()
TARGETS = st.one_of(NAMES.map(lambda n: ast.Name(P0, n)),
                    st.builds(lambda a, i: ast.Index(P0, a, i), EXPRS, EXPRS),
                    st.builds(lambda a, n: ast.Field(P0, a, n), EXPRS, NAMES))
SIMPLES = st.one_of(
    st.builds(lambda n, t, e: ast.VarDecl(P0, n, t, e), NAMES, st.none() | TYPES, EXPRS),
    st.builds(lambda t, e: ast.Assign(P0, t, e), TARGETS, EXPRS))


def _blocks() -> st.SearchStrategy[ast.Block]:
    simple_stmts = st.one_of(
        SIMPLES,
        st.builds(lambda e: ast.ExprStmt(P0, e), EXPRS),
        st.builds(lambda xs: ast.Print(P0, xs), st.lists(EXPRS, max_size=3)),
        st.builds(lambda e: ast.Return(P0, e), st.none() | EXPRS),
        st.builds(lambda e: ast.Throw(P0, e), EXPRS),
        st.just(ast.Break(P0)), st.just(ast.Continue(P0)),
    )

    def grow(inner: st.SearchStrategy[ast.Stmt]) -> st.SearchStrategy[ast.Stmt]:
        block = st.lists(inner, max_size=3).map(lambda xs: ast.Block(P0, xs))
        return st.one_of(
            block,
            st.builds(lambda c, t, o: ast.If(P0, c, t, o), EXPRS, block,
                      st.none() | block | st.builds(lambda c, t: ast.If(P0, c, t, None),
                                                   EXPRS, block)),
            st.builds(lambda c, b: ast.While(P0, c, b), EXPRS, block),
            st.builds(lambda i, c, s, b: ast.For(P0, i, c, s, b), st.none() | SIMPLES,
                      st.none() | EXPRS, st.none() | SIMPLES, block),
            st.builds(lambda b, n, h: ast.Try(P0, b, n, h), block, NAMES, block),
        )

    stmts = st.recursive(simple_stmts, grow, max_leaves=10)
    return st.lists(stmts, max_size=4).map(lambda xs: ast.Block(P0, xs))


@settings(max_examples=200, deadline=None)
@given(_blocks(), st.lists(st.tuples(NAMES, TYPES), max_size=3), st.none() | TYPES)
def test_random_trees_print_and_parse_back(body, params, ret):
    fn = ast.FnDef("main", [ast.Param(n, t, P0) for n, t in params], ret or VOID, body, P0)
    struct = ast.StructDef("P", [("x", INT, P0), ("next", ArrayType(StructType("P")), P0)], P0)
    prog = ast.Program({"P": struct}, {"main": fn})
    printed = format_source(prog)
    reparsed = parse(printed)
    assert _shape(reparsed) == _shape(prog)
    assert format_source(reparsed) == printed


def test_ast_text_of_a_deep_tree_stays_linear_in_size():
    from ssa_course.tiny import compile_tiny
    from ssa_course.tiny.printer import MAX_INDENT, format_ast

    arms = 3000
    lines = ["fn main(n: int) {", "    var y = 0;"]
    for i in range(arms):
        lines.append(f"    {'if' if i == 0 else '} else if'} (n == {i}) {{ y = {i}; ")
    lines += ["    }", "    print(y);", "}"]
    text = format_ast(compile_tiny("\n".join(lines) + "\n"))
    widest = max(len(line) for line in text.splitlines())
    assert widest < 2 * MAX_INDENT + 60  # not 2 * depth: the chain is 3000 Ifs deep
    assert f"\n{'  ' * MAX_INDENT}{MAX_INDENT + 1}| " in text  # the depth, written out
    # a shallow tree is indented as before
    assert "\n  Block" in format_ast(compile_tiny("fn main() { print(1); }"))
