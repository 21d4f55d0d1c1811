"""``place_taken_arms`` and ``place_latches`` (codegen/jumps.py) find a label's block by a
position table kept up to date as blocks move, instead of a scan of the blocks per block
(the scans made compiling a 30k-statement program spend seconds there). The layouts they
make are the scanning versions', written out below as they were, on random functions."""

from __future__ import annotations

import random

import pytest

from ssa_course.codegen import jumps
from ssa_course.codegen.mir import LabelRef, MBlock, Mem, MFunction, MInstr, VReg


def _old_place_taken_arms(fn: MFunction) -> int:
    preds = jumps._ways_in(fn)
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
            at = next((j for j, x in enumerate(fn.blocks) if x.label == t), None)
            if t != nxt and (not isinstance(f, LabelRef) or f.name != nxt) \
                    and preds.get(t) == 1 and at is not None and at > k + 1 \
                    and not fn.blocks[at].handler:
                fn.blocks.insert(k + 1, fn.blocks.pop(at))
                moved += 1
        k += 1
    return moved


def _old_place_latches(fn: MFunction) -> int:
    preds = jumps._ways_in(fn)
    moved = 0
    k = 1
    while k < len(fn.blocks):
        latch = fn.blocks[k]
        back = jumps._two_way(latch)
        targets = set(back) if back is not None else set()
        at = next((j for j, x in enumerate(fn.blocks[1:k], 1) if x.label in targets), None)
        if back is None or at is None or len(targets) != 2 or not jumps._only_tests(latch) \
                or preds.get(latch.label) != 1 or latch.handler:
            k += 1
            continue
        header = fn.blocks[at]
        arms = jumps._two_way(header)
        other = None if arms is None or latch.label not in arms else \
            arms[1] if arms[0] == latch.label else arms[0]
        if other is None or other == latch.label or header.handler \
                or at + 1 >= len(fn.blocks) or fn.blocks[at + 1].label != other:
            k += 1
            continue
        fn.blocks.insert(at, fn.blocks.pop(k))
        moved += 1
        k += 1
    return moved


def _random_function(rng: random.Random, n: int) -> MFunction:
    """``n`` blocks ending in ``jcc T; jmp F``, ``jmp X`` or ``ret``; some only step and
    test (latches to move), some store first (no latch), a few are handlers."""
    i, m = VReg(1, "i"), VReg(2, "n")
    labels = [f"L{k}" for k in range(n)]
    fn = MFunction("f", [i, m])
    for k, label in enumerate(labels):
        kind = rng.random()
        body: list[MInstr] = []
        if rng.random() < 0.5:
            body.append(MInstr("lea", [i, Mem(i, disp=1)], [i], [i]))
        if rng.random() < 0.2:
            body.append(MInstr("mov", [Mem(i), m], [], [i, m]))  # a store
        if k == n - 1 or kind < 0.1:
            fn.blocks.append(MBlock(label, [*body, MInstr("ret", [], [], [])], []))
            continue
        if kind < 0.3:
            x = rng.choice(labels[1:])
            fn.blocks.append(MBlock(label, [*body, MInstr("jmp", [LabelRef(x)], [], [])], [x]))
            continue
        t, f = rng.choice(labels[1:]), rng.choice(labels[1:])
        succs = [t] if t == f else [t, f]
        block = MBlock(label, [*body, MInstr("cmp", [i, m], [], [i, m]),
                               MInstr("jcc", [LabelRef(t)], [], [], "l"),
                               MInstr("jmp", [LabelRef(f)], [], [])], succs)
        block.handler = rng.random() < 0.05
        fn.blocks.append(block)
    for _ in range(n // 4):  # loops: a header H testing into a latch L laid out later
        h = rng.randrange(1, n - 2)
        k = rng.randrange(h + 2, n)
        latch, after, out = labels[k], labels[h + 1], rng.choice(labels[1:])
        fn.blocks[h] = MBlock(labels[h], [MInstr("cmp", [i, m], [], [i, m]),
                                          MInstr("jcc", [LabelRef(latch)], [], [], "ne"),
                                          MInstr("jmp", [LabelRef(after)], [], [])],
                              [latch, after])
        fn.blocks[k] = MBlock(latch, [MInstr("lea", [i, Mem(i, disp=1)], [i], [i]),
                                      MInstr("cmp", [i, m], [], [i, m]),
                                      MInstr("jcc", [LabelRef(labels[h])], [], [], "l"),
                                      MInstr("jmp", [LabelRef(out)], [], [])],
                              [labels[h], out])
    return fn


@pytest.mark.parametrize("seed", range(300))
def test_the_position_table_lays_out_what_the_scans_laid_out(seed):
    rng = random.Random(seed)
    n = rng.randint(2, 40)
    for place, old in ((jumps.place_taken_arms, _old_place_taken_arms),
                       (jumps.place_latches, _old_place_latches)):
        a, b = _random_function(random.Random(seed), n), _random_function(random.Random(seed), n)
        assert place(a) == old(b)
        assert [x.label for x in a.blocks] == [x.label for x in b.blocks]
    both = _random_function(random.Random(seed), n)
    again = _random_function(random.Random(seed), n)
    jumps.place_taken_arms(both)
    jumps.place_latches(both)
    _old_place_taken_arms(again)
    _old_place_latches(again)
    assert [x.label for x in both.blocks] == [x.label for x in again.blocks]


def test_random_functions_move_blocks_both_ways():
    """The generator makes layouts both passes change (else the comparison shows little)."""
    taken = latches = 0
    for seed in range(300):
        n = random.Random(seed).randint(2, 40)
        taken += _old_place_taken_arms(_random_function(random.Random(seed), n))
        latches += _old_place_latches(_random_function(random.Random(seed), n))
    assert taken > 50 and latches > 5, (taken, latches)
