"""Constants of a recursive function passed along by its recursive calls (the
``const-params`` pass of ``ssa-course opt``).

Bril has no immediate operands: ``n - 1`` is ``one: int = const 1; m: int = sub n one``,
and the ``const`` is an executed instruction. Every frame makes its own constants, so a
recursive function pays for them once per call: Ackermann's function spends a quarter of
its instructions on ``const 0`` and ``const 1``. Arguments, on the other hand, are free:
a ``call`` costs one instruction whatever it passes.

So for a function that calls itself (not ``main``, whose parameters come from the command
line), every distinct constant it makes becomes an extra parameter:

* each ``x: T = const c`` in its body becomes ``x: T = id p`` (a copy of the parameter,
  which the sea of nodes sees through: it costs nothing after ``sccp``);
* each recursive call passes the parameters along -- they hold the constants already;
* every other call site makes the constants just before the call (``p': T = const c``)
  and passes them. Global code motion then places those ``const``s like any other: out of
  the caller's loops, on the paths that need them. Only constants the function makes on
  every path to its end that does not recurse are threaded, so an outside call never
  makes more than the frames it starts did (``const 2`` made only where the callee
  neither recurses nor returns stays there).

Why it is safe: by induction on the calls, the new parameter holds ``c`` in every frame
(the outside callers pass ``c``, the recursive calls pass the parameter on), so every
``id`` reads exactly what the ``const`` made. Nothing else changes: the same calls are
made in the same order at the same depth, with the same runtime errors. What it costs: an
outside call site runs the ``const``s instead of the callee -- the same count -- and
the callee's constants are no longer visible to SCCP in the callee (parameters are not
constants to it), which matters little in recursive code. At most :data:`MAX_CONSTANTS`
constants per function are threaded.
"""

from __future__ import annotations

from ssa_course.floats import const_key
from ssa_course.quads.analyses import available
from ssa_course.quads.cfg import build_cfg
from ssa_course.quads.flow import solve
from ssa_course.quads.ir import Function, Instr, Item, Program
from ssa_course.quads.names import all_names

MAX_CONSTANTS = 6  # parameters added per function (each costs every call an argument)
Key = tuple[str, str, object]  # a constant: its type, its Python type, its value (or text)


def _key(instr: Instr) -> Key:
    return (str(instr.type), *const_key(instr.value))


def _constants(fn: Function) -> dict[Key, Instr]:
    """The distinct constants that ``fn`` makes on every path from its entry to its end
    that makes no recursive call (first occurrence of each, at most
    :data:`MAX_CONSTANTS`). Then an outside call never makes more constants than before:
    the frames it starts form a tree whose leaves end without recursing, so at least one
    of them made each constant the caller now makes once, and no other frame makes any."""
    cfg = build_cfg(fn)
    every = {_key(i) for i in fn.instrs() if i.op == "const" and i.value is not None}

    def made(instr: Instr) -> set[Key]:
        if instr.op == "call" and instr.funcs == [fn.name]:
            return every  # a path through a recursive call is exempt
        if instr.op == "const" and instr.value is not None:
            return {_key(instr)}
        return set()

    made_by = solve(cfg, available(cfg, made, every)).bottom  # made on every path to here
    live = cfg.reachable()
    # made on every path to every exit: what each non-recursive run of the function makes
    exits = [name for name in live if not cfg.blocks[name].succs]
    always = frozenset.intersection(*(made_by[n] for n in exits)) if exits else set()
    found: dict[Key, Instr] = {}
    for instr in fn.instrs():
        if instr.op != "const" or instr.value is None:
            continue
        key = _key(instr)
        if key in always and key not in found and len(found) < MAX_CONSTANTS:
            found[key] = instr
    return found


def thread_constants(program: Program) -> tuple[Program, int]:
    """The program with the constants of every self-recursive function (but ``main``)
    turned into parameters; returns it and how many functions changed."""
    threaded: dict[str, list[tuple[Key, str, Instr]]] = {}
    for name, fn in program.functions.items():
        recursive = any(i.op == "call" and i.funcs == [name] for i in fn.instrs())
        consts = _constants(fn) if recursive and name != "main" else {}
        if consts:
            names = all_names(fn)
            threaded[name] = [(key, names.fresh(f"const.{k}"), instr)
                              for k, (key, instr) in enumerate(consts.items())]
    if not threaded:
        return program, 0
    functions = {name: _rewrite(fn, threaded) for name, fn in program.functions.items()}
    return Program(functions, program.structs), len(threaded)


def _rewrite(fn: Function, threaded: dict[str, list[tuple[Key, str, Instr]]]) -> Function:
    mine = {key: param for key, param, _ in threaded.get(fn.name, [])}
    params = list(fn.params)
    for _, param, instr in threaded.get(fn.name, []):
        assert instr.type is not None  # (shapes: a const has a type)
        params.append((param, instr.type))
    names = all_names(fn)
    for param in mine.values():
        names.reserve(param)
    body: list[Item] = []
    for item in fn.body:
        if isinstance(item, Instr) and item.op == "const" and _key(item) in mine:
            # the constant now arrives as a parameter: a copy (often coalesced away)
            body.append(Instr("id", item.dest, item.type, [mine[_key(item)]], pos=item.pos,
                              line=item.line))
            continue
        if not (isinstance(item, Instr) and item.op == "call" and item.funcs
                and item.funcs[0] in threaded):
            body.append(item)
            continue
        call = item.copy()
        for key, _, instr in threaded[call.funcs[0]]:
            if key in mine:  # this frame holds the constant already (a recursive call)
                call.args.append(mine[key])
                continue
            # an outside caller makes the constant once, for the whole recursion below
            name = names.fresh("const.arg")
            body.append(Instr("const", name, instr.type, value=instr.value, line=item.line))
            call.args.append(name)
        body.append(call)
    return Function(fn.name, params, fn.ret, body)
