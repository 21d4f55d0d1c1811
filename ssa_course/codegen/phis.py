"""Phis to parallel copies on edges, sequentialised (the swap problem, in registers).

A phi ``x = phi a b .P .Q`` means: on the edge from P, copy ``a`` into ``x``; all the phis
of a block copy at once. The copies of one edge go at the end of the predecessor, before
its jump. If the predecessor has another successor (a critical edge), the copies would run
on the wrong path too, so the edge gets a block of its own first. A parallel copy is then
ordered so no copy overwrites a value another one still reads; what is left is cycles
(``x, y = y, x``), each broken by saving one value in a scratch register.
"""

from __future__ import annotations

from collections.abc import Callable

from ssa_course.codegen.minstr import jmp, mov
from ssa_course.codegen.mir import Imm, LabelRef, MBlock, MFunction, MInstr, VReg
from ssa_course.codegen.patterns import CodegenError

Copy = tuple[VReg, VReg | Imm]  # destination, source
# (label of the predecessor's last machine block, label of the successor) -> its copies
EdgeCopies = dict[tuple[str, str], list[Copy]]


def sequentialise(copies: list[Copy], scratch: Callable[[], VReg]) -> list[Copy]:
    """Order a parallel copy as plain moves with the same effect.

    A copy is safe once no other pending copy reads its destination; when only cycles
    remain, one destination's value is saved in a scratch register and its readers read
    the scratch instead, which opens the cycle.
    """
    # `x = x` does nothing and, left in, would count as a reader of x and fake a cycle.
    pending = [(d, s) for d, s in copies if s is not d]
    out: list[Copy] = []
    # Invariant: `out` followed by `pending` (read in parallel) has the effect of the input.
    # Each pass either emits every copy whose destination nobody still reads (writing it
    # destroys nothing) or breaks one cycle, so the loop ends.
    while pending:
        # Counted by id(): VRegs compare by identity, and immediates are never destinations.
        read: dict[int, int] = {}
        for _, s in pending:
            if isinstance(s, VReg):
                read[id(s)] = read.get(id(s), 0) + 1
        ready = [c for c in pending if id(c[0]) not in read]
        if ready:
            out.extend(ready)
            done = {id(c) for c in ready}
            pending = [c for c in pending if id(c) not in done]
            continue
        # In a parallel copy each destination is written once, so when every destination
        # is also read the copies form disjoint cycles. Saving one destination's old value
        # in a fresh register turns its cycle into a chain the next pass can emit.
        d0 = pending[0][0]  # every destination is read: only cycles are left
        t = scratch()
        out.append((t, d0))
        pending = [(d, t if s is d0 else s) for d, s in pending]
    return out


def _retarget(block: MBlock, old: str, new: str) -> None:
    # Both the branch operand and `succs` must change: liveness reads succs, emission reads
    # the operand, and the verifier checks that they agree.
    for instr in block.instrs:
        if instr.op in ("jmp", "jcc") and instr.operands and \
                isinstance(instr.operands[0], LabelRef) and instr.operands[0].name == old:
            instr.operands[0] = LabelRef(new)
    block.succs = [new if s == old else s for s in block.succs]


def lower_phis(fn: MFunction, edges: EdgeCopies, new_vreg: Callable[[str], VReg],
               line_of: Callable[[object], int | None] | None = None) -> None:
    """Insert every edge's copies (splitting critical edges) into ``fn``'s blocks;
    ``line_of(source)`` gives a copy its source line (that of the value it copies)."""
    line_of = line_of or (lambda source: None)
    blocks = fn.block_map()
    after: dict[str, list[MBlock]] = {}  # edge blocks to lay out after each predecessor
    for (pred_label, succ_label), copies in edges.items():
        pred = blocks[pred_label]
        # A handler is entered by a throw, which has no edge to put copies on.
        if blocks[succ_label].handler:
            raise CodegenError(f"@{fn.name}: a handler block with phis ({succ_label})")
        # The copy carries the line of the value it copies, so the listing shows a phi's
        # moves beside the source that computed them (docs/lines.md).
        lines = {id(s): line_of(s) for _, s in copies}
        moves = [mov(d, s, line=lines.get(id(s)))
                 for d, s in sequentialise(copies, lambda: new_vreg("swap"))]
        if not moves:
            continue
        # A critical edge (the predecessor has another successor): copies placed at its end
        # would also run on the other path and clobber values there, so the edge gets a
        # block of its own holding just the copies and a jump.
        if len(set(pred.succs)) > 1:
            edge = MBlock(f"{pred_label}.to.{succ_label.rsplit('.', 1)[-1]}",
                          moves + [jmp(succ_label)], [succ_label])
            _retarget(pred, succ_label, edge.label)
            after.setdefault(pred_label, []).append(edge)
            blocks[edge.label] = edge
            continue
        # One successor: the end of the predecessor is the edge. Copies go before the jump,
        # after everything else the block computes (a phi reads the values at the edge).
        at = _jump_index(pred)
        pred.instrs[at:at] = moves
    if after:  # one pass: inserting one by one would be quadratic in the blocks
        fn.blocks = [x for b in fn.blocks for x in (b, *after.get(b.label, ()))]


def _jump_index(block: MBlock) -> int:
    """Where the final jump of a block starts (copies go just before it)."""
    k = len(block.instrs)
    while k > 0 and block.instrs[k - 1].op == "jmp":
        k -= 1
    return k


__all__ = ["Copy", "EdgeCopies", "MInstr", "lower_phis", "sequentialise"]
