"""Jump threading of bools made and then tested: ``&&``/``||`` without the bool.

The middle end lowers ``a && b`` to a phi of bools: one edge brings ``b``'s compare
(``cset p, gt``), the other the constant ``false`` (``mov p, #0``), and the join block
tests it (``cbz p, F``), often after a few instructions of its own (an index both branches
use). When a block ends ``...; def p; b J`` and J is only ``body; cbz/cbnz p, T; b F``
(body: at most :data:`MAX_BODY` instructions that do not branch, call or write p), the
block takes a copy of the body and branches itself:

* ``mov p, #c``: the test's outcome is known: ``b T`` or ``b F``;
* ``cset p, cc`` (the body writes no flags): ``b.cc`` on the compare's flags;
* ``eor p, t, #1`` (a ``not``) or ``mov p, t``: ``cbnz``/``cbz`` on t itself.

A test that ends a block itself (loop inversion copies such tests) is resolved the same
way. The ``mov``/``cset``/``eor`` is then deleted when nothing in the function reads its
register any more, and branches to a block left as a lone ``b L`` go to L. Runs on the
machine IR after phi lowering and loop inversion, before allocation (a value the body
defines is then defined in two blocks, as a phi's copies are). ``insertion_sort``'s
inner loop: 12 instructions -> 9.
"""

from __future__ import annotations

from ssa_course.codegen.aarch64.registers import NEGATE
from ssa_course.codegen.jumps import drop_unreachable
from ssa_course.codegen.mir import Imm, LabelRef, MBlock, Mem, MFunction, MInstr, VReg

MAX_BODY = 6
_CONTROL = frozenset({"jcc", "jmp", "call", "ret", "fuel"})
# ops that leave the flags alone (everything the selector emits outside compares)
_NO_FLAGS = frozenset({"mov", "add", "sub", "lsl", "lsr", "asr", "and", "orr", "eor", "mul",
                       "madd", "msub", "neg", "smulh", "sdiv", "udiv", "ldr", "str", "ldur",
                       "stur", "lea", "cset", "csel", "cneg"})


def _copy(i: MInstr) -> MInstr:
    return MInstr(i.op, list(i.operands), list(i.defs), list(i.uses), i.cond, i.line,
                  i.comment)


def _test(j: MBlock) -> tuple[list[MInstr], str, VReg, str, str] | None:
    """J as (body, cond z|nz, p, T, F), or None when it is not that shape."""
    ins = j.instrs
    if j.handler or len(ins) < 2 or len(ins) - 2 > MAX_BODY or len(j.succs) != 2:
        return None
    test, jump = ins[-2], ins[-1]
    if test.op != "jcc" or test.cond not in ("z", "nz") or jump.op != "jmp":
        return None
    t, p = test.operands[0], test.operands[1] if len(test.operands) > 1 else None
    f = jump.operands[0]
    if not isinstance(p, VReg) or not isinstance(t, LabelRef) or not isinstance(f, LabelRef):
        return None
    body = ins[:-2]
    if any(i.op in _CONTROL or p in i.defs for i in body):
        return None
    return body, test.cond, p, t.name, f.name


def _definition(instrs: list[MInstr], end: int, p: VReg) -> int | None:
    """The index of the last instruction before ``end`` writing p, when it is a ``mov``,
    ``cset`` or ``eor`` writing only p and nothing between it and ``end`` reads p or
    branches; else None."""
    for k in range(end - 1, -1, -1):
        i = instrs[k]
        if p in i.defs:
            return k if i.op in ("mov", "cset", "eor") and i.defs == [p] else None
        if p in i.uses or i.op in _CONTROL:
            return None
    return None


def _outcome(instrs: list[MInstr], end: int, p: VReg
             ) -> tuple[int, bool | str | tuple[VReg, bool]] | None:
    """What ``p != 0`` is at ``end``: (index of the deciding instruction, True/False for a
    constant, the condition code of a ``cset`` whose flags still hold at ``end``, or
    (t, negated) for a register t that still holds the value p was copied or negated
    from), following copies and ``eor p, t, #1`` back. ``eor #1`` is only ever the
    selector's ``not`` of a bool (0 or 1), so ``p == 0`` is ``t != 0`` there."""
    negate, stop, start = False, end, p
    while True:
        k = _definition(instrs, end, p)
        if k is None:  # test the register the copies and negations started from
            if p is start or any(p in j.defs for j in instrs[end:stop]):
                return None
            return end, (p, negate)
        i = instrs[k]
        src = i.operands[1] if len(i.operands) > 1 else None
        if i.op == "mov" and isinstance(src, Imm):
            return k, (src.value != 0) != negate
        if i.op == "mov" and isinstance(src, VReg):
            p, end = src, k
        elif i.op == "eor" and isinstance(src, VReg) and i.operands[2:] == [Imm(1)]:
            p, end, negate = src, k, not negate
        elif i.op == "cset" and i.cond in NEGATE:
            if any(j.op not in _NO_FLAGS for j in instrs[k + 1:stop]):
                return None  # the flags are gone by the end
            return k, NEGATE[i.cond] if negate else i.cond
        else:
            return None


def _resolve(b: MBlock) -> bool:
    """Replace ``cbz/cbnz p, T; b F`` ending ``b`` by ``b T|F`` or ``b.cc T; b F`` when
    p's value in ``b`` is a constant or a ``cset``'s."""
    ins = b.instrs
    if len(ins) < 2 or ins[-1].op != "jmp" or ins[-2].op != "jcc" \
            or ins[-2].cond not in ("z", "nz") or len(ins[-2].operands) < 2:
        return False
    test, jump = ins[-2], ins[-1]
    p, t, f = test.operands[1], test.operands[0], jump.operands[0]
    if not isinstance(p, VReg) or not isinstance(t, LabelRef) or not isinstance(f, LabelRef):
        return False
    got = _outcome(ins, len(ins) - 2, p)
    if got is None:
        return False
    _, value = got
    if isinstance(value, bool):
        goes = t.name if value == (test.cond == "nz") else f.name
        b.instrs[-2:] = [MInstr("jmp", [LabelRef(goes)], line=test.line)]
        b.succs = [goes]
        return True
    if isinstance(value, tuple):
        r, negated = value
        zero = (test.cond == "z") != negated
        b.instrs[-2] = MInstr("jcc", [t, r], [], [r], "z" if zero else "nz", test.line)
        return True
    cc = value if test.cond == "nz" else NEGATE[value]
    b.instrs[-2] = MInstr("jcc", [t], cond=cc, line=test.line)
    return True


def thread_bools(fn: MFunction) -> int:
    """Thread each jump into a block that only tests a bool its predecessor just set,
    and resolve such tests at the end of a block; the number of tests resolved."""
    blocks = fn.block_map()
    for b in fn.blocks:
        last = b.instrs[-1] if b.instrs else None
        if b.handler or last is None or last.op != "jmp" or len(b.succs) != 1:
            continue
        target = last.operands[0]
        j = blocks.get(target.name) if isinstance(target, LabelRef) else None
        shape = _test(j) if j is not None and j is not b else None
        if shape is None:
            continue
        body, _, p, _, _ = shape
        copied = [*b.instrs[:-1], *(_copy(i) for i in body)]
        if _outcome(copied, len(copied), p) is None:
            continue
        b.instrs = [*copied, *(_copy(i) for i in j.instrs[-2:])]  # type: ignore[union-attr]
        b.succs = list(j.succs)  # type: ignore[union-attr]
    done = [b for b in fn.blocks if not b.handler and _resolve(b)]
    if done:
        drop_unreachable(fn)
        _drop_dead(fn, done)
        _skip_jumps(fn)
    return len(done)


def _skip_jumps(fn: MFunction) -> None:
    """Branches to a block that is only ``b L`` go to L (threading leaves such blocks:
    the other edge of a resolved test)."""
    only = {b.label: b.instrs[0].operands[0].name for b in fn.blocks[1:]
            if len(b.instrs) == 1 and b.instrs[0].op == "jmp" and not b.handler
            and isinstance(b.instrs[0].operands[0], LabelRef)}

    def final(label: str) -> str:
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


def _drop_dead(fn: MFunction, blocks: list[MBlock]) -> None:
    """Delete, in the blocks whose test was resolved, ``mov``/``cset``/``eor`` writing a
    virtual register nothing in the function reads any more (repeated: a copy's source may
    die with it)."""
    changed = True
    while changed:
        read = {r for b in fn.blocks for i in b.instrs for r in i.uses}
        changed = False
        for b in blocks:
            keep = [i for i in b.instrs if not (
                i.op in ("mov", "cset", "eor") and len(i.defs) == 1
                and isinstance(i.defs[0], VReg) and i.defs[0] not in read
                and not any(isinstance(o, Mem) for o in i.operands))]
            if len(keep) != len(b.instrs):
                b.instrs = keep
                changed = True
