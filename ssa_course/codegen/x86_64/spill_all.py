"""The baseline allocator ("-O0"): every virtual register lives in its own stack slot.

Each instruction loads the values it reads into scratch registers (r10, r11: instruction
selection never names them), runs on them, and stores what it wrote back to the slot.
Nothing is in a register between two instructions, so nothing is clobbered by a call or
lost by a throw, and it needs no liveness at all: the allocator to compare the real one to.
"""

from __future__ import annotations

from dataclasses import dataclass

from ssa_course.codegen.mir import Mem, MFunction, MInstr, PReg, Slot, VReg
from ssa_course.codegen.x86_64.minstr import ins

SCRATCH = (PReg("r10"), PReg("r11"))


@dataclass(slots=True)
class SpillStats:
    """What the allocator did: slots used, loads and stores inserted."""

    slots: int = 0
    loads: int = 0
    stores: int = 0


def _vregs(instr: MInstr) -> list[VReg]:
    seen: list[VReg] = []
    for r in (*instr.uses, *instr.defs):
        if isinstance(r, VReg) and all(r is not s for s in seen):
            seen.append(r)
    return seen


def allocate(fn: MFunction) -> SpillStats:
    """Rewrite every VReg of ``fn`` to a stack slot, in place (same contract as
    :func:`ssa_course.codegen.regalloc.allocate`)."""
    slots: dict[int, Slot] = {}
    stats = SpillStats()

    def slot(v: VReg) -> Slot:
        s = slots.get(id(v))
        if s is None:
            s = slots[id(v)] = fn.new_slot()
        return s

    for block in fn.blocks:
        out: list[MInstr] = []
        for instr in block.instrs:
            regs = _vregs(instr)
            if not regs:
                out.append(instr)
                continue
            free = list(SCRATCH)
            after: list[MInstr] = []
            if len(regs) > len(free):  # [a + i*8] and a value: fold the address first
                for k, o in enumerate(instr.operands):
                    if isinstance(o, Mem) and isinstance(o.base, VReg) \
                            and isinstance(o.index, VReg):
                        r0, r1 = free
                        out += [ins("mov", r0, slot(o.base)), ins("mov", r1, slot(o.index)),
                                ins("lea", r0, Mem(r0, r1, o.scale, o.disp))]
                        stats.loads += 2
                        instr.operands[k] = Mem(r0)
                        instr.uses = [u for u in instr.uses if u is not o.base
                                      and u is not o.index]
                        free = [r1]
                        break
                regs = _vregs(instr)
            for v in regs:
                r = free.pop(0)
                if any(u is v for u in instr.uses):
                    out.append(ins("mov", r, slot(v)))
                    stats.loads += 1
                if any(d is v for d in instr.defs):
                    after.append(ins("mov", slot(v), r))
                    stats.stores += 1
                instr.replace_reg(v, r)
            out.append(instr)
            out.extend(after)
        block.instrs = out
    fn.used_callee_saved = []
    stats.slots = fn.slots
    return stats

