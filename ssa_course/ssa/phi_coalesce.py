"""Coalescing phi webs before leaving SSA (lesson 08).

Out of SSA, a phi ``x.3 = phi x.1 x.2 .a .b`` becomes the copies ``x.3 = id x.1`` at the
end of ``.a`` and ``x.3 = id x.2`` at the end of ``.b``. When ``x.1`` and ``x.3`` are
never alive at the same time they can simply be one variable, and that copy never
exists. Deciding this *in SSA form* matters: there, the copies of one edge are still
parallel, so a swap (``a.2 = phi b.1 ...``, ``b.2 = phi a.1 ...``) does not make ``a.1``
and ``a.2`` interfere the way two sequential copies would.

Two SSA names interfere when one is live where the other is defined (a phi's argument
is used at the end of its predecessor, a phi's result is defined on entry to its block,
all phis of a block and all parameters at the same moment). The pass merges the result
of each phi with its arguments, class by class, whenever no two members of the merged
class interfere (Budimlic et al.'s fast copy coalescing, greedily): first arguments from
deeper loops (they run most often), and among equals an argument that is the same
source variable (``a.7`` and ``a``) -- keeping the copies where the source program had
its own. Phis whose arguments all became their result disappear; the others stay for
out-of-SSA, which turns them into (fewer) copies. The result has phis but is no longer
strict SSA: several blocks may assign one name.

Liveness is the one solver's (:mod:`ssa_course.quads.flow`), on the CFG split at calls
that may throw: a phi of a handler reads its argument before the call its label names.
Phis at the top of an exception handler are left alone (their values are those before a
throwing call, anywhere in the ``try``), and so are names whose change could be seen:
``main``'s parameters and variables read before any assignment.
"""

from __future__ import annotations

import re
from collections.abc import Set

from ssa_course.quads.analyses import live_variables
from ssa_course.quads.cfg import CFG, build_cfg
from ssa_course.quads.coalesce import apply_renaming, merge_classes
from ssa_course.quads.exceptions import add_exception_edges
from ssa_course.quads.flow import solve
from ssa_course.quads.ir import UNDEFINED, Function
from ssa_course.quads.loops import loop_depths
from ssa_course.tiny.types import Type

_NUMBERED = re.compile(r"^(.+?)(\.\d+)+$")


def origin(name: str) -> str:
    """The source variable an SSA name was made from (``i.12`` -> ``i``; versions of
    versions too: ``i.1.12`` -> ``i``)."""
    m = _NUMBERED.match(name)
    return m.group(1) if m else name


def coalesce_phis(fn: Function) -> Function:
    """``fn`` (SSA form) with non-interfering phi webs given one name."""
    if not any(i.op == "phi" for i in fn.instrs()):
        return fn
    # The copy coalescer's machinery (quads/coalesce.py), with a phi's result and each
    # argument as the pair to merge: one name for the web means no copy out of SSA.
    cfg = build_cfg(fn, copy=False)  # (only read: the renaming copies what it changes)
    handlers = {i.labels[1] for i in fn.instrs() if i.op == "enter" and len(i.labels) == 2}
    pairs = _pairs(cfg, fn, handlers)
    if not pairs:
        return fn
    candidates = {v for _, d, a in pairs for v in (d, a)}
    # (_pairs only read the CFG: the interference may split its blocks at throwing calls)
    adj = _interference(fn, candidates, cfg)
    params = {name for name, _ in fn.params}
    fixed = params if fn.name == "main" else set()  # main's are named on the command line
    # rank: a class keeps a parameter's name over a version's (the signature is unchanged)
    rename = merge_classes([(d, a) for _, d, a in pairs], adj,
                           lambda v: 2 if v in fixed else 1 if v in params else 0)
    return apply_renaming(fn, rename, "phi")


def _pairs(cfg: CFG, fn: Function, handlers: set[str]) -> list[tuple[int, str, str]]:
    """(loop depth of the edge, phi result, argument) for every phi argument that may
    share the result's name, in the order to try them."""
    types: dict[str, Type | None] = {n: t for n, t in fn.params}
    mixed: set[str] = set()
    for instr in fn.instrs():
        if instr.dest is not None:
            if instr.type is None or types.get(instr.dest, instr.type) != instr.type:
                mixed.add(instr.dest)
            types.setdefault(instr.dest, instr.type)
    depth = loop_depths(cfg)
    found: list[tuple[int, bool, int, str, str]] = []
    for name, block in cfg.blocks.items():
        if name in handlers:
            continue  # a handler's phis get their values on exceptional edges: left alone
        for instr in block.instrs:
            if instr.op != "phi":
                continue
            d = instr.result()
            if UNDEFINED in instr.args or d in mixed:
                continue  # unset on some path: a read there must still fail
            for a, label in zip(instr.args, instr.labels, strict=False):
                if a == d or a not in types or a in mixed or types[a] != types[d]:
                    continue
                found.append((depth.get(label, 0), origin(a) != origin(d), len(found), d, a))
    # deepest loops first (their copies run most), then arguments that are versions of
    # the same source variable (i.2 with i.5: the web the source had), then in order
    found.sort(key=lambda f: (-f[0], f[1], f[2]))
    return [(f[0], f[3], f[4]) for f in found]


def _interference(fn: Function, candidates: set[str], cfg: CFG | None = None
                  ) -> dict[str, set[str]]:
    """Interference edges among ``candidates`` (SSA liveness, exceptions included).
    ``cfg``: ``fn``'s CFG as :func:`build_cfg` made it, if the caller has it (it is
    changed here: blocks are split at throwing calls)."""
    if cfg is None:
        cfg = build_cfg(fn)
    original = list(cfg.blocks)
    add_exception_edges(cfg)  # a call in a try ends its block, with an edge to the handler
    live = solve(cfg, live_variables(cfg, _phi_edges(cfg, original)))
    adj: dict[str, set[str]] = {v: set() for v in candidates}

    def conflict(d: str | None, live: Set[str]) -> None:
        if d is None or d not in candidates:
            return
        for v in live & candidates if len(live) > len(candidates) else live:
            if v != d and v in candidates:
                adj[d].add(v)
                adj[v].add(d)

    for name, block in cfg.blocks.items():
        dests = {i.result() for i in block.instrs if i.op == "phi"}
        # (a block with no phi and no definition of a candidate adds no edge: no walk)
        walk = bool(dests) or not candidates.isdisjoint([i.dest for i in block.instrs])
        for _, instr, after in live.walk_backward(name) if walk else ():
            if instr.op != "phi":
                conflict(instr.dest, after)  # (after a throwing call: its normal path)
            elif dests:  # the phis of a block are all defined at once, on entry
                for d in dests:
                    conflict(d, after | dests)
                dests = set()
        # out of SSA may put a successor's copies before this block's branch (when both
        # its labels name one block): its condition must survive them
        term = block.terminator
        if term is not None and term.args:
            for s in block.succs:
                if s == block.throws_to:
                    continue
                for i in cfg.blocks[s].instrs:
                    if i.op == "phi":
                        conflict(i.dest, set(term.args))
    # parameters (and whatever is read before any assignment) all exist on entry, at once
    entry = [n for n, _ in fn.params] + sorted(live.top[cfg.entry])
    for p in entry:
        conflict(p, set(entry))
    return adj


def _phi_edges(cfg: CFG, original: list[str]) -> dict[tuple[str, str], frozenset[str]]:
    """``(pred, block) -> variables the phis of block read on that edge``, in ``cfg`` after
    its blocks were split at throwing calls: a phi's label names a block as it was before
    (``original``), whose normal edges now leave from its last piece; an exceptional edge
    leaves from the piece that ends in the throwing instruction, which kept the name. A
    phi argument whose label names no edge into the block is read on all of them."""
    last_piece: dict[str, str] = {}
    known = set(original)
    current = None
    for name in cfg.blocks:  # the pieces of a split block follow each other in layout
        current = name if name in known or current is None else current
        last_piece[current] = name
    uses: dict[tuple[str, str], set[str]] = {}
    for name, block in cfg.blocks.items():
        preds = set(block.preds)  # a set: a join may have thousands of predecessors
        for instr in block.instrs:
            if instr.op != "phi":
                continue
            for a, label in zip(instr.args, instr.labels, strict=False):
                if a == UNDEFINED:
                    continue
                if cfg.blocks.get(label) is not None and \
                        cfg.blocks[label].throws_to == name and label in preds:
                    edges = [label]  # the exceptional edge from the throwing piece
                elif last_piece.get(label) in preds:
                    edges = [last_piece[label]]
                else:
                    edges = list(preds)
                for p in edges:
                    uses.setdefault((p, name), set()).add(a)
    return {edge: frozenset(v) for edge, v in uses.items()}
