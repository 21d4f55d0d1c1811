"""Tiny's type checker: resolves names, computes types, and enforces LANGUAGE.md's rules.

It walks each function with a stack of scopes (``dict`` name -> VarInfo), annotates the
tree in place (see :mod:`ssa_course.tiny.ast`) and stops at the first error with a
located :class:`SourceError`. Statement and expression nesting is bounded by the parser,
so plain recursion over the tree is safe here.
"""

from __future__ import annotations

from ssa_course.errors import Pos, SourceError
from ssa_course.tiny import ast
from ssa_course.tiny.types import BOOL, INT, VOID, ArrayType, BoolType, IntType, StructType, Type

ARITH = ("+", "-", "*", "/", "%")
ORDER = ("<", "<=", ">", ">=")
EQUALITY = ("==", "!=")
LOGIC = ("&&", "||")


class Checker:
    def __init__(self, program: ast.Program):
        self.program = program
        self.scopes: list[dict[str, ast.VarInfo]] = []
        self.counts: dict[str, int] = {}
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
            if not isinstance(p.ty, IntType | BoolType):
                raise self.error(f"parameter '{p.name}' of 'main' must be int or bool, "
                                 f"not {p.ty}", p.pos)

    def check_function(self, fn: ast.FnDef) -> None:
        self.fn = fn
        self.counts = {}
        self.scopes = [{}]
        self.loop_depth = 0
        for p in fn.params:
            p.var = self.declare(p.name, p.ty, p.pos)
        self.check_stmts(fn.body.stmts)
        self.scopes.pop()
        if fn.ret != VOID and not ends_path(fn.body):
            raise self.error(f"missing return: '{fn.name}' must return a {fn.ret} on every "
                             "path", fn.pos)

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
        raise self.error(f"undefined variable '{name}'", pos)

    # -- statements -----------------------------------------------------------

    def check_stmts(self, stmts: list[ast.Stmt]) -> None:
        for s in stmts:
            self.check_stmt(s)

    def check_block(self, block: ast.Block, *, scope: dict | None = None) -> None:
        self.scopes.append(scope if scope is not None else {})
        self.check_stmts(block.stmts)
        self.scopes.pop()

    def check_stmt(self, s: ast.Stmt) -> None:
        method = getattr(self, "stmt_" + type(s).__name__)
        method(s)

    def stmt_Block(self, s: ast.Block) -> None:
        self.check_block(s)

    def stmt_VarDecl(self, s: ast.VarDecl) -> None:
        ty = self.expr(s.init)  # the initialiser sees the outer binding
        if ty == VOID:
            raise self.error("a call that returns nothing has no value to store", s.init.pos)
        if s.declared is not None:
            self.require(s.init, s.declared, f"the initial value of '{s.name}'")
            ty = s.declared
        s.var = self.declare(s.name, ty, s.name_pos or s.pos)

    def stmt_Assign(self, s: ast.Assign) -> None:
        target = s.target
        if isinstance(target, ast.Name):
            target.var = self.lookup(target.name, target.pos)
            target.ty = target.var.ty
        else:
            self.expr(target)
        self.expr(s.value)
        self.require(s.value, target.ty, "the assigned value")

    def stmt_If(self, s: ast.If) -> None:
        self.condition(s.cond, "if")
        self.check_block(s.then)
        if isinstance(s.orelse, ast.If):
            self.stmt_If(s.orelse)
        elif s.orelse is not None:
            self.check_block(s.orelse)

    def stmt_While(self, s: ast.While) -> None:
        self.condition(s.cond, "while")
        self.loop_depth += 1
        self.check_block(s.body)
        self.loop_depth -= 1

    def stmt_For(self, s: ast.For) -> None:
        self.scopes.append({})  # the scope that holds init
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

    def stmt_Break(self, s: ast.Break) -> None:
        if self.loop_depth == 0:
            raise self.error("'break' outside a loop", s.pos)

    def stmt_Continue(self, s: ast.Continue) -> None:
        if self.loop_depth == 0:
            raise self.error("'continue' outside a loop", s.pos)

    def stmt_Return(self, s: ast.Return) -> None:
        fn = self.fn
        assert fn is not None
        if s.value is None:
            if fn.ret != VOID:
                raise self.error(f"'{fn.name}' must return a {fn.ret}: 'return' needs a value",
                                 s.pos)
            return
        ty = self.expr(s.value)
        if fn.ret == VOID:
            raise self.error(f"'{fn.name}' returns nothing, but this 'return' has a value",
                             s.value.pos if ty != VOID else s.pos)
        self.require(s.value, fn.ret, "the returned value")

    def stmt_Print(self, s: ast.Print) -> None:
        for arg in s.args:
            ty = self.expr(arg)
            if ty == VOID:
                raise self.error("a call that returns nothing has no value to print", arg.pos)
            if ty not in (INT, BOOL):
                raise self.error(f"type mismatch: print takes int and bool values, not {ty}",
                                 arg.pos)

    def stmt_Try(self, s: ast.Try) -> None:
        self.check_block(s.body)
        handler_scope: dict[str, ast.VarInfo] = {}
        self.scopes.append(handler_scope)
        s.var = self.declare(s.name, INT, s.name_pos or s.pos)
        self.scopes.pop()
        self.check_block(s.handler, scope=handler_scope)

    def stmt_Throw(self, s: ast.Throw) -> None:
        self.expr(s.value)
        self.require(s.value, INT, "a thrown value")

    def stmt_ExprStmt(self, s: ast.ExprStmt) -> None:
        if not isinstance(s.expr, ast.Call):
            raise self.error("only a call can be used as a statement (this value is unused)",
                             s.expr.pos)
        self.expr(s.expr)

    # -- expressions ----------------------------------------------------------

    def require(self, e: ast.Expr, want: Type, what: str) -> None:
        got = e.ty
        if got != want:
            raise self.error(f"type mismatch: {what} should be {want}, not {got}",
                             _blame(e))

    def condition(self, e: ast.Expr, keyword: str) -> None:
        self.expr(e)
        self.require(e, BOOL, f"the condition of '{keyword}'")

    def expr(self, e: ast.Expr) -> Type:
        method = getattr(self, "expr_" + type(e).__name__)
        ty = method(e)
        e.ty = ty  # type: ignore[attr-defined]
        return ty

    def expr_IntLit(self, e: ast.IntLit) -> Type:
        return INT

    def expr_BoolLit(self, e: ast.BoolLit) -> Type:
        return BOOL

    def expr_Name(self, e: ast.Name) -> Type:
        e.var = self.lookup(e.name, e.pos)
        return e.var.ty

    def expr_Unary(self, e: ast.Unary) -> Type:
        ty = self.value(e.operand)
        want = INT if e.op == "-" else BOOL
        if ty != want:
            raise self.error(f"type mismatch: '{e.op}' needs {want}, not {ty}", e.pos)
        return want

    def expr_Binary(self, e: ast.Binary) -> Type:
        lt = self.value(e.left)
        rt = self.value(e.right)
        if e.op in ARITH or e.op in ORDER:
            if lt != INT or rt != INT:
                raise self.error(f"type mismatch: '{e.op}' needs int operands, not {lt} and "
                                 f"{rt}", e.pos)
            return INT if e.op in ARITH else BOOL
        if e.op in LOGIC:
            if lt != BOOL or rt != BOOL:
                raise self.error(f"type mismatch: '{e.op}' needs bool operands, not {lt} and "
                                 f"{rt}", e.pos)
            return BOOL
        if lt != rt:
            raise self.error(f"type mismatch: '{e.op}' compares {lt} with {rt}", e.pos)
        return BOOL

    def value(self, e: ast.Expr) -> Type:
        """Check ``e`` where a value is needed (a void call is an error)."""
        ty = self.expr(e)
        if ty == VOID:
            raise self.error("type mismatch: this call returns nothing, so it has no value",
                             e.pos)
        return ty

    def expr_Call(self, e: ast.Call) -> Type:
        fn = self.program.functions.get(e.name)
        if fn is None:
            if any(e.name in scope for scope in self.scopes):
                raise self.error(f"'{e.name}' is a variable, not a function", e.pos)
            raise self.error(f"undefined function '{e.name}'", e.pos)
        e.fn = fn
        if len(e.args) != len(fn.params):
            raise self.error(f"'{e.name}' takes {len(fn.params)} argument"
                             f"{'' if len(fn.params) == 1 else 's'}, but {len(e.args)} "
                             f"{'was' if len(e.args) == 1 else 'were'} given", e.pos)
        for i, (arg, param) in enumerate(zip(e.args, fn.params, strict=True)):
            self.value(arg)
            self.require(arg, param.ty, f"argument {i + 1} of '{e.name}' ('{param.name}')")
        return fn.ret

    def expr_Index(self, e: ast.Index) -> Type:
        base = self.value(e.base)
        if not isinstance(base, ArrayType):
            raise self.error(f"type mismatch: only arrays can be indexed, not {base}", e.pos)
        self.value(e.index)
        self.require(e.index, INT, "an array index")
        return base.elem

    def expr_Field(self, e: ast.Field) -> Type:
        base = self.value(e.base)
        if not isinstance(base, StructType):
            raise self.error(f"type mismatch: {base} has no field '{e.name}' (not a struct)",
                             e.pos)
        struct = self.program.structs[base.name]
        try:
            return struct.field_type(e.name)
        except KeyError:
            raise self.error(f"struct {base.name} has no field '{e.name}'", e.pos) from None

    def expr_Len(self, e: ast.Len) -> Type:
        ty = self.value(e.operand)
        if not isinstance(ty, ArrayType):
            raise self.error(f"type mismatch: len() needs an array, not {ty}", e.operand.pos)
        return INT

    def expr_NewArray(self, e: ast.NewArray) -> Type:
        self.value(e.length)
        self.require(e.length, INT, "an array length")
        return ArrayType(e.elem)

    def expr_NewStruct(self, e: ast.NewStruct) -> Type:
        struct = self.program.structs[e.name]  # type_refs guarantee it exists
        given: set[str] = set()
        for fname, fexpr, fpos in e.fields:
            if fname in given:
                raise self.error(f"field '{fname}' is given twice", fpos)
            given.add(fname)
            try:
                fty = struct.field_type(fname)
            except KeyError:
                raise self.error(f"struct {e.name} has no field '{fname}'", fpos) from None
            self.value(fexpr)
            self.require(fexpr, fty, f"field '{fname}' of {e.name}")
        missing = [f for f, _, _ in struct.fields if f not in given]
        if missing:
            raise self.error(f"missing field '{missing[0]}' in new {e.name}", e.pos)
        return StructType(e.name)


def _blame(e: ast.Expr) -> Pos:
    """Where a type mismatch of a whole expression points: its operator or first token."""
    return e.pos


def ends_path(s: ast.Stmt) -> bool:
    """LANGUAGE.md's syntactic "ends every path" check used by the missing-return rule."""
    if isinstance(s, ast.Return | ast.Throw):
        return True
    if isinstance(s, ast.Block):
        return any(ends_path(x) for x in s.stmts)
    if isinstance(s, ast.If):
        return s.orelse is not None and ends_path(s.then) and ends_path(s.orelse)
    if isinstance(s, ast.Try):
        return ends_path(s.body) and ends_path(s.handler)
    if isinstance(s, ast.While):
        return isinstance(s.cond, ast.BoolLit) and s.cond.value and not has_own_break(s.body)
    if isinstance(s, ast.For):
        return s.cond is None and not has_own_break(s.body)
    return False


def has_own_break(body: ast.Stmt) -> bool:
    """Does ``body`` contain a ``break`` that belongs to the enclosing loop?"""
    stack: list[ast.Stmt] = [body]
    while stack:
        s = stack.pop()
        if isinstance(s, ast.Break):
            return True
        if isinstance(s, ast.Block):
            stack.extend(s.stmts)
        elif isinstance(s, ast.If):
            stack.append(s.then)
            if s.orelse is not None:
                stack.append(s.orelse)
        elif isinstance(s, ast.Try):
            stack.extend((s.body, s.handler))
        # nested loops own their breaks: not searched
    return False


def check(program: ast.Program) -> ast.Program:
    """Resolve names and check types in place; raises :class:`SourceError` on the first error."""
    return Checker(program).check_program()
