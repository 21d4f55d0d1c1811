"""Scalar replacement across calls: a struct handed to a callee that keeps it to itself.

A struct parameter ``p`` of ``g`` is *promotable* when ``g`` never lets it go anywhere:
every name that can hold it (the parameter and its copies, its *web*) is defined only by
the entry or by copies inside the web, and is used only to read or write a field
(``getf``/``setf``), to be copied inside the web, to be compared with a member of the web
(``eq``, always true: the web holds one object) or to be passed on at a promotable
position of a call. The set is a greatest fixed point over the call graph (recursion
included): start from every struct parameter, drop those with another use, until
nothing changes. A parameter *writes* when ``g`` writes a field of it or passes it on to
a position that writes; passing it on to such a position is allowed only where no name
of it is live after the call (exceptional edges included).

A call whose arguments at promotable positions ``S`` are webs that the caller replaces
(their fields are variables) becomes a call of the *clone* of ``g`` specialised on ``S``:
the struct argument is replaced by its field variables, in field order (LLVM's argument
promotion), and the clone reads and writes field parameters where ``g`` read and wrote the
fields. This is exact because nobody else sees the object during the call: it is named
only by the caller's web (that is why the caller must be replacing the web; an ordinary
object might be reached through an array or another parameter). A read-only position
sees the fields as they were at the call, which is all it could see; at a position that
writes, the callee's writes land in its own copies, so the caller may pass the object
there only when none of its names is live after the call (and only once per call: two
parameters holding one object must see each other's writes). The call itself stays (same
depth, same exceptions); only its arguments change.

A call that is the last use of the object (no name of it live after the call, a handler's
included, and named by one argument) may take it *for good*, at any position of any
function of the program: the clone starts by rebuilding the object from its field
parameters (``p = newstruct p.x p.y``) and then does with it whatever the callee did.
Nobody can tell the copy from the original, because nobody is left who could see the
original. The rebuilt allocation is the clone's own (a later round may replace it there);
its report line says ``(entry)``.

Clones are named ``callee__sroa_<positions>`` and made once per (callee, positions): a
registry kept across rounds reuses them, so recursion through a clone ends.
"""

from __future__ import annotations

from dataclasses import dataclass

from ssa_course.analysis.sroa_rewrite import Demand, FieldWeb, replace_webs
from ssa_course.analysis.sroa_webs import live_after, passes_once
from ssa_course.quads.ir import Function, Instr, Program
from ssa_course.quads.names import Names
from ssa_course.tiny.types import Type


@dataclass(slots=True)
class Param:
    """A promotable struct parameter: the names that hold it, and whether it is written."""

    web: set[str]
    writes: bool


Found = dict[str, dict[int, Param]]


def _param_web(fn: Function, k: int, instrs: list[Instr]) -> set[str] | None:
    """The names that can hold parameter ``k`` of ``fn`` (its copies), or ``None`` when
    one of them is defined otherwise (then the parameter is not promotable)."""
    # The parameter's names: itself and every copy of it, transitively. Inside the callee
    # these all hold the caller's one object, so they can all become the same fields.
    web = {fn.params[k][0]}
    grew = True
    while grew:
        grew = False
        for i in instrs:
            if i.op == "id" and i.args[0] in web and i.dest not in web:
                web.add(i.result())
                grew = True
    # A name reassigned to some other object would make "these names hold the parameter"
    # false on some path: such a parameter is not promotable.
    for i in instrs:
        if i.dest in web and not (i.op == "id" and i.args[0] in web):
            return None
    if any(p in web for p, _ in fn.params[:k] + fn.params[k + 1:]):
        return None  # another parameter's object would share the names
    return web


def promotable(program: Program) -> Found:
    """``function -> {position: Param}`` of every promotable struct parameter."""
    found: Found = {}
    facts: dict[str, tuple[list[Instr], dict[int, set[str]]]] = {}
    for name, fn in program.functions.items():
        instrs = list(fn.instrs())
        for k, (_, t) in enumerate(fn.params):
            if str(t) in program.structs and (web := _param_web(fn, k, instrs)) is not None:
                found.setdefault(name, {})[k] = Param(web, any(
                    i.op == "setf" and i.args[0] in web for i in instrs))
        if name in found:
            calls = [i for i in instrs if i.op == "call"]
            facts[name] = (instrs, live_after(fn, calls))
    # Promotability depends on the callees' own answers (a parameter passed on to another
    # function is fine only if that one's parameter is promotable), so iterate: each round
    # only removes parameters or sets `writes`, both monotone, so it ends.
    changed = True
    while changed:
        changed = False
        for name, params in found.items():
            instrs, after = facts[name]
            for k, param in list(params.items()):
                verdict = _uses(instrs, param.web, found, after)
                if verdict is None:
                    del params[k]
                    changed = True
                elif verdict and not param.writes:
                    param.writes = changed = True
    return found


def _uses(instrs: list[Instr], web: set[str], found: Found,
          after: dict[int, set[str]]) -> bool | None:
    """Whether the web's uses write through a call (``None``: a use that is not allowed)."""
    writes = False
    for i in instrs:
        for j, a in enumerate(i.args):
            if a not in web:
                continue
            # What a field-parameter clone can express: field access, copies, and comparing
            # the object with itself (always true). Anything else needs the real object.
            if (i.op in ("getf", "setf") and j == 0) or i.op == "id":
                continue
            if i.op == "eq" and all(b in web for b in i.args):
                continue
            param = found.get(i.funcs[0], {}).get(j) if i.op == "call" and i.funcs else None
            if param is None:
                return None
            # A callee that writes its copy of the fields cannot write them back: that is
            # only invisible if the object is passed once and never read after the call.
            if param.writes:
                if not passes_once(i, web) or (id(i) in after and after[id(i)] & web):
                    return None
                writes = True
    return writes


def promoted_call(instr: Instr, fields: dict[str, list[str]], known: set[str] | dict,
                  clone_name: dict[Demand, str]) -> tuple[Instr, Demand] | None:
    """``instr`` (a call of a function of the program, ``known``) with its struct
    arguments that are in ``fields`` (replaced webs -> their field variables) expanded,
    calling the clone; or ``None``. Every such argument is at a position the caller
    checked: promotable, or handed over (:func:`~ssa_course.analysis.sroa_webs.handed_over`)."""
    if instr.op != "call" or not instr.funcs or instr.funcs[0] not in known:
        return None
    # A clone per (callee, set of promoted positions): two call sites promoting the same
    # positions share one clone; different sets need different signatures.
    at = frozenset(j for j, a in enumerate(instr.args) if a in fields)
    if not at:
        return None
    demand = (instr.funcs[0], at)
    args: list[str] = []
    for j, a in enumerate(instr.args):
        args.extend(fields[a] if j in at else [a])
    new = instr.copy()
    new.args, new.funcs = args, [clone_name[demand]]
    return new, demand


def clone_names(program: Program) -> dict:
    """A name for every clone a call might need, made on demand (a dict that invents)."""
    taken = Names(program.functions)

    class CloneNames(dict):
        def __missing__(self, demand: Demand) -> str:
            callee, at = demand
            base = f"{callee}__sroa_{'_'.join(str(j + 1) for j in sorted(at))}"
            name = taken.fresh(base, sep="_", start=2)  # f__sroa_1 (or f__sroa_1_2, ...)
            self[demand] = name
            return name

    return CloneNames()


def make_clones(program: Program, demands: list[Demand],
                found: Found, names: dict) -> dict[str, Function]:
    """Every clone the ``demands`` need, and those their own calls need (a worklist)."""
    # A clone's body may itself pass promoted fields on (to another clone): a worklist,
    # with `made` and the program's names making each clone exactly once.
    made: dict[str, Function] = {}
    work = list(demands)
    while work:
        demand = work.pop()
        name = names[demand]
        if name in made or name in program.functions:
            continue
        fn = program.functions[demand[0]]
        made[name], more = _clone(fn, name, demand[1], program.structs, found, names)
        work.extend(more)
    return made


def _clone(fn: Function, name: str, at: frozenset[int], structs: dict,
           found: Found, names: dict
           ) -> tuple[Function, list[Demand]]:
    promoted = found.get(fn.name, {})
    webs = {k: promoted[k].web for k in at if k in promoted}
    rebuild: list[Instr] = []  # handed-over objects: made again from their fields
    params: list[tuple[str, Type]] = []
    taken = Names([n for n, _ in fn.params] + [i.dest for i in fn.instrs() if i.dest])
    member: dict[str, FieldWeb] = {}
    for k, (p, t) in enumerate(fn.params):
        if k not in at:
            params.append((p, t))
            continue
        names_k: dict[str, str] = {}
        for f, ft in structs[str(t)].fields:
            v = taken.fresh(f"{p}.{f}", start=2)  # p.x (or p.x.2, ...)
            names_k[f] = v
            params.append((v, ft))
        # Handed over but not promotable: the callee gets the fields and rebuilds the object
        # at entry. Exact, because the caller never uses the original again.
        if k not in webs:
            rebuild.append(Instr("newstruct", p, t, list(names_k.values())))
            continue
        web = FieldWeb(names_k, dict(structs[str(t)].fields))
        for m in webs[k]:
            member[m] = web
    # The same rewrite as the caller's webs (sroa_rewrite); a parameter's web has no
    # allocation and no move, and is compared only with itself.
    body, demands, _ = replace_webs(
        fn, member, set(), lambda item, fields: promoted_call(item, fields, found, names),
        list(rebuild))
    return Function(name, params, fn.ret, body), demands
