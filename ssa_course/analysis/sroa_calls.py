"""Scalar replacement across calls: a struct handed to a callee that only reads it.

A struct parameter ``p`` of ``g`` is *promotable* when ``g`` never writes a field of it and
never lets it go anywhere: every name that can hold it (the parameter and its copies, its
*web*) is defined only by the entry or by copies inside the web, and is used only to read
a field (``getf``), to be copied inside the web, to be compared with a member of the web
(``eq``, always true: the web holds one object) or to be passed on at a promotable
position of a call. The set is a greatest fixed point over the call graph (recursion
included): start from every struct parameter, drop those whose argument goes to a call
position that was dropped, until nothing changes.

A call whose arguments at promotable positions ``S`` are webs that the caller replaces
(their fields are variables) becomes a call of the *clone* ``g`` specialised on ``S``: the
struct argument is replaced by its field variables, in field order (LLVM's argument
promotion). The clone reads the field parameters where ``g`` read the fields. This is
exact because no field of the object changes during the call: the callee does not write
it, and nobody else can -- the object is named only by the caller's web (that is why the
caller must be replacing the web; an ordinary object might be reached through an array
or another parameter and written there). The call itself stays (same depth, same
exceptions); only its arguments change.
"""

from __future__ import annotations

from ssa_course.quads.ir import Function, Instr, Label, Program
from ssa_course.tiny.types import BOOL

Demand = tuple[str, frozenset[int]]  # (callee, promoted argument positions)


def _param_web(fn: Function, k: int) -> set[str] | None:
    """The names that can hold parameter ``k`` of ``fn`` (its copies), or ``None`` when
    one of them is defined otherwise (then the parameter is not promotable)."""
    web = {fn.params[k][0]}
    grew = True
    instrs = list(fn.instrs())
    while grew:
        grew = False
        for i in instrs:
            if i.op == "id" and i.args[0] in web and i.dest not in web:
                web.add(i.dest)
                grew = True
    for i in instrs:
        if i.dest in web and not (i.op == "id" and i.args[0] in web):
            return None
    if any(p in web for p, _ in fn.params[:k] + fn.params[k + 1:]):
        return None  # another parameter's object would share the names
    return web


def promotable(program: Program) -> dict[str, dict[int, set[str]]]:
    """``function -> {position: web}`` of every promotable struct parameter."""
    found: dict[str, dict[int, set[str]]] = {}
    for name, fn in program.functions.items():
        for k, (_, t) in enumerate(fn.params):
            if str(t) in program.structs and (web := _param_web(fn, k)) is not None:
                found.setdefault(name, {})[k] = web
    changed = True
    while changed:
        changed = False
        for name, fn in program.functions.items():
            for k, web in list(found.get(name, {}).items()):
                if not _read_only(fn, web, found):
                    del found[name][k]
                    changed = True
    return found


def _read_only(fn: Function, web: set[str], found: dict[str, dict[int, set[str]]]) -> bool:
    for i in fn.instrs():
        for j, a in enumerate(i.args):
            if a not in web:
                continue
            if (i.op == "getf" and j == 0) or i.op == "id":
                continue
            if i.op == "eq" and all(b in web for b in i.args):
                continue
            if i.op == "call" and i.funcs and j in found.get(i.funcs[0], {}):
                continue
            return False
    return True


def promoted_call(instr: Instr, fields: dict[str, list[str]],
                  found: dict[str, dict[int, set[str]]],
                  clone_name: dict[Demand, str]) -> tuple[Instr, Demand] | None:
    """``instr`` (a call) with its promotable struct arguments that are in ``fields``
    (replaced webs -> their field variables) expanded, calling the clone; or ``None``."""
    if instr.op != "call" or not instr.funcs:
        return None
    callee = instr.funcs[0]
    at = frozenset(j for j, a in enumerate(instr.args)
                   if a in fields and j in found.get(callee, {}))
    if not at:
        return None
    demand = (callee, at)
    args: list[str] = []
    for j, a in enumerate(instr.args):
        args.extend(fields[a] if j in at else [a])
    new = instr.copy()
    new.args, new.funcs = args, [clone_name[demand]]
    return new, demand


def clone_names(program: Program, found: dict[str, dict[int, set[str]]]) -> dict:
    """A name for every clone a call might need, made on demand (a dict that invents)."""
    taken = set(program.functions)

    class Names(dict):
        def __missing__(self, demand: Demand) -> str:
            callee, at = demand
            base = f"{callee}__sroa_{'_'.join(str(j + 1) for j in sorted(at))}"
            name, n = base, 1
            while name in taken:
                n += 1
                name = f"{base}_{n}"
            taken.add(name)
            self[demand] = name
            return name

    return Names()


def make_clones(program: Program, demands: list[Demand],
                found: dict[str, dict[int, set[str]]], names: dict) -> dict[str, Function]:
    """Every clone the ``demands`` need, and those their own calls need (a worklist)."""
    made: dict[str, Function] = {}
    work = list(demands)
    while work:
        demand = work.pop()
        name = names[demand]
        if name in made:
            continue
        fn = program.functions[demand[0]]
        made[name], more = _clone(fn, name, demand[1], program.structs, found, names)
        work.extend(more)
    return made


def _clone(fn: Function, name: str, at: frozenset[int], structs: dict,
           found: dict[str, dict[int, set[str]]], names: dict
           ) -> tuple[Function, list[Demand]]:
    webs = {k: found[fn.name][k] for k in at}
    params: list[tuple[str, object]] = []
    taken = {n for n, _ in fn.params} | {i.dest for i in fn.instrs() if i.dest is not None}
    fields: dict[str, list[str]] = {}
    field_of: dict[str, dict[str, str]] = {}
    for k, (p, t) in enumerate(fn.params):
        if k not in at:
            params.append((p, t))
            continue
        names_k: dict[str, str] = {}
        for f, ft in structs[str(t)].fields:
            v, n = f"{p}.{f}", 1
            while v in taken:
                n += 1
                v = f"{p}.{f}.{n}"
            taken.add(v)
            names_k[f] = v
            params.append((v, ft))
        for m in webs[k]:
            field_of[m] = names_k
            fields[m] = list(names_k.values())
    body: list[Instr | Label] = []
    demands: list[Demand] = []
    for item in fn.body:
        if not isinstance(item, Instr):
            body.append(item)
            continue
        call = promoted_call(item, fields, found, names)
        if call is not None:
            body.append(call[0])
            demands.append(call[1])
        elif item.op == "getf" and item.args[0] in field_of:
            body.append(Instr("id", item.dest, item.type, [field_of[item.args[0]][item.field]],
                              line=item.line))
        elif item.op == "id" and item.args[0] in field_of:
            continue  # a copy of the one object: its names are the same field parameters
        elif item.op == "eq" and item.args[0] in field_of:
            body.append(Instr("const", item.dest, BOOL, value=True, line=item.line))
        else:
            body.append(item)
    return Function(name, params, fn.ret, body), demands
