"""The frame step every CPU shares, once registers are allocated: placeholder operands
(stack slots; AArch64's incoming stack arguments) become addresses, each ``ret`` gets its
epilogue and the entry block its prologue. What those are is each CPU's ``frame.py``.
"""

from __future__ import annotations

from collections.abc import Callable

from ssa_course.codegen.mir import Mem, MFunction, MInstr


def lay_out(fn: MFunction, address: Callable[[object], Mem | None],
            prologue: Callable[[MFunction], list[MInstr]],
            epilogue: Callable[[MFunction, MInstr], list[MInstr]]) -> None:
    """The frame step both targets share: each placeholder operand (a slot; AArch64's
    incoming stack argument) replaced by the ``Mem`` its target's ``address`` gives, each
    ``ret`` by the target's ``epilogue`` (ending in that ``ret``), the ``prologue`` put in
    front of the entry block."""
    for block in fn.blocks:
        new: list[MInstr] = []
        for instr in block.instrs:
            for k, o in enumerate(instr.operands):
                m = address(o)
                if m is not None:
                    instr.operands[k] = m
            # Every `ret` gets its own epilogue (no shared exit block): one jump fewer, and
            # each return path stays a straight line.
            if instr.op == "ret":
                new.extend(epilogue(fn, instr))
            else:
                new.append(instr)
        block.instrs = new
    fn.blocks[0].instrs[:0] = prologue(fn)
