"""Wide constants hoisted out of loops: one ``mov r, imm64`` before a loop, not one per use
per iteration.

x86-64 instructions take at most a sign-extended 32-bit immediate (only ``mov r, imm64``
holds more), so instruction selection puts a wider constant in a fresh register right where
an instruction needs it (:meth:`~ssa_course.codegen.isel.Selector.materialise`). Outside
loops that keeps constants out of the register allocator's way; inside a loop it costs a
10-byte instruction per use per iteration (hash_mix's LCG multiply and add: about 7.0 -> 6.5
cycles an iteration once both constants live in registers). So a use inside a natural loop
gets one register per (loop, constant), loaded once at the end of the loop's *preheader
point*: the header's immediate dominator, which every path into the loop passes through.

Loops are natural loops (a back edge ``u -> h`` where ``h`` dominates ``u``; the body is
``h`` and every block reaching ``u`` without passing ``h``); a block's loop is the innermost
one holding it. A cycle with no dominating header (irreducible, possible in Bril) is no
natural loop: its constants stay rematerialised. Nor are loops that call anything (a
call, ``print``, an allocation, ``throw``, ``enter``) hoisted into: a register held across
a call is a callee-saved one (saved and restored by the prologue) or a stack slot (a load
per use instead of an immediate), and a call costs more than the ``mov`` saved anyway. That
also keeps handlers out (a handler is reached through the ``enter`` of its ``try``, which
is in the loop when the handler is). Nor, last, loops whose preheader point ends in
``enter``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ssa_course.codegen.minstr import mov
from ssa_course.codegen.mir import Imm, MBlock, MInstr, VReg
from ssa_course.codegen.quadcfg import QBlock
from ssa_course.quads.domtree import Dominance
from ssa_course.quads.loops import natural_loops

# What may end the machine block a preheader point becomes (branches and the compare or
# test feeding them): the loads go just before these, keeping cmp + jcc adjacent (fused).
_TAIL = ("jmp", "jcc")
_FLAGS = ("cmp", "test")
# Quads that become calls (the runtime's or a function's): a loop with one keeps its
# constants rematerialised.
CALLS = frozenset(("call", "print", "newarr", "newstruct", "throw", "enter"))
ENTRY = ""  # the preheader point of a loop headed by the first block: the machine entry


@dataclass(slots=True)
class LoopConstants:
    """Where wide constants used in loops live: ``loop_of`` maps a block to the header of
    its innermost hoistable loop, ``preheader`` a header to the block whose end loads its
    constants, ``regs`` (header, value) to the register holding that value in the loop."""

    loop_of: dict[str, str] = field(default_factory=dict)
    preheader: dict[str, str] = field(default_factory=dict)
    regs: dict[tuple[str, int], VReg] = field(default_factory=dict)

    def register(self, block: str, value: int, new_vreg: Callable[[str], VReg]
                 ) -> VReg | None:
        """The register holding ``value`` in ``block``'s loop (made on first use), or None
        when ``block`` is in no hoistable loop."""
        header = self.loop_of.get(block)
        if header is None:
            return None  # the caller rematerialises: a mov right before the use
        # One register per (loop, value), shared by every use in the loop: the whole point
        # is that the value is loaded once, however many instructions need it.
        key = (header, value)
        v = self.regs.get(key)
        if v is None:
            v = self.regs[key] = new_vreg("k")
        return v


def plan(blocks: list[QBlock], headers: set[str] | None = None) -> LoopConstants:
    """Which loop each block's wide constants belong to, and where each loop loads them.
    ``headers`` (:func:`~ssa_course.codegen.quadcfg.loop_headers`, when known): with none,
    there is no loop and no dominator tree to build (0.8 s for 64k blocks)."""
    if headers is not None and not headers:
        return LoopConstants()
    by_label = {b.label: b for b in blocks}
    dom = Dominance({b.label: b.succs for b in blocks}, blocks[0].label)
    out = LoopConstants()
    loops = {h: body for h, (_, body) in
             natural_loops({b.label: b.preds for b in blocks}, dom).items()}
    # innermost first: a block keeps the smallest loop holding it (natural loops with
    # different headers are nested or disjoint)
    for header, body in sorted(loops.items(), key=lambda kv: len(kv[1])):
        # A loop that calls anything is not worth a register held across the call (it
        # would need a callee-saved register or a slot); see the module docstring.
        point = _preheader_point(header, by_label, dom, loops)
        if point is None or any(i.op in CALLS for x in body for i in by_label[x].body):
            for x in body:  # a block of this loop stays out of any enclosing loop's plan
                out.loop_of.setdefault(x, "")
            continue
        out.preheader[header] = point
        for x in body:
            out.loop_of.setdefault(x, header)
    # The "" markers only blocked enclosing loops from claiming the blocks; drop them.
    out.loop_of = {x: h for x, h in out.loop_of.items() if h}
    return out


def _preheader_point(header: str, by_label: dict[str, QBlock], dom: Dominance[str],
                     loops: dict[str, set[str]]) -> str | None:
    """The header's immediate dominator, or further up while that is an outer loop's
    header that only branches (loading there would stop its test being copied into its
    latches, see :mod:`ssa_course.codegen.jumps`); :data:`ENTRY` above the first block;
    None when the point ends in ``enter``."""
    # The immediate dominator, because every path into the loop passes it: a value loaded
    # at its end is available at the header on every entry, and dominates every use.
    point = header
    while True:
        up = dom.idom[point]
        if up == point:  # above the function's first block: the machine entry block
            return ENTRY
        point = up
        if not (point in loops and [i.op for i in by_label[point].body] == ["br"]):
            break
    # Only a point ending in a plain jump or branch has a known place for the loads (just
    # before its final jumps); one ending in `enter` (a try begins there) is refused.
    last = by_label[point].body[-1] if by_label[point].body else None
    return point if last is not None and last.op in ("jmp", "br") else None


def place(plan: LoopConstants, exit_of: dict[str, MBlock], entry: MBlock,
          extra: Sequence[tuple[str, MInstr]] = ()) -> None:
    """Load every hoisted constant at the end of its loop's preheader point (in the
    machine block that point's quads end in, or ``entry``), before the final compare and
    jumps; ``extra`` instructions, each for the loop of the header named, go there too."""
    loads: dict[str, list[MInstr]] = {}
    for (header, value), v in plan.regs.items():
        loads.setdefault(plan.preheader[header], []).append(mov(v, Imm(value)))
    for header, instr in extra:
        loads.setdefault(plan.preheader[header], []).append(instr)
    for point, pairs in loads.items():
        # exit_of: the *last* machine block of the point's quads block (a division may have
        # split it), so the loads run after everything the point computes.
        block = entry if point == ENTRY else exit_of[point]
        at = len(block.instrs)
        while at > 0 and block.instrs[at - 1].op in _TAIL:
            at -= 1
        # Also before the compare feeding the branch: `mov r, imm` leaves the flags alone, but
        # a cmp separated from its jcc is a pattern other passes no longer recognise.
        if at > 0 and at < len(block.instrs) and block.instrs[at - 1].op in _FLAGS:
            at -= 1
        block.instrs[at:at] = pairs
