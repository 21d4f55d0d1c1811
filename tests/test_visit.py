"""The one statement case list (tiny/visit.py) covers every statement class of the AST."""

from __future__ import annotations

import dataclasses
import re

import pytest
from hypothesis import HealthCheck, given, settings
from tiny_gen import programs

from ssa_course.tiny import ast, compile_tiny
from ssa_course.tiny.visit import StmtVisitor


def _statement_classes() -> list[type[ast.Stmt]]:
    return [c for c in vars(ast).values()
            if isinstance(c, type) and issubclass(c, ast.Stmt) and c is not ast.Stmt]


def _method(cls: type) -> str:
    return "stmt_" + re.sub(r"(?<!^)(?=[A-Z])", "_", cls.__name__).lower()


def _recorder() -> tuple[StmtVisitor, list[str]]:
    """A visitor whose every method records its own name."""
    seen: list[str] = []
    methods = {name: (lambda self, s, name=name: seen.append(name))
               for name in StmtVisitor.__abstractmethods__}
    return type("Recorder", (StmtVisitor,), methods)(), seen


def test_one_abstract_method_per_statement_class() -> None:
    wanted = {_method(c) for c in _statement_classes()}
    assert wanted == set(StmtVisitor.__abstractmethods__)


@pytest.mark.parametrize("cls", _statement_classes(), ids=lambda c: c.__name__)
def test_dispatch_calls_the_method_of_the_class(cls: type[ast.Stmt]) -> None:
    visitor, seen = _recorder()
    visitor.dispatch(object.__new__(cls))  # only the class matters to the dispatch
    assert seen == [_method(cls)]


def test_a_statement_of_no_known_class_is_an_error() -> None:
    class Odd(ast.Stmt):
        pass

    visitor, seen = _recorder()
    with pytest.raises(TypeError, match="not a Tiny statement: Odd"):
        visitor.dispatch(object.__new__(Odd))
    assert seen == []


def test_a_pass_missing_a_method_cannot_be_made() -> None:
    methods = {name: (lambda self, s: None) for name in StmtVisitor.__abstractmethods__
               if name != "stmt_try"}
    partial = type("Partial", (StmtVisitor,), methods)
    with pytest.raises(TypeError, match="stmt_try"):
        partial()


# -- the one child walk (ast.children) ------------------------------------------------


def _reflective_children(node: object) -> list[object]:
    """Every Expr/Stmt reachable from ``node``'s fields in one step, found by brute force:
    every field, list item and tuple item, except the checker's links back up the tree."""
    out: list[object] = []
    for f in dataclasses.fields(node):  # type: ignore[arg-type]
        if f.name in ("var", "fn"):
            continue
        value = getattr(node, f.name)
        items = value if isinstance(value, list) else [value]
        for item in items:
            parts = item if isinstance(item, tuple) else (item,)
            out.extend(p for p in parts if isinstance(p, ast.Expr | ast.Stmt))
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_children_reaches_every_sub_tree_in_source_order(src: str) -> None:
    program = compile_tiny(src)
    for fn in program.functions.values():
        stack: list[ast.Node] = [fn.body]
        while stack:
            node = stack.pop()
            kids = [child for _, child in ast.children(node)]
            assert kids == _reflective_children(node), type(node).__name__
            positions = [(k.pos.line, k.pos.col) for k in kids
                         if not isinstance(k, ast.Block | ast.Binary | ast.Index)]
            assert positions == sorted(positions), type(node).__name__
            stack.extend(kids)


def test_children_roles_name_fields_and_list_items() -> None:
    program = compile_tiny("struct P { x: int; }\nfn main() {\n"
                              "  var p = new P { x: 1 };\n  print(p.x, 2);\n}\n")
    body = program.functions["main"].body
    assert [r for r, _ in ast.children(body)] == ["stmts[0]", "stmts[1]"]
    decl, pr = body.stmts
    assert [r for r, _ in ast.children(decl)] == ["init"]
    assert [r for r, _ in ast.children(decl.init)] == ["x"]  # type: ignore[attr-defined]
    assert [r for r, _ in ast.children(pr)] == ["args[0]", "args[1]"]
