"""Lowering the checked Tiny AST to quads (three-address code, Bril-compatible).

Each expression becomes a sequence of single-operation instructions whose results land
in temporaries (``t1``, ``t2``, ...); each source variable keeps its name (``x``, or
``x.1`` for a shadowing declaration). Control flow becomes labels, ``jmp`` and ``br``:
``a && b`` and ``a || b`` become branches, so ``b`` runs only when it must. Every
instruction that can fail at run time carries the source position its error reports.

The lowering is deliberately naive: one temporary per operation, copies into variables
with ``id``, no folding. Cleaning that up is lesson 02's job.
"""

from __future__ import annotations

from ssa_course import opcodes
from ssa_course.errors import Pos
from ssa_course.quads.ir import Function, Instr, Label, Program, StructInfo
from ssa_course.quads.names import Names
from ssa_course.runtime import deep_recursion, paused_gc
from ssa_course.tiny import ast
from ssa_course.tiny.check import type_of
from ssa_course.tiny.types import BOOL, FLOAT, INT, VOID, Type
from ssa_course.tiny.visit import StmtVisitor

_KINDS: dict[str, Type] = {opcodes.INT: INT, opcodes.BOOL: BOOL, opcodes.FLOAT: FLOAT}


class _Loop:
    """Where ``break`` and ``continue`` go, and how many handlers were live at the loop."""

    __slots__ = ("break_label", "continue_label", "handlers")

    def __init__(self, break_label: str, continue_label: str, handlers: int):
        self.break_label = break_label
        self.continue_label = continue_label
        self.handlers = handlers


class FunctionLowerer(StmtVisitor):
    def __init__(self, fn: ast.FnDef, program: ast.Program):
        self.fn = fn
        self.program = program
        self.body: list[Instr | Label] = []
        # temporaries t1, t2, ... beside every name a source variable will use
        self.names = Names(_variable_names(fn))
        self.label_count = 0
        self.loops: list[_Loop] = []
        self.handlers = 0  # try regions we are inside of (in this function)
        self.line: int | None = None  # the statement being lowered (stamped on its quads)

    # -- helpers --------------------------------------------------------------

    def temp(self) -> str:
        return self.names.fresh("t", bare=False, sep="")

    def labels(self, *kinds: str) -> list[str]:
        """Fresh labels sharing one number: ``labels("then", "else")`` -> then.3, else.3."""
        self.label_count += 1
        return [f"{kind}.{self.label_count}" for kind in kinds]

    def emit(self, instr: Instr) -> Instr:
        if instr.line is None:
            instr.line = self.line
        self.body.append(instr)
        return instr

    def label(self, name: str) -> None:
        self.body.append(Label(name, self.line))

    # -- functions and statements --------------------------------------------

    def lower(self) -> Function:
        params = [(ast.var_name(p.var), p.ty) for p in self.fn.params]
        self.block(self.fn.body)
        ret = None if self.fn.ret == VOID else self.fn.ret
        return Function(self.fn.name, params, ret, self.body)

    def block(self, block: ast.Block) -> None:
        for s in block.stmts:
            self.stmt(s)

    def stmt(self, s: ast.Stmt) -> None:
        outer, self.line = self.line, s.pos.line
        self.dispatch(s)  # one method per statement class of the AST
        self.line = outer

    def stmt_block(self, s: ast.Block) -> None:
        self.block(s)

    def stmt_var_decl(self, s: ast.VarDecl) -> None:
        self.expr_into(s.init, ast.var_name(s.var))

    def stmt_assign(self, s: ast.Assign) -> None:
        target = s.target
        if isinstance(target, ast.Name):
            self.expr_into(s.value, ast.var_name(target.var))
        elif isinstance(target, ast.Index):
            array = self.expr(target.base)
            index = self.expr(target.index)
            value = self.expr(s.value)
            self.emit(Instr("astore", args=[array, index, value], pos=target.pos))
        else:
            assert isinstance(target, ast.Field)  # the parser's third kind of target
            obj = self.expr(target.base)
            value = self.expr(s.value)
            self.emit(Instr("setf", args=[obj, value], field=target.name))

    def stmt_if(self, s: ast.If) -> None:
        then_l, else_l, end_l = self.labels("then", "else", "endif")
        cond = self.expr(s.cond)
        self.emit(Instr("br", args=[cond], labels=[then_l, else_l if s.orelse else end_l]))
        self.label(then_l)
        self.block(s.then)
        if s.orelse is not None:
            self.emit(Instr("jmp", labels=[end_l]))
            self.label(else_l)
            if isinstance(s.orelse, ast.If):
                self.stmt_if(s.orelse)
            else:
                self.block(s.orelse)
        self.label(end_l)

    def stmt_while(self, s: ast.While) -> None:
        cond_l, body_l, end_l = self.labels("while.cond", "while.body", "while.end")
        self.label(cond_l)
        cond = self.expr(s.cond)
        self.emit(Instr("br", args=[cond], labels=[body_l, end_l]))
        self.label(body_l)
        self.loops.append(_Loop(end_l, cond_l, self.handlers))
        self.block(s.body)
        self.loops.pop()
        self.emit(Instr("jmp", labels=[cond_l]))
        self.label(end_l)

    def stmt_for(self, s: ast.For) -> None:
        cond_l, body_l, step_l, end_l = self.labels("for.cond", "for.body", "for.step",
                                                    "for.end")
        if s.init is not None:
            self.stmt(s.init)
        self.label(cond_l)
        if s.cond is not None:
            cond = self.expr(s.cond)
            self.emit(Instr("br", args=[cond], labels=[body_l, end_l]))
        self.label(body_l)
        self.loops.append(_Loop(end_l, step_l, self.handlers))
        self.block(s.body)
        self.loops.pop()
        self.label(step_l)
        if s.step is not None:
            self.stmt(s.step)
        self.emit(Instr("jmp", labels=[cond_l]))
        self.label(end_l)

    def leave_to(self, handlers: int) -> None:
        """Pop the handlers of the try regions a jump leaves."""
        for _ in range(self.handlers - handlers):
            self.emit(Instr("leave"))

    def stmt_break(self, s: ast.Break) -> None:
        loop = self.loops[-1]
        self.leave_to(loop.handlers)
        self.emit(Instr("jmp", labels=[loop.break_label]))

    def stmt_continue(self, s: ast.Continue) -> None:
        loop = self.loops[-1]
        self.leave_to(loop.handlers)
        self.emit(Instr("jmp", labels=[loop.continue_label]))

    def stmt_return(self, s: ast.Return) -> None:
        value = None if s.value is None else self.expr(s.value)
        # Returning pops the whole frame, handlers included: no ``leave`` needed.
        self.emit(Instr("ret", args=[] if value is None else [value]))

    def stmt_print(self, s: ast.Print) -> None:
        args = [self.expr(a) for a in s.args]
        self.emit(Instr("print", args=args))

    def stmt_expr_stmt(self, s: ast.ExprStmt) -> None:
        call = s.expr
        assert isinstance(call, ast.Call)
        args = [self.expr(a) for a in call.args]
        if call.ty == VOID:
            self.emit(Instr("call", args=args, funcs=[call.name]))
        else:  # the result is unused, but Bril's call with a dest keeps the type visible
            self.op("call", None, call.ty, args, funcs=[call.name])

    def stmt_try(self, s: ast.Try) -> None:
        body_l, catch_l, end_l = self.labels("try.body", "catch", "try.end")
        self.emit(Instr("enter", labels=[body_l, catch_l]))
        self.label(body_l)
        self.handlers += 1
        self.block(s.body)
        self.handlers -= 1
        self.emit(Instr("leave"))
        self.emit(Instr("jmp", labels=[end_l]))
        self.label(catch_l)
        self.emit(Instr("catch", dest=ast.var_name(s.var), type=INT))
        self.block(s.handler)
        self.label(end_l)

    def stmt_throw(self, s: ast.Throw) -> None:
        self.emit(Instr("throw", args=[self.expr(s.value)]))

    # -- expressions ----------------------------------------------------------

    def expr(self, e: ast.Expr) -> str:
        """Lower ``e``; returns the variable holding its value (a source variable is
        used directly, no copy)."""
        if isinstance(e, ast.Name):
            return ast.var_name(e.var)
        return self.expr_into(e, None)

    def expr_into(self, e: ast.Expr, dest: str | None) -> str:
        """Lower ``e`` so that its value ends up in ``dest`` (a fresh temporary, numbered
        after its operands', when ``dest`` is None); returns the variable."""
        ty = type_of(e)
        match e:  # one case per expression class of the AST
            case ast.Name():
                return self.op("id", dest, ty, [ast.var_name(e.var)])
            case ast.IntLit() | ast.BoolLit() | ast.FloatLit():
                return self.op("const", dest, ty, [], value=e.value)
            case ast.Binary():
                return self.binary_into(e, dest)
            case ast.Unary():
                operand = self.expr(e.operand)
                op = opcodes.tiny_row(e.op, 1, type_of(e.operand) == FLOAT)
                if op.name == "neg":  # Bril has no negation: 0 - x
                    zero = self.op("const", None, INT, [], value=0)
                    return self.op("sub", dest, INT, [zero, operand])
                if op.name == "fneg":  # nor on floats: x * -1.0 (0.0 - x would give 0.0
                    # for x = 0.0, where -x is -0.0)
                    minus_one = self.op("const", None, FLOAT, [], value=-1.0)
                    return self.op("fmul", dest, FLOAT, [operand, minus_one])
                return self.op(op.name, dest, _KINDS[op.result], [operand],
                               pos=e.pos if op.may_trap else None)
            case ast.Call():
                args = [self.expr(a) for a in e.args]
                return self.op("call", dest, ty, args, funcs=[e.name])
            case ast.Index():
                array = self.expr(e.base)
                index = self.expr(e.index)
                return self.op("aload", dest, ty, [array, index], pos=e.pos)
            case ast.Field():
                obj = self.expr(e.base)
                return self.op("getf", dest, ty, [obj], field=e.name)
            case ast.Len():
                return self.op("alen", dest, INT, [self.expr(e.operand)])
            case ast.NewArray():
                return self.op("newarr", dest, ty, [self.expr(e.length)], pos=e.pos)
            case ast.NewStruct():
                # Evaluate in source order, pass in declaration order.
                values = {name: self.expr(fexpr) for name, fexpr, _ in e.fields}
                struct = self.program.structs[e.name]
                # It cannot fail, so no ``pos``; ``at`` lets listings (lesson 10) find it.
                return self.op("newstruct", dest, ty,
                               [values[f] for f, _, _ in struct.fields], at=e.pos)
        raise TypeError(f"cannot lower {type(e).__name__}")

    def op(self, opcode: str, dest: str | None, ty: Type | None, args: list[str], *,
           value: int | bool | float | None = None, funcs: list[str] | None = None,
           field: str | None = None, pos: Pos | None = None, at: Pos | None = None) -> str:
        """Emit one value-producing instruction; returns its destination."""
        dest = dest or self.temp()
        self.emit(Instr(opcode, dest, ty, args, funcs or [], [], value, field, pos, at=at))
        return dest

    def binary_into(self, e: ast.Binary, dest: str | None) -> str:
        op = opcodes.tiny_row(e.op, 2, type_of(e.left) == FLOAT)
        if op.short_circuit is not None:
            return self.short_circuit_into(e, op, dest)
        left = self.expr(e.left)
        right = self.expr(e.right)
        if op.name in ("ne", "fne"):  # Bril has no !=: not (eq a b), not (feq a b)
            eq = self.op("eq" if op.name == "ne" else "feq", None, BOOL, [left, right])
            return self.op("not", dest, BOOL, [eq])
        return self.op(op.name, dest, _KINDS[op.result], [left, right],
                       pos=e.pos if op.may_trap else None)

    def short_circuit_into(self, e: ast.Binary, op: opcodes.Opcode, dest: str | None) -> str:
        """``a && b``: if a then dest = b else dest = false (``||`` mirrored)."""
        prefix = op.name
        rhs_l, short_l, end_l = self.labels(f"{prefix}.rhs", f"{prefix}.short",
                                            f"{prefix}.end")
        left = self.expr(e.left)
        dest = dest or self.temp()
        if op.short_circuit is False:
            self.emit(Instr("br", args=[left], labels=[rhs_l, short_l]))
        else:
            self.emit(Instr("br", args=[left], labels=[short_l, rhs_l]))
        self.label(rhs_l)
        self.expr_into(e.right, dest)
        self.emit(Instr("jmp", labels=[end_l]))
        self.label(short_l)
        self.emit(Instr("const", dest, BOOL, value=op.short_circuit))
        self.label(end_l)
        return dest


def _variable_names(fn: ast.FnDef) -> set[str]:
    """Every quads name a source variable of ``fn`` will use (temporaries avoid them)."""
    names = {ast.var_name(p.var) for p in fn.params}
    stack: list[object] = [fn.body]
    while stack:
        node = stack.pop()
        var = getattr(node, "var", None)
        if isinstance(var, ast.VarInfo):
            names.add(var.unique_name())
        for slot in getattr(type(node), "__slots__", ()):
            value = getattr(node, slot, None)
            if isinstance(value, ast.Stmt | ast.Expr):
                stack.append(value)
            elif isinstance(value, list):
                stack.extend(v for v in value if isinstance(v, ast.Stmt | ast.Expr))
    return names


def lower_function(fn: ast.FnDef, program: ast.Program) -> Function:
    with deep_recursion():
        return FunctionLowerer(fn, program).lower()


def lower_program(program: ast.Program) -> Program:
    """Lower every function of a checked Tiny program to quads."""
    with paused_gc():
        functions = {name: lower_function(fn, program)
                     for name, fn in program.functions.items()}
    structs = {name: StructInfo(name, [(f, t) for f, t, _ in s.fields])
               for name, s in program.structs.items()}
    return Program(functions, structs)
