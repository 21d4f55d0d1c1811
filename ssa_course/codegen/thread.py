"""Jump threading of bools made and then tested: ``&&``/``||`` without the bool.

The middle end lowers ``a && b`` to a phi of bools: one edge brings ``b``'s compare
(AArch64 ``cset p, gt``, x86-64 ``setg p; movzx p, p``), the other the constant
``false`` (``mov p, 0``), and the join block tests it (``cbz p, F``; ``test p, p; je F``),
often after a few instructions of its own (an index both branches use). When a block ends
``...; def p; jmp J`` and J is only ``body; <test p>; jcc T; jmp F`` (body: at most
:data:`MAX_BODY` instructions that do not branch, call or write p), the block takes a copy
of the body and branches itself:

* ``mov p, c``: the test's outcome is known: ``jmp T`` or ``jmp F``;
* a compare's bool (the body writes no flags): ``jcc cc`` on the compare's flags;
* a ``not`` (``eor p, t, #1``; ``mov p, t; xor p, 1``) or a copy ``mov p, t``: the
  test of t itself, the other way round for a ``not``.

A test that ends a block itself (loop inversion copies such tests) is resolved the same
way. The instructions making the bool are then deleted when nothing reads its register
any more, with anything else the copied bodies computed for an arm that no longer needs it
(:func:`ssa_course.codegen.dead.remove_dead_code`: nqueens' index of `down`, computed on
the path where `cols[c]` is set; this runs even when nothing was threaded), and jumps to
a block left as a lone ``jmp L`` go to L. Runs on the machine IR after phi lowering and
loop inversion, before allocation (a value the body defines is then defined in two
blocks, as a phi's copies are). The two targets differ
only in the :class:`Shapes` they pass: how a register is tested for zero, which
instructions make a bool and which leave the flags alone. ``insertion_sort``'s inner
loop: 12 instructions -> 9 on AArch64.
"""

from __future__ import annotations

from dataclasses import dataclass

from ssa_course.codegen.dead import remove_dead_code
from ssa_course.codegen.jumps import drop_unreachable
from ssa_course.codegen.mir import Imm, LabelRef, MBlock, Mem, MFunction, MInstr, VReg

# The body is *copied* into each predecessor, so it must stay small: code grows by up to
# MAX_BODY instructions per threaded edge, to save a test and a jump per run of it.
MAX_BODY = 6
# Instructions a copied body may not contain: they leave the block, or (a call) clobber
# registers and flags, so "p still holds what was just set" would no longer be true.
_CONTROL = frozenset({"jcc", "jmp", "call", "ret", "fuel"})


@dataclass(frozen=True, slots=True)
class Shapes:
    """What a target's bools look like in machine IR.

    ``zero``/``nonzero``: the conditions of a branch on a register being 0 / not 0;
    ``test_op``: None when that branch names the register itself (AArch64 ``cbz``), else
    the op that sets the flags from it first (x86-64 ``test p, p``); ``setcc``: the op
    making a bool from flags (its ``cond``); ``widen``: an op ``widen p, p`` that follows
    it (x86-64 ``movzx``) or None; ``negate_op``: the ``not`` of a bool, as
    ``negate_op p, t, 1`` (three-address) or ``negate_op p, 1`` (two-address, p a copy of
    t); ``negate``: each condition's opposite; ``no_flags``: ops that leave the flags as
    they are; ``pure``: ops that write their register operands (and perhaps the flags)
    and nothing else, what dead-code removal may delete after threading
    (:mod:`ssa_course.codegen.dead`)."""

    zero: str
    nonzero: str
    test_op: str | None
    setcc: str
    widen: str | None
    negate_op: str
    negate: dict[str, str]
    no_flags: frozenset[str]
    pure: frozenset[str]

    @property
    def makers(self) -> tuple[str, ...]:
        """The ops that may make the bool a test reads (deleted once nothing reads it)."""
        return tuple(x for x in ("mov", self.setcc, self.widen, self.negate_op) if x)


# A fresh instruction with fresh lists: the same MInstr in two blocks would be renamed
# twice by the allocator (replace_reg works in place).
def _copy(i: MInstr) -> MInstr:
    return MInstr(i.op, list(i.operands), list(i.defs), list(i.uses), i.cond, i.line,
                  i.comment)


def _tail(sh: Shapes) -> int:
    """How many instructions test a bool at the end of a block: ``cbz p, T; b F`` (2) or
    ``test p, p; je T; jmp F`` (3)."""
    return 2 if sh.test_op is None else 3


def _tested(ins: list[MInstr], sh: Shapes) -> tuple[VReg, bool, str, str] | None:
    """(p, branches to T when p != 0?, T, F) when ``ins`` ends testing register p."""
    if len(ins) < _tail(sh):
        return None
    # Only the canonical tail `jcc T; jmp F`: after selection every two-way block ends so
    # (emission drops a jump to the next block), so nothing else need match.
    test, jump = ins[-2], ins[-1]
    if test.op != "jcc" or test.cond not in (sh.zero, sh.nonzero) or jump.op != "jmp":
        return None
    t, f = test.operands[0], jump.operands[0]
    if sh.test_op is None:
        p = test.operands[1] if len(test.operands) > 1 else None
    else:
        flags = ins[-3]
        p = flags.operands[0] if flags.op == sh.test_op and len(flags.operands) == 2 \
            and flags.operands[0] == flags.operands[1] else None
    if not isinstance(p, VReg) or not isinstance(t, LabelRef) or not isinstance(f, LabelRef):
        return None
    return p, test.cond == sh.nonzero, t.name, f.name


def _test(j: MBlock, sh: Shapes) -> tuple[list[MInstr], VReg] | None:
    """J as (body, p) when it is only a body and a test of p, else None."""
    ins = j.instrs
    # A handler is entered by a throw as well as by jumps: a copy in one predecessor
    # would not cover that entry, so handlers are never threaded through.
    if j.handler or len(ins) - _tail(sh) > MAX_BODY or len(j.succs) != 2:
        return None
    tested = _tested(ins, sh)
    if tested is None:
        return None
    p = tested[0]
    body = ins[:-_tail(sh)]
    if any(i.op in _CONTROL or p in i.defs for i in body):
        return None
    return body, p


def _definition(instrs: list[MInstr], end: int, p: VReg, sh: Shapes) -> int | None:
    """The index of the last instruction before ``end`` writing p, when it is one that
    makes bools (:attr:`Shapes.makers`, not a load) writing only p and nothing between
    it and ``end`` reads p or branches; else None."""
    # Backwards to the nearest write of p. A read of p in between would lose its value if
    # the maker were later deleted, and a branch means another path may reach `end`:
    # either way the definition cannot be trusted to be *the* value tested.
    for k in range(end - 1, -1, -1):
        i = instrs[k]
        if p in i.defs:
            return k if i.op in sh.makers and i.defs == [p] \
                and not any(isinstance(o, Mem) for o in i.operands) else None  # not a load
        if p in i.uses or i.op in _CONTROL:
            return None
    return None


def _outcome(instrs: list[MInstr], end: int, p: VReg, sh: Shapes
             ) -> tuple[int, bool | str | tuple[VReg, bool]] | None:
    """What ``p != 0`` is at ``end``: (index of the deciding instruction, True/False for a
    constant, the condition code of a compare whose flags still hold at ``end``, or
    (t, negated) for a register t that still holds the value p was copied or negated
    from), following copies, widenings and ``not``s back. A ``not`` is only ever the
    selector's ``not`` of a bool (0 or 1: ``x ^ 1``), so ``p == 0`` is ``t != 0`` there."""
    # Walk the chain of makers backwards (`stop` remembers the original end, for the flags
    # check); every step keeps the invariant "p != 0 at `end` iff (value) xor negate".
    negate, stop, start = False, end, p
    while True:
        k = _definition(instrs, end, p, sh)
        if k is None:  # test the register the copies and negations started from
            # Only worth it if we moved at all (p is not the tested register itself), and
            # only sound if nothing overwrote that register on the way to the test.
            if p is start or any(p in j.defs for j in instrs[end:stop]):
                return None
            return end, (p, negate)
        i = instrs[k]
        src = i.operands[1] if len(i.operands) > 1 else None
        if i.op == "mov" and isinstance(src, Imm):
            return k, (src.value != 0) != negate
        if i.op == "mov" and isinstance(src, VReg):
            p, end = src, k
        elif i.op == sh.widen and src == p:  # movzx p, p: the same 0 or 1
            end = k
        elif i.op == sh.negate_op and isinstance(src, VReg) and i.operands[2:] == [Imm(1)]:
            p, end, negate = src, k, not negate  # eor p, t, #1
        elif i.op == sh.negate_op and src == Imm(1) and len(i.operands) == 2:
            end, negate = k, not negate  # xor p, 1 (p a copy of the bool made before)
        elif i.op == sh.setcc and i.cond in sh.negate:
            # The bool came from flags: branching on the flags directly is exact only if no
            # instruction after the setcc changed them (x86 arithmetic writes flags).
            if any(j.op not in sh.no_flags for j in instrs[k + 1:stop]):
                return None  # the flags are gone by the end
            return k, sh.negate[i.cond] if negate else i.cond
        else:
            return None


def _resolve(b: MBlock, sh: Shapes) -> bool:
    """Replace the test of p ending ``b`` by a jump, a branch on the compare's flags or a
    test of the register p was copied from, when p's value in ``b`` is known that far."""
    ins = b.instrs
    tested = _tested(ins, sh)
    if tested is None:
        return False
    p, nonzero, t, f = tested
    n = _tail(sh)
    line = ins[-2].line
    got = _outcome(ins, len(ins) - n, p, sh)
    if got is None:
        return False
    _, value = got
    jump = MInstr("jmp", [LabelRef(f)], line=ins[-1].line)
    # A known constant: the block jumps straight to one side, and the other edge is gone
    # (succs shrink, so liveness no longer sees values flowing there).
    if isinstance(value, bool):
        goes = t if value == nonzero else f
        b.instrs[-n:] = [MInstr("jmp", [LabelRef(goes)], line=line)]
        b.succs = [goes]
        return True
    # A register the bool was copied or negated from: test that one, flipping the
    # condition for each `not`; the copies become dead and _drop_dead removes them.
    if isinstance(value, tuple):
        r, negated = value
        cond = sh.zero if (not nonzero) != negated else sh.nonzero
        if sh.test_op is None:
            tail = [MInstr("jcc", [LabelRef(t), r], [], [r], cond, line)]
        else:
            tail = [MInstr(sh.test_op, [r, r], [], [r, r], line=line),
                    MInstr("jcc", [LabelRef(t)], cond=cond, line=line)]
        b.instrs[-n:] = [*tail, jump]
        return True
    # The compare's own condition: no bool is made at all (setcc/movzx die later).
    cc = value if nonzero else sh.negate[value]
    b.instrs[-n:] = [MInstr("jcc", [LabelRef(t)], cond=cc, line=line), jump]
    return True


def thread_bools(fn: MFunction, sh: Shapes) -> int:
    """Thread each jump into a block that only tests a bool its predecessor just set,
    and resolve such tests at the end of a block; the number of tests resolved."""
    blocks = fn.block_map()
    n = _tail(sh)
    # Phase 1, threading: a block that sets p and jumps to "body; test p" takes a copy of
    # body and test, so phase 2 can resolve the test in the block where p is known.
    for b in fn.blocks:
        last = b.instrs[-1] if b.instrs else None
        if b.handler or last is None or last.op != "jmp" or len(b.succs) != 1:
            continue
        target = last.operands[0]
        j = blocks.get(target.name) if isinstance(target, LabelRef) else None
        shape = _test(j, sh) if j is not None and j is not b else None
        if j is None or shape is None:
            continue
        body, p = shape
        # Copy only when it pays: if the copied test could not be resolved, the copy would
        # be pure code growth.
        copied = [*b.instrs[:-1], *(_copy(i) for i in body)]
        if _outcome(copied, len(copied), p, sh) is None:
            continue
        b.instrs = [*copied, *(_copy(i) for i in j.instrs[-n:])]
        b.succs = list(j.succs)
    # Phase 2, resolution, then clean-up: J may now be unreachable, the bool makers dead
    # (and whatever else a copied body computed for the other arm only), and some blocks
    # mere `jmp L` trampolines.
    done = [b for b in fn.blocks if not b.handler and _resolve(b, sh)]
    if done:
        drop_unreachable(fn)
    # Dead code goes whether or not a test was resolved here: selection leaves some too
    # (an index folded into an address, x86_effects).
    if remove_dead_code(fn, sh.pure, sh.no_flags) or done:
        _skip_jumps(fn)
    return len(done)


def _skip_jumps(fn: MFunction) -> None:
    """Jumps to a block that is only ``jmp L`` go to L (threading leaves such blocks:
    the other edge of a resolved test)."""
    # fn.blocks[1:]: the entry block is never skipped (it is where the function starts).
    only = {b.label: b.instrs[0].operands[0].name for b in fn.blocks[1:]
            if len(b.instrs) == 1 and b.instrs[0].op == "jmp" and not b.handler
            and isinstance(b.instrs[0].operands[0], LabelRef)}

    def final(label: str) -> str:
        # `seen` stops on a cycle of lone jumps (an empty endless loop) instead of spinning.
        seen = set()
        while label in only and label not in seen:
            seen.add(label)
            label = only[label]
        return label

    for b in fn.blocks:
        for i in b.instrs:
            target = i.operands[0] if i.op in ("jmp", "jcc") and i.operands else None
            if isinstance(target, LabelRef) and target.name in only:
                i.operands[0] = LabelRef(final(target.name))
        b.succs = [final(x) for x in b.succs]
    drop_unreachable(fn)
