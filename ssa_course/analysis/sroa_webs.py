"""Which struct variables of one quads function scalar replacement may dissolve: *webs*.

A web is a set of struct variables connected by copies (``q = id p``): in quads a variable
assigned on several paths is one name, so merges (what SSA would make phis of) are
already inside a web, and ``var q = p;`` joins ``q`` to ``p``'s web. A web is replaced by
one variable per field, shared by all its members, when

* every definition of a member is a ``newstruct`` of one struct type that the escape
  analysis finds NoEscape, or a copy of another member (so the objects a member can hold
  are exactly the web's own allocations, and no other name anywhere refers to them);
* every use of a member reads or writes a field (``getf``/``setf`` as the object), copies
  it to another member, or compares it (``eq``) -- never a stored value or a return (then
  another name could see the object), and a call argument only where the callee can take
  the fields instead (:mod:`ssa_course.analysis.sroa_calls`: it only reads them, or the
  call is the last use of the object);
* each member is defined on every path to each of its reads (true of Tiny; a Bril program
  may read an unset variable, and its error must stay its own);
* no two objects of the web are alive at once: right after a member ``v`` gets a new
  object, no *other* member is live (backward liveness, exceptional edges included, so a
  handler's reads count inside its try region).

The last condition is what makes one set of field variables enough. It gives an
invariant: at every point, every live member holds the web's *current* object (the one
made last). A ``newstruct`` makes a new current object and no other member still needs
the old one; a copy hands on the current object; nothing else assigns a member. So a field
read or write through any live member reaches the current object's fields -- exactly the
shared field variables -- and aliasing is respected: after ``q = p; q.x = 5``, ``p.x`` is
5 because both name the same variable. For the same reason a comparison of two members is
``true`` (both live, both the current object) and a comparison of a member with anything
else is ``false`` (nothing outside the web can name a web object).
"""

from __future__ import annotations

from dataclasses import dataclass

from ssa_course.analysis.sroa_split import marked_cfg
from ssa_course.quads.analyses import assigned, liveness
from ssa_course.quads.flow import solve
from ssa_course.quads.ir import Function, Instr
from ssa_course.ssa.construct import prepare_cfg

# What a use means for a kept web (the report's reason), by instruction.
USE_REASONS = {"call": "passed to a call", "ret": "returned", "setf": "stored in a field",
               "astore": "stored in an array", "newstruct": "stored in a new struct",
               "throw": "thrown", "print": "printed"}


@dataclass(slots=True)
class Web:
    """One web: its members, its struct, and why it is kept (``None``: replaced)."""

    members: set[str]
    struct: str
    reason: str | None = None


def _find(parent: dict[str, str], v: str) -> str:
    root = v
    while parent[root] != root:
        root = parent[root]
    while parent[v] != root:  # path compression, iteratively
        parent[v], v = root, parent[v]
    return root


def struct_webs(fn: Function, structs: dict, local: set[int],
                promotable: dict | None = None, known: set[str] | None = None
                ) -> tuple[list[Web], set[int]]:
    """Every web of struct variables in ``fn``, each with ``reason`` set when it must stay
    (``local``: ``id()`` of the ``newstruct`` instructions found NoEscape), and the ``id()``
    of every copy that *moves* an object from one web to another. ``promotable``: the
    call positions that take a struct's fields instead (:mod:`sroa_calls`); ``known``: the
    program's functions (a call of one may take a web's object for good)."""
    promotable = promotable or {}
    known = known or set()
    types: dict[str, str] = {}
    params = {n for n, _ in fn.params}
    for n, ty in fn.params:
        if str(ty) in structs:
            types[n] = str(ty)
    instrs = list(fn.instrs())
    for i in instrs:
        if i.dest is not None and str(i.type) in structs:
            types[i.dest] = str(i.type)
    copies = [i for i in instrs if i.op == "id" and i.dest in types and i.args[0] in types]
    after = live_after(fn, [i for i in instrs if i.dest in types or i.op == "call"])
    # a copy whose source is still needed afterwards makes two names of one object: one web;
    # one whose source is dead hands the object on (a move), and the webs may stay apart
    alias = {id(i) for i in copies if id(i) not in after or i.args[0] in after[id(i)]}
    # Grow `alias` to a fixpoint: each round rebuilds the webs from scratch (union-find over
    # the alias copies) and demotes to alias every move that would leave a live name in
    # its old web. `alias` only grows and is bounded by the copies, so the loop ends.
    while True:
        parent = {v: v for v in types}
        for i in copies:
            if id(i) in alias:
                parent[_find(parent, i.result())] = _find(parent, i.args[0])
        webs: dict[str, Web] = {}
        for v, t in types.items():
            webs.setdefault(_find(parent, v), Web(set(), t)).members.add(v)
        member_of = {v: webs[_find(parent, v)] for v in types}
        # a move must leave no name of the object behind in its old web
        bad = {id(i) for i in copies if id(i) not in alias
               and member_of[i.result()] is not member_of[i.args[0]]
               and after[id(i)] & member_of[i.args[0]].members}
        if not bad:
            break
        alias |= bad
    moves = {id(i) for i in copies if member_of[i.result()] is not member_of[i.args[0]]}
    # From here on, each rule only *refuses* webs (sets a reason; the first one stays, as the
    # report's explanation). One set of field variables needs one struct layout...
    for w in webs.values():
        if any(types[v] != w.struct for v in w.members):
            _keep(w, "mixes struct types")
    # ...and an object we made: a parameter's object lives on in the caller.
    for v in params & set(types):
        _keep(member_of[v], "holds a parameter")
    for i in instrs:
        web = member_of.get(i.dest) if i.dest is not None else None
        if web is not None:
            # Every definition of a member must be an allocation the escape analysis
            # cleared, or a copy inside the web; anything else (a load, a call's result)
            # brings in an object someone else may name.
            if i.op == "newstruct" and id(i) not in local:
                _keep(web, "shares a variable with an escaping allocation")
            elif i.op not in ("newstruct", "id"):
                _keep(web, f"merged with a reference from '{i.op}'")
        for k, a in enumerate(i.args):
            # The uses the rewrite handles: field access through the object (operand 0),
            # copies, and identity comparisons. Any other use needs the object itself.
            u = member_of.get(a)
            if u is None or (i.op in ("getf", "setf") and k == 0) or i.op in ("id", "eq"):
                continue
            if i.op == "call" and i.funcs and i.funcs[0] in known:
                param = promotable.get(i.funcs[0], {}).get(k)
                if (param is not None and not param.writes) or handed_over(i, u.members, after):
                    continue  # the callee takes the fields instead (reads them, or owns it)
            what = USE_REASONS.get(i.op, f"used by '{i.op}'")
            _keep(u, f"{what} @{i.funcs[0]}" if i.op == "call" and i.funcs else what)
    # The field variables must hold a value on every path to a use, as the object's name
    # did; a member possibly unassigned on some path (non-strict Bril) is refused.
    live = [w for w in webs.values() if w.reason is None]
    if live:
        defined = _defined_everywhere(fn, set().union(*(w.members for w in live)))
        for w in live:
            if not w.members <= defined:
                _keep(w, "not defined on every path to a use")
    for i in instrs:  # a new object for a web (made or moved in): no other member alive
        web = member_of.get(i.dest) if i.dest is not None else None
        if web is not None and (i.op == "newstruct" or id(i) in moves) and id(i) in after \
                and (after[id(i)] & web.members) - {i.dest}:
            _keep(web, "two of its objects are alive at once")
    changed = True
    while changed:  # webs joined by moves are replaced together or kept together
        changed = False
        for i in copies:
            src, dst = member_of[i.args[0]], member_of[i.result()]
            if (src.reason is None) != (dst.reason is None):
                _keep(src, f"moved to or from a kept struct ({dst.reason or src.reason})")
                _keep(dst, f"moved to or from a kept struct ({src.reason})")
                changed = True
    return list(webs.values()), moves


def passes_once(call: Instr, web: set[str]) -> bool:
    """Whether ``call`` names the web's object in one argument only."""
    return sum(a in web for a in call.args) <= 1


def handed_over(call: Instr, members: set[str], after: dict[int, set[str]]) -> bool:
    """Whether ``call`` may take the object of a web (``members``) for good: it names it
    once, and no name of it is live after the call (a handler's included). Then the
    callee may rebuild it from its fields: nobody could tell the copy from the original."""
    return passes_once(call, members) and id(call) in after and not after[id(call)] & members


# First reason wins: rules run from the most basic to the most derived, so the report
# names the root cause, not a consequence.
def _keep(web: Web, reason: str) -> None:
    if web.reason is None:
        web.reason = reason


def live_after(fn: Function, wanted: list[Instr]) -> dict[int, set[str]]:
    """``id(instr) -> variables live right after it`` for the ``wanted`` instructions of
    ``fn`` that can run (the CFG copies instructions: a position object of their own,
    ``at``, finds them again). After a call that may throw, both paths count: the callee
    ran on both, so a handler reading the object after it sees what the callee did."""
    cfg, marks = marked_cfg(fn, wanted)
    live = liveness(cfg)
    found: dict[int, set[str]] = {}
    for name in cfg.blocks:
        for k, instr, after in live.walk_backward(name):
            if id(instr.at) in marks:
                found[id(marks[id(instr.at)])] = set(after)
                if k == len(cfg.blocks[name].instrs) - 1:
                    found[id(marks[id(instr.at)])] |= live.from_handler(name) or set()
    return found


def _defined_everywhere(fn: Function, names: set[str]) -> set[str]:
    """The names among ``names`` that are assigned on every path to each of their reads
    (a must-be-assigned problem, exceptional edges included: a handler sees what was
    assigned before the instruction that threw)."""
    cfg = prepare_cfg(fn)
    facts = solve(cfg, assigned(cfg, [], must=True, universe=names))
    bad: set[str] = set()
    for name, block in cfg.blocks.items():
        for instr, before in zip(block.instrs, facts.points(name), strict=False):
            bad.update(a for a in instr.args if a in names and a not in before)
    return names - bad
