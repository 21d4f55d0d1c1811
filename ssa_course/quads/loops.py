"""Loop nesting depth of quads blocks, from natural loops (used by coalescing and layout to
guess which code runs most often)."""

from __future__ import annotations

from ssa_course.quads.cfg import CFG
from ssa_course.quads.domtree import Dominance


def loop_depths(cfg: CFG) -> dict[str, int]:
    """How many natural loops each block is in. An edge ``t -> h`` where ``h`` dominates
    ``t`` is a back edge; its loop is ``h`` plus every block that reaches ``t`` without
    passing through ``h``. Blocks in no loop (and unreachable ones) have depth 0."""
    succs = {n: list(b.succs) for n, b in cfg.blocks.items()}
    dom = Dominance(succs, cfg.entry)
    idom = dom.idom
    preds: dict[str, list[str]] = {}
    for n, kids in succs.items():
        for k in kids:
            preds.setdefault(k, []).append(n)
    depth = {name: 0 for name in cfg.blocks}
    for head in idom:
        tails = [t for t in preds.get(head, []) if t in dom and dom.dominates(head, t)]
        if not tails:
            continue
        body, work = {head}, list(tails)
        while work:
            b = work.pop()
            if b not in body:
                body.add(b)
                work.extend(p for p in preds.get(b, []) if p in idom)
        for b in body:
            depth[b] += 1
    return depth
