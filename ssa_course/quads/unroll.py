"""Unrolling small innermost loops twice (the ``unroll`` pass of ``ssa-course opt``).

Out of SSA, a loop that *rotates* its variables pays a copy per variable and iteration:
Euclid's ``a, b = b, a % b`` ends every iteration with ``a = b; b = r``, because the new
``b`` is computed while the old one is still needed. No coalescing can avoid it: within
one iteration the values really are alive together. Two iterations can: if the first one
leaves ``r`` where ``a`` was (``a`` is dead once ``r`` is computed) and the second one
works with the roles swapped, the variables are back in place after two iterations with
no copy at all. That is what the phi coalescing after ``gcm`` finds by itself once the
loop body appears twice, so this pass only makes the second copy; the names are chosen
later. (The same idea in a software pipeliner is *modulo variable expansion*.)

The transformation, on ordinary quads before ``parse``: for a natural loop (a back edge
``t -> h`` with ``h`` dominating ``t``) that is innermost, has one back edge, at most
:data:`MAX_BODY` instructions and no exception regions, every block of the loop is
copied under fresh labels. The original latch jumps to the copy of the header instead of
the header, and the copy's latch jumps back to the original header; every exit of either
copy goes where it went before. Each copy keeps its own exit test, so no trip count is
needed and the program runs the same instructions in the same order: one iteration in
the original blocks, the next in the copy, and so on. Nothing is computed twice, no error
moves, the call depth is untouched; the program only grows (bounded by
:data:`MAX_BODY` per loop).

Only loops where the copy can pay are unrolled: a loop-carried variable must take its
next value from another variable that is itself changed in the loop (a rotation: the case
above), otherwise the copy is just more code.
"""

from __future__ import annotations

from typing import Any

from ssa_course import opcodes
from ssa_course.quads.analyses import liveness
from ssa_course.quads.cfg import CFG, BasicBlock, build_cfg
from ssa_course.quads.domtree import Dominance
from ssa_course.quads.ir import Function, Instr
from ssa_course.quads.loops import forward_only, natural_loops
from ssa_course.quads.names import Names

MAX_BODY = 40  # instructions in a loop worth copying
# handlers and SSA forms: copying them would need their own renaming rules
_NEVER = frozenset({"enter", "leave", "catch", "phi", "set", "get", "undef"})


def single_latch_loops(cfg: CFG) -> list[tuple[str, str, list[str]]]:
    """``(header, latch, blocks in layout order)`` of every loop with a single back edge."""
    succs = {n: list(b.succs) for n, b in cfg.blocks.items()}
    if forward_only(succs):  # no edge goes up the layout: no cycle, no loop (no tree)
        return []
    dom = Dominance(succs, cfg.entry)
    preds = {n: b.preds for n, b in cfg.blocks.items()}
    # each body sorted by layout position, not by a scan of every block per loop (that
    # was quadratic: 1,667 loops of 10,000 statements, 0.8 s)
    position = {n: k for k, n in enumerate(cfg.blocks)}
    return [(head, tails[0], sorted(body, key=position.__getitem__))
            for head, (tails, body) in natural_loops(preds, dom).items() if len(tails) == 1]


def propagate_copies(cfg: CFG, runs: list[list[str]]) -> None:
    """Value numbering for the analysis, along each run of blocks (a loop's blocks in
    layout order count as one straight line: a guess, but only a guess of profit):
    read through copies whose source still holds the same value (``t = id b; ...;
    a = id t`` reads ``b``) and turn an operation already computed into a copy
    (``h = div a 2; ...; a = div a 2`` is ``a = id h``) -- the loop roughly as the sea of
    nodes will see it, after GVN."""
    defs: dict[str, list[Instr]] = {p: [] for p, _ in cfg.function.params}
    for block in cfg.blocks.values():
        for i in block.instrs:
            if i.dest:
                defs.setdefault(i.dest, []).append(i)
    # a variable set once by ``const`` stands for its value: two constants of the same
    # value key alike (``#2``), as GVN would merge them
    constant = {name: f"#{ds[0].value}" for name, ds in defs.items()  # one name per value
                if len(ds) == 1 and ds[0].op == "const" and not any(
                    name == p for p, _ in cfg.function.params)}
    for run in runs:
        source: dict[str, str] = {}  # copy destination -> the variable it copied
        computed: dict[tuple[Any, ...], str] = {}  # (op, operands) -> the variable holding it
        for i in (i for name in run for i in cfg.blocks[name].instrs):
            i.args = [source.get(a, a) for a in i.args]
            key = ((i.op, *(constant.get(a, a) for a in i.args))
                   if opcodes.get(i.op) is not None else None)
            if key is not None and key in computed:
                i.op, i.args = "id", [computed[key]]
            if not i.dest:
                continue
            # the write changes i.dest: forget every fact that mentions it
            source = {k: v for k, v in source.items() if i.dest not in (k, v)}
            computed = {k: v for k, v in computed.items() if i.dest != v and i.dest not in k}
            if i.op == "id" and i.args[0] != i.dest:
                source[i.dest] = i.args[0]
            elif key is not None and i.dest not in i.args:
                computed[key] = i.dest


def keeps_a_copy(cfg: CFG, head: str, blocks: list[str],
                 live: dict[str, frozenset[str]]) -> bool:
    """Will a copy ``x = id y`` stay in the loop out of SSA? Only a variable the loop
    carries (live at the header) turns its copy into a phi argument, and that copy goes
    only if ``x`` and ``y`` never hold different values at once: they *interfere* when
    one is assigned (other than by this copy) while the other is still needed."""
    # live where the back edges reach the header: the variables the loop carries
    header_live: set[str] = set()
    for b in cfg.blocks[head].preds:
        if b in blocks:
            header_live |= live[b]
    copies = [i for b in blocks for i in cfg.blocks[b].instrs
              if i.op == "id" and i.dest != i.args[0] and i.dest in header_live]
    if not copies:
        return False
    # a backward walk of each block with the live set (Chaitin's interference test)
    for name in blocks:
        now = set(live[name])
        for i in reversed(cfg.blocks[name].instrs):
            if i.dest:
                for c in copies:
                    x, y = c.dest, c.args[0]
                    if i is not c and ((i.dest == y and x in now)
                                       or (i.dest == x and y in now)):
                        return True
                now.discard(i.dest)
            now.update(i.args)
    return False


def _small_and_innermost(cfg: CFG, loop: tuple[str, str, list[str]], headers: set[str]
                         ) -> bool:
    head, _, blocks = loop
    instrs = [i for b in blocks for i in cfg.blocks[b].instrs]
    # innermost: no other loop's header inside (unrolling an outer loop copies inner ones)
    return (len(instrs) <= MAX_BODY and not any(i.op in _NEVER for i in instrs)
            and not any(b in headers and b != head for b in blocks))


def _explicit_jump(block: BasicBlock) -> list[Instr]:
    """The block's instructions, ending in a jump even where it fell through."""
    instrs = [i.copy() for i in block.instrs]
    if block.terminator is None and block.succs:
        instrs.append(Instr("jmp", labels=[block.succs[0]]))
    return instrs


def unroll_loops(fn: Function) -> Function:
    """``fn`` with every loop that rotates its variables unrolled twice (see above)."""
    if any(i.op in _NEVER for i in fn.instrs()):
        return fn
    # (no copies: the blocks of an unrolled loop are copied by ``_explicit_jump`` before
    # anything changes, the others are only read, and ``to_function`` copies them all)
    cfg = build_cfg(fn, copy=False)
    loops = single_latch_loops(cfg)
    headers = {head for head, _, _ in loops}
    small = [loop for loop in loops if _small_and_innermost(cfg, loop, headers)]
    if not small:
        return fn
    view = build_cfg(fn)  # the same blocks, copies read through, for the analysis only
    in_loops = {name for _, _, blocks in small for name in blocks}
    propagate_copies(view, [[head] + [b for b in blocks if b != head]
                            for head, _, blocks in small]
                     + [[name] for name in view.blocks if name not in in_loops])
    # (no exceptional edges to add: a function with ``enter`` is never unrolled)
    live = liveness(view).bottom
    chosen = [loop for loop in small if keeps_a_copy(view, loop[0], loop[2], live)]
    if not chosen:
        return fn
    labels = Names(cfg.blocks)  # a copied block of loop is loop.u (or loop.u1, ...)
    # The copy: every block of the loop again, renamed; the original latch jumps to the
    # copy's header and the copy's latch back to the original header, so one trip of
    # the new loop is two of the old (each copy keeps its own exit tests).
    for head, latch, blocks in chosen:
        for name in blocks:  # every block jumps explicitly: the copies go elsewhere
            block = cfg.blocks[name]
            block.instrs = _explicit_jump(block)
        rename = {name: labels.fresh(f"{name}.u", sep="") for name in blocks}
        copies = []
        for name in blocks:
            instrs = [i.copy() for i in cfg.blocks[name].instrs]
            for i in instrs:
                i.labels = [head if (name == latch and lb == head) else rename.get(lb, lb)
                            for lb in i.labels]
            copies.append(BasicBlock(rename[name], instrs))
        term = cfg.blocks[latch].instrs[-1]
        term.labels = [rename[head] if lb == head else lb for lb in term.labels]
        # the copies go right after the loop's last block (layout later orders them)
        order = list(cfg.blocks.items())
        at = max(k for k, (name, _) in enumerate(order) if name in blocks) + 1
        order[at:at] = [(c.name, c) for c in copies]
        cfg.blocks.clear()
        cfg.blocks.update(order)
    return cfg.to_function()  # every block of a changed loop ends in a jump: order is free
