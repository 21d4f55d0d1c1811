"""Scalar replacement of structs that never escape (SROA): their fields become variables.

A pass on ordinary quads (not SSA), one function at a time. The escape analysis runs on
the function's IRCode; a struct variable ``p`` is replaced when

* every definition of ``p`` is a ``newstruct`` whose value the analysis finds NoEscape;
* every use of ``p`` is the object of a ``getf``/``setf`` -- never a stored value, a call
  argument, a copy, a comparison or a return (Julia's SROA asks the same: escape analysis
  says nobody else can see the object, the uses say nobody else *names* it, so each field
  is a plain variable of this frame);
* ``p`` is defined on every path to each of its uses (true of every Tiny program; a Bril
  program may read a variable some paths never set, and its error must stay its own).

Then ``p = newstruct a b`` becomes ``p.x = id a; p.y = id b`` (fresh names), ``t = getf p
x`` becomes ``t = id p.x`` and ``setf p x v`` becomes ``p.x = id v``: the allocation
disappears, the later passes (SSA, copy propagation) dissolve the copies. Reading a field
never fails in Tiny (every field is given at ``new``; only array slots can be unset), and
structs do not count against the allocation budget, so outputs, errors and positions stay
the same. The IRCode is matched to the quads through the allocation's source position: the
pass gives each ``newstruct`` a position object of its own for the time of the analysis
(the IRCode carries it through unchanged) and takes it away afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass

from ssa_course.analysis.escape import analyze_program
from ssa_course.errors import Pos
from ssa_course.quads.cfg import build_cfg
from ssa_course.quads.ir import Function, Instr, Label, Program
from ssa_course.ssa.ircode import Expr, IRProgram, SSAValue
from ssa_course.ssa.julia import build_ircode


@dataclass(slots=True)
class SroaReport:
    """What the pass did: allocations (``newstruct`` instructions) removed per function."""

    removed: dict[str, int]
    kept: dict[str, int]

    def total(self) -> int:
        return sum(self.removed.values())


def _no_escape_allocations(program: Program) -> set[int]:
    """``id()`` of every ``newstruct`` instruction that the escape analysis finds NoEscape."""
    marks: dict[int, tuple[Instr, Pos | None]] = {}
    for fn in program.functions.values():
        for instr in fn.instrs():
            if instr.op == "newstruct":
                mark = Pos(instr.line or 0, 0)  # a position object of its own
                marks[id(mark)] = (instr, instr.pos)
                instr.pos = mark
    try:
        ir = IRProgram({name: build_ircode(fn) for name, fn in program.functions.items()},
                       program.structs)
        result = analyze_program(ir)
    finally:
        for instr, pos in marks.values():
            instr.pos = pos
    local: set[int] = set()
    for fe in result.functions.values():
        for pc, s in enumerate(fe.ir.stmts, start=1):
            mark = fe.ir.lines[pc - 1]
            if isinstance(s, Expr) and s.head == "newstruct" and id(mark) in marks \
                    and fe[SSAValue(pc)].has_no_escape():
                local.add(id(marks[id(mark)][0]))
    return local


def _defined_everywhere(fn: Function, names: set[str]) -> set[str]:
    """The names among ``names`` that are assigned on every path to each of their reads
    (a must-be-defined problem over the blocks; a handler sees what was defined at its
    ``enter``, which is all every throw inside the region is sure of)."""
    cfg = build_cfg(fn)
    blocks = list(cfg.blocks.values())
    full = frozenset(names)
    out = {b.name: full for b in blocks}  # optimistic start, lowered to a fixed point
    out[cfg.entry] = frozenset()
    entry_in: dict[str, frozenset[str]] = {}
    changed = True
    while changed:
        changed = False
        for b in blocks:
            ins = frozenset() if b.name == cfg.entry else (
                frozenset.intersection(*(out[p] for p in b.preds)) if b.preds else frozenset())
            entry_in[b.name] = ins
            cur = set(ins)
            for instr in b.instrs:
                if instr.dest in names:
                    cur.add(instr.dest)
            new = frozenset(cur)
            if new != out[b.name]:
                out[b.name] = new
                changed = True
    bad: set[str] = set()
    for b in blocks:
        cur = set(entry_in[b.name])
        for instr in b.instrs:
            bad.update(a for a in instr.args if a in names and a not in cur)
            if instr.dest in names:
                cur.add(instr.dest)
    return names - bad


def _candidates(fn: Function, local: set[int]) -> dict[str, str]:
    """Struct variables of ``fn`` that may be replaced -> their struct's name."""
    defs: dict[str, list[Instr]] = {}
    for instr in fn.instrs():
        if instr.dest is not None:
            defs.setdefault(instr.dest, []).append(instr)
    cands = {d: str(ds[0].type) for d, ds in defs.items()
             if all(i.op == "newstruct" and id(i) in local and str(i.type) == str(ds[0].type)
                    for i in ds)}
    cands = {d: s for d, s in cands.items() if d not in {n for n, _ in fn.params}}
    for instr in fn.instrs():
        for k, a in enumerate(instr.args):
            if a in cands and not (instr.op in ("getf", "setf") and k == 0):
                del cands[a]
    keep = _defined_everywhere(fn, set(cands))
    return {d: s for d, s in cands.items() if d in keep}


def _fresh(base: str, taken: set[str]) -> str:
    name, k = base, 1
    while name in taken:
        k += 1
        name = f"{base}.{k}"
    taken.add(name)
    return name


def replace_function(fn: Function, structs: dict, local: set[int]) -> tuple[Function, int]:
    """``fn`` with its replaceable struct variables turned into field variables."""
    cands = _candidates(fn, local)
    if not cands:
        return fn, 0
    taken = {n for n, _ in fn.params} | {i.dest for i in fn.instrs() if i.dest is not None}
    names = {d: {f: _fresh(f"{d}.{f}", taken) for f, _ in structs[s].fields}
             for d, s in cands.items()}
    types = {d: dict(structs[s].fields) for d, s in cands.items()}
    body: list[Instr | Label] = []
    removed = 0
    for item in fn.body:
        if not isinstance(item, Instr):
            body.append(item)
            continue
        if item.op == "newstruct" and item.dest in cands:
            removed += 1
            fields = [f for f, _ in structs[cands[item.dest]].fields]
            for f, a in zip(fields, item.args, strict=True):
                body.append(Instr("id", names[item.dest][f], types[item.dest][f], [a],
                                  line=item.line))
        elif item.op == "getf" and item.args[0] in cands:
            body.append(Instr("id", item.dest, item.type,
                              [names[item.args[0]][item.field]], line=item.line))
        elif item.op == "setf" and item.args[0] in cands:
            d = item.args[0]
            body.append(Instr("id", names[d][item.field], types[d][item.field],
                              [item.args[1]], line=item.line))
        else:
            body.append(item)
    return Function(fn.name, list(fn.params), fn.ret, body), removed


def scalar_replace(program: Program) -> tuple[Program, SroaReport]:
    """The program with every replaceable struct allocation gone, and what was removed."""
    local = _no_escape_allocations(program)
    functions: dict[str, Function] = {}
    report = SroaReport({}, {})
    for name, fn in program.functions.items():
        new, removed = replace_function(fn, program.structs, local)
        functions[name] = new
        report.removed[name] = removed
        report.kept[name] = sum(i.op == "newstruct" for i in new.instrs())
    return Program(functions, program.structs), report
