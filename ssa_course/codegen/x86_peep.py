"""Two x86-64 peepholes after allocation, where registers are physical and slots known:
an operand reloaded only to be compared is compared in memory, and a test for zero right
after an add reads the add's flags.

* ``mov r, [slot]; cmp x, r`` with r read by nobody after is ``cmp x, [slot]`` (also
  ``cmp r, y`` -> ``cmp [slot], y`` and ``test r, r`` -> ``cmp [slot], 0``): x86 compares a
  register with memory in one instruction, and the compare still fuses with its jump.
  nqueens' loop test read its spilled bound `n` into a register every iteration.
* ``lea r, [r + c]`` (or ``add``/``sub r, c``) then ``test r, r; j<cc>`` is ``add r, c;
  j<cc'>``: the add sets ZF and SF from the same result the test would see (cc' is ``s``
  for ``l``, ``ns`` for ``ge``, e/ne/s/ns as they are; ``g``/``le`` also read OF, which the
  add may set, and stay). insertion_sort's `j = j - 1` then `j >= 0`: `sub; jns`.

Both keep the flags a later instruction could read the same (a fused compare's flags are
the compare's either way; the second only where the jump is the flags' only reader,
:func:`ssa_course.codegen.dead.flags_dead` after it). Run per function by
:func:`ssa_course.codegen.compile.allocate_functions` after the reload clean-up.
"""

from __future__ import annotations

from ssa_course.codegen.dead import flags_dead
from ssa_course.codegen.liveness import Liveness
from ssa_course.codegen.minstr import fits32
from ssa_course.codegen.mir import Imm, Mem, MFunction, MInstr, PReg, Slot

# what a jump on `test r, r` becomes on the flags of `add r, c` (SF and ZF only)
_ON_ADD = {"e": "e", "ne": "ne", "s": "s", "ns": "ns", "l": "s", "ge": "ns"}
# x86-64 ops that leave the flags alone (the Selector's bool Shapes say the same)
_NO_FLAGS = frozenset({"mov", "movzx", "lea", "setcc"})


def peephole(fn: MFunction) -> int:
    """Both rewrites over ``fn`` (allocated, frame not yet laid out); how many fired."""
    return _fold_reloads(fn) + _test_after_add(fn)


def _fold_reloads(fn: MFunction) -> int:
    live = Liveness(fn)
    done = 0
    for block in fn.blocks:
        after = live.live_after(block.label)
        instrs = block.instrs
        out: list[MInstr] = []
        k = 0
        while k < len(instrs):
            i = instrs[k]
            nxt = instrs[k + 1] if k + 1 < len(instrs) else None
            folded = _folded(i, nxt) if nxt is not None else None
            if folded is not None and _reloaded(i) not in after[k + 1]:
                out.append(folded)
                done += 1
                k += 2
                continue
            out.append(i)
            k += 1
        block.instrs = out
    return done


def _reloaded(i: MInstr) -> PReg | None:
    """The register of a reload ``mov r, slot``, else None."""
    ops = i.operands
    if i.op == "mov" and len(ops) == 2 and isinstance(ops[0], PReg) and isinstance(ops[1], Slot):
        return ops[0]
    return None


def _folded(reload: MInstr, use: MInstr) -> MInstr | None:
    """The compare ``use`` reading ``reload``'s slot in place of its register, or None."""
    r = _reloaded(reload)
    if r is None or use.op not in ("cmp", "test") or len(use.operands) != 2:
        return None
    slot = reload.operands[1]
    a, b = use.operands
    if use.op == "test":
        if a == r and b == r:
            return MInstr("cmp", [slot, Imm(0)], [], [], line=use.line)
        return None
    if b == r and a != r and isinstance(a, PReg):
        return MInstr("cmp", [a, slot], [], [a], line=use.line)
    if a == r and b != r and isinstance(b, PReg | Imm):
        return MInstr("cmp", [slot, b], [], [b] if isinstance(b, PReg) else [],
                      line=use.line)
    return None


def _test_after_add(fn: MFunction) -> int:
    blocks = fn.block_map()
    done = 0
    for block in fn.blocks:
        instrs = block.instrs
        out: list[MInstr] = []
        k = 0
        while k < len(instrs):
            step = instrs[k]
            r = _stepped(step) if k + 2 < len(instrs) else None
            if r is not None and _fuses(step, instrs[k + 1], instrs[k + 2]) \
                    and flags_dead(instrs[k + 3:], block.succs, blocks, _NO_FLAGS):
                c = _step(step)
                out.append(MInstr("add" if c >= 0 else "sub", [r, Imm(abs(c))], [r], [r],
                                  line=step.line, comment=step.comment))
                jump = instrs[k + 2]
                jump.cond = _ON_ADD[jump.cond or ""]
                out.append(jump)
                done += 1
                k += 3
                continue
            out.append(step)
            k += 1
        block.instrs = out
    return done


def _fuses(step: MInstr, test: MInstr, jump: MInstr) -> bool:
    """``step`` adds a constant to r, ``test`` is ``test r, r``, ``jump`` reads only ZF/SF."""
    r = _stepped(step)
    return r is not None and test.op == "test" and test.operands == [r, r] \
        and jump.op == "jcc" and jump.cond in _ON_ADD and fits32(abs(_step(step)))


def _stepped(i: MInstr) -> PReg | None:
    """r of ``lea r, [r + c]`` / ``add r, c`` / ``sub r, c`` (c an immediate), else None."""
    ops = i.operands
    if len(ops) != 2 or not isinstance(ops[0], PReg):
        return None
    r, src = ops[0], ops[1]
    if i.op == "lea" and isinstance(src, Mem) and src.base == r and src.index is None \
            and src.symbol is None and src.disp != 0:
        return r
    if i.op in ("add", "sub") and isinstance(src, Imm) and src.value != 0:
        return r
    return None


def _step(i: MInstr) -> int:
    src = i.operands[1]
    if isinstance(src, Mem):
        return src.disp
    assert isinstance(src, Imm)
    return src.value if i.op == "add" else -src.value
