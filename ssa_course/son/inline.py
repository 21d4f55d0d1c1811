"""Inlining small leaf functions on the sea of nodes (``son-opt``, before SCCP).

A call is a wall for everything after it: SCCP does not look into the callee (a Call's
result is "any value of the return type"), so ``get(2)`` stays a call where the callee
only returns its argument, and ``new_s(1).i`` stays a load where the callee makes the
struct with ``1``. Inlining copies the callee's graph into the caller in place of the call:

* the callee's Start is the call: its control, memory and parameter projections become
  the call's control, memory and argument inputs (the Start tuple and the Call's inputs
  have the same shape: control, memory, arguments); its constants hang off the caller's
  Start;
* its Returns are where the call's projections come from: one Return gives its control,
  memory and value; several are merged by a Region with a memory Phi and a value Phi;
* its other exits (a runtime error's Trap, an endless loop's Never) become exits of the
  caller's Stop -- the program ends there as it did in the callee.

What is inlined is what the quads inliner (``inline`` of ``ssa-course opt``) would inline,
by its own decisions (:mod:`ssa_course.quads.inline`, :mod:`ssa_course.quads.call_depth`):
a callee that :func:`~ssa_course.quads.inline.inlinable` accepts (a small leaf without
exception handlers, every read defined), called from a function no recursive function
reaches (:func:`~ssa_course.quads.call_depth.deep_functions`: the caller runs at a
bounded depth, so the callee's frame it no longer enters could not have overflowed).
Not inlined, unlike the quads pass: a call in a function that may run deep even where a
call that stays follows or precedes it (those rules read the quads' instruction order,
which the graph does not have), a call inside ``try`` (its exceptional projections would
need the callee's throws routed to the handler), a callee with a Throw or without a
Return, and a leaf of a leaf (one round: the graph of a function whose calls were
inlined is not copied again).

The copy keeps the callee's node types (true of any call: they were computed for any
argument) and source lines, so SCCP and the iterative peepholes then optimize across the
former call boundary.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ssa_course.son.clone import copy_nodes
from ssa_course.son.control import Call, Never, Phi, Proj, Region, Return, Throw, Trap
from ssa_course.son.graph import Node
from ssa_course.son.types import MEM

if TYPE_CHECKING:
    from ssa_course.quads.ir import Program
    from ssa_course.son.program import FunctionGraph, SeaOfNodes


def chosen_callees(quads: Program) -> tuple[set[str], set[str]]:
    """(the functions that may be copied into their callers, the callers that may run
    deep): the quads inliner's decisions."""
    from ssa_course.quads.call_depth import deep_functions
    from ssa_course.quads.inline import call_sites, inlinable

    sites = call_sites(quads)
    callees = {name for name, fn in quads.functions.items() if inlinable(fn, sites.get(name, 0))}
    return callees, deep_functions(quads)


def _copyable(callee: FunctionGraph) -> bool:
    exits = callee.stop.inputs
    return any(isinstance(e, Return) for e in exits) and all(
        isinstance(e, (Return, Trap, Never)) for e in exits) and not any(
        isinstance(n, (Call, Throw)) for n in callee.nodes())


def _projections(call: Call) -> dict[int, list[Proj]]:
    out: dict[int, list[Proj]] = {}
    for u in call.outputs:
        if isinstance(u, Proj) and u.inputs[0] is call:
            out.setdefault(u.index, []).append(u)
    return out


def inline_call(caller: FunctionGraph, call: Call, callee: FunctionGraph) -> None:
    """Replace ``call`` in ``caller`` by a copy of ``callee``'s graph."""
    g = caller.graph
    start = callee.start
    # the callee's Start and its projections are the call and its inputs
    fixed: dict[int, Node] = {id(start): caller.start}
    for u in start.outputs:
        if isinstance(u, Proj) and u.inputs[0] is start:
            fixed[id(u)] = call.operand(u.index)  # control, memory, argument k: same index
    body = [n for n in callee.nodes() if id(n) not in fixed and n is not callee.stop]
    twins = copy_nodes(body, g, fixed, callee.graph.lines, g.lines.get(call.id, 0))
    exits = [twins[id(e)] for e in callee.stop.inputs]
    returns = [e for e in exits if isinstance(e, Return)]
    for e in exits:
        if not isinstance(e, Return):
            caller.stop.add_input(e)  # a runtime error or an endless loop ends the program
    if len(returns) == 1:
        ret = returns[0]
        ctrl, mem, value = ret.inputs[0], ret.inputs[1], ret.inputs[2]
    else:
        ctrl = Region(g, None, *(r.inputs[0] for r in returns))
        ctrl.type = ctrl.compute()
        mem = Phi(g, ctrl, *(r.inputs[1] for r in returns), declared=MEM, name="$mem")
        mem.type = mem.compute()
        value = None
        if all(r.inputs[2] is not None for r in returns):
            value = Phi(g, ctrl, *(r.inputs[2] for r in returns), declared=call.ret)
            value.type = value.compute()
    for index, projs in _projections(call).items():
        new = {0: ctrl, 1: mem, 2: value}.get(index)
        for p in projs:
            if p.outputs:
                assert new is not None, f"{p} of an inlined call has no replacement"
                p.replace_with(new)
            p.kill()
    for r in returns:
        if not r.outputs:
            r.kill()
    call.kill()  # its projections were its only users


def inline_program(program: SeaOfNodes, quads: Program) -> int:
    """Inline into every function the calls the quads inliner's rules allow; returns how
    many calls were replaced (kept in ``program.sccp_counts`` by the caller)."""
    callees, deep = chosen_callees(quads)
    # the callees' graphs: leaves (no Call), so nothing is inlined into one of them
    originals = {name: fg for name, fg in program.functions.items()
                 if name in callees and _copyable(fg)}
    count = 0
    for name, fg in program.functions.items():
        if name in deep:
            continue
        calls = [n for n in fg.nodes() if isinstance(n, Call) and n.fn in originals
                 and n.fn != name and not any(k > 2 for k in _projections(n))]
        for call in calls:
            inline_call(fg, call, originals[call.fn])
            count += 1
    return count


__all__ = ["chosen_callees", "inline_call", "inline_program"]
