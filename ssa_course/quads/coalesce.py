"""Copy coalescing after out-of-SSA (lesson 08).

Leaving SSA puts a copy on every edge into a phi: ``i.2 = add i.1 one; ...; i.1 = id
i.2`` at the end of a loop body. When the two names of a copy are never *both* needed
with different values, they can be one name and the copy disappears -- one instruction
less per iteration, and often a whole block (the copies on a split edge) less per trip.

"Never both needed" is Chaitin's *interference*: ``a`` and ``b`` interfere when one is
written while the other is live, except that ``a = id b`` itself does not make them
interfere (both hold the same value afterwards). Two variables that do not interfere can
share a name without changing any value a read sees. The pass

1. computes liveness over the CFG with the one solver (:mod:`ssa_course.quads.flow`;
   exceptional edges included: a variable read in a handler is live before every call
   that may throw to it, and a call that throws does not write its destination);
2. records interference, but only among variables that some copy connects;
3. merges the two names of each copy whose classes do not interfere -- copies in the
   deepest loops first, since they run most often -- and deletes the copies that became
   ``x = id x``.

Names that are observable stay: ``main``'s parameters (error messages name the
command-line arguments) and variables a path may read before writing them (the error
names the variable). Variables written with different types are left alone. A function
with ``phi`` instructions is left as it is: the pass works on ordinary quads.
"""

from __future__ import annotations

from collections.abc import Callable, Set
from typing import Any

from ssa_course.quads.analyses import liveness
from ssa_course.quads.cfg import CFG, build_cfg
from ssa_course.quads.exceptions import add_exception_edges
from ssa_course.quads.flow import Facts
from ssa_course.quads.ir import Function, Instr
from ssa_course.quads.loops import loop_depths


def coalesce_copies(fn: Function) -> Function:
    """``fn`` with the names of non-interfering copies merged and those copies gone."""
    if any(i.op == "phi" for i in fn.instrs()):
        return fn
    cfg = build_cfg(fn, copy=False)  # (only read: the renaming copies what it changes)
    add_exception_edges(cfg)  # what a handler reads is live before a call that may throw
    live = liveness(cfg)
    params = [name for name, _ in fn.params]
    # live on entry but not a parameter: read before any assignment on some path --
    # renaming it could change which "undefined variable" error a run reports
    mergeable = _mergeable(fn, live.top[cfg.entry] - set(params))
    copies = _copies(cfg, mergeable)
    if not copies:
        return fn
    # Chaitin's test, restricted to the names copies mention: two names interfere when
    # one is defined where the other is live (they may hold different values then)
    candidates = {v for _, d, s in copies for v in (d, s)}
    adj = _interference(live, candidates, params)
    # main's parameters are named by the command line (``--arg n=5``): they keep names
    fixed = set(params) if fn.name == "main" else set()
    rename = merge_classes([(d, s) for _, d, s in copies], adj,
                           lambda v: 2 if v in fixed else 0)
    return apply_renaming(fn, rename, "id")


def apply_renaming(fn: Function, rename: dict[str, str], trivial_op: str) -> Function:
    """``fn`` with every variable renamed by ``rename``; instructions ``trivial_op`` (a copy
    or a phi) that now only read their own destination are dropped. An instruction that
    names no renamed variable is kept as it is (shared with ``fn``), the others are
    copies."""
    body = []
    for item in fn.body:
        if isinstance(item, Instr):
            if item.dest in rename or not rename.keys().isdisjoint(item.args):
                item = item.copy()
                item.args = [rename.get(a, a) for a in item.args]
                if item.dest is not None:
                    item.dest = rename.get(item.dest, item.dest)
            if item.op == trivial_op and all(a == item.dest for a in item.args):
                continue  # x = id x: the copy that coalescing was for -- it goes
        body.append(item)
    new_params = [(rename.get(name, name), t) for name, t in fn.params]
    return Function(fn.name, new_params, fn.ret, body)


def _mergeable(fn: Function, maybe_unset: Set[str]) -> set[str]:
    """Variables whose name may change: written with one type, never read unset."""
    types: dict[str, object] = {name: t for name, t in fn.params}
    mixed: set[str] = set()
    for instr in fn.instrs():
        if instr.dest is None:
            continue
        if instr.type is None or types.get(instr.dest, instr.type) != instr.type:
            mixed.add(instr.dest)  # Bril allows one name several types: leave it be
        types.setdefault(instr.dest, instr.type)
    return set(types) - mixed - maybe_unset


def _copies(cfg: CFG, mergeable: set[str]) -> list[tuple[int, str, str]]:
    """(loop depth, dest, source) of every copy that could go, deepest first, then in
    program order."""
    depth = loop_depths(cfg)
    found = []
    for name, block in cfg.blocks.items():
        for instr in block.instrs:
            if instr.op != "id" or instr.dest == instr.args[0]:
                continue
            d, s = instr.dest, instr.args[0]
            if d in mergeable and s in mergeable:
                found.append((depth.get(name, 0), d, s))
    # inner loops first: when two merges exclude each other, the copy that runs more
    # often is the one removed
    order = sorted(range(len(found)), key=lambda k: (-found[k][0], k))
    return [found[k] for k in order]


def _interference(live: Facts[frozenset[Any]], candidates: set[str], params: list[str]
                  ) -> dict[str, set[str]]:
    """Interference edges among ``candidates``: a definition interferes with everything
    live after it (but a copy not with its source); parameters with each other. After a
    call that may throw, "live after it" is its normal path: on the exceptional edge the
    call writes nothing (the rule of :mod:`ssa_course.quads.flow`), so what only the
    handler reads may share the destination's name."""
    adj: dict[str, set[str]] = {v: set() for v in candidates}
    for name, block in live.cfg.blocks.items():
        if candidates.isdisjoint([i.dest for i in block.instrs]):
            continue  # no definition here can add an edge: no walk
        for _, instr, after in live.walk_backward(name):
            d = instr.dest
            if d is None or d not in candidates:
                continue
            # d = id s: d and s hold the same value right after it, so the copy itself
            # does not make them interfere (the point of coalescing)
            skip = instr.args[0] if instr.op == "id" else None
            # (iterate over the smaller of the two sets)
            for v in after & candidates if len(after) > len(candidates) else after:
                if v != d and v != skip and v in candidates:
                    adj[d].add(v)
                    adj[v].add(d)
    # parameters are all defined at once, on entry: each interferes with the others
    ps = [p for p in params if p in candidates]
    for p in ps:
        adj[p].update(q for q in ps if q != p)
    return adj


def _union(a: set[str], b: set[str], own_a: bool, own_b: bool) -> set[str]:
    """``a | b``, reusing the larger of the two when it is ours to change."""
    if len(a) < len(b):
        a, b, own_a = b, a, own_b
    if not own_a:
        a = set(a)
    a |= b
    return a


def merge_classes(pairs: list[tuple[str, str]], adj: dict[str, set[str]],
                  rank: Callable[[str], int]) -> dict[str, str]:
    """Union the two names of each pair ``(d, s)``, in order, when no member of one class
    interferes with a member of the other; returns the new name of every renamed
    variable. A class carries the name of highest ``rank`` (a name of rank 2 must stay:
    two such never merge), else the name ``d``'s class had."""
    parent: dict[str, str] = {}

    def find(v: str) -> str:
        root = v
        while parent.get(root, root) != root:
            root = parent[root]
        while parent.get(v, v) != root:  # path compression
            parent[v], v = root, parent[v]
        return root

    members: dict[str, set[str]] = {}
    near: dict[str, set[str]] = {}  # class root -> members of interfering classes
    label: dict[str, str] = {}  # class root -> the name the class will carry
    for d, s in pairs:
        rd, rs = find(d), find(s)
        if rd == rs:
            continue  # already one name (an earlier merge joined them)
        md, ms = members.get(rd, {rd}), members.get(rs, {rs})
        nd, ns = near.get(rd, adj[rd]), near.get(rs, adj[rs])
        # merging classes, not just the pair: any member of one interfering with any
        # member of the other would make one name hold two live values
        if nd & ms or ns & md:
            continue
        name_d, name_s = label.get(rd, rd), label.get(rs, rs)
        if rank(name_d) == 2 and rank(name_s) == 2:
            continue
        parent[rs] = rd
        # the smaller set poured into the larger (never into ``adj``'s own sets): copying
        # both on every merge is quadratic when one class keeps growing
        members[rd] = _union(md, ms, rd in members, rs in members)
        near[rd] = _union(nd, ns, rd in near, rs in near)
        members.pop(rs, None)
        near.pop(rs, None)
        label[rd] = name_s if rank(name_s) > rank(name_d) else name_d
    # every variable gets its class's name (the ones keeping theirs are left out)
    rename = {}
    for v in adj:
        name = label.get(find(v), find(v))
        if name != v:
            rename[v] = name
    return rename
