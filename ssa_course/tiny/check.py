"""Tiny's type checker: resolves names, computes types, enforces LANGUAGE.md's rules.

:func:`check` annotates the tree in place (see :mod:`ssa_course.tiny.ast` for what it
fills) and stops at the first error with a located :class:`SourceError`.

* **Scopes** are a stack of dicts (name -> :class:`~ssa_course.tiny.ast.VarInfo`).
  Parameters live in the function's outermost block; a ``var``'s initialiser is checked
  before the name is declared, so it sees the outer binding; a ``for`` opens a scope for
  its init; a catch variable belongs to the catch block itself.
* **Unique names.** Each declaration gets ``uid`` = how many variables of the same name
  the function declared before it, so ``VarInfo.unique_name()`` is ``x``, ``x.1``, ...
* **Expressions** are checked with an explicit stack, not recursion: a 100,000-term
  ``1+1+...+1`` is a 100,000-deep tree. Checks happen in source order (a node is checked
  before its children, each child as soon as it is done, the node again at the end), so
  the first error reported is the leftmost one.
* **Missing return** is LANGUAGE.md's syntactic rule (:func:`ends_path`).
"""

from __future__ import annotations

from ssa_course import opcodes
from ssa_course.errors import Pos, SourceError
from ssa_course.runtime import deep_recursion
from ssa_course.tiny import ast
from ssa_course.tiny.types import (
    BOOL,
    FLOAT,
    INT,
    VOID,
    ArrayType,
    BoolType,
    FloatType,
    IntType,
    StructType,
    Type,
)
from ssa_course.tiny.visit import StmtVisitor

# The opcode table's operand and result kinds, as Tiny types.
_KINDS: dict[str, Type] = {opcodes.INT: INT, opcodes.BOOL: BOOL, opcodes.FLOAT: FLOAT}


def article(ty: Type) -> str:
    """``an int``, ``a bool``, ``a [int]``: a type with its English article."""
    text = str(ty)
    return f"an {text}" if text[:1] in "aeiouAEIOU" else f"a {text}"


def type_of(e: ast.Expr) -> Type | None:
    """The type the checker gave ``e`` (every expression class has a ``ty`` slot)."""
    ty: Type | None = e.ty  # type: ignore[attr-defined]
    return ty


def expr_children(e: ast.Expr) -> list[ast.Expr]:
    """The sub-expressions of ``e`` in evaluation (source) order."""
    return [c for _, c in ast.children(e) if isinstance(c, ast.Expr)]


class Checker(StmtVisitor):
    def __init__(self, program: ast.Program):
        self.program = program
        self.scopes: list[dict[str, ast.VarInfo]] = []
        self.counts: dict[str, int] = {}  # name -> declarations so far in this function
        self.fn: ast.FnDef | None = None
        self.loop_depth = 0

    def error(self, message: str, pos: Pos) -> SourceError:
        return SourceError(message, pos, self.program.source, self.program.filename)

    # -- program --------------------------------------------------------------

    def check_program(self) -> ast.Program:
        for name, pos in self.program.type_refs:
            if name not in self.program.structs:
                raise self.error(f"undefined struct '{name}'", pos)
        self.check_main()
        for fn in self.program.functions.values():
            self.check_function(fn)
        return self.program

    def check_main(self) -> None:
        main = self.program.functions.get("main")
        if main is None:
            raise self.error("no function 'main' (the program starts there)", Pos(1, 1))
        if main.ret != VOID:
            raise self.error("'main' must not return a value (remove '-> type')", main.pos)
        for p in main.params:
            if not isinstance(p.ty, IntType | BoolType | FloatType):
                raise self.error(f"parameter '{p.name}' of 'main' must be int, bool or float, "
                                 f"not {p.ty}", p.pos)

    def check_function(self, fn: ast.FnDef) -> None:
        self.fn = fn
        self.counts = {}
        self.scopes = [{}]  # the outermost block: parameters and the body's own variables
        self.loop_depth = 0
        for p in fn.params:
            p.var = self.declare(p.name, p.ty, p.pos)
        self.check_stmts(fn.body.stmts)
        self.scopes.pop()
        if fn.ret != VOID and not ends_path(fn.body):
            raise self.error(f"missing return: '{fn.name}' must return {article(fn.ret)} on "
                             "every path", fn.pos)

    # -- scopes -----------------------------------------------------------------

    def declare(self, name: str, ty: Type, pos: Pos) -> ast.VarInfo:
        scope = self.scopes[-1]
        if name in scope:
            raise self.error(f"'{name}' is already declared in this block", pos)
        uid = self.counts.get(name, 0)
        self.counts[name] = uid + 1
        info = ast.VarInfo(name, ty, uid, pos)
        scope[name] = info
        return info

    def lookup(self, name: str, pos: Pos) -> ast.VarInfo:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        if name in self.program.functions:
            raise self.error(f"undefined variable '{name}' ('{name}' is a function: call it "
                             f"with {name}(...))", pos)
        raise self.error(f"undefined variable '{name}'", pos)

    # -- statements -----------------------------------------------------------

    def check_stmts(self, stmts: list[ast.Stmt]) -> None:
        for s in stmts:
            self.check_stmt(s)

    def check_block(self, block: ast.Block, scope: dict[str, ast.VarInfo] | None = None) -> None:
        self.scopes.append({} if scope is None else scope)
        self.check_stmts(block.stmts)
        self.scopes.pop()

    def check_stmt(self, s: ast.Stmt) -> None:
        # Statement nesting is bounded by the parser (MAX_BLOCK_DEPTH), so recursion is safe.
        self.dispatch(s)

    def stmt_block(self, s: ast.Block) -> None:
        self.check_block(s)

    def stmt_var_decl(self, s: ast.VarDecl) -> None:
        ty = self.expr(s.init)  # checked before the declaration: it sees the outer binding
        if ty == VOID:
            raise self.error("a call that returns nothing has no value to store", s.init.pos)
        if s.declared is not None:
            self.require(s.init, s.declared, f"the initial value of '{s.name}'")
            ty = s.declared
        s.var = self.declare(s.name, ty, s.name_pos or s.pos)

    def stmt_assign(self, s: ast.Assign) -> None:
        target_ty = self.expr(s.target)
        self.value(s.value)
        self.require(s.value, target_ty, "the assigned value")

    def stmt_if(self, s: ast.If) -> None:
        # An else-if chain is walked with a loop (the parser allows chains of any length).
        link: ast.If | ast.Block | None = s
        while isinstance(link, ast.If):
            self.condition(link.cond, "if")
            self.check_block(link.then)
            link = link.orelse
        if link is not None:
            self.check_block(link)

    def stmt_while(self, s: ast.While) -> None:
        self.condition(s.cond, "while")
        self.loop_depth += 1
        self.check_block(s.body)
        self.loop_depth -= 1

    def stmt_for(self, s: ast.For) -> None:
        self.scopes.append({})  # the scope holding init; the body is a block inside it
        if s.init is not None:
            self.check_stmt(s.init)
        if s.cond is not None:
            self.condition(s.cond, "for")
        if s.step is not None:
            self.check_stmt(s.step)
        self.loop_depth += 1
        self.check_block(s.body)
        self.loop_depth -= 1
        self.scopes.pop()

    def stmt_break(self, s: ast.Break) -> None:
        if self.loop_depth == 0:
            raise self.error("'break' outside a loop", s.pos)

    def stmt_continue(self, s: ast.Continue) -> None:
        if self.loop_depth == 0:
            raise self.error("'continue' outside a loop", s.pos)

    def stmt_return(self, s: ast.Return) -> None:
        fn = self.fn
        assert fn is not None
        if s.value is None:
            if fn.ret != VOID:
                raise self.error(f"'{fn.name}' must return {article(fn.ret)}: 'return' needs "
                                 "a value", s.pos)
            return
        ty = self.expr(s.value)
        if fn.ret == VOID:
            raise self.error(f"'{fn.name}' returns nothing, but this 'return' has a value",
                             s.value.pos if ty != VOID else s.pos)
        self.require(s.value, fn.ret, "the returned value")

    def stmt_print(self, s: ast.Print) -> None:
        for arg in s.args:
            ty = self.expr(arg)
            if ty == VOID:
                raise self.error("a call that returns nothing has no value to print", arg.pos)
            if ty != INT and ty != BOOL and ty != FLOAT:
                raise self.error("type mismatch: print takes int, bool and float values, "
                                 f"not {ty}", arg.pos)

    def stmt_try(self, s: ast.Try) -> None:
        self.check_block(s.body)
        handler_scope: dict[str, ast.VarInfo] = {}  # the catch block's own scope
        self.scopes.append(handler_scope)
        s.var = self.declare(s.name, INT, s.name_pos or s.pos)
        self.scopes.pop()
        self.check_block(s.handler, handler_scope)

    def stmt_throw(self, s: ast.Throw) -> None:
        self.value(s.value)
        self.require(s.value, INT, "a thrown value")

    def stmt_expr_stmt(self, s: ast.ExprStmt) -> None:
        if not isinstance(s.expr, ast.Call):
            raise self.error("only a call can be used as a statement (this value is unused)",
                             s.expr.pos)
        self.expr(s.expr)

    # -- expressions: helpers ----------------------------------------------------

    def require(self, e: ast.Expr, want: Type, what: str) -> None:
        """``e`` (already checked) must have type ``want``."""
        got = type_of(e)
        if got != want:
            raise self.error(f"type mismatch: {what} should be {want}, not {got}", e.pos)

    def condition(self, e: ast.Expr, keyword: str) -> None:
        self.value(e)
        self.require(e, BOOL, f"the condition of '{keyword}'")

    def value(self, e: ast.Expr) -> Type:
        """Check ``e`` where a value is needed (a call that returns nothing is an error)."""
        ty = self.expr(e)
        self._no_void(e)
        return ty

    def _no_void(self, e: ast.Expr) -> None:
        if type_of(e) == VOID:
            raise self.error("type mismatch: this call returns nothing, so it has no value",
                             e.pos)

    # -- expressions: the walk -----------------------------------------------------

    def expr(self, root: ast.Expr) -> Type:
        """Check ``root`` and every sub-expression; set each one's ``ty``; return root's.

        An explicit stack of (node, its children or None before the first visit, how
        many children are done). Each node is seen three ways: :meth:`enter` before its
        children, :meth:`child_done` after each child, :meth:`finish` at the end (which
        computes its type).
        """
        stack: list[tuple[ast.Expr, list[ast.Expr] | None, int]] = [(root, None, 0)]
        while stack:
            node, kids, done = stack.pop()
            if kids is None:  # first visit
                self.enter(node)
                kids = expr_children(node)
            elif done:  # back from child number done - 1
                self.child_done(node, done - 1, kids[done - 1])
            if done < len(kids):
                stack.append((node, kids, done + 1))
                stack.append((kids[done], None, 0))
            else:
                node.ty = self.finish(node)  # type: ignore[attr-defined]
        ty = type_of(root)
        assert ty is not None
        return ty

    def enter(self, e: ast.Expr) -> None:
        """Checks before the children: names and the callee resolve, the arity fits."""
        match e:
            case ast.Name():
                e.var = self.lookup(e.name, e.pos)
            case ast.Call():
                fn = self.program.functions.get(e.name)
                if fn is None:
                    if any(e.name in scope for scope in self.scopes):
                        raise self.error(f"'{e.name}' is a variable, not a function", e.pos)
                    raise self.error(f"undefined function '{e.name}'", e.pos)
                e.fn = fn
                if len(e.args) != len(fn.params):
                    want, got = len(fn.params), len(e.args)
                    raise self.error(f"'{e.name}' takes {want} argument"
                                     f"{'' if want == 1 else 's'}, but {got} "
                                     f"{'was' if got == 1 else 'were'} given", e.pos)

    def child_done(self, e: ast.Expr, k: int, child: ast.Expr) -> None:
        """Checks of child number ``k`` of ``e``, right after it was checked."""
        self._no_void(child)
        match e:
            case ast.Call():
                assert e.fn is not None
                param = e.fn.params[k]
                self.require(child, param.ty,
                             f"argument {k + 1} of '{e.name}' ('{param.name}')")
            case ast.Index():
                if k == 0 and not isinstance(type_of(child), ArrayType):
                    raise self.error("type mismatch: only arrays can be indexed, not "
                                     f"{type_of(child)}", e.pos)
                if k == 1:
                    self.require(child, INT, "an array index")
            case ast.Field():
                base = type_of(child)
                if not isinstance(base, StructType):
                    raise self.error(f"type mismatch: {base} has no field '{e.name}' (not a "
                                     "struct)", e.pos)
                if all(f != e.name for f, _, _ in self.program.structs[base.name].fields):
                    raise self.error(f"struct {base.name} has no field '{e.name}'", e.pos)
            case ast.Len():
                if not isinstance(type_of(child), ArrayType):
                    raise self.error("type mismatch: len() needs an array, not "
                                     f"{type_of(child)}", child.pos)
            case ast.NewArray():
                self.require(child, INT, "an array length")
            case ast.NewStruct():
                self._struct_field_done(e, k, child)

    def _struct_field_done(self, e: ast.NewStruct, k: int, child: ast.Expr) -> None:
        fname, _, fpos = e.fields[k]
        if any(e.fields[j][0] == fname for j in range(k)):
            raise self.error(f"field '{fname}' is given twice", fpos)
        struct = self.program.structs[e.name]  # exists: check_program checked type_refs
        for name, fty, _ in struct.fields:
            if name == fname:
                self.require(child, fty, f"field '{fname}' of {e.name}")
                return
        raise self.error(f"struct {e.name} has no field '{fname}'", fpos)

    def finish(self, e: ast.Expr) -> Type:
        """The type of ``e``, its children being checked; operators check their operands."""
        match e:
            case ast.IntLit() | ast.Len():
                return INT
            case ast.BoolLit():
                return BOOL
            case ast.FloatLit():
                return FLOAT
            case ast.Name():
                assert e.var is not None
                return e.var.ty
            case ast.Unary():
                got = type_of(e.operand)
                # the parser reads only the table's prefix symbols and the conversions
                op = opcodes.tiny_row(e.op, 1, got == FLOAT)
                want = _KINDS[op.operands]
                if got != want:
                    raise self.error(f"type mismatch: '{e.op}' needs {want}, not {got}",
                                     e.pos)
                return _KINDS[op.result]
            case ast.Binary():
                return self._binary_type(e)
            case ast.Call():
                assert e.fn is not None
                return e.fn.ret
            case ast.Index():
                array = type_of(e.base)
                assert isinstance(array, ArrayType)  # child_done checked it
                return array.elem
            case ast.Field():
                struct = type_of(e.base)
                assert isinstance(struct, StructType)  # child_done checked it
                return self.program.structs[struct.name].field_type(e.name)
            case ast.NewArray():
                return ArrayType(e.elem)
            case ast.NewStruct():
                given = {f for f, _, _ in e.fields}
                for fname, _, _ in self.program.structs[e.name].fields:
                    if fname not in given:
                        raise self.error(f"missing field '{fname}' in new {e.name}", e.pos)
                return StructType(e.name)
        raise TypeError(f"not a Tiny expression: {type(e).__name__}")

    def _binary_type(self, e: ast.Binary) -> Type:
        lt, rt = type_of(e.left), type_of(e.right)
        # the parser reads only the table's binary symbols; on floats, + is fadd (and so on)
        floats = lt == FLOAT or rt == FLOAT
        op = opcodes.tiny_row(e.op, 2, floats)
        if floats and lt != rt:  # no implicit conversion between int and float
            raise self.error(f"type mismatch: '{e.op}' on {lt} and {rt} (convert with "
                             "int(x) or float(n))", e.pos)
        if op.operands == opcodes.SAME:
            if lt != rt:  # == and != on two values of one type
                raise self.error(f"type mismatch: '{e.op}' compares {lt} with {rt}", e.pos)
            return _KINDS[op.result]
        want = _KINDS[op.operands]
        if lt != want or rt != want:
            raise self.error(f"type mismatch: '{e.op}' needs {want} operands, not {lt} and "
                             f"{rt}", e.pos)
        return _KINDS[op.result]


def ends_path(s: ast.Stmt) -> bool:
    """LANGUAGE.md's syntactic "ends every path" test used by the missing-return rule.

    ``return`` and ``throw`` end a path; a block ends when one of its statements does
    (the rest is dead code); ``if``/``else`` when both branches do; ``try``/``catch`` when
    both parts do; ``while (true)`` or ``for (;;)`` when it has no ``break`` of its own.
    """
    match s:
        case ast.Return() | ast.Throw():
            return True
        case ast.Block():
            return any(ends_path(x) for x in s.stmts)
        case ast.If():
            # Walk the else-if chain with a loop: every link's branch must end, and the
            # chain must end in an else.
            link: ast.If | ast.Block | None = s
            while isinstance(link, ast.If):
                if not ends_path(link.then):
                    return False
                link = link.orelse
            return link is not None and ends_path(link)
        case ast.Try():
            return ends_path(s.body) and ends_path(s.handler)
        case ast.While():
            return (isinstance(s.cond, ast.BoolLit) and s.cond.value
                    and not has_own_break(s.body))
        case ast.For():
            return s.cond is None and not has_own_break(s.body)
    return False


def has_own_break(body: ast.Stmt) -> bool:
    """Does ``body`` contain a ``break`` of the loop whose body it is?

    Nested loops own their breaks, so the search does not enter them.
    """
    stack: list[ast.Stmt] = [body]
    while stack:
        s = stack.pop()
        match s:
            case ast.Break():
                return True
            case ast.Block():
                stack.extend(s.stmts)
            case ast.If():
                stack.append(s.then)
                if s.orelse is not None:
                    stack.append(s.orelse)
            case ast.Try():
                stack.extend((s.body, s.handler))
    return False


def check(program: ast.Program) -> ast.Program:
    """Resolve names and check types in place; raises :class:`SourceError` on the first error."""
    with deep_recursion():
        return Checker(program).check_program()
