"""Counts that say how good the machine code is: instructions, spills, copies coalesced."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # compile.py imports the whole pipeline; a lesson imports this alone
    from ssa_course.codegen.compile import CompiledProgram


def program_stats(compiled: CompiledProgram) -> dict[str, int]:
    """``instructions`` (in the listing, all functions), ``spills`` (values the allocator
    put in a stack slot; with spill-all, every value), ``copies_removed`` (copies the
    allocator coalesced away) and ``functions`` of a compiled program
    (:class:`ssa_course.codegen.compile.CompiledProgram`, any target)."""
    # Static counts of the final listing (after allocation and frame layout): what a
    # reader sees, so a lesson's "N instructions" can be checked against the listing.
    mprog = compiled.mprog
    instructions = sum(len(b.instrs) for fn in mprog.functions.values() for b in fn.blocks)
    spills = copies = 0
    for alloc in compiled.allocations.values():
        # Duck-typed: the graph-colouring Allocation lists spilled values, the spill-all
        # allocator only a slot count; both mean "values that live in memory".
        spilled = getattr(alloc, "spilled", None)
        spills += len(spilled) if spilled is not None else getattr(alloc, "slots", 0)
        copies += getattr(alloc, "copies_removed", 0)
    return {"functions": len(mprog.functions), "instructions": instructions,
            "spills": spills, "copies_removed": copies}
