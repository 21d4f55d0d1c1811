"""The checked AST's invariants, which every later stage relies on.

The checker (:mod:`ssa_course.tiny.check`) establishes them; :func:`verify_ast` re-checks
them on a finished tree, so a tree built or edited by hand (a notebook, a test) that breaks
one gets a message naming the node instead of a confusing failure downstream:

* every expression has a type; every name, declaration, parameter and ``catch`` variable
  is bound to its variable;
* every call names a function of the program and passes as many arguments as it takes;
* ``break`` and ``continue`` sit inside a loop; an expression statement is a call.

The walk uses an explicit stack, so a deeply nested program cannot overflow Python's.
"""

from __future__ import annotations

from dataclasses import is_dataclass

from ssa_course.errors import VerifyError
from ssa_course.tiny import ast


def _where(fn: ast.FnDef, node: object) -> str:
    pos = getattr(node, "pos", None)
    at = f" at {pos.line}:{pos.col}" if pos is not None else ""
    return f"{type(node).__name__} in {fn.name}{at}"


def verify_ast(program: ast.Program) -> None:
    """Raise :class:`VerifyError` naming the first node that breaks an invariant."""
    # The checker's output is what this verifies: every name resolved, every expression
    # typed, every call linked to its callee. A pass that rewrites the tree and forgets
    # one of those is named here, not by a crash three stages later.
    for fn in program.functions.values():
        for p in fn.params:
            if p.var is None:
                raise VerifyError("parameter bound", f"parameter {p.name} of {fn.name}")
        # an explicit stack (a deep expression must not overflow Python's), carrying how
        # many loops enclose each node: break/continue need at least one
        stack: list[tuple[ast.Stmt | ast.Expr, int]] = [(fn.body, 0)]  # (node, loops)
        while stack:
            node, loops = stack.pop()
            _check_node(program, fn, node, loops)
            inner = loops + isinstance(node, (ast.While, ast.For))
            stack.extend((child, inner) for _, child in ast.children(node))


def _check_node(program: ast.Program, fn: ast.FnDef, node: object, loops: int) -> None:
    assert is_dataclass(node)
    if isinstance(node, ast.Expr) and getattr(node, "ty", None) is None:
        raise VerifyError("every expression typed", _where(fn, node))
    if isinstance(node, (ast.Name, ast.VarDecl, ast.Try)) and node.var is None:
        raise VerifyError("names bound to variables", _where(fn, node))
    if isinstance(node, ast.Call):
        callee = program.functions.get(node.name)
        # the link must be to *this* program's function (a copied tree could point at
        # the original's)
        if callee is None or node.fn is not callee:
            raise VerifyError("calls name a function of the program", _where(fn, node),
                              node.name)
        if len(node.args) != len(callee.params):
            raise VerifyError("calls pass one argument per parameter", _where(fn, node),
                              f"{len(node.args)} for {len(callee.params)}")
    if isinstance(node, (ast.Break, ast.Continue)) and loops == 0:
        raise VerifyError("break and continue inside a loop", _where(fn, node))
    # ``a + 1;`` alone does nothing: Tiny only allows a call as a statement
    if isinstance(node, ast.ExprStmt) and not isinstance(node.expr, ast.Call):
        raise VerifyError("expression statements are calls", _where(fn, node))
