"""Register allocation by graph colouring (Chaitin-Briggs) with conservative coalescing.

One *round* is:

1. **build** -- liveness, then the interference graph (:mod:`interference`);
2. **coalesce** -- merge the two sides of a copy when they do not interfere and the merge
   cannot make the graph harder to colour: *Briggs*' test for two virtual registers (the
   merged node has fewer than K neighbours of degree >= K), *George*'s test when one side
   is a physical register ``p`` (every neighbour of the virtual one already interferes
   with ``p`` or has degree < K). Heavier copies (inside loops) are tried first;
3. **simplify** -- repeatedly remove a node with fewer than K neighbours (it can always be
   coloured later) and push it on a stack;
4. **potential spill** -- when every node left has >= K neighbours, push the one with the
   lowest spill cost ``cost = (uses + defs) * 10**loop_depth / degree``, every use or def
   counted ``10**depth`` of its block, degree = its neighbours still in the graph: rarely
   used values with many neighbours go first. Spill temporaries cost infinity;
5. **select** -- pop the stack and give each node the first register its coloured
   neighbours do not use (preferring the register of a copy partner, so more copies
   vanish); a potential spill that still finds no register is an *actual spill*.

Actual spills live in stack slots (:mod:`spill`) and the round starts again, until none is
left. A value the code may read before any definition (non-strict Bril code) is given
``mov v, 0`` at the entry. Values live into a ``handler`` block are mirrored in a slot before
the first round (a store after each definition, a reload at the top of the handler): a
throw arrives there with every register clobbered (a block is a handler
when marked so or when its address is taken for ``rt_enter``), and such a function saves
every callee-saved register (the throwing callee's epilogue never ran). Calls list the
caller-saved registers in their defs, so a value live across a call ends up in a
callee-saved register or a slot.

:func:`allocate` then renames every virtual register to its physical one, deletes copies
whose two sides got the same register and records ``fn.used_callee_saved``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ssa_course.codegen.colouring import INFINITE, Colourer, SpillChoice, spill_cost
from ssa_course.codegen.interference import (
    InterferenceGraph,
    build_interference,
    interference_dot,
    node_key,
)
from ssa_course.codegen.liveness import Liveness, loop_depths
from ssa_course.codegen.mir import (
    Imm,
    Mem,
    MFunction,
    MInstr,
    PReg,
    Reg,
    Slot,
    VReg,
)
from ssa_course.codegen.spill import Spiller, SpillError, vregs_of
from ssa_course.codegen.target import RegisterFile, default_register_file

__all__ = ["Allocation", "AllocationError", "Round", "SpillChoice", "allocate", "assign",
           "colour", "spill_cost"]


class AllocationError(ValueError):
    """The function cannot be allocated; the message says why and where."""


@dataclass(slots=True)
class Round:
    """What one build-coalesce-simplify-select round did (the lesson shows each)."""

    graph: InterferenceGraph
    colouring: dict[VReg, str]  # every vreg that got a register this round
    coalesced: list[tuple[Reg, Reg]]  # (kept, merged into it), in the order merged
    potential_spills: dict[VReg, SpillChoice]  # node (class representative) -> its cost
    spilled: dict[VReg, float]  # actual spills of this round: vreg -> its class's cost


@dataclass(slots=True)
class Allocation:
    """The result of :func:`allocate` (or :func:`colour`): the final colouring (vreg ->
    register name, spill temporaries included), the last round's coalesced pairs, every
    spilled vreg with its spill cost, the slot of every spilled or ``saved`` value (a
    value live into a handler keeps its register and is mirrored in a slot), the number
    of rounds, the copies removed, and ``work`` (basic steps, for scaling tests)."""

    colouring: dict[VReg, str]
    coalesced: list[tuple[Reg, Reg]]
    spilled: dict[VReg, float]
    slots: dict[VReg, Slot]
    rounds: int
    history: list[Round]
    temps: set[VReg] = field(default_factory=set)
    copies_removed: int = 0
    work: int = 0
    saved: dict[VReg, Slot] = field(default_factory=dict)  # mirrored for handlers

    @property
    def graph(self) -> InterferenceGraph:
        """The first round's interference graph (before any spill code)."""
        return self.history[0].graph

    def dot(self, round_number: int = 1) -> str:
        """DOT of round ``round_number``'s interference graph (1 = the first), each
        value filled with its register's colour, that round's actual spills as red
        boxes, copies as dashed edges."""
        if not 1 <= round_number <= len(self.history):
            raise ValueError(f"round {round_number} does not exist (1..{len(self.history)})")
        r = self.history[round_number - 1]
        title = f"@{r.graph.name}: round {round_number} of {self.rounds}"
        return interference_dot(r.graph, r.colouring, r.spilled, title)

    def text(self) -> str:
        """A stable report: per round the coalesced copies, the potential spills with
        their cost (weight / degree) and the actual spills; then every value's register
        or slot and the callee-saved registers used."""
        name = self.graph.name
        lines = [f"allocation @{name}: {self.rounds} round(s), {len(self.spilled)} "
                 f"spilled, {self.copies_removed} copies removed"]
        for k, r in enumerate(self.history, 1):
            lines.append(f"round {k}:")
            if r.coalesced:
                lines += _wrapped("  coalesced: ", [f"{a} <- {b}" for a, b in r.coalesced])
            for v, c in sorted(r.potential_spills.items(), key=lambda kv: node_key(kv[0])):
                lines.append(f"  potential spill {v}: weight {c.weight:g} / degree "
                             f"{c.degree} = {c.cost:.3g}")
            if r.spilled:
                lines.append("  spilled: " + ", ".join(
                    str(v) for v in sorted(r.spilled, key=node_key)))
            else:
                lines.append("  every value got a register")
        lines.append("registers:")
        lines.extend(f"  {v}: {reg}" for v, reg in sorted(self.colouring.items(),
                                                          key=lambda kv: node_key(kv[0]))
                     if v not in self.temps)
        if self.slots:
            lines.append("slots:")
            lines.extend(f"  {v}: {slot} " + (
                "(mirrored for a handler)" if v in self.saved
                else f"(cost {self.spilled.get(v, INFINITE):.3g})")
                for v, slot in sorted(self.slots.items(), key=lambda kv: node_key(kv[0])))
        return "\n".join(lines) + "\n"


def _wrapped(head: str, items: list[str], width: int = 100) -> list[str]:
    """``head`` and ``items`` joined by commas, in lines of at most ``width`` columns (an item
    longer than that has a line of its own), continuation lines indented by four."""
    lines, line = [], head
    for k, item in enumerate(items):
        piece = item + ("," if k < len(items) - 1 else "")
        if line.strip() and line != head and len(line) + len(piece) > width:
            lines.append(line.rstrip())
            line = "    "
        line += piece + " "
    lines.append(line.rstrip())
    return lines


def throw_targets(fn: MFunction) -> set[str]:
    """Labels of the blocks a throw may jump to: those marked ``handler`` and any whose
    address the code takes (``lea rdi, [rip + label]`` before ``rt_enter``) -- the
    second catches a handler whose ``catch`` was optimised away."""
    # Both ways matter: a missed landing block would let a value sit in a register across
    # a throw, which arrives with every register clobbered (a wrong answer, not a crash).
    labels = {b.label for b in fn.blocks}
    found = {b.label for b in fn.blocks if b.handler}
    for block in fn.blocks:
        for instr in block.instrs:
            for o in instr.operands:
                if isinstance(o, Mem) and o.symbol in labels:
                    found.add(o.symbol)
    return found


def _check_registers(registers: Iterable[str] | None, regfile: RegisterFile
                     ) -> tuple[str, ...]:
    # `registers` is a teaching knob (allocate with fewer registers to watch spills
    # happen): user input, so every bad value is an AllocationError with a message.
    regs = regfile.allocatable if registers is None else tuple(registers)
    if not regs:
        raise AllocationError("register allocation needs at least one register")
    # A callee-saved register a target leaves out of its default allocatable set is still
    # accepted when named (the prologue saves whatever callee-saved register is used).
    known = (*regfile.allocatable, *(r for r in regfile.callee_saved
                                     if r not in regfile.allocatable))
    unknown = [r for r in regs if r not in known]
    if unknown:
        raise AllocationError(f"not an allocatable register: {', '.join(unknown)} "
                              f"(choose from {', '.join(known)})")
    if len(set(regs)) != len(regs):
        raise AllocationError("a register is listed twice")
    return regs


def colour(fn: MFunction, registers: Iterable[str] | None = None,
           regfile: RegisterFile | None = None) -> Allocation:
    """Rounds of Chaitin-Briggs until every virtual register has a register; spill code
    is written into ``fn`` (slots, temporaries), virtual registers are left in place.
    ``registers`` (default: all of ``regfile``'s allocatable ones) may be fewer.
    :func:`assign` finishes the job; :func:`allocate` does both. Without ``regfile``:
    the default machine's (:func:`ssa_course.codegen.target.default_register_file`)."""
    regfile = regfile or default_register_file()
    regs = _check_registers(registers, regfile)
    spiller = Spiller(fn)
    depths = loop_depths(fn)  # spill code adds no blocks: the loops stay the same
    history: list[Round] = []
    spilled: dict[VReg, float] = {}
    coalesce, work, rounds = True, 0, 0
    limit = spiller.next_id + 3  # every round with spills retires a value for good
    liveness = Liveness(fn)
    work += liveness.steps
    early = sorted((r for r in liveness.live_in[fn.blocks[0].label] if isinstance(r, VReg)),
                   key=node_key) if fn.blocks else []
    if early:
        # Defined on some paths only (Bril allows it; a phi may name quads.ir.UNDEFINED):
        # interference assumes a definition on every path, so give one where nothing runs
        # yet. Reading the value where the program never set it yields 0.
        fn.blocks[0].instrs[:0] = [MInstr("mov", [v, Imm(0)], [v], [],
                                          comment=f"{v} is undefined on some path")
                                   for v in early]
        liveness = Liveness(fn)
        work += liveness.steps
    # Handler values are dealt with once, before the rounds: mirroring them in slots is a
    # correctness requirement, not a colouring decision, so no round may undo it.
    landing = throw_targets(fn)
    caught = sorted({r for b in fn.blocks if b.label in landing
                     for r in liveness.live_in[b.label] if isinstance(r, VReg)}, key=node_key)
    saved: dict[VReg, Slot] = {}
    if caught:  # a throw clobbers every register: these are mirrored in slots
        into = {b.label: sorted((r for r in liveness.live_in[b.label] if isinstance(r, VReg)),
                                key=node_key) for b in fn.blocks if b.label in landing}
        try:
            saved = spiller.save_for_handlers(caught, into)
        except SpillError as e:
            raise AllocationError(str(e)) from None
        liveness = Liveness(fn)
        work += liveness.steps
    # The Chaitin-Briggs loop: build, coalesce, simplify, select; if anything failed to get
    # a register, rewrite it with spill code and start over on the changed program (the
    # spill temporaries have tiny live ranges, so each round's graph is easier).
    while True:
        rounds += 1
        if rounds > limit:
            raise AllocationError(f"{fn.name}: register allocation does not converge")
        graph = build_interference(fn, regs, liveness, depths)
        work += graph.edge_steps
        # Coalescing happens before simplify (Briggs/George are conservative: a merge never
        # turns a colourable graph into one that is not), so it costs no spills.
        colourer = Colourer(graph, regs, spiller.temps, coalesce)
        pairs = colourer.coalesce()
        stack, potential = colourer.simplify()
        colours, failed = colourer.select(stack)
        work += colourer.work
        # A coalesced class is coloured once, through its representative; every member gets
        # that register (and the copies between them become `mov r, r`, deleted by assign).
        round_colouring = {v: colours[rep] for rep in colours
                           for v in colourer.members.get(rep, ()) if isinstance(v, VReg)}
        round_spilled = {v: _cost_of(potential, n) for n in failed
                         for v in colourer.members[n]}
        history.append(Round(graph, round_colouring, pairs, potential, round_spilled))
        if not failed:
            break
        # Spill whole coalesced classes (a group shares one slot, so the copies between its
        # members stay free), but never a spill temporary: spilling it again would only
        # make another temporary of the same one-instruction length.
        groups = []
        for n in failed:
            plain = [v for v in colourer.members[n] if v not in spiller.temps]
            if len(plain) < len(colourer.members[n]):
                if not coalesce and not plain:
                    names = ", ".join(str(v) for v in colourer.members[n])
                    raise AllocationError(
                        f"{fn.name}: an instruction needs more registers at once than the "
                        f"{len(regs)} allocatable ones ({names})")
                coalesce = False  # a spill temporary was merged too eagerly: retry plainly
            if plain:
                groups.append(plain)
                spilled.update((v, _cost_of(potential, n)) for v in plain)
        # Spill code changes live ranges, so liveness is recomputed; the loop depths are
        # not (spilling adds instructions, never blocks).
        _spill(spiller, groups, fn)
        liveness = Liveness(fn)
        work += liveness.steps
    # Only the last round's colouring is valid: earlier rounds coloured a program that
    # had no spill code yet.
    last = history[-1]
    return Allocation(last.colouring, last.coalesced, spilled, dict(spiller.slots), rounds,
                      history, set(spiller.temps), spiller.deleted, work, saved)


def _cost_of(potential: dict[VReg, SpillChoice], n: VReg) -> float:
    choice = potential.get(n)
    return INFINITE if choice is None else choice.cost


def _spill(spiller: Spiller, groups: list[list[VReg]], fn: MFunction) -> None:
    try:
        spiller.spill(groups)
    except SpillError as e:
        raise AllocationError(str(e)) from None


def assign(fn: MFunction, allocation: Allocation, regfile: RegisterFile | None = None
           ) -> None:
    """Rename every virtual register of ``fn`` to its register, delete copies whose two
    sides got the same register and record ``fn.used_callee_saved``."""
    regfile = regfile or default_register_file()
    pregs: dict[str, PReg] = {}
    touched: set[str] = set()
    for block in fn.blocks:
        kept = []
        for instr in block.instrs:
            for v in vregs_of(instr):
                name = allocation.colouring.get(v)
                # A vreg no round saw was never in defs/uses, so liveness never knew it: a
                # selection bug, reported here rather than emitted as garbage.
                if name is None:
                    raise AllocationError(f"{fn.name}: {v} in `{instr.op}` has no register "
                                          "(is it missing from the instruction's defs/uses?)")
                instr.replace_reg(v, pregs.setdefault(name, PReg(name)))
            # The payoff of coalescing and of biased select: a copy whose two sides got one
            # register does nothing and is dropped.
            if instr.is_copy() and instr.operands[0] == instr.operands[1]:
                allocation.copies_removed += 1
                continue
            touched.update(r.name for r in (*instr.defs, *instr.uses) if isinstance(r, PReg))
            kept.append(instr)
        block.instrs = kept
    if throw_targets(fn):
        # A throw from a callee lands here without the callee's epilogue having restored
        # the callee-saved registers it used: save them all, so this function still
        # hands its caller back what it was given.
        touched.update(regfile.callee_saved)
    # Only the callee-saved registers actually written need a save in the prologue: that
    # is the System V / AAPCS64 contract (preserve them for the caller), paid only if used.
    fn.used_callee_saved = [r for r in regfile.callee_saved if r in touched]


def allocate(fn: MFunction, registers: Iterable[str] | None = None,
             regfile: RegisterFile | None = None) -> Allocation:
    """Allocate registers for ``fn`` in place (see the module docstring) and say how:
    ``regfile`` is the target's register file (:mod:`ssa_course.codegen.target`),
    ``registers`` a subset of its registers to use (default: every allocatable one)."""
    regfile = regfile or default_register_file()
    allocation = colour(fn, registers, regfile)
    assign(fn, allocation, regfile)
    return allocation
