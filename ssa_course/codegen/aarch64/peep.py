"""AArch64's peephole after allocation: a float's bits copied back where they came from.

Each float operation ends ``fmov x, d0`` (its result back into the value's x register)
and the next one may begin ``fmov d0, x`` with the same two registers: ``d0`` still holds
those bits, so the second copy does nothing and goes (``a + b + c`` keeps its partial sum
in ``d0``; a float result returned at once is not copied back into ``d0``). Only within
a block and only adjacent: nothing between the two instructions can have changed ``d0``.
The same holds the other way round (``fmov d1, x6`` then ``fmov x6, d1``).
"""

from __future__ import annotations

from ssa_course.codegen.mir import MFunction, MInstr


def _round_trip(first: MInstr, second: MInstr) -> bool:
    """Is ``second`` (``fmov d, x``) undoing ``first`` (``fmov x, d``)?"""
    return first.op == second.op == "fmov" and len(first.operands) == len(second.operands) == 2 \
        and first.operands[0] == second.operands[1] and first.operands[1] == second.operands[0]


def peephole(fn: MFunction) -> int:
    """Drop the copies back (see the module docstring); returns how many went."""
    gone = 0
    for block in fn.blocks:
        kept: list[MInstr] = []
        for instr in block.instrs:
            if kept and _round_trip(kept[-1], instr):
                gone += 1
                continue
            kept.append(instr)
        block.instrs = kept
    return gone
