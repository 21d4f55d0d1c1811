"""Inlining small leaf functions (the ``inline`` pass of ``ssa-course opt``).

A ``call`` costs the caller more than the work it asks for: the ``call`` and the callee's
``ret`` are executed instructions (Bril's ``brili -p`` counts both), and everything the
optimizer knows stops at the call -- a constant argument is not folded into the callee,
an expression the callee recomputes is not shared, a loop around the call cannot hoist the
callee's invariant work. Inlining replaces the call by a renamed copy of the callee's body:

* each parameter becomes a fresh variable, assigned from its argument by an ``id`` (the
  sea of nodes built next sees through copies, so they cost nothing after ``sccp``);
* every other variable and label of the callee gets a fresh name, so the copy cannot
  clash with the caller or with another copy;
* ``ret v`` becomes ``dest = id v`` and a ``jmp`` to a new label right after the copy
  (running off the end of the callee falls through to it), ``ret`` without a value (or a
  value nobody receives) just the ``jmp``; layout removes the jumps that go nowhere.

What is inlined, and why that is safe:

* only *leaf* callees (they call nobody), small (:data:`MAX_CALLEE` instructions, or
  :data:`MAX_SINGLE` when the program calls them from one place: the copy duplicates
  nothing) and free of exception regions (``enter``/``leave``/``catch``: a handler
  belongs to its frame). A ``throw`` may stay: with no handler of its own, the callee's
  exception unwinds into the caller's innermost handler, which is exactly where the
  inlined ``throw`` goes. Leaves of leaves become leaves, so the pass repeats until
  nothing changes (bottom-up);
* a callee that never returns a value (it always throws) leaves the call's result
  unassigned: the copy ends with a placeholder for it where nothing runs
  (:func:`returns_a_value` says why);
* only callees whose every read is of a variable assigned on *every* path before it (a
  must-be-defined data-flow problem): Bril may read a variable that one path leaves
  unassigned -- an error in the callee's fresh frame, but in an inlined copy it would read
  what the previous call left behind;
* runtime errors keep their message and position (the copied instructions keep ``pos``),
  output happens in the same order, and no instruction is executed more often;
* the **call depth** (LANGUAGE.md, "Limits"): an inlined call no longer counts, so a run
  that stopped with ``stack overflow`` when entering the callee must still stop. A call
  is inlined only where :mod:`ssa_course.quads.call_depth` shows that this cannot happen
  differently: the caller runs at a bounded depth (no recursive function reaches it), or
  a call of a recursive function -- which always stays -- comes right after (nothing
  observable between) or came before in the same frame.

The pass works on ordinary quads (no phis: ``Compilation.quads`` is out of SSA) and is run
before ``parse``, so everything after it optimizes across the former call boundary.
"""

from __future__ import annotations

from typing import Any

from ssa_course.quads.analyses import assigned
from ssa_course.quads.call_depth import (
    calls_after_a_call,
    calls_of,
    deep_functions,
    followed_by_call,
    nonzero_constants,
    recursive_functions,
)
from ssa_course.quads.cfg import build_cfg
from ssa_course.quads.flow import solve
from ssa_course.quads.ir import Function, Instr, Item, Label, Program
from ssa_course.quads.names import Names, all_names
from ssa_course.tiny.types import BOOL, INT

MAX_CALLEE = 60  # instructions in a callee worth copying into its callers
MAX_SINGLE = 400  # ... and in a callee called from one place (nothing is duplicated)
MAX_CALLER = 4000  # a caller stops growing here
MAX_ROUNDS = 8  # leaves of leaves of ... inlined bottom-up, at most this deep
# a callee with any of these stays a call: handlers and SSA forms need their own copy
# rules, and a callee that calls is not a leaf (leaves of leaves go in later rounds)
_NEVER = frozenset({"enter", "leave", "catch", "phi", "set", "get", "undef", "call"})


def all_reads_defined(fn: Function) -> bool:
    """Is every variable read by ``fn`` assigned on every path that reaches the read?"""
    # Why it matters: a read of an unassigned variable is an error that names the
    # callee's variable; inlined, the renamed copy would report another name.
    cfg = build_cfg(fn)  # (no exceptional edges: a function with ``enter`` is never inlined)
    facts = solve(cfg, assigned(cfg, [p for p, _ in fn.params], must=True))
    for name in cfg.reachable():
        for instr, known in zip(cfg.blocks[name].instrs, facts.points(name), strict=False):
            if any(a not in known for a in instr.args):
                return False
    return True


def inlinable(fn: Function, sites: int) -> bool:
    """May ``fn`` be copied into its callers (``sites`` calls of it in the program)? Small
    enough -- or called from one place only, where the copy duplicates nothing -- a leaf,
    without handlers, and every read defined on every path."""
    instrs = fn.instrs()
    limit = MAX_SINGLE if sites == 1 else MAX_CALLEE
    return (len(instrs) <= limit and not any(i.op in _NEVER for i in instrs)
            and all_reads_defined(fn))


def returns_a_value(callee: Function) -> bool:
    """Does ``callee`` have a ``ret`` with a value? A copy of one that never does (it
    always throws, or loops) assigns the call's destination nowhere, and the code after
    the copy can no longer run. But Bril's type rule is flow-insensitive, like brilck's
    (:mod:`ssa_course.quads.bril_check`): a variable read anywhere, even where it cannot
    run, must be assigned somewhere in its function, or the printed program does not read
    back. So the copy ends with a placeholder ``const`` for the destination, after its
    label that nothing jumps to (an int or a bool; a call with another result type stays
    a call)."""
    return any(i.op == "ret" and i.args for i in callee.instrs())


def _copy_body(site: Instr, callee: Function, taken: Names, tag: str) -> list[Item]:
    """The callee's body renamed for one call site, ending at a fresh label."""
    rename: dict[str, str] = {}

    def fresh(name: str) -> str:
        if name not in rename:  # x.i3 (or x.i3.1, ...) at call site 3
            rename[name] = taken.fresh(f"{name}.{tag}")
        return rename[name]

    done = fresh(f"{callee.name}.done")  # where every ``ret`` of the copy goes
    out: list[Any] = []
    # parameters become copies of the arguments (coalescing removes most of them)
    for (param, ty), arg in zip(callee.params, site.args, strict=True):
        out.append(Instr("id", fresh(param), ty, [arg], pos=site.pos, line=site.line))
    for item in callee.body:
        if isinstance(item, Label):
            out.append(Label(fresh(item.name)))
            continue
        new = item.copy()
        new.args = [fresh(a) for a in new.args]
        new.dest = fresh(new.dest) if new.dest else None
        new.labels = [fresh(lb) for lb in new.labels]
        if new.op == "ret":
            # return: the value into the call's destination, then leave the copy
            if site.dest and new.args:
                out.append(Instr("id", site.dest, site.type, [new.args[0]], pos=item.pos,
                                 line=item.line))
            out.append(Instr("jmp", labels=[done], line=item.line))
        else:
            out.append(new)
    out.append(Label(done))
    return out


def inline_into(fn: Function, program: Program, leaves: set[str], deep: set[str],
                staying: set[str], counter: list[int]) -> Function:
    """``fn`` with every call of a function in ``leaves`` that is safe to inline replaced
    by a copy of its body (see the module docstring)."""
    size = len(fn.instrs())
    taken = all_names(fn)  # one namespace for variables and labels (both are copied)
    safe = nonzero_constants(fn)
    labels = {item.name: i for i, item in enumerate(fn.body) if isinstance(item, Label)}
    # In a function that may run deep (recursion), inlining could change where the call
    # depth limit stops the program: there only calls that a call which stays (to a
    # recursive function) follows or precedes, at the same depth, are inlined -- see
    # quads/call_depth.py.
    after_call = calls_after_a_call(fn.body, staying) if fn.name in deep else set()
    body: list[Item] = []
    for k, item in enumerate(fn.body):
        if not (isinstance(item, Instr) and item.op == "call" and item.funcs):
            body.append(item)
            continue
        callee = program.functions.get(item.funcs[0])
        # the copy would leave the call's result unassigned (see returns_a_value)
        unassigned = (callee is not None and item.dest is not None
                      and not returns_a_value(callee))
        if (callee is None or callee.name not in leaves or callee.name == fn.name
                or (unassigned and item.type not in (INT, BOOL))
                or size + len(callee.body) > MAX_CALLER
                or (fn.name in deep and k not in after_call
                    and not followed_by_call(fn.body, k, safe, labels, staying))):
            body.append(item)
            continue
        counter[0] += 1
        size += len(callee.body)
        body.extend(_copy_body(item, callee, taken, f"i{counter[0]}"))
        if unassigned:  # unreachable: only so that the destination is assigned
            body.append(Instr("const", item.dest, item.type, value=False if item.type == BOOL
                              else 0, line=item.line))
    return Function(fn.name, list(fn.params), fn.ret, body)


def call_sites(program: Program) -> dict[str, int]:
    """How many calls of each function the program makes (``inlinable``'s ``sites``)."""
    sites: dict[str, int] = {}
    for fn in program.functions.values():
        for i in fn.instrs():
            if i.op == "call" and i.funcs:
                sites[i.funcs[0]] = sites.get(i.funcs[0], 0) + 1
    return sites


def inline_calls(program: Program) -> tuple[Program, int]:
    """Inline small leaf functions into their callers, bottom-up; returns the new program
    and how many calls were replaced."""
    deep = deep_functions(program)
    staying = recursive_functions(program)
    counter = [0]  # calls inlined so far (a list: inline_into adds to it)
    # Bottom-up in rounds: a function that only called leaves becomes a leaf itself once
    # they are inlined into it, and the next round may inline it.
    for _ in range(MAX_ROUNDS):
        sites = call_sites(program)
        leaves = {name for name, fn in program.functions.items()
                  if inlinable(fn, sites.get(name, 0))}
        before = counter[0]
        functions = {name: inline_into(fn, program, leaves, deep, staying, counter)
                     if calls_of(fn) & leaves else fn
                     for name, fn in program.functions.items()}
        program = Program(functions, program.structs)
        if counter[0] == before:
            break
    return program, counter[0]
