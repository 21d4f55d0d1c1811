"""SSA quads written in Bril's current SSA form (``set``/``get``/``undef``), for Bril's tools.

Our SSA stages keep classic phis (``x.2: int = phi x.0 x.1 .b0 .loop;``): that is the
lesson's picture. Bril's reference interpreter no longer runs ``phi``; it runs the form
Bril's own ``to_ssa`` writes: ``x.2: int = get;`` where the phi was, and ``set x.2 v;`` at
the end of each predecessor (before its jump) for the value that edge brings. A phi
argument with no value on its edge (``__undefined``) becomes an ``undef`` that is set, so
a later read stops the program as brili stops it. Our ``checkdef ok x`` (a read that may
find no value, ``quads/undefined_reads.py``) becomes a branch to a block that uses an
``undef`` value, which brili reports as an error too.

The text faces of ``ssa-minimal``, ``ssa-pruned`` and ``ssa-braun`` print this form, so
``ssa-course show --as ssa-pruned prog.bril | bril2json | brili`` prints what the program
prints (``docs/quads.md``, "Bril's SSA forms").
"""

from __future__ import annotations

from collections.abc import Callable

from ssa_course.quads.bril_write import to_bril_text
from ssa_course.quads.ir import (
    TERMINATORS,
    UNDEFINED,
    Function,
    Instr,
    Item,
    Label,
    Program,
)
from ssa_course.quads.names import all_names
from ssa_course.tiny.types import BOOL


def set_get_text(program: Program) -> str:
    """The program as Bril text, its phis written as ``set``/``get`` (brili runs it)."""
    return to_bril_text(to_set_get(program))


def to_set_get(program: Program) -> Program:
    """A copy of ``program`` with every ``phi`` and ``checkdef`` in Bril's own forms."""
    return Program({name: _function(fn) for name, fn in program.functions.items()},
                   program.structs)


def _blocks(body: list[Item]) -> list[tuple[str | None, list[Item]]]:
    """The body cut at labels: (label or None for a first unlabelled block, its items)."""
    out: list[tuple[str | None, list[Item]]] = [(None, [])]
    for item in body:
        if isinstance(item, Label):
            out.append((item.name, [item]))
        else:
            out[-1][1].append(item)
    return out if out[0][1] else out[1:]


def _function(fn: Function) -> Function:
    phis = [i for i in fn.body if isinstance(i, Instr) and i.op in ("phi", "checkdef")]
    if not phis:
        return fn
    fresh = all_names(fn).fresh
    handlers = {i.labels[1] for i in fn.instrs() if i.op == "enter"}
    blocks = _blocks(fn.body)
    where = {label: k for k, (label, _) in enumerate(blocks) if label is not None}
    # predecessor label -> sets at its end (normal edges) or before its last instruction
    # (the edge into a handler leaves before the call or throw that may throw)
    at_end: dict[str, list[Instr]] = {}
    before_last: dict[str, list[Instr]] = {}
    body: list[Item] = []
    for label, items in blocks:
        for item in items:
            if not isinstance(item, Instr) or item.op != "phi":
                continue
            for arg, pred in zip(item.args, item.labels, strict=True):
                sets = before_last if label in handlers else at_end
                out = sets.setdefault(pred, [])
                if arg == UNDEFINED:
                    u = fresh(f"{item.result()}.undef")
                    out.append(Instr("undef", u, item.type))
                    arg = u
                out.append(Instr("set", args=[item.result(), arg]))
    for label, items in blocks:
        new: list[Item] = []
        for item in items:
            if isinstance(item, Instr) and item.op == "phi":
                new.append(Instr("get", item.dest, item.type, line=item.line, at=item.at))
            elif isinstance(item, Instr) and item.op == "checkdef":
                new += _checkdef(item, fresh)
            else:
                new.append(item)
        if label is not None and label in where:
            _place(new, at_end.get(label, []), before_last.get(label, []))
        body += new
    return Function(fn.name, fn.params, fn.ret, body)


def _place(items: list[Item], end: list[Instr], before: list[Instr]) -> None:
    """Put a block's sets: ``end`` before its terminator (or at its end when it falls
    through), ``before`` before its last instruction."""
    last = len(items) - 1
    if before and last >= 0 and isinstance(items[last], Instr):
        items[last:last] = before
        last += len(before)
    if not end:
        return
    tail = items[last] if last >= 0 else None
    if isinstance(tail, Instr) and tail.op in TERMINATORS:
        items[last:last] = end
    else:
        items.extend(end)


def _checkdef(item: Instr, fresh: Callable[[str], str]) -> list[Item]:
    """``checkdef ok x`` as Bril: go on when ``ok``, else use an ``undef`` (brili stops)."""
    name = item.field_name()
    go, stop = fresh(f"{name}.defined"), fresh(f"{name}.undefined")
    u = fresh(name + ".u")
    return [Instr("br", args=list(item.args), labels=[go, stop]), Label(stop),
            Instr("undef", u, BOOL), Instr("br", args=[u], labels=[go, go]), Label(go)]
