"""The one statement case list (tiny/visit.py) covers every statement class of the AST."""

from __future__ import annotations

import re

import pytest

from ssa_course.tiny import ast
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
