"""The reference interpreter: Tiny's meaning, read straight off the checked syntax tree.

Every other executor in the course is compared with this one, so it favours being
obviously right over being fast. Two design points:

* **Calls never recurse in Python.** Statements run as Python generators; a call
  ``yield``s a request to the *trampoline* in :meth:`Interpreter.run`, which keeps an
  explicit stack of suspended function bodies. Recursion 50,000 deep needs 50,000 stack
  entries, not 50,000 Python frames; past ``limits.depth`` the run stops with
  ``stack overflow``.
* **Call-free expressions are plain functions.** Most expressions contain no call, and
  evaluating them without generators is several times faster; the checker's annotations
  tell us which ones do.

Tiny ``throw`` is a Python exception (:class:`TinyThrow`) that the trampoline passes from
a finished body into its caller, where a ``try`` statement's Python ``try`` catches it.
Runtime errors are :class:`~ssa_course.errors.RuntimeTrap` and are never caught.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from ssa_course import opcodes
from ssa_course.errors import RuntimeTrap
from ssa_course.runtime import (
    Heap,
    Limits,
    Output,
    TinyStruct,
    check_index,
    deep_recursion,
    format_print,
    load_element,
    stack_overflow,
    step_limit_exceeded,
    uncaught,
)
from ssa_course.tiny import ast
from ssa_course.tiny.types import FloatType, element_zero

# Statement outcomes other than "go on" (None).
BREAK = "break"
CONTINUE = "continue"


class Return:
    __slots__ = ("value",)

    def __init__(self, value: object):
        self.value = value


class TinyThrow(Exception):
    """A Tiny exception in flight (carries the thrown int)."""

    def __init__(self, value: int):
        super().__init__(value)
        self.value = value


Env = dict[Any, Any]  # VarInfo -> value, one per active call
Body = Generator[tuple[ast.FnDef, list[object]], object, object]
# A statement's outcome: None (go on), BREAK, CONTINUE or a Return.
Run = Generator[tuple[ast.FnDef, list[object]], object, Any]
# The nodes stmt, value and eval dispatch on: matched on their exact class with value
# patterns (``case ast.Name:``), one identity test per case, as fast as the old
# ``type(e) is X`` chains; class patterns (``case ast.Name():``) cost an isinstance test
# each and made this interpreter 20-30% slower. A value pattern does not narrow a type
# for mypy, so inside these three the node is ``Any`` (the parameters say what they take).
Node = Any


class Interpreter:
    def __init__(self, program: ast.Program, out: Output, limits: Limits):
        self.program = program
        self.out = out
        self.limits = limits
        self.steps = 0
        self.calls = _find_calls(program)
        self.heap = Heap(limits)

    # -- bookkeeping ------------------------------------------------------------

    def tick(self) -> None:
        self.steps += 1
        if self.steps > self.limits.steps:
            raise step_limit_exceeded()

    # -- the trampoline -------------------------------------------------------

    def run(self, args: list[object]) -> int:
        main = self.program.functions["main"]
        stack: list[Body] = [self.body(main, args)]  # suspended bodies, the running one last
        send: object = None  # what the running body receives: a callee's return value
        pending: TinyThrow | None = None  # ... or an exception its callee let escape
        while stack:
            gen = stack[-1]
            try:
                # resume the running body until it asks for a call (or finishes)
                request = gen.throw(pending) if pending is not None else gen.send(send)
            except StopIteration as done:
                # the body returned: its value goes to the caller's suspended ``yield``
                stack.pop()
                send, pending = done.value, None
                continue
            except TinyThrow as thrown:
                # the body threw and did not catch: the caller gets it where it waits
                stack.pop()
                send, pending = None, thrown
                continue
            pending = None
            # a call request: (function, argument values); the callee runs next
            if len(stack) >= self.limits.depth:
                raise stack_overflow()
            fn, values = request
            stack.append(self.body(fn, values))
            send = None
        if pending is not None:
            raise uncaught(pending.value)
        return self.steps

    def body(self, fn: ast.FnDef, args: list[object]) -> Body:
        # one environment per call, keyed by the checker's variables (not names: a
        # shadowing declaration is another variable)
        env: Env = {p.var: a for p, a in zip(fn.params, args, strict=True)}
        outcome = yield from self.block(fn.body.stmts, env)
        if isinstance(outcome, Return):
            return outcome.value
        return None

    # -- statements (generators: a call inside may suspend them) ---------------

    def block(self, stmts: list[ast.Stmt], env: Env) -> Run:
        for s in stmts:
            outcome = yield from self.stmt(s, env)
            if outcome is not None:  # break, continue or return: stop here, pass it up
                return outcome
        return None

    def stmt(self, stmt: ast.Stmt, env: Env) -> Run:
        s: Node = stmt
        self.steps += 1  # self.tick() written out: every node counts
        if self.steps > self.limits.steps:
            raise step_limit_exceeded()
        match type(s):  # the most frequent first; a value pattern: one == test per case
            case ast.Assign:
                yield from self.assign(s, env)
            case ast.VarDecl:
                e = s.init  # most expressions contain no call: no generator for them
                env[s.var] = (self.eval(e, env) if id(e) not in self.calls
                              else (yield from self.value(e, env)))
            case ast.If:
                return (yield from self.if_stmt(s, env))
            case ast.While:
                return (yield from self.while_stmt(s, env))
            case ast.Block:
                return (yield from self.block(s.stmts, env))
            case ast.Print:
                values = []
                for arg in s.args:
                    values.append((yield from self.value(arg, env)))
                self.out.write(format_print(values))
            case ast.ExprStmt:
                yield from self.value(s.expr, env)
            case ast.Return:
                value = None if s.value is None else (yield from self.value(s.value, env))
                return Return(value)
            case ast.Break:
                return BREAK
            case ast.Continue:
                return CONTINUE
            case ast.For:
                return (yield from self.for_stmt(s, env))
            case ast.Try:
                return (yield from self.try_stmt(s, env))
            case ast.Throw:
                raise TinyThrow((yield from self.value(s.value, env)))
        return None

    def assign(self, s: ast.Assign, env: Env) -> Run:
        target: Node = s.target
        match type(target):  # evaluated left to right: the target's parts, then the value
            case ast.Name:
                e = s.value  # most expressions contain no call: no generator for them
                env[target.var] = (self.eval(e, env) if id(e) not in self.calls
                                   else (yield from self.value(e, env)))
            case ast.Index:
                array = yield from self.value(target.base, env)
                index = yield from self.value(target.index, env)
                value = yield from self.value(s.value, env)
                check_index(array, index, target.pos)
                array.items[index] = value
            case ast.Field:
                obj = yield from self.value(target.base, env)
                value = yield from self.value(s.value, env)
                obj.fields[target.name] = value

    def if_stmt(self, s: ast.If, env: Env) -> Run:
        while True:  # walks an else-if chain without recursion
            cond = s.cond
            if (self.eval(cond, env) if id(cond) not in self.calls
                    else (yield from self.value(cond, env))):
                return (yield from self.block(s.then.stmts, env))
            if s.orelse is None:
                return None
            if not isinstance(s.orelse, ast.If):
                return (yield from self.block(s.orelse.stmts, env))
            s = s.orelse
            self.tick()

    def while_stmt(self, s: ast.While, env: Env) -> Run:
        cond, calls = s.cond, self.calls
        while (self.eval(cond, env) if id(cond) not in calls
               else (yield from self.value(cond, env))):
            outcome = yield from self.block(s.body.stmts, env)
            if outcome is BREAK:
                break
            # CONTINUE just ends this trip; a Return leaves the function
            if outcome is not None and outcome is not CONTINUE:
                return outcome
        return None

    def for_stmt(self, s: ast.For, env: Env) -> Run:
        if s.init is not None:
            yield from self.stmt(s.init, env)
        cond, calls = s.cond, self.calls
        while cond is None or (self.eval(cond, env) if id(cond) not in calls
                               else (yield from self.value(cond, env))):
            outcome = yield from self.block(s.body.stmts, env)
            if outcome is BREAK:
                break
            if outcome is not None and outcome is not CONTINUE:
                return outcome
            if s.step is not None:  # (after a ``continue`` too, as in C)
                yield from self.stmt(s.step, env)
        return None

    def try_stmt(self, s: ast.Try, env: Env) -> Run:
        try:
            return (yield from self.block(s.body.stmts, env))
        except TinyThrow as thrown:
            # a throw in the body, or one a callee let escape (the trampoline throws it
            # into this generator): bind the value, run the handler
            env[s.var] = thrown.value
        return (yield from self.block(s.handler.stmts, env))

    # -- expressions ----------------------------------------------------------

    def value(self, expr: ast.Expr, env: Env) -> Run:
        """Evaluate ``expr``; a generator only because ``expr`` may contain a call."""
        e: Node = expr
        if id(e) not in self.calls:
            return self.eval(e, env)
        self.steps += 1  # self.tick() written out: every node counts
        if self.steps > self.limits.steps:
            raise step_limit_exceeded()
        # The same cases as eval's below, with every operand evaluated by ``yield from``
        # (a Name or a literal contains no call, so they never come here).
        match type(e):
            case ast.Call:
                values = []
                for arg in e.args:
                    values.append((yield from self.value(arg, env)))
                return (yield (e.fn, values))  # to the trampoline: run e.fn, send its value
            case ast.Binary:
                left = yield from self.value(e.left, env)
                op = opcodes.TABLE.binary[e.op]
                if type(e.left.ty) is FloatType:  # + on floats is fadd
                    op = opcodes.float_row(op)
                if op.short_circuit is not None and left is op.short_circuit:
                    return left  # && and || decide without the right operand
                right = yield from self.value(e.right, env)
                if not op.may_trap:  # cannot trap: skip apply's test
                    return op.evaluate(left, right)
                return op.apply((left, right), e.pos)
            case ast.Unary:
                operand = yield from self.value(e.operand, env)
                return opcodes.tiny_row(e.op, 1, type(e.operand.ty) is FloatType).apply(
                    (operand,), e.pos)
            case ast.Index:
                array = yield from self.value(e.base, env)
                index = yield from self.value(e.index, env)
                return load_element(array, index, e.pos)
            case ast.Field:
                obj = yield from self.value(e.base, env)
                return obj.fields[e.name]
            case ast.Len:
                array = yield from self.value(e.operand, env)
                return len(array.items)
            case ast.NewArray:
                n = yield from self.value(e.length, env)
                return self.heap.new_array(n, element_zero(e.elem), e.pos)
            case ast.NewStruct:
                fields = {}
                for name, fexpr, _ in e.fields:
                    fields[name] = yield from self.value(fexpr, env)
                return self.new_struct(e, fields)
        raise RuntimeTrap(f"cannot evaluate {type(e).__name__}")  # unreachable after checking

    def eval(self, expr: ast.Expr, env: Env) -> Any:
        """Evaluate a call-free expression (plain recursion over its syntax)."""
        e: Node = expr
        self.steps += 1  # self.tick() written out: every node counts
        if self.steps > self.limits.steps:
            raise step_limit_exceeded()
        match type(e):  # the most frequent first; a value pattern: one == test per case
            case ast.Name:
                return env[e.var]
            case ast.IntLit | ast.BoolLit | ast.FloatLit:
                return e.value
            case ast.Binary:
                left = self.eval(e.left, env)
                op = opcodes.TABLE.binary[e.op]
                if type(e.left.ty) is FloatType:  # + on floats is fadd
                    op = opcodes.float_row(op)
                if op.short_circuit is not None and left is op.short_circuit:
                    return left  # && and || decide without the right operand
                right = self.eval(e.right, env)
                if not op.may_trap:  # cannot trap: skip apply's test
                    return op.evaluate(left, right)
                return op.apply((left, right), e.pos)
            case ast.Unary:
                return opcodes.tiny_row(e.op, 1, type(e.operand.ty) is FloatType).apply(
                    (self.eval(e.operand, env),), e.pos)
            case ast.Index:
                array = self.eval(e.base, env)
                return load_element(array, self.eval(e.index, env), e.pos)
            case ast.Field:
                return self.eval(e.base, env).fields[e.name]
            case ast.Len:
                return len(self.eval(e.operand, env).items)
            case ast.NewArray:
                return self.heap.new_array(self.eval(e.length, env), element_zero(e.elem),
                                           e.pos)
            case ast.NewStruct:
                fields = {name: self.eval(fexpr, env) for name, fexpr, _ in e.fields}
                return self.new_struct(e, fields)
        raise RuntimeTrap(f"cannot evaluate {type(e).__name__}")  # unreachable after checking

    def new_struct(self, e: ast.NewStruct, fields: dict[str, object]) -> TinyStruct:
        struct = self.program.structs[e.name]
        return TinyStruct(e.name, {name: fields[name] for name, _, _ in struct.fields})


def _find_calls(program: ast.Program) -> set[int]:
    """``id()`` of every expression that contains a call (so must run as a generator)."""
    found: set[int] = set()
    for fn in program.functions.values():
        # Post-order walk with an explicit stack: a node contains a call if it is one or
        # any child does.
        stack: list[tuple[object, bool]] = [(fn.body, False)]
        while stack:
            node, done = stack.pop()
            children = _child_nodes(node)
            if not done:
                stack.append((node, True))
                stack.extend((c, False) for c in children)
                continue
            if isinstance(node, ast.Call) or any(id(c) in found for c in children
                                                 if isinstance(c, ast.Expr)):
                found.add(id(node))
    return found


def _child_nodes(node: object) -> list[object]:
    out: list[object] = []
    for name in getattr(type(node), "__slots__", ()):
        if name in ("pos", "ty", "var", "fn", "name_pos"):
            continue
        value = getattr(node, name, None)
        if isinstance(value, ast.Expr | ast.Stmt):
            out.append(value)
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, ast.Expr | ast.Stmt):
                    out.append(item)
                elif isinstance(item, tuple) and len(item) == 3:
                    out.append(item[1])
    return out


def run_ast(program: ast.Program, args: list[object], out: Output, limits: Limits) -> int:
    """Run ``main(*args)``; returns the number of steps (statements + expression nodes).

    Raises :class:`RuntimeTrap` for runtime errors, an uncaught exception, or a limit.
    """
    with deep_recursion():
        return Interpreter(program, out, limits).run(args)
