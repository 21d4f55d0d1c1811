"""Dead machine instructions go: a pure computation whose result no path reads.

Jump threading (:mod:`ssa_course.codegen.thread`) copies a join block's few instructions
into each predecessor that sets the bool the join tests; once the copy's test is resolved,
a value the join computed for one arm only is computed on the other arm too, and read by
nobody there. nqueens' `row - c + n - 1` (the third `&&` operand's index, placed by GCM in
the join of the first two) was computed, spilled and stored on the path where `cols[c]`
is set: five instructions on its hottest path. This pass removes such code before
allocation, on both targets, from liveness alone:

* an instruction is *removable* when its op is one the target calls pure (``pure``: it
  writes its register operands and perhaps the flags, nothing else: no store, load, call
  or trap), its operands are registers and immediates (an address only in ``lea``), it
  defines only virtual registers, and none of them is live after it;
* if the op may write the flags (it is not in ``no_flags``), the flags must be dead after
  it too: on every path, an op that sets them afresh (``cmp``, ``test``, an x86-64 ALU op)
  comes before one that reads them (``jcc``, ``setcc``, ``cset``...: some of those leave
  the flags alone, so ``no_flags`` alone does not say), followed through a ``jmp`` into
  every successor; a block that ends otherwise counts as a reader. (Selection never lets
  flags cross a block boundary; the check does not rely on it.)

One backward walk per block deletes chains (``mov v, a; sub v, c; lea w, [v + n]`` with
w dead) in one go; liveness is recomputed until nothing changes (a value read only by a
dead instruction of another block).
"""

from __future__ import annotations

from collections.abc import Callable

from ssa_course.codegen.liveness import Liveness
from ssa_course.codegen.mir import LabelRef, MBlock, Mem, MFunction, MInstr, Reg, Slot, VReg

# Ops that set the flags afresh without reading them: after one of these the old flags
# are dead. `cmp`/`test` on both targets (AArch64's `tst` is `test` in machine IR); the
# rest are x86-64's ALU ops (on AArch64 these names are in ``no_flags``: never reached).
_FLAG_SETTERS = frozenset({"cmp", "test", "add", "sub", "and", "or", "xor", "neg"})
# Ops that read the flags, though some leave them as they are (``no_flags`` lists x86-64's
# `setcc` and AArch64's `cset`/`csel`): a dead writer before one of these must stay.
_FLAG_READERS = frozenset({"jcc", "setcc", "cmovcc", "adc", "sbb", "cset", "csel", "cneg",
                           "csinc", "csinv", "csneg", "ccmp"})


def sweep_block(block: MBlock, live_out: set[Reg] | frozenset[Reg],
                drop: Callable[[MInstr, set[Reg], list[MInstr]], bool]) -> int:
    """One backward walk over ``block``: an instruction goes when ``drop(instr, live
    after it, the kept instructions after it, last first)`` says so; liveness is carried
    past the kept ones only, so a chain feeding a dropped instruction goes in the same walk.
    Returns how many went. (This pass and :func:`~ssa_course.codegen.reloads.\
remove_dead_reloads` both delete with it.)"""
    after = set(live_out)
    kept: list[MInstr] = []  # the block's kept instructions, last first
    gone = 0
    for k in range(len(block.instrs) - 1, -1, -1):
        instr = block.instrs[k]
        if drop(instr, after, kept):
            gone += 1
            continue
        kept.append(instr)
        after.difference_update(instr.defs)
        after.update(instr.uses)
    kept.reverse()
    block.instrs = kept
    return gone


def remove_dead_code(fn: MFunction, pure: frozenset[str], no_flags: frozenset[str]) -> int:
    """Delete removable instructions (see the module docstring) from ``fn`` before
    allocation; returns how many went."""
    removed = 0
    blocks = fn.block_map()

    def dropper(succs: list[str]) -> Callable[[MInstr, set[Reg], list[MInstr]], bool]:
        def drop(instr: MInstr, after: set[Reg], kept: list[MInstr]) -> bool:
            return _removable(instr, after, pure) and (
                instr.op in no_flags or flags_dead(kept[::-1], succs, blocks, no_flags))
        return drop

    while True:
        live = Liveness(fn)
        gone = 0
        for block in fn.blocks:
            gone += sweep_block(block, live.live_out[block.label], dropper(block.succs))
        removed += gone
        if not gone:
            return removed


def _removable(instr: MInstr, live_after: set[Reg], pure: frozenset[str]) -> bool:
    if instr.op not in pure or not instr.defs:
        return False
    if any(not isinstance(r, VReg) or r in live_after for r in instr.defs):
        return False
    # no memory: a memory operand or a slot is a load or a store (`lea`'s is an address,
    # computed, never read); a label is a call's or a branch's
    return not any(isinstance(o, Slot | LabelRef) or (isinstance(o, Mem) and instr.op != "lea")
                   for o in instr.operands)


def flags_dead(rest: list[MInstr], succs: list[str], blocks: dict[str, MBlock],
                no_flags: frozenset[str]) -> bool:
    """Are the flags set afresh before anything reads them, on every path from the start
    of ``rest`` (the instructions kept after the candidate, then the successors)?"""
    todo: list[tuple[list[MInstr], list[str]]] = [(rest, succs)]
    seen: set[str] = set()
    while todo:
        instrs, nexts = todo.pop()
        for instr in instrs:
            if instr.op in _FLAG_READERS:
                return False
            if instr.op in _FLAG_SETTERS:
                break
            if instr.op in ("jmp", "ret"):  # the block ends: on into its successors
                for s in nexts:
                    if s not in seen:
                        seen.add(s)
                        todo.append((blocks[s].instrs, blocks[s].succs))
                break
            if instr.op not in no_flags:
                return False  # a reader (jcc, setcc, a call's callee...) or unknown
        else:
            return False  # the block falls through (never built so): assume a reader
    return True
