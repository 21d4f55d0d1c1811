"""The quads interpreter: Bril's semantics plus ssa_course's extensions, on an explicit stack.

Each function is first *resolved* once: labels disappear (a jump target becomes an
instruction index), each instruction becomes a small tuple, and falling into a label is
simply running the next instruction, exactly like Bril. The run loop then keeps its own
stack of frames, so a Tiny recursion 50,000 deep is 50,000 list entries, not Python frames.

Every executed instruction counts once toward the dynamic instruction count that
``--profile`` reports (Bril's ``total_dyn_inst``) and toward the step limit.
"""

from __future__ import annotations

from typing import Any

from ssa_course import opcodes
from ssa_course.errors import Pos, RuntimeTrap
from ssa_course.quads import memory
from ssa_course.quads.ir import Function, Instr, Label, Program
from ssa_course.runtime import (
    Heap,
    Limits,
    Output,
    TinyArray,
    TinyStruct,
    Value,
    check_index,
    format_print,
    load_element,
    paused_gc,
    stack_overflow,
    step_limit_exceeded,
    tiny_div,
    tiny_rem,
    uncaught,
    wrap,
)
from ssa_course.tiny.types import BOOL, INT, ArrayType, Type, element_zero

# Opcodes of the resolved form (small ints are faster to compare than strings). The
# value operators Bril and Tiny started with have a fast path each (tests check that they
# agree with the opcode table); any other row of the table runs as VALUE, through its
# ``apply``.
(CONST, ID, ADD, SUB, MUL, DIV, REM, EQ, LT, GT, LE, GE, NOT, AND, OR, JMP, BR, CALL, RET,
 PRINT, NOP, NEWARR, ALEN, ALOAD, ASTORE, NEWSTRUCT, GETF, SETF, ENTER, LEAVE, THROW,
 CATCH, PHIS, SET, GET, UNDEF, CHECKDEF, VALUE, LABEL, MEM) = range(40)

_CODES = {
    "const": CONST, "id": ID, "add": ADD, "sub": SUB, "mul": MUL, "div": DIV, "rem": REM,
    "eq": EQ, "lt": LT, "gt": GT, "le": LE, "ge": GE, "not": NOT, "and": AND, "or": OR,
    "jmp": JMP, "br": BR, "call": CALL, "ret": RET, "print": PRINT, "nop": NOP,
    "newarr": NEWARR, "alen": ALEN, "aload": ALOAD, "astore": ASTORE,
    "newstruct": NEWSTRUCT, "getf": GETF, "setf": SETF, "enter": ENTER, "leave": LEAVE,
    "throw": THROW, "catch": CATCH, "phi": PHIS, "set": SET, "get": GET, "undef": UNDEF,
    "checkdef": CHECKDEF,
    **{op: MEM for op in memory.SHAPES},  # Bril's memory and char extensions: run_memory_op
}


class Resolved:
    """A function ready to run: ``code[i]`` is ``(opcode, dest, args, extra, instr)``;
    ``block_of[i]`` names the block (label) instruction ``i`` belongs to."""

    __slots__ = ("fn", "code", "params", "block_of")

    def __init__(self, fn: Function, code: list[tuple[Any, ...]], params: list[str],
                 block_of: list[str]):
        self.fn = fn
        self.code = code
        self.params = params
        self.block_of = block_of


def resolve(fn: Function, program: Program) -> Resolved:
    """Turn labels into instruction indices and instructions into tuples.

    The ``phi`` instructions at the top of a block (SSA form, lesson 03) become one
    ``PHIS`` tuple that assigns them all at once, reading the values of the edge control
    arrived on: Bril's ``phi`` with *simultaneous* semantics.
    """
    # Pass 1: where each label lands in the resolved code (a jump becomes "pc = k", no
    # name lookups while running). Labels take no slot, except the few _label_slots keeps.
    index: dict[str, int] = {}
    block_of: list[str] = []  # the label of the block each resolved instruction is in
    current = f"{fn.name}.entry"
    count = 0
    previous: Instr | Label | None = None
    slots = _label_slots(fn.body)
    for item in fn.body:
        if isinstance(item, Label):
            index[item.name] = count
            current = item.name
            if id(item) in slots:
                count += 1
                block_of.append(current)
        elif not (item.op == "phi" and isinstance(previous, Instr) and previous.op == "phi"):
            count += 1  # a run of phis is one resolved instruction
            block_of.append(current)
        previous = item
    # Pass 2: one tuple per instruction, with what the loop needs precomputed in
    # ``extra`` (a constant's value, jump targets, a callee's signature, ...)
    code: list[tuple[Any, ...]] = []
    prev_was_phi = False
    for item in fn.body:
        if not isinstance(item, Instr):
            if id(item) in slots:
                code.append((LABEL, None, (), None, item))
            prev_was_phi = False
            continue
        if item.op == "phi":
            # label of the edge -> the argument read when control came along it
            edge_map = dict(zip(item.labels, item.args, strict=False))
            if prev_was_phi:  # joins the run's PHIS tuple: assigned together
                dests, maps, _ = code[-1][3]
                dests.append(item.dest)
                maps.append(edge_map)
            else:
                # arriving without a jump means falling through from the block before
                pos = len(code)
                fallthrough = block_of[pos - 1] if pos > 0 else None
                code.append((PHIS, None, (), ([item.dest], [edge_map], fallthrough), item))
            prev_was_phi = True
            continue
        prev_was_phi = False
        op = _CODES.get(item.op)  # a small int: the loop compares ints, not strings
        extra: object = None
        if op is None:
            # a value operator without a fast path: its row of the opcode table
            # evaluates it (see the opcodes above)
            extra = opcodes.bril_op(item.op)
            if extra is None:
                raise RuntimeTrap(f"unknown operation '{item.op}' in @{fn.name}")
            op = VALUE
        elif op == CONST:
            extra = item.value
        elif op in (JMP, BR, ENTER):
            try:
                extra = tuple(index[label] for label in item.labels)
            except KeyError as e:
                raise RuntimeTrap(f"unknown label '.{e.args[0]}' in @{fn.name}") from None
        elif op == CALL:
            callee = program.functions.get(item.funcs[0])
            # (name, parameter types, return type): checked at each call, like brili
            extra = (item.funcs[0], [t for _, t in callee.params] if callee else [],
                     callee.ret if callee else None)
        elif op == NEWARR:
            extra = element_zero(item.type.elem if isinstance(item.type, ArrayType) else None)
        elif op in (GETF, SETF, CHECKDEF):
            extra = item.field
        elif op == MEM:
            extra = item.op
        elif op == NEWSTRUCT:
            struct = program.structs.get(str(item.type))
            extra = (str(item.type), [f for f, _ in struct.fields] if struct else [])
        code.append((op, item.dest, tuple(item.args), extra, item))
    return Resolved(fn, code, [name for name, _ in fn.params], block_of)


def _label_slots(body: list[Any]) -> set[int]:
    """The labels that get a code slot of their own (``LABEL``, not counted as a step):
    all but the last of two or more labels in a row before a ``phi``. A phi reads the
    edge of the label passed just before its own (Bril's rule), so jumping to ``.a`` in
    ``.a: .b: x = phi ... .a ...`` must be told from jumping to ``.b``."""
    out: set[int] = set()
    run: list[Any] = []
    for item in body:
        if isinstance(item, Label):
            run.append(item)
            continue
        if item.op == "phi" and len(run) > 1:
            out.update(id(label) for label in run[:-1])
        run = []
    return out


class Frame:
    __slots__ = ("res", "pc", "env", "dest", "dest_type", "handlers", "exc", "came",
                 "came_to", "shadow")

    def __init__(self, res: Resolved, env: dict[str, Value], dest: str | None,
                 dest_type: Type | None = None):
        self.res = res
        self.pc = 0
        self.env = env
        self.dest = dest  # where the caller wants our return value
        self.dest_type = dest_type  # ... and the type it declared for it
        self.shadow: dict[str, Value] = {}  # Bril's SSA ``set``/``get`` store, per call
        self.handlers: list[int] = []  # pcs of active catch handlers (innermost last)
        self.exc = 0  # the value a ``catch`` instruction reads
        self.came = -1  # while a callee runs: the index of the last jump taken here
        self.came_to = -1  # ... and where it went (phis use them to find their edge)


_UNDEF = object()  # a phi operand with no value on the edge taken


class _UndefValue:
    """The value of Bril's ``x: T = undef``: it may be copied (``id``, ``set``/``get``)
    but any other use is an error, as in brili. Operations on it raise ``TypeError``,
    which the run loop reports; the hot paths need no extra test."""

    __slots__ = ()

    def __bool__(self) -> bool:
        raise TypeError("undef")

    def __eq__(self, other: object) -> bool:
        raise TypeError("undef")

    __hash__ = object.__hash__

    def __str__(self) -> str:
        raise TypeError("undef")


UNDEF_VALUE = _UndefValue()


def _undefined(name: str) -> RuntimeTrap:
    return RuntimeTrap(f"undefined variable '{name}'")


def _has_type(value: Value, ty: Type | None) -> bool:
    """Does a runtime value fit a declared type? (brili checks ints and bools.)"""
    if ty == INT:
        return type(value) is int
    if ty == BOOL:
        return type(value) is bool
    return value is not UNDEF_VALUE


def _bad_operands(instr: Instr, env: dict[str, Value], fn: str) -> RuntimeTrap:
    for name in instr.args:  # an ``undef`` used, not copied: no value, as every stage says
        if env.get(name) is UNDEF_VALUE:
            return _undefined(name)
    return RuntimeTrap(f"bad operand types for '{instr.op}' in @{fn}")


def _check_return(frame: Frame, retval: Value, caller: str) -> None:
    """What brili checks when a call returns: a value exactly when the call has a
    destination, of the declared type."""
    name = frame.res.fn.name
    if frame.dest is None:
        if retval is not None:
            raise RuntimeTrap(f"@{name} returned a value, but the call in @{caller} has no "
                              "destination for it")
        return
    if retval is None:
        raise RuntimeTrap(f"@{name} returned no value, but the call in @{caller} expects one")
    if not _has_type(retval, frame.dest_type) or (
            frame.res.fn.ret is not None and frame.res.fn.ret != frame.dest_type):
        raise RuntimeTrap(f"@{name} returned a value of the wrong type for the call in "
                          f"@{caller}")


def run_memory_op(op: str, values: list[Value], names: tuple[str, ...],
                  mem: memory.Memory, pos: Pos | None) -> Value:
    """One operation of Bril's memory or char extension (a wrong operand type is Python's
    TypeError, reported by the run loop as bad operand types)."""
    if any(v is UNDEF_VALUE for v in values):
        raise TypeError(op)
    if op == "load":
        return mem.load(values[0], pos)
    if op == "store":
        mem.store(values[0], values[1], pos)
        return None
    if op == "ptradd":
        return memory.ptradd(values[0], values[1])
    if op == "alloc":
        return mem.alloc(values[0], pos)
    if op == "free":
        mem.free(values[0], pos)
        return None
    if op == "char2int":
        if not isinstance(values[0], str):
            raise TypeError(op)
        return ord(values[0])
    if op == "int2char":
        if type(values[0]) is not int:
            raise TypeError(op)
        return memory.int2char(values[0], pos)
    a, b = values
    if not isinstance(a, str) or not isinstance(b, str):
        raise TypeError(op)
    return memory.char_compare(op, a, b)


def run_quads(program: Program, args: list[Value], out: Output, limits: Limits) -> int:
    """Run ``@main(*args)``; returns the number of instructions executed.

    Raises :class:`RuntimeTrap` on a runtime error, an uncaught exception, or a limit.
    """
    cache: dict[str, Resolved] = {}

    def get(name: str) -> Resolved:
        res = cache.get(name)
        if res is None:
            fn = program.functions.get(name)
            if fn is None:
                raise RuntimeTrap(f"undefined function '@{name}'")
            # Resolving builds the run's own form of the function: with the cyclic GC
            # paused, like every representation (pipeline.Compilation.cached). The run
            # itself keeps the collector on: a program's structs may form cycles.
            with paused_gc():
                res = cache[name] = resolve(fn, program)
        return res

    main = get("main")
    frame = Frame(main, dict(zip(main.params, args, strict=False)), None)
    stack: list[Frame] = [frame]  # the call stack; its top is the running frame
    # The running frame's fields live in locals while it runs (a local is faster than
    # an attribute in this loop): a call saves them into its Frame, a return restores.
    code, env = main.code, frame.env
    pc = 0
    steps = 0
    max_steps = limits.steps
    max_depth = limits.depth
    heap = Heap(limits)
    mem = memory.Memory(limits)  # Bril's alloc/free heap
    n = len(code)
    write = out.write
    block_of = main.block_of
    came = came_to = -1  # the last jump taken in this frame, and its target

    # The dispatch loop: fetch, count the step, run; the most frequent ops are tested
    # first and ``continue`` at once.
    while True:
        if pc >= n:  # fell off the end: return nothing
            retval = None
            op = -1
        else:
            op, dest, a, extra, instr = code[pc]
            steps += 1  # (``--profile``'s total_dyn_inst; a LABEL gives its step back)
            if steps > max_steps and op != LABEL:
                raise step_limit_exceeded()
            pc += 1
            try:
                if op == ADD:
                    env[dest] = wrap(env[a[0]] + env[a[1]])
                    continue
                if op == CONST:
                    env[dest] = extra
                    continue
                if op == BR:
                    came = pc - 1
                    cond = env[a[0]]
                    if cond is True:
                        pc = came_to = extra[0]
                    elif cond is False:
                        pc = came_to = extra[1]
                    else:  # brili: "br argument 0 must be a bool"
                        raise TypeError("br")
                    continue
                if op == JMP:
                    came = pc - 1
                    pc = came_to = extra[0]
                    continue
                if op == ID:
                    env[dest] = env[a[0]]
                    continue
                if op == LT:
                    env[dest] = env[a[0]] < env[a[1]]
                    continue
                if op == SUB:
                    env[dest] = wrap(env[a[0]] - env[a[1]])
                    continue
                if op == MUL:
                    env[dest] = wrap(env[a[0]] * env[a[1]])
                    continue
                if op == EQ:
                    x, y = env[a[0]], env[a[1]]
                    env[dest] = x is y if isinstance(x, TinyArray | TinyStruct) else x == y
                    continue
                if op == LE:
                    env[dest] = env[a[0]] <= env[a[1]]
                    continue
                if op == GT:
                    env[dest] = env[a[0]] > env[a[1]]
                    continue
                if op == GE:
                    env[dest] = env[a[0]] >= env[a[1]]
                    continue
                if op == NOT:
                    env[dest] = not env[a[0]]
                    continue
                if op == AND:
                    env[dest] = env[a[0]] and env[a[1]]
                    continue
                if op == OR:
                    env[dest] = env[a[0]] or env[a[1]]
                    continue
                if op == DIV:
                    env[dest] = tiny_div(env[a[0]], env[a[1]], instr.pos)
                    continue
                if op == REM:
                    env[dest] = tiny_rem(env[a[0]], env[a[1]], instr.pos)
                    continue
                if op == ALOAD:
                    env[dest] = load_element(env[a[0]], env[a[1]], instr.pos)
                    continue
                if op == ASTORE:
                    array, i, v = env[a[0]], env[a[1]], env[a[2]]
                    if v is UNDEF_VALUE:  # storing an undef uses it (every stage agrees)
                        raise _bad_operands(instr, env, frame.res.fn.name)
                    check_index(array, i, instr.pos)
                    array.items[i] = v
                    continue
                if op == ALEN:
                    env[dest] = len(env[a[0]].items)
                    continue
                if op == GETF:
                    env[dest] = env[a[0]].fields[extra]
                    continue
                if op == SETF:
                    obj, v = env[a[0]], env[a[1]]  # (nothing assigned is found first)
                    if v is UNDEF_VALUE:
                        raise _bad_operands(instr, env, frame.res.fn.name)
                    obj.fields[extra] = v
                    continue
                if op == NEWARR:
                    env[dest] = heap.new_array(env[a[0]], extra, instr.pos)
                    continue
                if op == NEWSTRUCT:
                    name, fields = extra
                    values = [env[x] for x in a]  # (nothing assigned is found first)
                    if any(v is UNDEF_VALUE for v in values):
                        raise _bad_operands(instr, env, frame.res.fn.name)
                    env[dest] = TinyStruct(name, dict(zip(fields, values, strict=False)))
                    continue
                if op == VALUE:
                    env[dest] = extra.apply([env[x] for x in a], instr.pos)
                    continue
                if op == PRINT:
                    write(format_print([env[x] for x in a]))
                    continue
                if op == MEM:
                    value = run_memory_op(extra, [env[x] for x in a], a, mem, instr.pos)
                    if dest is not None:
                        env[dest] = value
                    continue
                if op == NOP:
                    continue
                if op == LABEL:  # a label passed on the way to a phi: no step
                    steps -= 1
                    continue
                if op == CHECKDEF:
                    if env[a[0]] is not True:
                        raise _undefined(extra)
                    continue
                if op == CALL:
                    fname, ptypes, _ = extra
                    callee = get(fname)
                    values = [env[x] for x in a]
                    if len(values) != len(callee.params):
                        raise RuntimeTrap(f"@{fname} takes {len(callee.params)} arguments, "
                                          f"{len(values)} given")
                    for v, t, x in zip(values, ptypes, a, strict=True):
                        if v is UNDEF_VALUE:
                            raise _undefined(x)
                        if not _has_type(v, t):
                            raise RuntimeTrap(f"argument of the wrong type for @{fname} "
                                              f"(called from @{frame.res.fn.name})")
                    if len(stack) >= max_depth:
                        raise stack_overflow()
                    frame.pc = pc
                    frame.came, frame.came_to = came, came_to
                    frame = Frame(callee, dict(zip(callee.params, values, strict=True)), dest,
                                  instr.type)
                    stack.append(frame)
                    code, env, pc, n = callee.code, frame.env, 0, len(callee.code)
                    block_of, came, came_to = callee.block_of, -1, -1
                    continue
                if op == ENTER:
                    frame.handlers.append(extra[1])
                    came = pc - 1
                    pc = came_to = extra[0]
                    continue
                if op == PHIS:
                    dests, maps, fallthrough = extra
                    steps += len(dests) - 1
                    pred = block_of[came] if came_to == pc - 1 else fallthrough
                    values = [env.get(m.get(pred, ""), _UNDEF) for m in maps]
                    for d, v in zip(dests, values, strict=True):
                        if v is _UNDEF:
                            env.pop(d, None)  # undefined along this edge (Bril: allowed)
                        else:
                            env[d] = v
                    continue
                if op == LEAVE:
                    frame.handlers.pop()
                    continue
                if op == CATCH:
                    env[dest] = frame.exc
                    continue
                if op == SET:
                    frame.shadow[a[0]] = env[a[1]]
                    continue
                if op == GET:
                    if dest not in frame.shadow:
                        raise RuntimeTrap(f"'get' of '{dest}' with no 'set' before it in "
                                          f"@{frame.res.fn.name}")
                    env[dest] = frame.shadow[dest]
                    continue
                if op == UNDEF:
                    env[dest] = UNDEF_VALUE
                    continue
                if op == THROW:
                    value = env[a[0]]
                    if value is UNDEF_VALUE:
                        raise _undefined(a[0])
                    came = pc - 1  # the handler's phis come from the throwing point
                    while not frame.handlers:
                        stack.pop()
                        if not stack:
                            raise uncaught(value)
                        frame = stack[-1]
                        came = frame.pc - 1  # ... which is the call, in an outer frame
                    pc = came_to = frame.handlers.pop()
                    frame.exc = value
                    code, env, n = frame.res.code, frame.env, len(frame.res.code)
                    block_of = frame.res.block_of
                    continue
                # RET
                retval = env[a[0]] if a else None
                if retval is UNDEF_VALUE:
                    raise _undefined(a[0])
            except KeyError as e:
                raise _undefined(str(e.args[0])) from None
            except (TypeError, AttributeError):
                raise _bad_operands(instr, env, frame.res.fn.name) from None
            except RuntimeTrap:
                # an ``undef`` operand is the error, before what the operation checks
                # (``rem b 0`` with b undef: every stage reads b first; fuzz seed 50638)
                for name in instr.args:
                    if env.get(name) is UNDEF_VALUE:
                        raise _undefined(name) from None
                raise
        # return from the current frame
        stack.pop()
        if not stack:
            mem.check_all_freed()  # brili: memory not freed by the end is an error
            return steps
        _check_return(frame, retval, stack[-1].res.fn.name)
        dest = frame.dest
        frame = stack[-1]
        code, env, pc, n = frame.res.code, frame.env, frame.pc, len(frame.res.code)
        block_of, came, came_to = frame.res.block_of, frame.came, frame.came_to
        if dest is not None:
            env[dest] = retval
