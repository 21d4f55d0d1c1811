"""Making exception control flow explicit in a quads CFG (LLVM's "invoke" view).

In quads, where a ``throw`` lands is decided at run time by the handler stack that
``enter``/``leave`` maintain. SSA construction needs it as edges: a value assigned in a
``try`` region and read in its handler must reach the handler through a phi. So we

1. find, by a forward data-flow over the CFG, the stack of active handlers at every
   instruction (``enter`` pushes its handler on the edge into the body; ``leave`` pops);
2. end a block after every ``call`` that runs inside a ``try`` region (a call may throw),
   and give that block, and every block ending in ``throw`` inside a region, an extra
   successor: the innermost handler (``BasicBlock.throws_to``).

Values on such an exceptional edge are the ones *before* the throwing instruction: a
``x = call f`` that throws never assigns ``x``. Julia's IR solves the same problem
differently, with Upsilon/PhiC nodes (lesson 04).
"""

from __future__ import annotations

from ssa_course.quads.cfg import CFG, BasicBlock
from ssa_course.quads.names import Names

Stack = tuple[str, ...]  # the handlers in force, innermost last (a tuple: shared, hashable)


def handler_stacks(cfg: CFG) -> dict[str, Stack]:
    """The handler stack (innermost last) on entry to each reachable block."""
    # ``enter`` pushes a handler, ``leave`` pops one. A well-formed program reaches each
    # block with one stack, whatever the path: the first one found is the block's (a
    # graph search, not a data-flow fixpoint).
    at_entry: dict[str, Stack] = {cfg.entry: ()}
    work = [cfg.entry]
    while work:
        name = work.pop()
        block = cfg.blocks[name]
        stack = at_entry[name]
        for instr in block.instrs[:-1] if block.terminator else block.instrs:
            if instr.op == "leave" and stack:
                stack = stack[:-1]
        term = block.terminator
        outgoing: list[tuple[str, Stack]] = []
        if term is not None and term.op == "enter":
            # the try body runs with the new handler; the handler itself with the old
            # stack (a throw inside a handler goes to the enclosing one)
            body, handler = term.labels
            outgoing = [(body, stack + (handler,)), (handler, stack)]
        else:
            outgoing = [(s, stack) for s in block.succs]
            if block.throws_to is not None and stack:
                # throwing to the innermost handler pops it on that edge
                outgoing = [(s, stack if s != block.throws_to else stack[:-1])
                            for s in block.succs]
        for succ, st in outgoing:
            if succ not in at_entry:
                at_entry[succ] = st
                work.append(succ)
    return at_entry


def add_exception_edges(cfg: CFG) -> int:
    """Split blocks after calls inside try regions and add the exceptional edges.

    Returns the number of exceptional edges added. Block order is kept: the second half
    of a split block follows the first in layout.
    """
    # A call inside a try may throw: its handler becomes a successor of the call's
    # block, so the call must end a block (the data-flow rule of quads/flow.py: the
    # exceptional edge leaves just before that last instruction).
    if not any(b.instrs and b.instrs[-1].op == "enter" for b in cfg.blocks.values()):
        # no ``enter``: every block's handler stack is empty, nothing may throw to a
        # handler, and the CFG already is what the rebuild below would make of it
        # (#22: the rebuild cost a fifth of a second per call at 10k statements)
        return 0
    stacks = handler_stacks(cfg)
    labels = Names(cfg.blocks)  # the second half of a split block b3 is b3.x1, ...
    new_blocks: dict[str, BasicBlock] = {}  # rebuilt in layout order, halves in sequence
    added = 0
    for name, block in cfg.blocks.items():
        stack = stacks.get(name, ())
        pieces: list[BasicBlock] = []
        current = BasicBlock(name, [], list(block.succs), [], block.labelled, line=block.line)
        for i, instr in enumerate(block.instrs):
            current.instrs.append(instr)
            if instr.op == "leave" and stack:
                stack = stack[:-1]
            last = i == len(block.instrs) - 1
            if instr.op == "call" and stack:
                # (also when the call ends the block: the normal successor then gets a
                # block of its own, entered only from here)
                rest = BasicBlock(labels.fresh(name, bare=False, sep=".x"), [],
                                  list(block.succs), [], False,
                                  line=block.line)
                current.succs = [rest.name, stack[-1]]
                current.throws_to = stack[-1]
                pieces.append(current)
                current = rest
                added += 1
            elif instr.op == "throw" and stack and last:
                # a throw ends its block already: it only gains the edge to its handler
                current.throws_to = stack[-1]
                if stack[-1] not in current.succs:
                    current.succs.append(stack[-1])
                added += 1
        pieces.append(current)
        for piece in pieces:
            new_blocks[piece.name] = piece
    cfg.blocks.clear()
    cfg.blocks.update(new_blocks)
    # the splits changed who precedes whom: recompute every block's predecessors
    for block in cfg.blocks.values():
        block.preds = []
    for block in cfg.blocks.values():
        for s in block.succs:
            cfg.blocks[s].preds.append(block.name)
    return added
