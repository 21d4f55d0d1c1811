"""SSA construction on quads: phi placement at iterated dominance frontiers, then renaming.

The classic two steps (Cytron et al.):

1. **Where do phis go?** A variable assigned in blocks ``D`` needs a phi at every block of
   the iterated dominance frontier DF+(D): the first places where two different
   definitions can meet. *Minimal* SSA places all of them; *pruned* SSA skips blocks
   where the variable is dead (not live on entry), which removes phis nobody reads.
2. **Renaming.** Walk the dominator tree keeping, per variable, a stack of its current
   version: a definition pushes a fresh name (``x.1``, ``x.2``, ...), a use reads the top,
   and each successor's phi takes, for this edge, the version on top when the block ends.

The result is quads with Bril's ``phi`` instructions, run by the same quads interpreter.
Exception edges come from :mod:`ssa_course.quads.exceptions`; liveness (for pruned SSA)
from the one data-flow solver, :mod:`ssa_course.quads.flow`, whose exception-edge rule
is the one renaming follows: a handler receives the versions current *before* the
throwing instruction.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ssa_course.quads.analyses import liveness
from ssa_course.quads.cfg import CFG, BasicBlock, build_cfg, remove_unreachable
from ssa_course.quads.exceptions import add_exception_edges
from ssa_course.quads.ir import UNDEFINED, Function, Instr, Program, first_index
from ssa_course.quads.names import Names
from ssa_course.ssa.dom import (
    dominance_frontiers,
    dominator_tree,
    fast_immediate_dominators,
    iterated_frontier,
)
from ssa_course.tiny.types import Type


@dataclass
class SSAStats:
    """What construction did, for the lessons' comparison tables."""

    phis: int = 0
    variables: int = 0
    per_function: dict[str, int] = field(default_factory=dict)


def prepare_cfg(fn: Function, exception_edges: bool = True) -> CFG:
    """The CFG SSA is built on: reachable blocks, exception edges (unless Julia's
    Upsilon/PhiC are used instead), and an entry block with no predecessors."""
    cfg = build_cfg(fn)
    remove_unreachable(cfg)
    if exception_edges:
        add_exception_edges(cfg)
    entry = cfg.blocks[cfg.entry]
    if entry.preds:  # a phi cannot live in the entry block: give it a fresh one
        name = "entry"
        while name in cfg.blocks:
            name += "_"
        fresh = BasicBlock(name, [], [entry.name], [], True)
        entry.preds.append(name)
        cfg.blocks[name] = fresh
        cfg.blocks.move_to_end(name, last=False)
        cfg.entry = name
    return cfg


def to_ssa_cfg(fn: Function, *, pruned: bool = True,
               stats: SSAStats | None = None) -> CFG:
    """Build SSA for one function; returns its CFG with phis at the top of blocks."""
    # Cytron et al. in two steps: (1) place phis at the iterated dominance frontier of
    # each variable's definitions; (2) rename, walking the dominator tree with a stack
    # of the current version of each variable.
    cfg = prepare_cfg(fn)
    succs = {name: list(b.succs) for name, b in cfg.blocks.items()}
    idom = fast_immediate_dominators(succs, cfg.entry)
    df = dominance_frontiers(succs, idom)
    tree = dominator_tree(idom)

    # the blocks that define each variable (parameters: defined on entry), its type,
    # and every name in use (new versions must not collide with any of them)
    types: dict[str, Type | None] = {name: ty for name, ty in fn.params}
    defsites: dict[str, set[str]] = {name: {cfg.entry} for name, _ in fn.params}
    taken: set[str] = set(types)
    for name, block in cfg.blocks.items():
        for instr in block.instrs:
            taken.update(instr.args)
            if instr.dest is not None:
                types.setdefault(instr.dest, instr.type)
                defsites.setdefault(instr.dest, set()).add(name)
                taken.add(instr.dest)

    live_in = liveness(cfg).top if pruned else None  # pruned: only where the variable is live
    phis: dict[str, list[Instr]] = {name: [] for name in cfg.blocks}
    # (1) a definition in block d reaches the frontier of d first: two definitions may
    # meet there, so it needs a phi -- which is a definition too (hence *iterated*)
    for var in sorted(defsites):  # (sorted: the same program always gets the same phis)
        for b in sorted(iterated_frontier(df, defsites[var])):
            if live_in is not None and var not in live_in[b]:
                continue  # pruned SSA: a phi nobody reads is not placed
            preds = cfg.blocks[b].preds
            phis[b].append(Instr("phi", var, types.get(var), [var] * len(preds), [],
                                 list(preds)))

    # (2) renaming. ``stacks[x]``: the versions of x defined by the dominators of the
    # current block, innermost last -- the top is the version a use here reads
    names = Names(taken)  # versions x.1, x.2, ... beside every name already used
    stacks: dict[str, list[str]] = {name: [name] for name, _ in fn.params}
    renamed: dict[str, list[Instr]] = {}
    pushed: dict[str, list[str]] = {}  # block -> the variables it pushed (popped on exit)
    # While renaming, ``merges[phi]`` is the variable a phi merges (its args are filled
    # in edge by edge as the walk reaches each predecessor).
    merges = {phi: phi.result() for block_phis in phis.values() for phi in block_phis}
    for phi in merges:
        phi.args = [UNDEFINED] * len(phi.args)

    def top(var: str) -> str | None:
        st = stacks.get(var)
        return st[-1] if st else None

    slots: dict[str, dict[str, int]] = {}  # block -> pred -> its phi argument's index

    def fill(pred: str, succ: str) -> None:
        """Give ``succ``'s phis their argument for the edge from ``pred``."""
        if not phis[succ]:
            return
        if succ not in slots:  # once per block: ``labels.index`` per edge is quadratic
            slots[succ] = first_index(phis[succ][0].labels)
        at = slots[succ][pred]
        for phi in phis[succ]:
            phi.args[at] = top(merges[phi]) or UNDEFINED

    # Iterative walk of the dominator tree: ("enter", b) renames b, ("exit", b) pops.
    work: list[tuple[str, str]] = [("enter", cfg.entry)]
    while work:
        action, name = work.pop()
        if action == "exit":
            for var in reversed(pushed.pop(name)):
                stacks[var].pop()
            continue
        block = cfg.blocks[name]
        mine: list[str] = []
        # the block's phis define first (they run on entry, before any instruction)
        for phi in phis[name]:
            var = merges[phi]
            phi.dest = names.fresh(var, bare=False)
            stacks.setdefault(var, []).append(phi.dest)
            mine.append(var)
        out: list[Instr] = []
        for i, instr in enumerate(block.instrs):
            if block.throws_to is not None and i == len(block.instrs) - 1:
                fill(name, block.throws_to)  # values from *before* the throwing instruction
            # uses read the current version, then the definition pushes a new one
            # (``x = x + 1`` reads the old x)
            new = instr.copy()
            new.args = [top(a) or a for a in instr.args]  # an undefined use keeps its name
            if instr.dest is not None:
                new.dest = names.fresh(instr.dest, bare=False)
                stacks.setdefault(instr.dest, []).append(new.dest)
                mine.append(instr.dest)
            out.append(new)
        renamed[name] = out
        # a successor's phis read, on the edge from here, the versions current at the end
        # of this block (a successor need not be a child in the dominator tree)
        for s in block.succs:
            if s != block.throws_to:
                fill(name, s)
        pushed[name] = mine
        # the children run with this block's versions on the stacks; the exit entry,
        # popped after all of them, takes them off again
        work.append(("exit", name))
        for child in reversed(tree.get(name, [])):
            work.append(("enter", child))

    for name, block in cfg.blocks.items():
        block.instrs = phis[name] + renamed.get(name, block.instrs)
    if stats is not None:
        count = sum(len(p) for p in phis.values())
        stats.phis += count
        stats.per_function[fn.name] = count
        stats.variables += len(defsites)
    return cfg



def to_ssa(fn: Function, *, pruned: bool = True, stats: SSAStats | None = None) -> Function:
    """SSA form of ``fn`` as a flat quads function (every block labelled, phis on top)."""
    return to_ssa_cfg(fn, pruned=pruned, stats=stats).to_function()


def program_to_ssa(program: Program, *, pruned: bool = True,
                   stats: SSAStats | None = None) -> Program:
    """SSA form of every function of a program."""
    return Program({name: to_ssa(fn, pruned=pruned, stats=stats)
                    for name, fn in program.functions.items()}, program.structs)
