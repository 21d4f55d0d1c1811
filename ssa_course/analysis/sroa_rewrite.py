"""The rewrite of SROA, written once: a function's struct webs become field variables.

Both places that replace a struct by its fields use it: a function rewriting the webs of
its own allocations (:mod:`ssa_course.analysis.sroa`) and the clone of a callee that gets
the fields of a promoted argument instead of the object
(:mod:`ssa_course.analysis.sroa_calls`). A *web* is a set of names that hold one object at
a time; :class:`FieldWeb` says which variable holds each of its fields. For a web ``W``:

* ``p = newstruct a b`` (``p`` in ``W``) -> ``W.x = id a; W.y = id b``;
* ``t = getf p x`` -> ``t = id W.x``; ``setf p x v`` -> ``W.x = id v``;
* ``q = id p`` inside the web disappears; a *move* from another web copies the fields;
* ``c = eq p q`` -> ``const true`` when both are in the same web, ``const false`` when
  only one is (no name outside a web reaches its object);
* a call passing ``p`` at a promoted position calls the clone with the fields instead
  (:func:`~ssa_course.analysis.sroa_calls.promoted_call`), and records what that clone
  must be (a :data:`Demand`).

A clone's parameter webs are defined only by the entry and by copies inside the web, and
compared only with themselves (``sroa_calls._uses`` refuses anything else), so for them
the rules above reduce to field reads, field writes, dropped copies and ``eq`` -> true.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ssa_course.quads.ir import Function, Instr, Label
from ssa_course.tiny.types import BOOL, Type

Demand = tuple[str, frozenset[int]]  # a clone a call needs: (callee, promoted positions)
# ``promoted_call``'s shape: (the call, the field variables of each replaced member) ->
# the call of a clone and its demand, or None for a call that passes no replaced web.
PromotedCall = Callable[[Instr, dict[str, list[str]]], "tuple[Instr, Demand] | None"]


@dataclass(eq=False, slots=True)
class FieldWeb:
    """A web being replaced: the variable of each field (in declaration order) and the
    fields' types."""

    names: dict[str, str]
    types: dict[str, Type]


def replace_webs(fn: Function, member: dict[str, FieldWeb], moves: set[int],
                 promoted_call: PromotedCall, body: list[Instr | Label] | None = None
                 ) -> tuple[list[Instr | Label], list[Demand], int]:
    """``fn``'s body (after ``body``, instructions put first) with every name in
    ``member`` replaced by its web's field variables; also the demands of the promoted
    calls and how many allocations were removed. ``moves`` are the ``id``
    instructions (by ``id()``) that copy one replaced web into another."""
    # The field variables of each member, in field order: what a promoted call passes.
    fields = {v: list(w.names.values()) for v, w in member.items()}
    out: list[Instr | Label] = list(body or [])
    demands: list[Demand] = []
    removed = 0
    for item in fn.body:
        if not isinstance(item, Instr):
            out.append(item)
            continue
        # A call that takes a web member is first offered to sroa_calls: it passes the fields
        # to a specialised clone, and records what that clone must be (a Demand).
        call = promoted_call(item, fields)
        if call is not None:
            out.append(call[0])
            demands.append(call[1])
            continue
        # `web`: the web of the first operand -- the object that getf/setf/id/eq work on.
        web = member.get(item.args[0]) if item.args else None
        # The allocation becomes its initialisers: the arguments are already evaluated, in
        # source order, by earlier instructions, so no side effect moves.
        if item.op == "newstruct" and item.dest in member:
            removed += 1
            made = member[item.result()]
            for (f, t), a in zip(made.types.items(), item.args, strict=True):
                out.append(Instr("id", made.names[f], t, [a], line=item.line))
        elif item.op == "getf" and web is not None:
            out.append(Instr("id", item.dest, item.type, [web.names[item.field_name()]],
                             line=item.line))
        elif item.op == "setf" and web is not None:
            f = item.field_name()
            out.append(Instr("id", web.names[f], web.types[f], [item.args[1]], line=item.line))
        elif item.op == "id" and web is not None and id(item) in moves:
            to = member[item.result()]  # a move: field by field into the other web
            for f, t in web.types.items():
                out.append(Instr("id", to.names[f], t, [web.names[f]], line=item.line))
        elif item.op == "id" and web is not None:
            continue  # a copy inside the web: both names are the same field variables
        elif item.op == "eq" and (web is not None or item.args[1] in member):
            # Identity is decidable here: within a web there is one object alive at a time,
            # and no name outside the web can reach a NoEscape object.
            same = web is not None and member.get(item.args[1]) is web
            out.append(Instr("const", item.dest, BOOL, value=same, line=item.line))
        else:
            out.append(item)
    return out, demands, removed
