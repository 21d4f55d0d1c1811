"""The quads interpreter: Bril's semantics plus ssa_course's extensions, on an explicit stack.

Each function is first *resolved* once: labels disappear (a jump target becomes an
instruction index), each instruction becomes a small tuple, and falling into a label is
simply running the next instruction, exactly like Bril. The run loop then keeps its own
stack of frames, so a Tiny recursion 50,000 deep is 50,000 list entries, not Python frames.

Every executed instruction counts once toward the dynamic instruction count that
``--profile`` reports (Bril's ``total_dyn_inst``) and toward the step limit.
"""

from __future__ import annotations

from ssa_course.errors import RuntimeTrap
from ssa_course.quads.ir import Function, Instr, Label, Program
from ssa_course.runtime import (
    Limits,
    Output,
    TinyArray,
    TinyStruct,
    check_index,
    format_print,
    load_element,
    new_array,
    stack_overflow,
    step_limit_exceeded,
    tiny_div,
    tiny_rem,
    uncaught,
    wrap,
)
from ssa_course.tiny.types import ArrayType, BoolType, IntType

# Opcodes of the resolved form (small ints are faster to compare than strings).
(CONST, ID, ADD, SUB, MUL, DIV, REM, EQ, LT, GT, LE, GE, NOT, AND, OR, JMP, BR, CALL, RET,
 PRINT, NOP, NEWARR, ALEN, ALOAD, ASTORE, NEWSTRUCT, GETF, SETF, ENTER, LEAVE, THROW,
 CATCH) = range(32)

_CODES = {
    "const": CONST, "id": ID, "add": ADD, "sub": SUB, "mul": MUL, "div": DIV, "rem": REM,
    "eq": EQ, "lt": LT, "gt": GT, "le": LE, "ge": GE, "not": NOT, "and": AND, "or": OR,
    "jmp": JMP, "br": BR, "call": CALL, "ret": RET, "print": PRINT, "nop": NOP,
    "newarr": NEWARR, "alen": ALEN, "aload": ALOAD, "astore": ASTORE,
    "newstruct": NEWSTRUCT, "getf": GETF, "setf": SETF, "enter": ENTER, "leave": LEAVE,
    "throw": THROW, "catch": CATCH,
}


class Resolved:
    """A function ready to run: ``code[i]`` is ``(opcode, dest, args, extra, instr)``."""

    __slots__ = ("fn", "code", "params")

    def __init__(self, fn: Function, code: list[tuple], params: list[str]):
        self.fn = fn
        self.code = code
        self.params = params


def _zero(ty: object) -> object:
    elem = ty.elem if isinstance(ty, ArrayType) else None
    if isinstance(elem, IntType):
        return 0
    if isinstance(elem, BoolType):
        return False
    return None


def resolve(fn: Function, program: Program) -> Resolved:
    """Turn labels into instruction indices and instructions into tuples."""
    index: dict[str, int] = {}
    count = 0
    for item in fn.body:
        if isinstance(item, Label):
            index[item.name] = count
        else:
            count += 1
    code: list[tuple] = []
    for item in fn.body:
        if not isinstance(item, Instr):
            continue
        op = _CODES.get(item.op)
        if op is None:
            raise RuntimeTrap(f"unknown operation '{item.op}' in @{fn.name}")
        extra: object = None
        if op == CONST:
            extra = item.value
        elif op in (JMP, BR, ENTER):
            try:
                extra = tuple(index[label] for label in item.labels)
            except KeyError as e:
                raise RuntimeTrap(f"unknown label '.{e.args[0]}' in @{fn.name}") from None
        elif op == CALL:
            extra = item.funcs[0]
        elif op == NEWARR:
            extra = _zero(item.type)
        elif op in (GETF, SETF):
            extra = item.field
        elif op == NEWSTRUCT:
            struct = program.structs.get(str(item.type))
            extra = (str(item.type), [f for f, _ in struct.fields] if struct else [])
        code.append((op, item.dest, tuple(item.args), extra, item))
    return Resolved(fn, code, [name for name, _ in fn.params])


class Frame:
    __slots__ = ("res", "pc", "env", "dest", "handlers", "exc")

    def __init__(self, res: Resolved, env: dict[str, object], dest: str | None):
        self.res = res
        self.pc = 0
        self.env = env
        self.dest = dest  # where the caller wants our return value
        self.handlers: list[int] = []  # pcs of active catch handlers (innermost last)
        self.exc = 0  # the value a ``catch`` instruction reads


def _undefined(name: str) -> RuntimeTrap:
    return RuntimeTrap(f"undefined variable '{name}'")


def run_quads(program: Program, args: list[object], out: Output, limits: Limits) -> int:
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
            res = cache[name] = resolve(fn, program)
        return res

    main = get("main")
    frame = Frame(main, dict(zip(main.params, args, strict=False)), None)
    stack: list[Frame] = [frame]
    code, env = main.code, frame.env
    pc = 0
    steps = 0
    max_steps = limits.steps
    max_depth = limits.depth
    n = len(code)
    write = out.write

    while True:
        if pc >= n:  # fell off the end: return nothing
            retval = None
            op = -1
        else:
            op, dest, a, extra, instr = code[pc]
            steps += 1
            if steps > max_steps:
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
                    pc = extra[0] if env[a[0]] else extra[1]
                    continue
                if op == JMP:
                    pc = extra[0]
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
                    env[a[0]].fields[extra] = env[a[1]]
                    continue
                if op == NEWARR:
                    env[dest] = new_array(env[a[0]], extra, instr.pos)
                    continue
                if op == NEWSTRUCT:
                    name, fields = extra
                    env[dest] = TinyStruct(name, {f: env[v] for f, v in zip(fields, a,
                                                                           strict=False)})
                    continue
                if op == PRINT:
                    write(format_print([env[x] for x in a]))
                    continue
                if op == NOP:
                    continue
                if op == CALL:
                    callee = get(extra)
                    values = [env[x] for x in a]
                    if len(values) != len(callee.params):
                        raise RuntimeTrap(f"@{extra} takes {len(callee.params)} arguments, "
                                          f"{len(values)} given")
                    if len(stack) >= max_depth:
                        raise stack_overflow()
                    frame.pc = pc
                    frame = Frame(callee, dict(zip(callee.params, values, strict=True)), dest)
                    stack.append(frame)
                    code, env, pc, n = callee.code, frame.env, 0, len(callee.code)
                    continue
                if op == ENTER:
                    frame.handlers.append(extra[1])
                    pc = extra[0]
                    continue
                if op == LEAVE:
                    frame.handlers.pop()
                    continue
                if op == CATCH:
                    env[dest] = frame.exc
                    continue
                if op == THROW:
                    value = env[a[0]]
                    while not frame.handlers:
                        stack.pop()
                        if not stack:
                            raise uncaught(value)
                        frame = stack[-1]
                    pc = frame.handlers.pop()
                    frame.exc = value
                    code, env, n = frame.res.code, frame.env, len(frame.res.code)
                    continue
                # RET
                retval = env[a[0]] if a else None
            except KeyError as e:
                raise _undefined(str(e.args[0])) from None
            except (TypeError, AttributeError):
                raise RuntimeTrap(f"bad operand types for '{instr.op}' in "
                                  f"@{frame.res.fn.name}") from None
        # return from the current frame
        stack.pop()
        if not stack:
            return steps
        dest = frame.dest
        frame = stack[-1]
        code, env, pc, n = frame.res.code, frame.env, frame.pc, len(frame.res.code)
        if dest is not None:
            env[dest] = retval
