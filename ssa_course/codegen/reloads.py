"""Redundant reloads go: a spilled value still in the register it was last loaded into
(or stored from) is not loaded again, and not stored back either.

Spill code is written one use at a time (:mod:`ssa_course.codegen.spill`): a reload before
every use, so ``cmp rax, [r13]`` followed by ``mov rdx, [r13 + rax*8 + 8]`` reloads the
same slot into ``rax`` twice. After allocation, one walk per block remembers which register
holds a copy of which slot; a reload of a slot into a register that already holds it is
deleted. The memory is forgotten when the register is written (a call writes every
caller-saved register: its ``defs`` say so), when the slot is written, and at the top of a
block with another predecessor than the block laid out before it.

Then a reload into a register nobody reads before it is written again goes too
(:func:`remove_dead_reloads`, liveness over the physical registers): a phi copy between
two values spilled to one slot left nqueens' latch `mov rdx, [count]` with rdx dead, once
the store back was gone.
"""

from __future__ import annotations

from ssa_course.codegen.dead import sweep_block
from ssa_course.codegen.liveness import Liveness
from ssa_course.codegen.mir import MFunction, MInstr, PReg, Reg, Slot


def remove_redundant_reloads(fn: MFunction) -> int:
    """Delete reloads of a value that is still in the register (after allocation, before
    the frame is laid out); returns how many went."""
    removed = 0
    preds: dict[str, list[str]] = {}
    for block in fn.blocks:
        for succ in block.succs:
            preds.setdefault(succ, []).append(block.label)
    holds: dict[str, int] = {}  # register name -> the slot index it has a copy of
    previous: str | None = None
    for block in fn.blocks:
        # a block entered only from the one before it keeps what that block knew
        if block.handler or preds.get(block.label) != [previous]:
            holds = {}
        previous = block.label
        kept = []
        for instr in block.instrs:
            ops = instr.operands
            if instr.op == "mov" and len(ops) == 2:
                dst, src = ops
                if isinstance(dst, PReg) and isinstance(src, Slot):  # a reload
                    if holds.get(dst.name) == src.index:
                        removed += 1
                        continue
                    kept.append(instr)
                    _forget_register(holds, instr)
                    holds[dst.name] = src.index
                    continue
                if isinstance(dst, Slot):  # a store: the slot now equals the source
                    # ... which it already does when the register was loaded from (or
                    # stored to) this slot and neither changed since: the store goes too
                    # (a phi copy between two values spilled to one slot, nqueens' count).
                    if isinstance(src, PReg) and holds.get(src.name) == dst.index:
                        removed += 1
                        continue
                    for reg in [r for r, k in holds.items() if k == dst.index]:
                        del holds[reg]
                    kept.append(instr)
                    _forget_register(holds, instr)
                    if isinstance(src, PReg):
                        holds[src.name] = dst.index
                    continue
            kept.append(instr)
            _forget_register(holds, instr)
            for o in ops:  # any other write to a slot (none is expected): forget it
                if isinstance(o, Slot) and o is ops[0] and instr.op not in ("cmp", "test"):
                    for reg in [r for r, k in holds.items() if k == o.index]:
                        del holds[reg]
        block.instrs = kept
    return removed


def remove_dead_reloads(fn: MFunction) -> int:
    """Delete reloads (``mov reg, slot``) whose register is not live after them (after
    allocation, every register physical); returns how many went."""
    live = Liveness(fn)

    def drop(instr: MInstr, after: set[Reg], kept: list[MInstr]) -> bool:
        ops = instr.operands
        return (instr.op == "mov" and len(ops) == 2 and isinstance(ops[0], PReg)
                and isinstance(ops[1], Slot) and ops[0] not in after)

    return sum(sweep_block(block, live.live_out[block.label], drop) for block in fn.blocks)


def _forget_register(holds: dict[str, int], instr: MInstr) -> None:
    for r in instr.defs:
        if isinstance(r, PReg):
            holds.pop(r.name, None)
