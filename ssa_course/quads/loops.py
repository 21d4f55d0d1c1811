"""Loop nesting depth of quads blocks, from natural loops (used by coalescing and layout to
guess which code runs most often)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ssa_course.quads.cfg import CFG
from ssa_course.quads.domtree import Dominance


def natural_loops(preds: Mapping[str, Iterable[str]], dom: Dominance[str]
                  ) -> dict[str, tuple[list[str], set[str]]]:
    """Each natural loop by its header: its latches and its body. An edge ``t -> h`` where
    ``h`` dominates ``t`` is a back edge; the loop of ``h`` is ``h`` plus every block that
    reaches one of its latches without passing through ``h`` (back edges to one header
    share one loop). Only blocks reachable from the entry (those in ``dom``) take part; a
    cycle without a dominating header (irreducible, possible in Bril) is no natural loop."""
    loops: dict[str, tuple[list[str], set[str]]] = {}
    for head in dom.idom:
        tails = [t for t in preds.get(head, ()) if t in dom and dom.dominates(head, t)]
        if not tails:
            continue
        body, work = {head}, list(tails)
        while work:
            b = work.pop()
            if b not in body:
                body.add(b)
                work.extend(p for p in preds.get(b, ()) if p in dom)
        loops[head] = (tails, body)
    return loops


def forward_only(succs: Mapping[str, Iterable[str]]) -> bool:
    """Does every edge go to a node later in ``succs``' order (a successor it does not
    name counts as later)? Then the graph has no cycle, so no back edge and no loop: a
    loop-free function needs no dominator tree to know its loop depths are all 0."""
    position = {name: k for k, name in enumerate(succs)}
    return all(position.get(s, k + 1) > k for k, kids in enumerate(succs.values())
               for s in kids)


def loop_depths(cfg: CFG) -> dict[str, int]:
    """How many natural loops (:func:`natural_loops`) each block is in. Blocks in no loop
    (and unreachable ones) have depth 0."""
    depth = {name: 0 for name in cfg.blocks}
    succs = {n: list(b.succs) for n, b in cfg.blocks.items()}
    if forward_only(succs):  # (#22: a sixth of a second per call at 10k statements saved;
        return depth  # coalescing and layout each ask)
    preds: dict[str, list[str]] = {}
    for n, kids in succs.items():
        for k in kids:
            preds.setdefault(k, []).append(n)
    for _, body in natural_loops(preds, Dominance(succs, cfg.entry)).values():
        for b in body:
            depth[b] += 1
    return depth
