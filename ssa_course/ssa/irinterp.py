"""The IRCode interpreter: runs Julia-style IR block by block, on an explicit stack.

On entering a block, all its phis read the values of the edge control came along, at
once (simultaneous semantics). An Upsilon stores into its PhiC's hidden slot; a PhiC
reads the most recently executed of its Upsilons. ``enter`` pushes a handler (the catch
block), ``leave`` pops it, ``throw`` unwinds to the innermost handler -- through calls
if needed. Each executed statement counts one step (phis and PiNodes included).
"""

from __future__ import annotations

from ssa_course import opcodes
from ssa_course.errors import RuntimeTrap
from ssa_course.quads.interp import run_memory_op
from ssa_course.quads.memory import SHAPES as MEMORY_SHAPES
from ssa_course.quads.memory import Memory
from ssa_course.runtime import (
    Heap,
    Limits,
    Output,
    TinyStruct,
    Value,
    check_index,
    format_print,
    load_element,
    stack_overflow,
    step_limit_exceeded,
    uncaught,
)
from ssa_course.ssa.ircode import (
    UNDEF,
    Argument,
    EnterNode,
    Expr,
    GotoIfNot,
    GotoNode,
    IRCode,
    LeaveNode,
    PhiCNode,
    PhiNode,
    PiNode,
    ReturnNode,
    SSAValue,
    UpsilonNode,
)
from ssa_course.tiny.types import ArrayType, element_zero


def _elem_zero(ty: object) -> object:
    return element_zero(ty.elem if isinstance(ty, ArrayType) else None)


_NO_VALUE = object()  # a phi with no value along the edge taken (Bril allows it until read)


class _Frame:
    __slots__ = ("ir", "args", "vals", "block", "prev", "i", "handlers", "exc", "dest",
                 "ups", "clock")

    def __init__(self, ir: IRCode, args: list[Value], dest: int | None):
        self.ir = ir
        self.args = args  # Argument(n) reads args[n - 1]
        self.vals: dict[int, Value] = {}  # statement id -> its value (SSA: written once)
        self.block = 1  # the running block (1-based, as Julia numbers them)
        self.prev = 0  # the block control came from: the edge a phi reads
        self.i = ir.blocks[0].start if ir.blocks else 1  # the next statement to run
        self.handlers: list[int] = []  # catch blocks of the active ``enter``s, innermost last
        self.exc = 0  # the exception value a catch block reads
        self.dest = dest  # where the caller stores our result (a statement id)
        self.ups: dict[int, tuple[int, Value]] = {}  # upsilon id -> (time, value)
        self.clock = 0  # ticks at each Upsilon: a PhiC reads the one executed last


def run_ircode(program: dict[str, IRCode], args: list[Value], out: Output,
               limits: Limits) -> int:
    """Run ``main`` of ``program`` (an :class:`~ssa_course.ssa.ircode.IRProgram`, or a plain
    dict when no structs are used); returns the number of statements executed."""
    structs = getattr(program, "structs", {})
    # the call stack is a list, not Python recursion: deep recursion in the program is
    # stopped by the depth limit with a message, never by a Python RecursionError
    stack = [_Frame(program["main"], list(args), None)]
    steps = 0
    heap = Heap(limits)
    mem = Memory(limits)  # Bril's alloc/free heap
    rows = {op.name: op for op in opcodes.all_opcodes() if op.bril}  # the value operators

    # An operand is an SSA value (a statement's result), an argument, or a literal.
    def val(f: _Frame, v: object) -> Value:
        if isinstance(v, SSAValue):
            try:
                return f.vals[v.id]
            except KeyError:
                raise RuntimeTrap(f"undefined value %{v.id} in {f.ir.name}") from None
        if isinstance(v, Argument):
            return f.args[v.n - 1]
        if v == UNDEF and isinstance(v, str):
            raise RuntimeTrap(f"undefined value in {f.ir.name}")
        return v

    def enter_block(f: _Frame, target: int) -> None:
        f.prev, f.block = f.block, target
        f.i = f.ir.blocks[target - 1].start
        # all phis at the top read their edge's values first, then assign
        # (a phi may read another phi of the same block: the swap a, b = b, a is
        # %2 = phi(.., %3), %3 = phi(.., %2), so no phi may be written before all are read)
        blk = f.ir.blocks[target - 1]
        i = blk.start
        pending: list[tuple[int, Value]] = []
        while i <= blk.stop and isinstance(f.ir.stmts[i - 1], PhiNode):
            phi = f.ir.stmts[i - 1]
            v: Value = _NO_VALUE
            for e, x in zip(phi.edges, phi.values, strict=True):
                if e == f.prev:
                    if not (isinstance(x, str) and x == UNDEF):
                        v = f.vals.get(x.id, _NO_VALUE) if isinstance(x, SSAValue) \
                            else val(f, x)
                    break
            pending.append((i, v))
            i += 1
        for i2, v in pending:
            if v is _NO_VALUE:
                # no value on this edge: forget the previous trip's, so a read of it
                # fails as the program's error instead of reading a stale value
                f.vals.pop(i2, None)
            else:
                f.vals[i2] = v

    # The loop: one statement per iteration of the running frame; a call pushes a frame
    # and switches to it, a return pops back to the caller's.
    frame = stack[0]
    while True:
        f = frame
        blk = f.ir.blocks[f.block - 1]
        if f.i > blk.stop:  # fell through the end of a block
            if f.block < len(f.ir.blocks) and blk.succs == [f.block + 1]:
                enter_block(f, f.block + 1)
                continue
            if f.block >= len(f.ir.blocks):
                result = None  # fell off the end of the function
            else:
                enter_block(f, blk.succs[0])
                continue
        else:
            idx = f.i
            s = f.ir.stmts[idx - 1]
            f.i += 1
            steps += 1
            if steps > limits.steps:
                raise step_limit_exceeded()
            if isinstance(s, PhiNode):
                continue  # already assigned when the block was entered
            if isinstance(s, Expr):
                head = s.head
                pos = f.ir.lines[idx - 1]
                value_op = rows.get(head)
                if value_op is not None:  # a row of the opcode table
                    if value_op.may_trap:  # apply tests it
                        f.vals[idx] = value_op.apply([val(f, a) for a in s.args], pos)
                    elif value_op.arity == 2:
                        f.vals[idx] = value_op.evaluate(val(f, s.args[0]), val(f, s.args[1]))
                    else:
                        f.vals[idx] = value_op.evaluate(val(f, s.args[0]))
                elif head == "print":
                    out.write(format_print([val(f, a) for a in s.args]))
                elif head == "call":
                    callee = program.get(s.func) if s.func is not None else None
                    if callee is None:
                        raise RuntimeTrap(f"undefined function '@{s.func}'")
                    if len(stack) >= limits.depth:
                        raise stack_overflow()
                    frame = _Frame(callee, [val(f, a) for a in s.args], idx)
                    stack.append(frame)
                    continue
                elif head == "alen":
                    f.vals[idx] = len(val(f, s.args[0]).items)
                elif head == "aload":
                    f.vals[idx] = load_element(val(f, s.args[0]), val(f, s.args[1]), pos)
                elif head == "astore":
                    arr, i, v = (val(f, a) for a in s.args)
                    check_index(arr, i, pos)
                    arr.items[i] = v
                elif head == "newarr":
                    f.vals[idx] = heap.new_array(val(f, s.args[0]),
                                                 _elem_zero(f.ir.types[idx - 1]), pos)
                elif head == "newstruct":
                    name = str(f.ir.types[idx - 1])
                    fields = [n for n, _ in structs[name].fields]
                    f.vals[idx] = TinyStruct(name, {n: val(f, a) for n, a in
                                                    zip(fields, s.args, strict=True)})
                elif head == "getf":
                    f.vals[idx] = val(f, s.args[0]).fields[s.field]
                elif head == "setf":
                    val(f, s.args[0]).fields[s.field] = val(f, s.args[1])
                elif head == "checkdef":  # a read that may find no value (Bril)
                    if val(f, s.args[0]) is not True:
                        raise RuntimeTrap(f"undefined variable '{s.field}'")
                elif head in MEMORY_SHAPES:  # Bril's memory and char extensions
                    value = run_memory_op(head, [val(f, a) for a in s.args], (), mem, pos)
                    if MEMORY_SHAPES[head][1]:
                        f.vals[idx] = value
                elif head == "the_exception":
                    f.vals[idx] = f.exc
                elif head == "throw":
                    value = val(f, s.args[0])
                    while not frame.handlers:
                        stack.pop()
                        if not stack:
                            raise uncaught(value)
                        frame = stack[-1]
                    target = frame.handlers.pop()
                    frame.exc = value
                    enter_block(frame, target)
                    continue
                else:
                    raise RuntimeTrap(f"unknown operation '{head}' in {f.ir.name}")
                continue
            if isinstance(s, GotoNode):
                enter_block(f, s.label)
                continue
            if isinstance(s, GotoIfNot):
                if val(f, s.cond):
                    enter_block(f, f.block + 1)
                else:
                    enter_block(f, s.dest)
                continue
            if isinstance(s, PiNode):
                f.vals[idx] = val(f, s.val)
                continue
            if isinstance(s, UpsilonNode):
                f.clock += 1
                v = s.val
                # a variable not assigned yet on this path (Bril) travels as "no value":
                # only a read of it in the handler is an error, as in every other stage
                unset = isinstance(v, str) and v == UNDEF \
                    or isinstance(v, SSAValue) and v.id not in f.vals  # (a str: a char)
                f.ups[idx] = (f.clock, UNDEF if unset else val(f, v))
                continue
            if isinstance(s, PhiCNode):
                latest = max((f.ups[u.id] for u in s.values if u.id in f.ups),
                             default=None, key=lambda tv: tv[0])
                if latest is None or (isinstance(latest[1], str) and latest[1] == UNDEF):
                    f.vals.pop(idx, None)
                else:
                    f.vals[idx] = latest[1]
                continue
            if isinstance(s, EnterNode):
                f.handlers.append(s.catch_dest)
                f.vals[idx] = len(f.handlers)
                enter_block(f, f.block + 1)
                continue
            if isinstance(s, LeaveNode):
                f.handlers.pop()
                continue
            if s is None:
                continue
            if not isinstance(s, ReturnNode):
                raise RuntimeTrap(f"cannot run statement %{idx} in {f.ir.name}")
            result = None if s.val is None else val(f, s.val)
        # return from f
        stack.pop()
        if not stack:
            mem.check_all_freed()  # as brili: every block freed when main returns
            return steps
        frame = stack[-1]
        if f.dest is not None:
            frame.vals[f.dest] = result
