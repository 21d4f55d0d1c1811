"""Before scalar replacement: a struct variable with unrelated lives gets one name per life.

Tiny programs reuse names: ``p = new P {...}`` in a loop, a parameter overwritten with a
new point, ``var b = a; a = new P {...};``. In quads each name is one variable, so the
webs of :mod:`ssa_course.analysis.sroa_webs` would lump objects together that never meet.
This pass renames the *du-webs* of every struct variable (the classic register-allocation
webs: a use joins every definition that reaches it -- reaching definitions over the CFG,
exceptional edges included, so a handler is reached by what was defined before the
throwing call). A variable whose definitions all meet keeps its name; otherwise the web
holding the parameter (or the first definition) keeps it and each other web gets a fresh
name. Renaming a web changes no value: every read still sees the same definitions.
Unreachable instructions keep their names (they never run).
"""

from __future__ import annotations

from ssa_course.errors import Pos
from ssa_course.quads.analyses import reaching_definitions
from ssa_course.quads.cfg import CFG
from ssa_course.quads.flow import solve
from ssa_course.quads.ir import Function, Instr
from ssa_course.quads.names import Names
from ssa_course.ssa.construct import prepare_cfg

ENTRY = -1  # the definition of a parameter on entry


def split_struct_variables(fn: Function, structs: dict) -> Function:
    """``fn`` with every struct variable's unrelated webs renamed apart (``fn`` itself
    when nothing needs it)."""
    typed = {n for n, t in fn.params if str(t) in structs}
    counts: dict[str, int] = {}
    for i in fn.instrs():
        if i.dest is not None and str(i.type) in structs:
            typed.add(i.dest)
            counts[i.dest] = counts.get(i.dest, 0) + 1
    params = {n for n, _ in fn.params}
    many = {v for v in typed if counts.get(v, 0) + (v in params) > 1}
    if not many:
        return fn
    wanted = [i for i in fn.instrs() if i.dest in many or any(a in many for a in i.args)]
    reach = _reaching_uses(fn, wanted, many)
    parent: dict[int, int] = {}

    def find(d: int) -> int:
        parent.setdefault(d, d)
        while parent[d] != d:
            parent[d] = parent[parent[d]]
            d = parent[d]
        return d

    for defs in reach.values():
        for d in defs[1:]:
            parent[find(d)] = find(defs[0])
    owner: dict[int, str] = {}  # def -> its variable
    for i in wanted:
        if i.dest in many:
            owner[id(i)] = i.dest
    order = [(v, ENTRY - k) for k, v in enumerate(n for n, _ in fn.params)] + \
        [(i.dest, id(i)) for i in wanted if i.dest in many]
    taken = Names(typed | params | {i.dest for i in fn.instrs() if i.dest is not None})
    name_of: dict[int, str] = {}  # web root -> name
    first: set[str] = set()
    for v, d in order:
        if v not in many:
            continue
        root = find(d)
        if root in name_of:
            continue
        if v not in first:
            first.add(v)
            name_of[root] = v
        else:
            name_of[root] = taken.fresh(v, bare=False, sep=".w", start=2)  # v.w2, v.w3
    if all(n in many for n in name_of.values()):
        return fn
    body = []
    for item in fn.body:
        if isinstance(item, Instr) and (id(item) in owner or any(
                (id(item), k) in reach for k in range(len(item.args)))):
            new = item.copy()
            if new.dest in many and id(item) in owner:
                new.dest = name_of[find(id(item))]
            for k, a in enumerate(new.args):
                reaching = reach.get((id(item), k))
                if a in many and reaching:
                    new.args[k] = name_of[find(reaching[0])]
            item = new
        body.append(item)
    return Function(fn.name, list(fn.params), fn.ret, body)


def marked_cfg(fn: Function, wanted: list[Instr]) -> tuple[CFG, dict[int, Instr]]:
    """The CFG of ``fn`` and a way back from its instructions to ``wanted`` ones: the CFG
    copies instructions, so each wanted one gets a position object of its own (``at``)
    while the CFG is built; the map takes ``id`` of that object to the original. The
    originals get their own ``at`` back."""
    marks: dict[int, tuple[Instr, Pos | None]] = {}
    for instr in wanted:
        mark = Pos(0, 0)
        marks[id(mark)] = (instr, instr.at)
        instr.at = mark
    try:
        cfg = prepare_cfg(fn)
    finally:
        for instr, at in marks.values():
            instr.at = at
    return cfg, {key: instr for key, (instr, _) in marks.items()}


def _reaching_uses(fn: Function, wanted: list[Instr], names: set[str]
                   ) -> dict[tuple[int, int], list[int]]:
    """``(id(instr), arg index) -> definitions reaching that use`` (``id()`` of the
    defining instruction, or ``ENTRY - k`` for parameter ``k``), for reachable uses."""
    cfg, marks = marked_cfg(fn, wanted)

    def orig(instr: Instr) -> int:
        m = marks.get(id(instr.at))
        return id(m) if m is not None else id(instr)

    var_of: dict[int, str] = {ENTRY - k: n for k, (n, _) in enumerate(fn.params)}
    for block in cfg.blocks.values():
        for instr in block.instrs:
            if instr.dest in names:
                var_of[orig(instr)] = instr.dest
    params = {n: ENTRY - k for k, (n, _) in enumerate(fn.params) if n in names}
    facts = solve(cfg, reaching_definitions(cfg, params=params, names=names, key=orig))
    found: dict[tuple[int, int], list[int]] = {}
    for name, block in cfg.blocks.items():
        for instr, reaching in zip(block.instrs, facts.points(name), strict=False):
            if id(instr.at) not in marks:
                continue
            for k, a in enumerate(instr.args):
                if a in names:
                    found[(orig(instr), k)] = sorted(d for d in reaching if var_of[d] == a)
    return found


