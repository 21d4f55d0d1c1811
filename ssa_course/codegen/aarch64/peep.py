"""AArch64's peephole after allocation: a float's bits copied back where they came from.

Each float operation ends ``fmov x, d0`` (its result back into the value's x register)
and the next one may begin ``fmov d0, x`` with the same two registers: ``d0`` still holds
those bits, so the second copy does nothing and goes (``a + b + c`` keeps its partial sum
in ``d0``; a float result returned at once is not copied back into ``d0``). Only within
a block and only adjacent: nothing between the two instructions can have changed ``d0``.
The same holds the other way round (``fmov d1, x6`` then ``fmov x6, d1``). And a float
result copied into an x register right before a ``ret`` that does not read it (a float
travels back in ``d0``) is dead: it goes too.
"""

from __future__ import annotations

from ssa_course.codegen.mir import MFunction, MInstr


def _round_trip(first: MInstr, second: MInstr) -> bool:
    """Is ``second`` (``fmov d, x``) undoing ``first`` (``fmov x, d``)?"""
    return first.op == second.op == "fmov" and len(first.operands) == len(second.operands) == 2 \
        and first.operands[0] == second.operands[1] and first.operands[1] == second.operands[0]


def _dead_before_ret(instr: MInstr, ret: MInstr) -> bool:
    """Is ``instr`` an ``fmov x, d`` whose x the ``ret`` after it does not read?"""
    return instr.op == "fmov" and ret.op == "ret" and bool(instr.defs) \
        and not set(instr.defs) & set(ret.uses)


def peephole(fn: MFunction) -> int:
    """Drop the copies back and the dead copies before a return (see the module
    docstring); returns how many went."""
    gone = 0
    for block in fn.blocks:
        kept: list[MInstr] = []
        for instr in block.instrs:
            if kept and _round_trip(kept[-1], instr):
                gone += 1
                continue
            while kept and _dead_before_ret(kept[-1], instr):
                kept.pop()
                gone += 1
            kept.append(instr)
        block.instrs = kept
    return gone
