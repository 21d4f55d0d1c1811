"""Dominator-scoped redundancy elimination on SSA quads (the ``dom-cse`` pass of
``ssa-course opt``).

Global value numbering in the sea of nodes (lesson 06) merges two equal *pure* nodes
wherever they are, because a pure node floats: it has no control input. A division is not
pure in that sense: it may trap, so it stays pinned under the test that guards it, and two
divisions of the same operands under different controls are two nodes. GCM then writes
both. Bril's benchmarks do this all the time -- ``mod`` written as ``x - y * (x / y)``,
inlined next to the ``x / y`` the caller computes anyway.

This pass is the textbook *dominator-tree value numbering* (Briggs, Cooper and Simpson's
DVNT) restricted to what the graph left: walking the dominator tree from the entry with
a scoped table of the operations seen on the way (operation, type and operands), an
instruction equal to one in a block that dominates it is deleted, and its uses read the
earlier name instead.

Why that is safe: in strict SSA the earlier definition dominates the later one, which
dominates every use of the later name (a phi's use sits at the end of its predecessor,
dominated too), so every use can read the earlier name. The earlier operation ran on every
path to the later one with the same operands: it computed the same value, and where the
later one would have trapped the earlier one already did (a division by zero stops the
program at the first of them, the same message and position as before the pass: the one
that runs first is the one that stays). Only value operators and constants are numbered
(no loads, calls or allocations: their results depend on memory or identity). What it
guarantees: the same program with no operation executed more often, and strictly fewer
where a duplicate was found.
"""

from __future__ import annotations

from typing import Any

from ssa_course import opcodes
from ssa_course.floats import const_key
from ssa_course.quads.cfg import build_cfg
from ssa_course.quads.domtree import fast_immediate_dominators, tree_children
from ssa_course.quads.ir import Function, Instr, Label

Key = tuple[object, ...]  # an operation, its type and its operands (or a constant's value)


def _key(instr: Instr, rename: dict[str, str]) -> Key | None:
    """What makes two instructions compute the same value (None: never merged), ``instr``
    reading its arguments renamed by ``rename``."""
    if instr.dest is None:
        return None
    if instr.op == "const":
        return ("const", str(instr.type), *const_key(instr.value))
    op = opcodes.get(instr.op)
    if op is None:
        return None
    return (instr.op, str(instr.type), *[rename.get(a, a) for a in instr.args])


def dom_cse(fn: Function) -> Function:
    """``fn`` (strict SSA quads) without the operations a dominating block computes."""
    cfg = build_cfg(fn, copy=False)  # (only read: the body below copies what it renames)
    # (a walk down the dominator tree, no dominance query: its children are enough)
    children = tree_children(fast_immediate_dominators(
        {name: b.succs for name, b in cfg.blocks.items()}, cfg.entry))
    available: dict[Key, str] = {}
    rename: dict[str, str] = {}
    stack: list[tuple[str, list[Key] | None]] = [(cfg.entry, None)]
    while stack:  # explicit pre/post walk of the dominator tree
        name, added = stack.pop()
        if added is not None:  # leaving the block: its operations go out of scope
            for key in added:
                del available[key]
            continue
        mine: list[Key] = []
        for instr in cfg.blocks[name].instrs:
            op_key = _key(instr, rename)
            if op_key is None:
                continue
            earlier = available.get(op_key)
            if earlier is not None:
                rename[instr.result()] = earlier
            else:
                available[op_key] = instr.result()
                mine.append(op_key)
        stack.append((name, mine))
        stack.extend((kid, None) for kid in reversed(children[name]))
    if not rename:
        return fn
    body: list[Any] = []
    emptied = False  # an operation of the current block went and nothing is left of it
    for item in fn.body:
        if isinstance(item, Instr):
            if item.dest in rename:
                emptied = emptied or not body or isinstance(body[-1], Label)
                continue
            item = item.renamed(rename)  # (a copy only when it reads a renamed value)
        elif emptied and body and isinstance(body[-1], Label):
            # Two labels in a row name one block: a phi naming the emptied block as its
            # predecessor would then name no edge. The block keeps one ``nop`` in place of
            # the deleted operation (no more instructions run than before).
            body.append(Instr("nop"))
        if isinstance(item, Label):
            emptied = False
        body.append(item)
    return Function(fn.name, list(fn.params), fn.ret, body)
