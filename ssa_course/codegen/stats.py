"""Counts that say how good the machine code is: instructions, spills, copies coalesced."""

from __future__ import annotations


def program_stats(compiled: object) -> dict[str, int]:
    """``instructions`` (in the listing, all functions), ``spills`` (values the allocator
    put in a stack slot; with spill-all, every value), ``copies_removed`` (copies the
    allocator coalesced away) and ``functions`` of a compiled program
    (:class:`ssa_course.codegen.compile.CompiledProgram`)."""
    mprog = compiled.mprog  # type: ignore[attr-defined]
    instructions = sum(len(b.instrs) for fn in mprog.functions.values() for b in fn.blocks)
    spills = copies = 0
    for alloc in compiled.allocations.values():  # type: ignore[attr-defined]
        spilled = getattr(alloc, "spilled", None)
        spills += len(spilled) if spilled is not None else getattr(alloc, "slots", 0)
        copies += getattr(alloc, "copies_removed", 0)
    return {"functions": len(mprog.functions), "instructions": instructions,
            "spills": spills, "copies_removed": copies}
