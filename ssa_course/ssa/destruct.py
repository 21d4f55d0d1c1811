"""Out of SSA: replace phis by copies on the edges, with parallel-copy semantics.

A block's phis all read their arguments *at the same time*, on the incoming edge. Two
classic traps await a naive "put ``x = id arg`` at the end of each predecessor":

* **the lost copy** -- if the predecessor has another successor, the copy runs on that
  path too and may clobber a value still needed there. Fix: *split the critical edge*
  (a new block on the edge holds the copies).
* **the swap** -- phis ``a = phi(b)`` and ``b = phi(a)`` need the *old* values of both;
  copying one after the other loses one. Fix: order the copies so that no value is
  overwritten before it is read, and break cycles with a temporary
  (:func:`sequentialize`).

Exceptional edges (a call in a try region that may throw) cannot be split; their copies go
just before the throwing instruction into fresh variables, which the handler copies into
the phi's own name at its top. (The ``enter`` block's edge to the handler only keeps the
handler reachable; control never takes it directly, so it carries no copies.)
"""

from __future__ import annotations

from collections.abc import Callable

from ssa_course.quads.cfg import CFG, BasicBlock, build_cfg
from ssa_course.quads.ir import UNDEFINED, Function, Instr, Program
from ssa_course.quads.names import variable_names
from ssa_course.tiny.types import Type


def sequentialize(copies: list[tuple[str, str]], fresh: Callable[[str], str]
                  ) -> list[tuple[str, str]]:
    """Order parallel copies ``dst <- src`` so they can run one after the other.

    A copy may run once no other pending copy still reads its destination; when every
    pending destination is still read, the copies form cycles: save one destination in a
    temporary and read the temporary instead.
    """
    pending = [(d, s) for d, s in copies if d != s]  # x <- x does nothing
    out: list[tuple[str, str]] = []
    while pending:
        # a destination nobody still reads can be overwritten now (the "swap problem":
        # writing a destination another copy reads first would lose its old value)
        sources = {s for _, s in pending}
        for i, (d, s) in enumerate(pending):
            if d not in sources:
                out.append((d, s))
                del pending[i]
                break
        else:
            # only cycles left (a, b = b, a): save one destination's old value, and let
            # its readers read the copy -- the cycle is broken, the loop goes on
            d, _ = pending[0]
            tmp = fresh(d)
            out.append((tmp, d))
            pending = [(dd, tmp if ss == d else ss) for dd, ss in pending]
    return out


def _namer(fn: Function) -> Callable[[str], str]:
    """Fresh variables for the copies out of SSA needs: ``x.c0``, ``x.c1``, ..."""
    names = variable_names(fn)
    return lambda base: names.fresh(base, bare=False, sep=".c", start=0)


def _copy(dst: str, src: str, types: dict[str, Type | None]) -> Instr:
    return Instr("id", dst, types.get(dst) or types.get(src), [src])


def from_ssa_cfg(fn: Function) -> CFG:
    """The CFG of an SSA function with its phis replaced by copies."""
    from ssa_course.quads.exceptions import add_exception_edges

    # (no copies: phis are dropped, copies added, blocks' lists changed; the one
    # instruction changed in place, a terminator relabelled onto a split edge, is copied)
    cfg = build_cfg(fn, copy=False)
    add_exception_edges(cfg)  # a handler's phis read values on the edges of throws
    fresh = _namer(fn)
    types: dict[str, Type | None] = {n: t for n, t in fn.params}
    for instr in fn.instrs():
        if instr.dest:
            types[instr.dest] = instr.type
    taken_blocks = set(cfg.blocks)
    # (pred, block) -> the parallel copies ``dest <- arg`` that edge performs: all the
    # phis of a block read their arguments before any of them is written
    edge_copies: dict[tuple[str, str], list[tuple[str, str]]] = {}
    handler_moves: dict[str, list[tuple[str, str]]] = {}
    # 1. every phi becomes one copy per incoming edge
    for name, block in cfg.blocks.items():
        phis = [i for i in block.instrs if i.op == "phi"]
        if not phis:
            continue
        block.instrs = [i for i in block.instrs if i.op != "phi"]
        exceptional_in = any(cfg.blocks[p].throws_to == name for p in block.preds)
        for phi in phis:
            target = dest = phi.result()
            if exceptional_in:  # copies go through a fresh name the handler reads on top
                target = fresh(dest)
                types[target] = phi.type
                handler_moves.setdefault(name, []).append((dest, target))
            for arg, pred in zip(phi.args, phi.labels, strict=True):
                if arg != UNDEFINED:  # no value on that edge: nothing to copy
                    edge_copies.setdefault((pred, name), []).append((target, arg))
    for name, moves in handler_moves.items():
        block = cfg.blocks[name]
        block.instrs = [_copy(d, s, types) for d, s in moves] + block.instrs
    # 2. place each edge's copies, in an order that runs them one at a time
    new_blocks: list[BasicBlock] = []
    for (pred, succ), copies in edge_copies.items():
        seq = [_copy(d, s, types) for d, s in sequentialize(copies, fresh)]
        p = cfg.blocks[pred]
        term = p.terminator
        if term is not None and term.op == "enter" and term.labels[1] == succ:
            # ``enter``'s edge to its handler is never taken by itself: control reaches
            # the handler from a throwing instruction, whose own edge carries the copies.
            continue
        if p.throws_to == succ:
            p.instrs[-1:-1] = seq  # just before the instruction that may throw
        elif len(p.succs) == 1:
            # the predecessor goes only here: the copies run at its end, before its jump
            at = len(p.instrs) - (1 if p.terminator is not None else 0)
            p.instrs[at:at] = seq
        else:  # a critical edge: a new block on it holds the copies
            # (at the end of ``pred`` they would also run on its other edges, at the top
            # of ``succ`` on its other incoming edges: both wrong)
            mid = f"{pred}.to.{succ}"
            while mid in taken_blocks:
                mid += "_"
            taken_blocks.add(mid)
            new_blocks.append(BasicBlock(mid, seq + [Instr("jmp", labels=[succ])], [succ],
                                         [pred]))
            p.succs = [mid if s == succ else s for s in p.succs]
            term = p.terminator
            if term is not None:
                term = p.instrs[-1] = term.copy()  # (it may be ``fn``'s own)
                term.labels = [mid if lb == succ else lb for lb in term.labels]
            else:  # fall-through into succ: the jump in the new block keeps the way
                p.instrs.append(Instr("jmp", labels=[mid]))
    for b in new_blocks:
        cfg.blocks[b.name] = b
    return cfg


def from_ssa(fn: Function) -> Function:
    """``fn`` without phis: ordinary quads again."""
    # (the CFG holds fn's instructions and new ones; none of fn's is changed: shared)
    return from_ssa_cfg(fn).to_function(copy=False)


def program_from_ssa(program: Program) -> Program:
    return Program({n: from_ssa(f) for n, f in program.functions.items()}, program.structs)
