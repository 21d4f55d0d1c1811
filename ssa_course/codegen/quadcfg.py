"""The blocks of one SSA quads function as instruction selection sees them.

A function's flat body (labels and instructions) is cut into blocks by
:func:`ssa_course.quads.cfg.build_cfg`, the builder every quads pass uses; a block that
does not end in a terminator falls into the next one (an explicit ``jmp`` is added) or, at
the end of the body, returns nothing. Blocks that no path from the entry reaches are
dropped (GCM leaves some behind). Loop headers are the targets of retreating edges of a
depth-first walk: every cycle has one, so a fuel check there stops every endless loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ssa_course.quads.cfg import build_cfg
from ssa_course.quads.ir import Function, Instr
from ssa_course.tiny.types import Type


@dataclass(eq=False, slots=True)
class QBlock:
    """A block of quads: its label, phis (at its top), the other instructions, successors."""

    label: str
    phis: list[Instr] = field(default_factory=list)
    body: list[Instr] = field(default_factory=list)
    succs: list[str] = field(default_factory=list)
    preds: list[str] = field(default_factory=list)
    handler: bool = False  # named second by an ``enter``: entered by a throw


def relabel_phis(block: QBlock, old: str, new: str) -> None:
    """``block``'s phis read from ``new`` what they read from ``old`` (an edge moved);
    copies, so a phi shared with another block's list is left alone."""
    moved = []
    for p in block.phis:
        c = p.copy()
        c.labels = [new if x == old else x for x in c.labels]
        moved.append(c)
    block.phis = moved


def function_blocks(fn: Function) -> list[QBlock]:
    """The reachable blocks of ``fn`` in body order, each ending in a terminator.

    The blocks are cut and named by the one block builder, :func:`~ssa_course.quads.cfg.
    build_cfg` (labels in a row name one block; an unlabelled block is ``b0``, ``b1``,
    ...); this only reshapes its blocks for selection: phis apart, ``nop``s dropped, and
    the fall-through made explicit."""
    # fn's own instructions, not copies: escape analysis names arrays kept in the frame by
    # their ``newarr`` instruction's identity (``Selector.stack``).
    cfg = build_cfg(fn, copy=False)
    live = cfg.reachable()  # blocks no path reaches are dropped (GCM leaves some behind)
    blocks: list[QBlock] = []
    for name, bb in cfg.blocks.items():
        if name not in live:
            continue
        block = QBlock(name, succs=list(bb.succs), preds=[p for p in bb.preds if p in live])
        blocks.append(block)
        for item in bb.instrs:
            if item.op == "nop":
                continue
            if item.op == "phi" and not block.body:
                block.phis.append(item)
            else:
                block.body.append(item)
        if bb.terminator is None:  # falls into the next block, or off the end: returns
            block.body.append(Instr("jmp", labels=list(bb.succs)) if bb.succs
                              else Instr("ret"))
    # a handler is whatever an ``enter`` names second (its ``catch`` may have been deleted
    # as dead code when the catch variable is unused)
    handlers = {b.body[-1].labels[1] for b in blocks if b.body[-1].op == "enter"}
    for block in blocks:
        block.handler = block.label in handlers
    return blocks


def loop_headers(blocks: list[QBlock]) -> set[str]:
    """Targets of retreating edges of a depth-first walk from the entry (iterative)."""
    by_label = {b.label: b for b in blocks}
    state: dict[str, int] = {}  # 1: on the walk's stack, 2: finished
    headers: set[str] = set()
    start = blocks[0].label
    state[start] = 1
    stack: list[tuple[str, int]] = [(start, 0)]
    while stack:
        label, k = stack[-1]
        succs = by_label[label].succs
        if k == len(succs):
            stack.pop()
            state[label] = 2
            continue
        stack[-1] = (label, k + 1)
        s = succs[k]
        if state.get(s) == 1:
            headers.add(s)
        elif s not in state:
            state[s] = 1
            stack.append((s, 0))
    return headers


def variable_types(fn: Function) -> dict[str, Type]:
    """The type of every variable of ``fn`` (parameters and destinations)."""
    types: dict[str, Type] = dict(fn.params)
    for item in fn.body:
        if isinstance(item, Instr) and item.dest is not None and item.type is not None:
            types[item.dest] = item.type
    return types


def use_counts(blocks: list[QBlock]) -> dict[str, int]:
    """How many times each variable is read (phis included)."""
    counts: dict[str, int] = {}
    for b in blocks:
        for i in (*b.phis, *b.body):
            for a in i.args:
                counts[a] = counts.get(a, 0) + 1
    return counts
