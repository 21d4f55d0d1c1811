"""Parse Tiny straight into the sea of nodes, peepholes on (lesson 06).

The builder follows the parser's order over the checked syntax tree -- one pass, no CFG,
no dominators -- and hands every node to the peephole driver the moment it is made, so
the graph is optimized while it is built (Click & Paleczny's point: the inputs of a new
node are already final, so ``compute``/``idealize`` see everything they need).

* The :class:`~ssa_course.son.scope.Scope` node maps each variable to its current node.
  A construct does not copy it: it journals the slots it writes and undoes them to parse
  its other side, so each side is just the slots it changed.
* ``if``/``else``, ``&&``/``||`` and ``try``/``catch`` merge their sides at a Region,
  making a Phi for every changed variable whose definitions differ.
* A loop head gets a Loop region and a Phi for memory and every variable the loop names
  (:mod:`~ssa_course.son.loopvars`: the others keep their value); after the body is
  parsed the back edge is filled in and the phis that turned out trivial
  (``phi(x, itself)``) are removed.
* Every runtime check is explicit control: ``If`` on the condition, ``Trap`` on the
  failing side. With peepholes on, a check (or any ``if``) whose predicate is a constant
  builds only the side that can run.

With ``optimize=False`` the same walk builds the *raw* graph: types are computed but no
node is folded, merged, rewritten or deleted.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from ssa_course import opcodes
from ssa_course.runtime import deep_recursion, paused_gc
from ssa_course.son.control import Loop, Never, Phi, Region, Return, Throw
from ssa_course.son.data import operator_node
from ssa_course.son.emit import (
    BuildOptions,
    Dead,
    Emitter,
)
from ssa_course.son.graph import Node
from ssa_course.son.loopvars import mentioned_vars
from ssa_course.son.memory import Len, Print
from ssa_course.son.program import FunctionGraph, SeaOfNodes, lattice_type
from ssa_course.son.scope import Delta, Scope
from ssa_course.son.types import BOOL_BOTTOM, INT_BOTTOM, Type
from ssa_course.tiny import ast
from ssa_course.tiny import types as tt
from ssa_course.tiny.check import type_of
from ssa_course.tiny.visit import StmtVisitor


@dataclass
# What a break or continue needs to become a side of the loop's merges: the journal
# frame to diff against, and where the loop's own variables end (slots past ``size``
# are the body's locals, which die at the merge).
class _LoopContext:
    depth: int  # the loop's journal frame: breaks and continues are changes since it
    size: int  # scope size at the loop head
    breaks: list[Delta]
    continues: list[Delta]


@dataclass
# A try's pending catch edges: every ``throw`` (and every call that may throw) inside the
# body adds one side, merged at the catch like the sides of an ``if``.
class _TryContext:
    depth: int  # the try's journal frame
    size: int  # scope size at the try; the thrown value goes in this slot
    caught: list[Delta]


class GraphBuilder(Emitter, StmtVisitor):
    """Builds one function's graph from its checked syntax tree."""

    def __init__(self, program: ast.Program, fn: ast.FnDef, optimize: bool = True,
                 options: BuildOptions | None = None):
        super().__init__(fn.name, [lattice_type(p.ty) for p in fn.params],
                         [p.name for p in fn.params], optimize, options)
        self.program = program
        self.fn = fn
        ctrl, mem, parms = self.start_projections()
        self.scope = Scope(self.g, ctrl, mem)
        for param, parm in zip(fn.params, parms, strict=True):
            self.scope.define(param.var, parm, param.name, lattice_type(param.ty))
        self.loops: list[_LoopContext] = []
        self.handlers: list[_TryContext] = []

    # control and memory live in the scope
    @property
    def ctrl(self) -> Node | None:
        return self.scope.ctrl

    @ctrl.setter
    def ctrl(self, node: Node | None) -> None:
        self.scope.ctrl = node

    @property
    def mem(self) -> Node:
        return self.scope.mem

    @mem.setter
    def mem(self, node: Node) -> None:
        self.scope.mem = node

    # Deleting the scope takes away the one use that kept its values alive; the peephole
    # driver then deletes those that nothing else reads (a value parsed but never used).
    def drop(self, scope: Scope) -> None:
        inputs = [n for n in scope.inputs if n is not None]
        scope.discard()
        if self.optimize:
            for n in inputs:
                self.peep.discard(n)

    def burn_id(self) -> None:
        """Use up the node id a copy of the scope took when constructs copied it: the ids
        of the nodes built after, and so the printed graphs, stay as they were."""
        self.g.next_id += 1

    def merge(self, sides: list[Delta], limit: int,
              extra: tuple[str, Type] | None = None) -> dict[int, Node | None]:
        """Join sides (changes relative to the current scope) at a Region, with Phis where
        the values of a slot below ``limit`` differ; dead sides drop out. The merged values
        are written to the scope, except the slot ``extra`` names (the one past its end,
        the result of ``&&`` or a caught exception); returns {slot: merged value}."""
        sc = self.scope
        # Only the slots some side changed can differ; slot 0 (control) always takes part, since
        # the Region is made from it.
        union = sorted({slot for d in sides for slot in d.slots if slot < limit})
        if 0 not in union:
            union.insert(0, 0)
        values = [[sc.value(d, slot) for slot in union] for d in sides]
        # A side whose control is None ended in return/break/throw (or a folded branch): it
        # contributes no edge to the Region, so its values take part in no Phi.
        live = [k for k, vals in enumerate(values) if vals[0] is not None]
        keeper = live[0] if live else 0
        for d in sides:  # their values are in `values` (the ones to discard come last)
            d.release()
        # One live side (or none): no Region and no Phi -- its values simply become the scope's.
        if len(live) <= 1:
            result = dict(zip(union, values[keeper], strict=True))
        else:
            region = self.p(Region(self.g, None, *(values[k][0] for k in live)))
            result = {0: region}
            for pos in range(1, len(union)):
                slot = union[pos]
                vals = [values[k][pos] for k in live]
                # The same node on every side: that slot needs no Phi (SSA: the definition dominates
                # the merge already).
                if all(v is vals[0] for v in vals):
                    result[slot] = vals[0]
                    continue
                if slot < sc.size():
                    name, ty = sc.names[slot], sc.types[slot]
                else:
                    assert extra is not None, "a slot past the scope's end is ``extra``'s"
                    name, ty = extra
                result[slot] = self.p(Phi(self.g, region, *vals, declared=ty, name=name))
        size = sc.size()
        # Slots past the scope's end (the extra one) are only returned, never written: the caller
        # decides where the value of ``&&`` or the caught exception goes.
        for slot, node in result.items():
            if slot < size:
                sc.write(slot, node)
        if self.optimize:  # the values only the dropped sides held die with them
            kept = {id(node) for node in result.values()}  # (the extra slot's is in hand)
            dead = [k for k in range(len(sides)) if k not in live and k != keeper]
            for k in [*dead, *live[1:]]:  # the order the copies of the scope were dropped in
                for node in values[k]:
                    if node is not None and id(node) not in kept:
                        self.peep.discard(node)
        return result

    # -- the function ---------------------------------------------------------------

    def build(self) -> FunctionGraph:
        # A body that falls off its end returns nothing: that implicit Return is an exit like
        # any other, so Stop reaches the last statements' memory effects.
        self.block(self.fn.body)
        if not self.scope.dead():
            self.exits.append(self.p(Return(self.g, self.ctrl, self.mem, None)))
        self.drop(self.scope)
        params = [(p.name, p.ty) for p in self.fn.params]
        ret = None if isinstance(self.fn.ret, tt.VoidType) else self.fn.ret
        fg = self.finish(self.fn.name, params, ret)
        self.g.line = 0  # nodes later passes make belong to no statement
        return fg

    # -- statements -----------------------------------------------------------------

    def block(self, block: ast.Block) -> None:
        size = self.scope.size()
        for stmt in block.stmts:
            if self.scope.dead():
                break  # code after return/break/continue/throw never runs
            # Dead: a check in the statement always fails (say a division by constant zero); the
            # rest of it is not built, and the scope's control is already dead.
            with contextlib.suppress(Dead):
                self.stmt(stmt)
        # Leaving a block drops its variables: they are the last slots, so a truncation.
        self.scope.truncate(size)

    def stmt(self, s: ast.Stmt) -> None:
        pos = getattr(s, "pos", None)
        if pos is not None:
            self.g.line = pos.line
        self.dispatch(s)  # one method per statement class of the AST

    def stmt_block(self, s: ast.Block) -> None:
        self.block(s)

    def stmt_var_decl(self, s: ast.VarDecl) -> None:
        value = self.expr(s.init)
        self.scope.define(s.var, value, s.name, lattice_type(ast.checked(s.var).ty))

    def stmt_assign(self, s: ast.Assign) -> None:
        target = s.target
        if isinstance(target, ast.Name):
            value = self.expr(s.value)  # (may replace self.scope: && and || merge)
            # SSA in one line: an assignment makes no node, it only points the variable's slot at
            # the value; the old definition lives on wherever it is already used.
            self.scope.update(target.var, value)
        elif isinstance(target, ast.Index):
            base, index = self.expr(target.base), self.expr(target.index)
            self.store_element(base, index, self.expr(s.value), target.pos)
        else:
            assert isinstance(target, ast.Field)
            base = self.expr(target.base)
            self.store_field(base, target.name, self.expr(s.value))

    def stmt_expr_stmt(self, s: ast.ExprStmt) -> None:
        self.expr(s.expr)

    def stmt_print(self, s: ast.Print) -> None:
        values = [self.expr(a) for a in s.args]
        sc = self.scope
        # Printing is an effect: it takes memory and gives the new memory state, which orders
        # it after every earlier effect and before every later one (memory is a value, Click).
        sc.mem = self.p(Print(self.g, sc.ctrl, sc.mem, *values))

    def stmt_return(self, s: ast.Return) -> None:
        value = self.expr(s.value) if s.value is not None else None
        sc = self.scope
        # Control None marks the scope dead: the statements after a return are not built.
        self.exits.append(self.p(Return(self.g, sc.ctrl, sc.mem, value)))
        sc.ctrl = None

    def stmt_throw(self, s: ast.Throw) -> None:
        value = self.expr(s.value)
        sc = self.scope
        if self.handlers:
            self.burn_id()
            ctx = self.handlers[-1]
            side = sc.changes_since(ctx.depth, ctx.size)
            side.put(0, sc.ctrl)  # (dead iff control is None: a side always names it)
            # The thrown value rides in the slot just past the try's variables, so the catch's merge
            # makes a Phi of it like of any other variable.
            side.put(ctx.size, value)
            ctx.caught.append(side)
        else:
            # No enclosing try in this function: the exception leaves it, an exit like Return.
            self.exits.append(self.p(Throw(self.g, sc.ctrl, sc.mem, value)))
        sc.ctrl = None

    def stmt_if(self, s: ast.If) -> None:
        pred = self.expr(s.cond)
        # With peepholes on, a constant predicate yields only one live projection: the other is
        # None and its side is never built (Click & Paleczny: parse-time dead-code elimination).
        t, f = self.branch(pred)
        size = self.scope.size()
        self.burn_id()
        sc = self.scope
        # Parse the then-side, record what it changed, undo it; the else-side then starts from
        # the same table. Each side costs only the slots it wrote.
        depth = sc.push()
        sc.ctrl = t
        if t is not None:
            self.block(s.then)
        then_side = sc.changes_since(depth, size)
        sc.undo()
        sc.ctrl = f
        if f is not None and s.orelse is not None:
            if isinstance(s.orelse, ast.Block):
                self.block(s.orelse)
            else:
                with contextlib.suppress(Dead):
                    self.stmt(s.orelse)
        # Changes past ``size`` are the branches' own locals: out of scope after the if.
        else_side = sc.changes_since(depth, size)
        sc.undo()
        sc.pop()
        self.g.line = s.pos.line  # the merge (Region, Phis) belongs to the if
        self.merge([then_side, else_side], size)

    def stmt_while(self, s: ast.While) -> None:
        self.loop(s.cond, s.body, None)

    def stmt_for(self, s: ast.For) -> None:
        size = self.scope.size()
        if s.init is not None:
            self.stmt(s.init)
        self.g.line = s.pos.line
        # The init's variable lives in the loop's scope; truncating after drops it.
        self.loop(s.cond, s.body, s.step)
        self.scope.truncate(size)

    def stmt_break(self, s: ast.Break) -> None:
        self.burn_id()
        ctx = self.loops[-1]
        # A break is a side of the loop's exit merge, a continue one of the merge before the
        # step; both end this path (control None).
        ctx.breaks.append(self.scope.changes_since(ctx.depth, ctx.size))
        self.scope.ctrl = None

    def stmt_continue(self, s: ast.Continue) -> None:
        self.burn_id()
        ctx = self.loops[-1]
        ctx.continues.append(self.scope.changes_since(ctx.depth, ctx.size))
        self.scope.ctrl = None

    def stmt_try(self, s: ast.Try) -> None:
        sc = self.scope
        size = sc.size()
        depth = sc.push()
        ctx = _TryContext(depth, size, [])
        self.handlers.append(ctx)
        # While the body is built every throw and throwing call registers a side in ctx.caught.
        self.block(s.body)
        self.handlers.pop()
        # Nothing in the body can throw: the catch is unreachable and never built.
        if not ctx.caught:
            sc.pop()
            return
        # The try's normal end is one side of the final merge; the catch's end is the other.
        try_end = sc.changes_since(depth, size)
        sc.undo()
        # the thrown value becomes the catch variable's slot
        exc = self.merge(ctx.caught, size + 1, (s.name, INT_BOTTOM)).get(size)
        sc.define(s.var, exc, s.name, INT_BOTTOM)
        if not sc.dead():
            self.block(s.handler)
        sc.truncate(size)
        handler_end = sc.changes_since(depth, size)
        sc.undo()
        sc.pop()
        self.merge([try_end, handler_end], size)

    # -- loops ------------------------------------------------------------------------

    def loop(self, cond: ast.Expr | None, body: ast.Block, step: ast.Stmt | None) -> None:
        sc = self.scope
        size = sc.size()
        line = self.g.line  # the loop statement's: its merges belong to it
        # The back edge (input 2) is not known until the body is parsed. Click & Paleczny: a
        # Loop and its phis are built "in progress" and completed at the end of the body.
        loop = self.p(Loop(self.g, None, sc.ctrl, None))
        assert isinstance(loop, Loop)  # no back edge yet: in progress, no rule applies
        slots = self._loop_slots(sc, size, cond, body, step)
        # Node ids as if every variable in scope had a phi (the one for slot i is number
        # base + i - 1): the ids, and so the printed graphs, do not depend on which trivial
        # phis were never made.
        base = self.g.next_id
        # A Phi whose back input is None is in progress too: every use the body makes of the
        # variable reads the phi, so the back value can be filled in later.
        for i in slots:  # memory and every variable the loop mentions; cleaned up later
            self.g.next_id = base + i - 1
            phi = Phi(self.g, loop, sc.inputs[i], None, declared=sc.types[i],
                      name=sc.names[i])
            sc.write(i, self.p(phi))
            assert self.g.next_id == base + i, "a loop phi must not make other nodes"
        self.g.next_id = max(self.g.next_id, base + size - 1)
        sc.ctrl = loop
        self.burn_id()
        # The Delta holds the phis as inputs, so a peephole that replaces one while the body is
        # built updates this record as well.
        head = Delta(self.g)  # remembers the phis for the back edge
        for i in slots:
            head.put(i, sc.inputs[i])
        t: Node | None
        f: Node | None
        if cond is None:
            t, f = loop, None
        else:
            try:
                t, f = self.branch(self.expr(cond))
            except Dead:
                t, f = None, None
        # from here on every side is a change relative to the scope after the condition
        self.burn_id()
        # The loop's false projection is the first exit; each break adds another side.
        exit_side = Delta(self.g)
        exit_side.put(0, f)
        depth = sc.push()
        sc.ctrl = t
        context = _LoopContext(depth, size, [exit_side], [])
        self.loops.append(context)
        if t is not None:
            self.block(body)
        self.loops.pop()
        current = sc.changes_since(depth, size)
        sc.undo()
        self.g.line = line
        # The body's end and every continue meet before the step (``for``'s update), which
        # therefore runs on every path back to the head.
        self.merge([current, *context.continues], size)
        if step is not None and not sc.dead():
            with contextlib.suppress(Dead):
                self.stmt(step)
        if all(sc.value(d, 0) is None for d in context.breaks) and not sc.dead():
            # an endless loop: give it an exit edge control never takes, so that Stop
            # still reaches the loop and the memory effects inside it
            self.exits.append(self.p(Never(self.g, loop, head.value(1))))
        # What the body (and step) leaves in each slot is the back edge's value for its phi.
        back = sc.changes_since(depth, size)
        back_values = {i: sc.inputs[i] for i in [0, *slots]}
        sc.undo()
        sc.pop()
        back_dropped = [n for n in back.inputs if n is not None]
        back.release()
        self.g.line = line
        # Only now is the loop complete; then its exits (the false projection, every break) merge.
        self._close_loop(loop, head, back_values, back_dropped, slots)
        self.merge(context.breaks, size)

    @staticmethod
    def _loop_slots(entry: Scope, size: int, cond: ast.Expr | None, body: ast.Block,
                    step: ast.Stmt | None) -> list[int]:
        """The scope slots that get a phi at a loop head: memory (slot 1) and the variables
        the loop names. One it never names would only get ``phi(x, itself)``, and making
        those costs every variable in scope at every loop."""
        named = (entry.slot_of(var) for var in mentioned_vars(cond, body, step))
        return [1, *sorted(i for i in named if i is not None and 2 <= i < size)]

    def _close_loop(self, loop: Loop, head: Delta, back: dict[int, Node | None],
                    back_dropped: list[Node], slots: list[int]) -> None:
        """Fill in the back edge (``back``: the values at the end of the body) and drop the
        phis that turned out trivial. ``back_dropped``: the body's own values, which die
        unless the back edge uses them."""
        # A phi a peephole already replaced (it no longer sits on this loop) needs no back input.
        phis = [(i, head.value(i)) for i in slots]
        back_dead = back[0] is None
        loop.set_input(2, back[0])
        for i, phi in phis:
            if isinstance(phi, Phi) and phi.inputs[0] is loop:
                phi.set_input(2, None if back_dead else back[i])
        head_values = [n for n in head.inputs if n is not None]
        head.release()
        if self.optimize:
            for n in [*back_dropped, *head_values]:
                self.peep.discard(n)
        if not self.optimize:
            return
        # Each phi becomes its entry value and the Loop its entry control; forget() first takes
        # the phi out of the GVN table, since it is about to go.
        if loop.inputs[2] is None:  # the body never comes back: not a loop after all
            entry = loop.operand(1)
            for phi in loop.phis():
                self.peep.forget(phi)
                phi.replace_with(phi.operand(1))
                self.peep.discard(phi)
            loop.replace_with(entry)
            self.peep.discard(loop)
            return
        live = [p for _, p in phis if isinstance(p, Phi) and p.inputs[0] is loop]
        # A phi whose back value is the phi itself (``phi(x, itself)``: the loop never changes
        # the variable) is replaced by its entry value now, and the list is tried once more when
        # the function is finished, after later peepholes changed the phis' inputs.
        self.phis_to_clean.extend(live)
        self.remove_trivial_phis(live)

    # -- expressions ------------------------------------------------------------------

    def expr(self, e: ast.Expr) -> Node:
        match e:  # one case per expression class of the AST
            case ast.IntLit():
                return self.expr_int_lit(e)
            case ast.BoolLit() | ast.FloatLit():
                return self.expr_bool_lit(e)
            case ast.Name():
                return self.expr_name(e)
            case ast.Unary():
                return self.expr_unary(e)
            case ast.Binary():
                return self.expr_binary(e)
            case ast.Call():
                return self.expr_call(e)
            case ast.Index():
                return self.expr_index(e)
            case ast.Field():
                return self.expr_field(e)
            case ast.Len():
                return self.expr_len(e)
            case ast.NewArray():
                return self.expr_new_array(e)
            case ast.NewStruct():
                return self.expr_new_struct(e)
            case _:
                raise TypeError(f"cannot build {type(e).__name__}")

    def expr_int_lit(self, e: ast.IntLit) -> Node:
        return self.const(e.value)

    def expr_bool_lit(self, e: ast.BoolLit | ast.FloatLit) -> Node:
        return self.const(e.value)

    def expr_name(self, e: ast.Name) -> Node:
        return self.scope.lookup(e.var)

    def expr_unary(self, e: ast.Unary) -> Node:
        x = self.expr(e.operand)
        row = opcodes.tiny_row(e.op, 1, isinstance(type_of(e.operand), tt.FloatType))
        # An operator that may trap (a row with a divisor, like div and rem) gets an explicit
        # zero test (If + Trap) and is pinned below it -- unless its divisor is a known
        # nonzero constant, when it floats like any other operator.
        if row.may_trap:
            return self.divide(row.name, x, None, e.pos)
        # Pure operators take no control (input 0 None): they float, and scheduling later
        # places them where their uses need them.
        return self.p(operator_node(self.g, None, row.name, x))

    def expr_binary(self, e: ast.Binary) -> Node:
        row = opcodes.tiny_row(e.op, 2, isinstance(type_of(e.left), tt.FloatType))
        if row.short_circuit is not None:
            return self.short_circuit(e, row.short_circuit)
        left = self.expr(e.left)
        right = self.expr(e.right)
        if row.may_trap:
            return self.divide(row.name, left, right, e.pos)
        return self.p(operator_node(self.g, None, row.name, left, right,
                                    classes=self.options.classes))

    def short_circuit(self, e: ast.Binary, done_value: bool) -> Node:
        """``a && b`` / ``a || b``: ``done_value`` is the left value that decides alone
        (false for &&, true for ||)."""
        left = self.expr(e.left)
        # ``a && b`` is control flow, not an operator: the right side may trap or have effects,
        # so it runs only on one projection of the left value.
        t, f = self.branch(left)
        sc = self.scope
        size = sc.size()
        self.burn_id()
        # the side that decides without looking right: false for &&, true for ||
        if done_value is False:
            rhs_ctrl, done_ctrl = t, f
        else:
            rhs_ctrl, done_ctrl = f, t
        # The deciding side carries the constant result in the extra slot past the scope's end.
        done = Delta(self.g)
        done.put(0, done_ctrl)
        if done_ctrl is not None:
            done.put(size, self.const(done_value))
        depth = sc.push()
        sc.ctrl = rhs_ctrl
        right: Node | None = None
        if rhs_ctrl is not None:
            with contextlib.suppress(Dead):
                right = self.expr(e.right)
        rhs = sc.changes_since(depth, size)
        if right is not None:
            rhs.put(size, right)
        sc.truncate(size)
        sc.undo()
        sc.pop()
        extra = ("$" + e.op, BOOL_BOTTOM)
        # Both sides dead: there is no value to return; the statement is abandoned (Dead).
        if sc.value(rhs, 0) is None and done_ctrl is None:
            self.merge([rhs, done], size)
            raise Dead
        value = self.merge([rhs, done], size + 1, extra).get(size)
        assert value is not None, "a live && or || has a value"
        return value

    def expr_call(self, e: ast.Call) -> Node:
        args = [self.expr(a) for a in e.args]
        callee = ast.checked(e.fn)
        ret = None if isinstance(callee.ret, tt.VoidType) else callee.ret
        before = None
        # Inside a try, a call is also a throw site: snapshot the scope before it, so the catch
        # side sees the variables as they were at the call.
        if self.handlers:
            self.burn_id()
            ctx = self.handlers[-1]
            before = self.scope.changes_since(ctx.depth, ctx.size)
        result, exc, thrown = self.call(e.name, args, ret, catches=before is not None)
        if before is not None:  # inside try: an exception in the callee goes to the catch
            before.set(0, exc)
            before.set(1, self.mem)
            before.put(ctx.size, thrown)
            ctx.caught.append(before)
        # A void call used as a statement still needs a node to return; its memory state is one
        # (the result is dropped by ExprStmt).
        return result if result is not None else self.mem

    def expr_index(self, e: ast.Index) -> Node:
        base, index = self.expr(e.base), self.expr(e.index)
        # The emitter adds the bounds check before the load (and, for an array of references,
        # the unset-slot test after it): explicit control again.
        return self.load_element(base, index, ast.checked(e.ty), e.pos)

    def expr_field(self, e: ast.Field) -> Node:
        return self.load_field(self.expr(e.base), e.name, ast.checked(e.ty))

    def expr_len(self, e: ast.Len) -> Node:
        return self.p(Len(self.g, None, self.expr(e.operand)))

    def expr_new_array(self, e: ast.NewArray) -> Node:
        return self.new_array(self.expr(e.length), e.elem, e.pos)

    def expr_new_struct(self, e: ast.NewStruct) -> Node:
        given = {name: self.expr(value) for name, value, _ in e.fields}
        names = [f for f, _, _ in self.program.structs[e.name].fields]
        return self.new_struct(e.name, names, [given[n] for n in names])


def build_graphs(program: ast.Program, optimize: bool = True,
                 options: BuildOptions | None = None) -> SeaOfNodes:
    """Every function of a checked Tiny program as a sea-of-nodes graph."""
    # Expressions are built recursively (deep nesting needs stack), and the graph makes
    # many cyclic objects the garbage collector would walk again and again for nothing.
    with deep_recursion(), paused_gc():
        functions = {name: GraphBuilder(program, fn, optimize, options).build()
                     for name, fn in program.functions.items()}
    return SeaOfNodes(functions, program.source, optimize)
