"""Tail recursion to loops (the ``tail-rec`` pass of ``ssa-course opt``).

A call of a function to itself whose result is returned as it is::

    r: int = call @f a b;   ret r;

needs no new frame: the parameters can take the arguments and control can go back to the
top of the body (``n = a; m = b; jmp .top``). This is *tail-recursion elimination*, which
every optimizing compiler does (GCC's ``tailr`` pass at -O2, LLVM's
``tailcallelim``). It saves the ``call`` and the ``ret`` of every frame, and the loop it
makes is a loop for the later passes: a constant the body makes is hoisted out of it,
a value the recursion carried along unchanged becomes loop-invariant.

**Accumulators** (GCC does the same): a call whose result is only added to or
multiplied by values computed before it, and then returned, is a tail call too::

    r: int = call @fact m;   t: int = mul n r;   ret t;

The result of the whole recursion is ``acc_m * R + acc_a`` where ``R`` is what the
current frame returns; such a call becomes ``acc_a += acc_m * A; acc_m *= M`` (for
``t = r * M + A``) and the jump back; every ``ret v`` of the function returns
``acc_m * v + acc_a``. Ints wrap at 64 bits and ``+``/``*`` stay associative and
commutative there, so the result is exactly the recursion's. Only the accumulators the
function needs are made: ``acc_m`` when some tail call multiplies, ``acc_a`` when some
adds (``fact`` keeps one product, ``getDigits`` one sum).

**What is left alone.** Functions with a ``try`` region (``enter``: a call inside one
is not in tail position, its handler is waiting); functions with no way to return that
avoids the recursive call: such a recursion never ends, and it must still end with
``stack overflow`` (``tests/programs/stack_overflow.tiny``), not run into the step limit;
calls whose arguments rotate the parameters (:data:`MAX_COPIES`); and the accumulator
calls of a function that also calls itself elsewhere (a tree recursion, whose leaves
would pay for the accumulators and save nothing).

**The call depth limit.** Unlike inlining (which keeps every verdict of the depth
limit, :mod:`ssa_course.quads.call_depth`), this pass removes frames on purpose: a
recursion deeper than the limit (100,000 by default) that stops its input with
``stack overflow`` runs on in the optimized program, having printed what the input
printed -- as an optimized program that executes fewer instructions may finish where
its input hit the step limit. It never overflows where its input does not
(docs/quads.md, "Tail calls").

The pass runs on quads before parsing (``source`` form), so SSA construction, SCCP and
global code motion see the loop. One walk over each function's body finds the tail calls
(a call followed, through labels and jumps, by ``id``/``add``/``mul`` of its result and
``const``\\ s, then ``ret``); a function without a call to itself is returned as it is.
"""

from __future__ import annotations

from dataclasses import dataclass

from ssa_course.quads.ir import Function, Instr, Item, Label, Program
from ssa_course.quads.names import Names, all_names
from ssa_course.tiny.types import INT

MAX_FOLLOW = 32  # items followed from a call to its ret (labels, jumps, the arithmetic)
# A tail call saves its ``call`` and ``ret``; one whose arguments leave two copies (a
# rotation of the parameters: Euclid's ``gcd(b, a mod b)``) saves nothing
MAX_COPIES = 2


@dataclass(slots=True)
class TailCall:
    """A self call in tail position: where it is and what the frame does with its result."""

    index: int  # of the call in the function's body
    # what the frame applies to the call's result, in order: ("add" | "mul", operand,
    # the constant the operand holds when a ``const`` between the call and the ret made
    # it, else None: a variable that holds what it held before the call)
    steps: list[tuple[str, str, Instr | None]]


def eliminate_tail_calls(program: Program) -> tuple[Program, int]:
    """The program with the tail calls of every self-recursive function turned into
    jumps; returns it and how many functions changed."""
    functions = dict(program.functions)
    changed = 0
    for name, fn in program.functions.items():
        new = tail_rec(fn)
        if new is not fn:
            functions[name] = new
            changed += 1
    return (Program(functions, program.structs), changed) if changed else (program, 0)


def tail_rec(fn: Function) -> Function:
    """``fn`` with its self calls in tail position made jumps back to its top."""
    body = fn.body
    if not any(isinstance(i, Instr) and i.op == "call" and i.funcs == [fn.name]
               for i in body):
        return fn  # the cheap exit: no recursion
    if any(isinstance(i, Instr) and i.op in ("enter", "phi", "set", "get") for i in body):
        return fn
    labels = {item.name: k for k, item in enumerate(body) if isinstance(item, Label)}
    calls = [k for k, item in enumerate(body)
             if isinstance(item, Instr) and item.op == "call" and item.funcs == [fn.name]]
    sources = _sources(fn)
    tails = [t for k in calls if (t := _tail_at(fn, k, labels)) is not None
             and _copies(fn, sources[k]) < MAX_COPIES]
    if len(tails) < len(calls):  # a tree recursion: most frames are leaves, which would
        # pay for the accumulators (made at the top, applied at each ret) and save nothing
        tails = [t for t in tails if not t.steps]
    if not tails or not _returns_without_recursing(fn, labels):
        return fn
    return _rewrite(fn, tails)


def _tail_at(fn: Function, index: int, labels: dict[str, int]) -> TailCall | None:
    """The tail call at ``body[index]``, or None when something else follows it."""
    call = fn.body[index]
    assert isinstance(call, Instr)
    tracked = {call.dest} if call.dest is not None else set()
    made = set(tracked)  # names written since the call (never a step's variable operand)
    consts: dict[str, Instr] = {}  # of those, the ones a ``const`` wrote last
    steps: list[tuple[str, str, Instr | None]] = []
    k = index + 1
    for _ in range(MAX_FOLLOW):
        if k >= len(fn.body):  # falling off the end: returns nothing
            return TailCall(index, steps) if fn.ret is None and not steps else None
        item = fn.body[k]
        k += 1
        if isinstance(item, Label):
            continue
        if item.op == "jmp":
            k = labels[item.labels[0]]
            continue
        if item.op == "ret":
            if fn.ret is None:
                return TailCall(index, steps) if not item.args else None
            ok = len(item.args) == 1 and item.args[0] in tracked
            return TailCall(index, steps) if ok else None
        dest = item.dest
        if dest is None or dest in tracked:
            return None  # an effect, or a result overwritten by something else
        if item.op == "const":
            consts[dest] = item
        elif item.op == "id" and item.args[0] in tracked:
            tracked.add(dest)
            consts.pop(dest, None)
        elif item.op in ("add", "mul") and fn.ret == INT and len(item.args) == 2:
            a, b = item.args
            if (a in tracked) == (b in tracked):
                return None
            other = b if a in tracked else a
            if other in made and other not in consts:
                return None  # it depends on the call's result
            steps.append((item.op, other, consts.get(other)))
            tracked = {dest}  # the older values are no longer the result
            consts.pop(dest, None)
        else:
            return None
        made.add(dest)
    return None


def _copies(fn: Function, args: list[str]) -> int:
    """How many copies moving the call's arguments into the parameters leaves after
    coalescing, estimated: a parameter that gets another parameter's value keeps a copy,
    and so does one whose own value another parameter takes (both live at once)."""
    params = [p for p, _ in fn.params]
    passed = {arg: i for i, arg in enumerate(args)}
    copies = 0
    for i, (param, arg) in enumerate(zip(params, args, strict=True)):
        if arg == param:
            continue
        if arg in params or passed.get(param, i) != i:
            copies += 1
    return copies


def _sources(fn: Function) -> dict[int, list[str]]:
    """The arguments of each self call (by index in the body), each seen through the
    copies its block made before the call (Bril's ``v19: int = id b; call @gcd v19 v20``
    passes ``b``). One walk over the body."""
    copy_of: dict[str, str] = {}
    copies: dict[str, set[str]] = {}  # root -> the names that copy it now
    out: dict[int, list[str]] = {}
    for k, item in enumerate(fn.body):
        if isinstance(item, Label) or item.is_terminator():
            copy_of.clear()
            copies.clear()
            continue
        if item.op == "call" and item.funcs == [fn.name]:
            out[k] = [copy_of.get(a, a) for a in item.args]
        if item.dest is None:
            continue
        for name in copies.pop(item.dest, ()):  # their root changes: no longer copies
            copy_of.pop(name, None)
        old = copy_of.pop(item.dest, None)
        if old is not None:
            copies[old].discard(item.dest)
        if item.op == "id":
            root = copy_of.get(item.args[0], item.args[0])
            copy_of[item.dest] = root
            copies.setdefault(root, set()).add(item.dest)
    return out


def _returns_without_recursing(fn: Function, labels: dict[str, int]) -> bool:
    """Can a run of ``fn`` return without calling itself? (Else it never ends.)"""
    seen: set[int] = set()
    todo = [0]
    while todo:
        k = todo.pop()
        while k not in seen:
            seen.add(k)
            if k >= len(fn.body):
                return True  # falls off the end
            item = fn.body[k]
            if isinstance(item, Instr):
                if item.op == "ret" or item.op == "throw":
                    return True
                if item.op == "call" and item.funcs == [fn.name]:
                    break
                if item.op in ("jmp", "br"):
                    todo.extend(labels[name] for name in item.labels)
                    break
            k += 1
    return False


def _rewrite(fn: Function, tails: list[TailCall]) -> Function:
    names = all_names(fn)
    top = names.fresh("tail.top", sep="")
    multiplies = any(op == "mul" for t in tails for op, _, _ in t.steps)
    adds = any(op == "add" for t in tails for op, _, _ in t.steps)
    acc_m = names.fresh("acc.m") if multiplies else None
    acc_a = names.fresh("acc.a") if adds else None
    head: list[Item] = []
    if acc_m is not None:
        head.append(Instr("const", acc_m, INT, value=1))
    if acc_a is not None:
        head.append(Instr("const", acc_a, INT, value=0))
    head.append(Label(top))
    at = {t.index: t for t in tails}
    body: list[Item] = head
    dead = False  # after a new jump, until the next label: what followed the call
    for k, item in enumerate(fn.body):
        tail = at.get(k)
        dead = dead and not isinstance(item, Label)
        if dead:
            continue  # (it may read the call's result, which no longer exists)
        if tail is not None:
            assert isinstance(item, Instr)
            body.extend(_jump_back(fn, item, tail, top, acc_m, acc_a, names))
            dead = True
        elif isinstance(item, Instr) and item.op == "ret" and item.args and (acc_m or acc_a):
            body.extend(_ret(item, acc_m, acc_a, names))
        else:
            body.append(item)
    return Function(fn.name, fn.params, fn.ret, body)


def _jump_back(fn: Function, call: Instr, tail: TailCall, top: str, acc_m: str | None,
               acc_a: str | None, names: Names) -> list[Instr]:
    """What replaces a tail call: the accumulators updated, the arguments moved into the
    parameters (through temporaries: an argument may be another parameter), the jump."""
    out: list[Instr] = []
    for op, other, const in reversed(tail.steps):  # the outermost step first: A o step_k
        if const is not None:  # made after the call: made here, in a name of its own
            other = names.fresh("acc.k")
            out.append(Instr("const", other, INT, value=const.value, line=call.line))
        if op == "add":
            assert acc_a is not None
            if acc_m is None:
                out.append(Instr("add", acc_a, INT, [acc_a, other], line=call.line))
            else:
                scaled = names.fresh("acc.t")
                out.append(Instr("mul", scaled, INT, [acc_m, other], line=call.line))
                out.append(Instr("add", acc_a, INT, [acc_a, scaled], line=call.line))
        else:
            assert acc_m is not None
            out.append(Instr("mul", acc_m, INT, [acc_m, other], line=call.line))
    params = [p for p, _ in fn.params]
    temps = []
    for (param, ty), arg in zip(fn.params, call.args, strict=True):
        if arg in params and arg != param:
            temp = names.fresh(f"{param}.arg")
            out.append(Instr("id", temp, ty, [arg], line=call.line))
            temps.append(temp)
        else:
            temps.append(arg)
    for (param, ty), arg in zip(fn.params, temps, strict=True):
        if arg != param:
            out.append(Instr("id", param, ty, [arg], line=call.line))
    out.append(Instr("jmp", labels=[top], line=call.line))
    return out


def _ret(ret: Instr, acc_m: str | None, acc_a: str | None, names: Names) -> list[Instr]:
    """``ret v`` of a function with accumulators: ``ret acc_m * v + acc_a``."""
    out: list[Instr] = []
    value = ret.args[0]
    if acc_m is not None:
        scaled = names.fresh("acc.r")
        out.append(Instr("mul", scaled, INT, [acc_m, value], line=ret.line))
        value = scaled
    if acc_a is not None:
        total = names.fresh("acc.r")
        out.append(Instr("add", total, INT, [value, acc_a], line=ret.line))
        value = total
    out.append(Instr("ret", args=[value], pos=ret.pos, line=ret.line))
    return out
