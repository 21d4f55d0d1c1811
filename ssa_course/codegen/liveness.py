"""Liveness on machine IR: which registers hold a value that some later instruction reads.

A register is *live* at a point when a path from there reaches a use of it before any
definition. Per block, ``gen`` is what the block reads before writing it and ``kill`` what
it writes; then, backwards, ``live_out(b) = union of live_in(s) over successors s`` and
``live_in(b) = gen(b) | (live_out(b) - kill(b))``, solved with a worklist (a block is
revisited only when a successor's ``live_in`` grew). Live sets inside a block are
recomputed on demand by walking its instructions backwards from ``live_out``.

Only :attr:`MInstr.defs` and :attr:`MInstr.uses` are read (implicit registers included),
so virtual and physical registers are handled alike; mnemonics are never parsed.
:func:`loop_depths` gives each block's loop nesting depth (the spill cost weighs a use
inside a loop ten times more per level).
"""

from __future__ import annotations

from collections import deque
from types import SimpleNamespace

from ssa_course.codegen.mir import MFunction, MInstr, Reg, VReg
from ssa_course.quads.loops import loop_depths as _quads_loop_depths


class Liveness:
    """Live-in and live-out sets of every block of ``fn`` (keyed by label), plus per-block
    ``gen``/``kill``; ``steps`` counts block visits of the worklist (a measure of work)."""

    __slots__ = ("fn", "blocks", "succs", "preds", "gen", "kill", "live_in", "live_out",
                 "steps")

    def __init__(self, fn: MFunction):
        self.fn = fn
        self.blocks = fn.block_map()
        labels = {b.label for b in fn.blocks}
        self.succs: dict[str, list[str]] = {}
        self.preds: dict[str, list[str]] = {b.label: [] for b in fn.blocks}
        # A dangling successor would silently make a value look dead at a block end, and
        # the allocator would then reuse its register: fail loudly instead.
        for b in fn.blocks:
            for s in b.succs:
                if s not in labels:
                    raise ValueError(f"{fn.name}: block {b.label} names an unknown "
                                     f"successor {s}")
                self.preds[s].append(b.label)
            self.succs[b.label] = list(b.succs)
        self.gen: dict[str, set[Reg]] = {}
        self.kill: dict[str, set[Reg]] = {}
        for b in fn.blocks:
            gen: set[Reg] = set()
            kill: set[Reg] = set()
            # Forward over the block: a use counts for gen only if no earlier instruction of
            # the block wrote the register (then the value read was made here, not upstream).
            # Uses before defs within one instruction: `add r, x` reads r, then writes it.
            for instr in b.instrs:
                gen.update(r for r in instr.uses if r not in kill)
                kill.update(instr.defs)
            self.gen[b.label], self.kill[b.label] = gen, kill
        # Start at the least solution (live_in = gen, live_out = empty) and only grow: the
        # sets are bounded by the function's registers, so the fixpoint is reached.
        self.live_in: dict[str, set[Reg]] = {b.label: set(self.gen[b.label])
                                             for b in fn.blocks}
        self.live_out: dict[str, set[Reg]] = {b.label: set() for b in fn.blocks}
        self.steps = 0
        self._solve()

    def _solve(self) -> None:
        # Start from the last block: with blocks in layout order, most successors come
        # later, so one backward sweep settles straight-line code and loops need a few
        # more visits.
        work = deque(reversed([b.label for b in self.fn.blocks]))
        queued = set(work)
        while work:
            label = work.popleft()
            queued.discard(label)
            self.steps += 1
            # Union over successors: a value is live out if *some* path still reads it (a may
            # analysis), which is what keeps its register from being handed to another.
            out = self.live_out[label]
            for s in self.succs[label]:
                out |= self.live_in[s]
            live_in = self.live_in[label]
            # Only the new registers are added (sets grow in place), and predecessors are
            # queued only when something grew: unchanged blocks are never revisited.
            grown = out - self.kill[label] - live_in
            if grown:
                live_in |= grown
                for p in self.preds[label]:
                    if p not in queued:
                        queued.add(p)
                        work.append(p)

    def live_after(self, label: str) -> list[frozenset[Reg]]:
        """For each instruction of block ``label``, the registers live right after it."""
        block = self.blocks[label]
        live = set(self.live_out[label])
        after: list[frozenset[Reg]] = []
        # Backwards: live before = (live after - defs) | uses. Defs are removed before uses
        # are added so that `add r, x` leaves r live before it (it reads r first).
        for instr in reversed(block.instrs):
            after.append(frozenset(live))
            live.difference_update(instr.defs)
            live.update(instr.uses)
        after.reverse()
        return after


def loop_depths(fn: MFunction) -> dict[str, int]:
    """How many natural loops each block of ``fn`` is in (0 outside loops and for blocks
    the entry cannot reach, e.g. a handler entered only by a throw)."""
    if not fn.blocks:
        return {}
    # quads.loops works on anything with ``blocks`` (name -> object with ``succs``) and
    # ``entry``; an MBlock has ``succs``, so the same natural-loop code serves both IRs.
    view = SimpleNamespace(blocks={b.label: b for b in fn.blocks}, entry=fn.blocks[0].label)
    return _quads_loop_depths(view)  # type: ignore[arg-type]  # a duck-typed Function view


def format_minstr(instr: MInstr) -> str:
    """A short Intel-order text of one instruction (``jl L3``, ``mov %4, rdi``): what the
    liveness and allocation listings print next to their sets."""
    op = instr.op
    # `jcc` + cond "l" prints as `jl`: the stored form keeps the condition separate so
    # passes can negate or swap it; the text shows what an assembler would read.
    if instr.cond and op in ("jcc", "setcc", "cmovcc"):
        op = op[:-2] + instr.cond
    ops = ", ".join(str(o) for o in instr.operands)
    return f"{op} {ops}".rstrip()


def _sorted_regs(regs: frozenset[Reg] | set[Reg]) -> list[Reg]:
    """Physical registers first (by name), then virtual ones by number: a stable order."""
    return sorted(regs, key=lambda r: (1, r.id, "") if isinstance(r, VReg) else (0, 0, str(r)))


def regs_text(regs: frozenset[Reg] | set[Reg]) -> str:
    return "{" + ", ".join(str(r) for r in _sorted_regs(regs)) + "}"


def liveness_text(fn: MFunction, liveness: Liveness | None = None) -> str:
    """A stable listing: each block with its live-in set, each instruction with the
    registers live after it, and the block's live-out set."""
    liveness = liveness or Liveness(fn)
    depths = loop_depths(fn)
    lines = [f"liveness @{fn.name}"]
    for block in fn.blocks:
        extra = " (handler)" if block.handler else ""
        lines.append(f"{block.label}:{extra}  depth {depths.get(block.label, 0)}  "
                     f"in {regs_text(liveness.live_in[block.label])}")
        for instr, after in zip(block.instrs, liveness.live_after(block.label), strict=True):
            lines.append(f"    {format_minstr(instr):<32} live {regs_text(after)}")
        lines.append(f"    out {regs_text(liveness.live_out[block.label])}")
    return "\n".join(lines) + "\n"
