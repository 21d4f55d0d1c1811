"""Spill code: a virtual register that did not get a register lives in a stack slot.

Every definition of a spilled value is followed by a store to its slot and every use is
preceded by a load from it, each through a *fresh* virtual register that lives for one
instruction only (so the next colouring round finds it easy to place). Copies are
cheaper: ``mov d, s`` with ``d`` spilled becomes the store ``mov slot, s`` (``mov slot, 5``
for a 32-bit immediate) and with ``s`` spilled the load ``mov d, slot``; a copy between
two values that share one slot (they were coalesced, so they never interfere) is deleted.

Values that were coalesced before spilling share one slot (they do not interfere, exactly
as two values may share a register).
"""

from __future__ import annotations

from collections.abc import Iterable

from ssa_course.codegen.mir import Imm, Mem, MFunction, MInstr, Slot, VReg


class SpillError(ValueError):
    """Spill code cannot be placed (a branch or return defines a spilled value)."""


def max_vreg_id(fn: MFunction) -> int:
    """The largest virtual register number in ``fn`` (-1 when there is none)."""
    top = max((p.id for p in fn.params), default=-1)
    for block in fn.blocks:
        for instr in block.instrs:
            for r in vregs_of(instr):
                top = max(top, r.id)
    return top


def vregs_of(instr: MInstr) -> list[VReg]:
    """The distinct virtual registers an instruction names (operands, addresses, defs,
    uses), in order of first appearance."""
    seen: dict[int, VReg] = {}
    for o in instr.operands:
        if isinstance(o, VReg):
            seen.setdefault(id(o), o)
        elif isinstance(o, Mem):
            for r in o.regs():
                if isinstance(r, VReg):
                    seen.setdefault(id(r), r)
    for r in (*instr.defs, *instr.uses):
        if isinstance(r, VReg):
            seen.setdefault(id(r), r)
    return list(seen.values())


class Spiller:
    """Rewrites spilled values of one function; ``temps`` collects the fresh registers it
    made (the allocator never spills those again)."""

    __slots__ = ("fn", "next_id", "temps", "slots", "deleted", "mirror")

    def __init__(self, fn: MFunction):
        self.fn = fn
        self.next_id = max_vreg_id(fn) + 1
        self.temps: set[VReg] = set()
        self.slots: dict[VReg, Slot] = {}
        self.deleted = 0  # copies that vanished because both sides share a slot
        self.mirror: dict[VReg, Slot] = {}  # values kept for handlers (save_for_handlers)

    # Numbers continue past every vreg of the function, so a temporary can never be
    # confused with a value selection made; it keeps the spilled value's hint for listings.
    def fresh(self, like: VReg) -> VReg:
        t = VReg(self.next_id, like.hint)
        self.next_id += 1
        self.temps.add(t)
        return t

    def spill(self, groups: Iterable[list[VReg]]) -> dict[VReg, Slot]:
        """Give each group one new slot and rewrite every occurrence of its members;
        returns the slots given now."""
        given: dict[VReg, Slot] = {}
        for group in groups:
            # a value already mirrored for a handler spills into its mirror: the mirror's
            # stores and reloads become the spill code's own
            slot = next((self.mirror[v] for v in group if v in self.mirror), None) \
                or self.fn.new_slot()
            for v in group:
                given[v] = slot
        if not given:
            return given
        self.slots.update(given)
        # One sweep rewrites all groups: each instruction is looked at once per round,
        # however many values spill in it.
        for block in self.fn.blocks:
            out: list[MInstr] = []
            for instr in block.instrs:
                self._rewrite(instr, given, out)
            block.instrs = out
        return given

    def _rewrite(self, instr: MInstr, given: dict[VReg, Slot], out: list[MInstr]) -> None:
        if instr.op == "mov" and len(instr.operands) == 2:
            a, b = instr.operands
            if isinstance(a, Slot) and isinstance(b, VReg) and given.get(b) == a \
                    or isinstance(b, Slot) and isinstance(a, VReg) and given.get(a) == b:
                return  # a mirror store or reload of a value now living in that slot
        # Copies are the cheap case: x86 `mov` may have one memory operand, so a copy into or
        # out of a spilled value becomes a single store or load, with no temporary at all.
        pair = instr.copy_pair()
        if pair is not None:
            dst, src = pair
            sd = given.get(dst) if isinstance(dst, VReg) else None
            ss = given.get(src) if isinstance(src, VReg) else None
            # Both sides in one slot: the value is already where the copy would put it.
            if sd is not None and sd == ss:
                self.deleted += 1
                return
            if sd is not None and ss is None:
                out.append(MInstr("mov", [sd, src], [], [src], line=instr.line,
                                  comment=instr.comment or f"spill {dst}"))
                return
            if ss is not None and sd is None:
                out.append(MInstr("mov", [dst, ss], [dst], [], line=instr.line,
                                  comment=instr.comment or f"reload {src}"))
                return
        if (instr.op == "mov" and len(instr.operands) == 2 and isinstance(instr.operands[1], Imm)
                and -2**31 <= instr.operands[1].value < 2**31
                and isinstance(instr.operands[0], VReg) and instr.operands[0] in given):
            # x86 stores a 32-bit immediate straight into memory: no temporary needed
            out.append(MInstr("mov", [given[instr.operands[0]], instr.operands[1]], [], [],
                              line=instr.line, comment=instr.comment
                              or f"spill {instr.operands[0]}"))
            return
        after: list[MInstr] = []
        if not any(v in given for v in vregs_of(instr)):
            out.append(instr)
            return
        # The general case: each occurrence goes through a fresh temporary, reloaded right
        # before (if read) and stored right after (if written). Its live range is this one
        # instruction, which is why the next round can almost always give it a register.
        if any(isinstance(o, Mem) for o in instr.operands):
            # each instruction gets its own temporaries: never rename inside an address
            # object another instruction might share
            instr.operands = [Mem(o.base, o.index, o.scale, o.disp, o.symbol)
                              if isinstance(o, Mem) else o for o in instr.operands]
        for v in vregs_of(instr):
            slot = given.get(v)
            if slot is None:
                continue
            used = any(r is v for r in instr.uses)
            defined = any(r is v for r in instr.defs)
            t = self.fresh(v)
            if used:
                out.append(MInstr("mov", [t, slot], [t], [], line=instr.line,
                                  comment=f"reload {v}"))
            instr.replace_reg(v, t)
            if defined:
                # A store after a jump would never run: selection must not make a branch
                # that defines a value, and this is where such a mistake is caught.
                if instr.is_branch() or instr.op == "ret":
                    raise SpillError(f"{self.fn.name}: `{instr.op}` defines {v}; "
                                     "no store can follow it")
                after.append(MInstr("mov", [slot, t], [], [t], line=instr.line,
                                    comment=f"spill {v}"))
        out.append(instr)
        out.extend(after)

    def save_for_handlers(self, values: list[VReg], landing: dict[str, list[VReg]]
                          ) -> dict[VReg, Slot]:
        """Keep each of ``values`` in its register but mirror it in a slot: a store
        follows every definition, and each handler block in ``landing`` (label -> the
        values live into it) starts by reloading them -- a throw arrives with every
        register clobbered, but never between a definition and its store."""
        # Unlike spill(), the value keeps its register between definition and throw: only
        # the handler reads the mirror. A store after *every* definition keeps the slot
        # current at each point a throw could happen (a call, a check), so no path is missed.
        given = {v: self.fn.new_slot() for v in values}
        self.slots.update(given)
        self.mirror.update(given)
        for block in self.fn.blocks:
            out: list[MInstr] = [MInstr("mov", [v, given[v]], [v], [], comment=f"{v} after a throw")
                                 for v in landing.get(block.label, ())]
            for instr in block.instrs:
                out.append(instr)
                for r in dict.fromkeys(r for r in instr.defs if isinstance(r, VReg) and r in given):
                    if instr.is_branch() or instr.op == "ret":
                        raise SpillError(f"{self.fn.name}: `{instr.op}` defines {r}; "
                                         "no store can follow it")
                    out.append(MInstr("mov", [given[r], r], [], [r], line=instr.line,
                                      comment=f"{r} for a handler"))
            block.instrs = out
        return given
