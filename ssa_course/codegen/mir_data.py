"""Machine IR as plain data: registers as names, instructions as tuples of names.

Exercise 11 asks learners for liveness, interference and the select step of the
allocator in plain Python; :func:`function_data` turns an :class:`MFunction` (before
allocation) into what they receive: for each block its instructions, each with the names
of the registers it writes (``defs``) and reads (``uses``), implicit ones included, and
the two sides of a register-to-register copy; plus each block's successors.

A virtual register is named as the listings print it (``%3.x``: it starts with ``%``), a
physical one by its name (``rdi``). Registers the allocator never hands out (``rsp``,
``rbp``, the depth counter) are left out, as :func:`~ssa_course.codegen.interference.
build_interference` leaves them out of the graph: liveness is computed per register, so
the live sets of this data are the engine's minus those registers, exactly.

:func:`named_graph` goes the other way, from names to an
:class:`~ssa_course.codegen.interference.InterferenceGraph`, so that a graph given as a
set of name pairs (a learner's answer) can be drawn with the engine's drawing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

from ssa_course.codegen.interference import InterferenceGraph, Move
from ssa_course.codegen.liveness import format_minstr
from ssa_course.codegen.mir import MBlock, MFunction, MInstr, PReg, Reg, VReg
from ssa_course.codegen.target import default_register_file


# NamedTuples of strings: a learner's exercise sees nothing but names and tuples, can
# print and compare them, and needs none of the engine's classes.
class InstrData(NamedTuple):
    """One instruction: its text, the registers it writes and reads (names, in order),
    and ``(dst, src)`` when it is a register-to-register copy ``mov dst, src`` (else None)."""

    text: str
    defs: tuple[str, ...]
    uses: tuple[str, ...]
    copy: tuple[str, str] | None


class FunctionData(NamedTuple):
    """A function: its name, its entry block's label, ``blocks`` (label -> instructions,
    in layout order) and ``succs`` (label -> successor labels)."""

    name: str
    entry: str
    blocks: dict[str, list[InstrData]]
    succs: dict[str, list[str]]


def is_virtual(name: str) -> bool:
    """Does ``name`` name a virtual register (``%3.x``) rather than a physical one?"""
    return name.startswith("%")


def function_data(fn: MFunction, registers: Iterable[str] | None = None) -> FunctionData:
    """``fn`` as plain data; physical registers outside ``registers`` (default: the
    default machine's allocatable ones) are left out."""
    if registers is None:
        registers = default_register_file().allocatable
    # Drop physical registers outside the palette (rsp, rbp, r15): no value can live in
    # them, so they never interfere with anything and would only clutter the exercise.
    palette = set(registers)

    def keep(regs: Iterable[Reg]) -> tuple[str, ...]:
        out: list[str] = []
        for r in regs:
            if isinstance(r, VReg) or r.name in palette:
                name = str(r)
                if name not in out:  # a register read twice (``imul %1, %1``) is one use
                    out.append(name)
        return tuple(out)

    blocks: dict[str, list[InstrData]] = {}
    for block in fn.blocks:
        rows = []
        for instr in block.instrs:
            copy = (str(instr.operands[0]), str(instr.operands[1])) if instr.is_copy() \
                else None
            rows.append(InstrData(format_minstr(instr), keep(instr.defs), keep(instr.uses),
                                  copy))
        blocks[block.label] = rows
    entry = fn.blocks[0].label if fn.blocks else ""
    return FunctionData(fn.name, entry, blocks, {b.label: list(b.succs) for b in fn.blocks})


_VREG = re.compile(r"%(\d+)(?:\.(.*))?\Z")


def reg_of_name(name: str) -> Reg:
    """The register a name stands for: ``%3.x`` -> ``VReg(3, "x")``, ``rdi`` -> ``PReg``."""
    m = _VREG.match(name)
    if m:
        return VReg(int(m.group(1)), m.group(2) or "")
    return PReg(name)


def function_of_data(data: FunctionData) -> MFunction:
    """An :class:`MFunction` with the blocks, successors, defs, uses and copies of ``data``
    (one register object per name; other operands are not kept): what the engine's
    liveness and interference need, to compute them for hand-written data."""
    # One object per name: VRegs compare by identity, so two objects for "%3.x" would be
    # two different values to liveness.
    regs: dict[str, Reg] = {}

    def reg(name: str) -> Reg:
        if name not in regs:
            regs[name] = reg_of_name(name)
        return regs[name]

    blocks = []
    for label, instrs in data.blocks.items():
        out = []
        for i in instrs:
            # Copies are rebuilt as real `mov r, r` so interference sees them as copies
            # (no edge between the two sides) and records the move edge.
            if i.copy is not None:
                out.append(MInstr("mov", [reg(i.copy[0]), reg(i.copy[1])],
                                  [reg(n) for n in i.defs], [reg(n) for n in i.uses]))
            else:
                out.append(MInstr(i.text.split(" ", 1)[0] or "nop", [],
                                  [reg(n) for n in i.defs], [reg(n) for n in i.uses]))
        blocks.append(MBlock(label, out, list(data.succs.get(label, ()))))
    return MFunction(data.name, [], blocks)


def named_graph(name: str, nodes: Iterable[str], edges: Iterable[tuple[str, str]],
                copies: Iterable[tuple[str, str]] = (),
                registers: Iterable[str] | None = None
                ) -> tuple[InterferenceGraph, dict[str, Reg]]:
    """An interference graph over named registers: ``nodes`` (plus any name an edge or a
    copy mentions), ``edges`` as name pairs, ``copies`` as (dst, src) move edges; with the
    map name -> register node, to key a colouring for the drawing. Edges between two
    physical registers and self-loops are dropped, as the engine never stores them."""
    if registers is None:
        registers = default_register_file().allocatable
    edges, copies = list(edges), [c for c in copies if c[0] != c[1]]
    names = dict.fromkeys([*nodes, *(n for pair in (*edges, *copies) for n in pair)])
    regs = {n: reg_of_name(n) for n in names}
    palette = tuple(registers)
    # A learner may name a register outside the palette: it still becomes a node (the
    # drawing shows what was answered), rather than being dropped silently.
    extra = tuple(n for n in names if not is_virtual(n) and n not in palette)
    graph = InterferenceGraph(name, palette + extra)  # every named register is a node
    for r in regs.values():
        graph.add_node(r)
    for a, b in edges:
        graph.add_edge(regs[a], regs[b])
    graph.moves.extend(Move(regs[d], regs[s], 1, "") for d, s in copies)
    return graph, regs
