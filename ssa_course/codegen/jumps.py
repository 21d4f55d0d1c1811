"""Loop inversion by tail duplication: a jump to a block that only tests and branches
takes a copy of the test instead.

A ``while`` loop comes out of the scheduler as a header ``cmp i, n; jge exit`` that the
body jumps back to: two jumps per iteration. When the header writes no register (only
flags, and the fuel counter), each block that ends with ``jmp header`` can end with the
header's own instructions instead; emission then turns the copy into one backward
conditional jump (``jl body``), as a compiler's loop rotation does. The header stays for
the first entry. Phis were lowered before this, so the copies on the header's outgoing
edges sit in blocks of their own and are reached the same way from either place.
"""

from __future__ import annotations

from ssa_course.codegen.mir import LabelRef, MBlock, Mem, MFunction, MInstr, VReg

MAX_COPY = 5  # instructions: fuel check (2) + compare (1) + jcc + jmp
MAX_STEPS = 4  # register-writing instructions copied along (a latch's step, phi copies)
# Register writes that may ride along: a loop's increment and the phi copies the latch
# needs. A copy of them in each predecessor computes the same, since they are VReg defs
# the allocator will treat as two definitions of one value (as it treats phi copies).
STEP_OPS = frozenset(("lea", "add", "mov"))
# Two sweeps: after the first, a block that took a copy may itself be a pure test block
# another block jumps to. A fixed count bounds the code growth.
PASSES = 2


def _only_tests(block: MBlock) -> bool:
    """Does the block only set flags (and burn fuel) and then branch two ways? Fuel is
    ``sub [rip + rt_fuel], K`` on x86-64 (no register written) and ``subs x27, x27, #K``
    on AArch64: a reserved physical register, never a value of the program (those are
    virtual registers until allocation), so a copy of it computes the same."""
    if len(block.instrs) > MAX_COPY + MAX_STEPS or block.handler or len(block.succs) != 2:
        return False
    # Anything else -- a store, a call, a write to a physical register other than flags and
    # fuel -- disqualifies the block: copying it would duplicate an effect.
    steps = 0
    for i in block.instrs:
        if i.op in STEP_OPS and len(i.defs) == 1 and isinstance(i.defs[0], VReg) \
                and (i.op == "lea" or not any(isinstance(o, Mem) for o in i.operands)):
            steps += 1  # a loop's step (``lea i, [i + 1]``) is copied along
        elif not (i.op in ("cmp", "test", "sub", "subs", "jcc", "jmp")
                  and not any(isinstance(d, VReg) for d in i.defs)
                  and (not i.defs or i.op == "subs")):
            return False
    return steps <= MAX_STEPS and len(block.instrs) - steps <= MAX_COPY


# Fresh lists: the allocator rewrites operands in place, and the original stays for the
# first entry into the loop.
def _copy(i: MInstr) -> MInstr:
    return MInstr(i.op, list(i.operands), list(i.defs), list(i.uses), i.cond, i.line,
                  i.comment)


def duplicate_tests(fn: MFunction) -> int:
    """Replace each ``jmp H`` ending a block by H's instructions when H only tests and
    branches; the number of jumps replaced."""
    blocks = fn.block_map()
    done = 0
    for _ in range(PASSES):  # a block that took a test may be copied in turn
        for b in fn.blocks:
            last = b.instrs[-1] if b.instrs else None
            if last is None or last.op != "jmp" or not isinstance(last.operands[0], LabelRef):
                continue
            if any(i.op == "jcc" for i in b.instrs[-2:-1]):
                continue  # already ends in a two-way branch
            target = blocks.get(last.operands[0].name)
            if target is None or target is b or not _only_tests(target):
                continue
            # The jump becomes the test itself: the latch now branches back to the body on
            # its own (one jump per iteration instead of two). H keeps its first entry.
            b.instrs[-1:] = [_copy(i) for i in target.instrs]
            b.succs = list(target.succs)
            done += 1
    if done:
        drop_unreachable(fn)
    return done


def drop_unreachable(fn: MFunction) -> None:
    """Remove blocks no path reaches any more (a header every jump now bypasses); a
    trap stub is reached by a conditional jump in the middle of a block."""
    # Reachability from the entry, following succs and mid-block `jcc`s: a trap stub is no
    # successor (it never returns) but must stay, or its label would dangle.
    blocks = fn.block_map()
    seen = {fn.blocks[0].label}
    todo = [fn.blocks[0]]
    while todo:
        b = todo.pop()
        targets = list(b.succs) + [i.operands[0].name for i in b.instrs
                                   if i.op == "jcc" and isinstance(i.operands[0], LabelRef)]
        for t in targets:
            if t in blocks and t not in seen:
                seen.add(t)
                todo.append(blocks[t])
    fn.blocks = [b for b in fn.blocks if b.label in seen]


def _ways_in(fn: MFunction) -> dict[str, int]:
    """How many jumps (and fall-throughs) lead into each block, mid-block ``jcc``s (trap
    stubs, fuel checks) included."""
    preds: dict[str, int] = {}
    for b in fn.blocks:
        for s in b.succs:
            preds[s] = preds.get(s, 0) + 1
        for i in b.instrs[:-2]:  # jumps in the middle: trap stubs, fuel checks
            if i.op == "jcc" and isinstance(i.operands[0], LabelRef):
                preds[i.operands[0].name] = preds.get(i.operands[0].name, 0) + 1
    return preds


def place_taken_arms(fn: MFunction) -> int:
    """Lay a block ending ``jcc T; jmp F`` (neither laid out next) right before T's arm:
    T moves up behind it when the block is T's only predecessor, so the branch falls
    into T and emission writes ``j<not cc> F`` (threading leaves such blocks: the test of
    a ``&&`` resolved in the block that made its compare). Every block ends in explicit
    jumps, so any order is correct; the number of blocks moved."""
    # Count every way into a block, mid-block jumps included: moving a block with another
    # predecessor would only change which path pays the jump, not remove one.
    preds = _ways_in(fn)
    where = _positions(fn)
    moved = 0
    k = 0
    while k < len(fn.blocks) - 1:
        b = fn.blocks[k]
        tail = b.instrs[-2:]
        if len(tail) == 2 and tail[0].op == "jcc" and tail[1].op == "jmp" \
                and isinstance(tail[0].operands[0], LabelRef):
            t = tail[0].operands[0].name
            nxt = fn.blocks[k + 1].label
            f = tail[1].operands[0]
            at = where.get(t)
            if t != nxt and (not isinstance(f, LabelRef) or f.name != nxt) \
                    and preds.get(t) == 1 and at is not None and at > k + 1 \
                    and not fn.blocks[at].handler:
                # Only moves forward-laid-out blocks up (at > k + 1), and never the entry, so
                # the function still starts at its first block.
                fn.blocks.insert(k + 1, fn.blocks.pop(at))
                _renumber(fn, where, k + 1, at)
                moved += 1
        k += 1
    return moved


def _positions(fn: MFunction) -> dict[str, int]:
    """Each block's index in the layout, by its label (a function's labels are unique:
    successors name blocks by them): a lookup instead of a scan of the blocks per block,
    which made the layout passes quadratic (a 30k-statement program spent seconds here)."""
    return {b.label: j for j, b in enumerate(fn.blocks)}


def _renumber(fn: MFunction, where: dict[str, int], lo: int, hi: int) -> None:
    """After a move within ``fn.blocks[lo:hi + 1]``: the new indices of the blocks there."""
    for j in range(lo, hi + 1):
        where[fn.blocks[j].label] = j


def _two_way(b: MBlock) -> tuple[str, str] | None:
    """(taken, other) of a block ending ``jcc T; jmp F``; None for any other ending."""
    tail = b.instrs[-2:]
    if len(tail) == 2 and tail[0].op == "jcc" and tail[1].op == "jmp" \
            and isinstance(tail[0].operands[0], LabelRef) \
            and isinstance(tail[1].operands[0], LabelRef):
        return tail[0].operands[0].name, tail[1].operands[0].name
    return None


def place_latches(fn: MFunction) -> int:
    """Lay a loop's short latch right before its header: a block L that only steps and
    tests (:func:`_only_tests`), that only the header H reaches, by the arm H does not
    fall into (H's other arm Y is laid out after it), and that branches back to H
    (``L: ... jcc H; jmp X`` or the reverse, after loop inversion) moves in front of H,
    so it falls into H and emission writes one jump to X. That path then takes one
    branch an iteration instead of two (the sieve's ``if (!composite[i])`` when the flag
    is set: the header's ``jne`` to the step, which used to jump back again), as a
    compiler that rotates its loops lays them out; the block that fell into H pays a
    ``jmp H`` once per entry into the loop. Every block ends in explicit jumps, so any
    order is correct; the number of blocks moved."""
    preds = _ways_in(fn)
    where = _positions(fn)
    moved = 0
    k = 1
    while k < len(fn.blocks):
        latch = fn.blocks[k]
        back = _two_way(latch)
        targets = set(back) if back is not None else set()
        # H laid out before L (a back edge) and not the entry (the function starts there)
        before = [j for j in (where.get(t) for t in targets) if j is not None and 1 <= j < k]
        at = min(before) if before else None
        # Only a latch that steps and tests (a ``continue``'s path): moving one that does
        # the loop's work changed nothing measurable in lattice and cost collatz 8% (its
        # arms are taken at random; the layout of a mispredicted branch matters little).
        if back is None or at is None or len(targets) != 2 or not _only_tests(latch) \
                or preds.get(latch.label) != 1 or latch.handler:
            k += 1
            continue
        header = fn.blocks[at]
        arms = _two_way(header)
        # H reaches L by a jump and falls into its other arm: after the move H still takes
        # one jump there, and L none.
        other = None if arms is None or latch.label not in arms else \
            arms[1] if arms[0] == latch.label else arms[0]
        if other is None or other == latch.label or header.handler \
                or at + 1 >= len(fn.blocks) or fn.blocks[at + 1].label != other:
            k += 1
            continue
        fn.blocks.insert(at, fn.blocks.pop(k))
        _renumber(fn, where, at, k)
        moved += 1
        k += 1
    return moved
