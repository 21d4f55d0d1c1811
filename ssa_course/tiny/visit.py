"""One case list for Tiny's statements: :class:`StmtVisitor`.

The passes over the AST that treat each statement class in a method of its own -- the
checker (:mod:`ssa_course.tiny.check`), the lowering to quads
(:mod:`ssa_course.quads.lower`) and the sea-of-nodes builder (:mod:`ssa_course.son.build`)
-- share this ``match``: :meth:`StmtVisitor.dispatch` calls ``stmt_if`` for an
:class:`~ssa_course.tiny.ast.If`, ``stmt_var_decl`` for a
:class:`~ssa_course.tiny.ast.VarDecl``, and so on. A statement class added to the AST gets
its case here once, and its method here as an abstract one: a pass that lacks it cannot be
instantiated, and mypy names it.

The interpreter (:mod:`ssa_course.tiny.interp`) keeps its own ``match``: it is a
generator per statement, matched on the exact class for speed.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from ssa_course.tiny import ast


class StmtVisitor(ABC):
    """A pass with one ``stmt_<kind>`` method per statement class of the AST."""

    __slots__ = ()

    def dispatch(self, s: ast.Stmt) -> None:
        """Call the method of ``s``'s class (the one case per statement class)."""
        match s:
            case ast.Block():
                self.stmt_block(s)
            case ast.VarDecl():
                self.stmt_var_decl(s)
            case ast.Assign():
                self.stmt_assign(s)
            case ast.ExprStmt():
                self.stmt_expr_stmt(s)
            case ast.Print():
                self.stmt_print(s)
            case ast.Return():
                self.stmt_return(s)
            case ast.Throw():
                self.stmt_throw(s)
            case ast.If():
                self.stmt_if(s)
            case ast.While():
                self.stmt_while(s)
            case ast.For():
                self.stmt_for(s)
            case ast.Break():
                self.stmt_break(s)
            case ast.Continue():
                self.stmt_continue(s)
            case ast.Try():
                self.stmt_try(s)
            case _:
                raise TypeError(f"not a Tiny statement: {type(s).__name__}")

    @abstractmethod
    def stmt_block(self, s: ast.Block) -> None: ...

    @abstractmethod
    def stmt_var_decl(self, s: ast.VarDecl) -> None: ...

    @abstractmethod
    def stmt_assign(self, s: ast.Assign) -> None: ...

    @abstractmethod
    def stmt_expr_stmt(self, s: ast.ExprStmt) -> None: ...

    @abstractmethod
    def stmt_print(self, s: ast.Print) -> None: ...

    @abstractmethod
    def stmt_return(self, s: ast.Return) -> None: ...

    @abstractmethod
    def stmt_throw(self, s: ast.Throw) -> None: ...

    @abstractmethod
    def stmt_if(self, s: ast.If) -> None: ...

    @abstractmethod
    def stmt_while(self, s: ast.While) -> None: ...

    @abstractmethod
    def stmt_for(self, s: ast.For) -> None: ...

    @abstractmethod
    def stmt_break(self, s: ast.Break) -> None: ...

    @abstractmethod
    def stmt_continue(self, s: ast.Continue) -> None: ...

    @abstractmethod
    def stmt_try(self, s: ast.Try) -> None: ...
