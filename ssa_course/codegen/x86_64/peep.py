"""Two x86-64 peepholes after allocation, where registers are physical and slots known:
an operand loaded only for the instruction after it is read from memory by that
instruction, and a test for zero right after an add reads the add's flags.

* ``mov r, [m]`` (a qword load: an element, a field, a spilled value's slot) then an
  instruction that is r's last reader: ``cmp x, r`` is ``cmp x, [m]`` (also ``cmp r, y``
  -> ``cmp [m], y``, ``test r, r`` -> ``cmp [m], 0``), ``op d, r`` is ``op d, [m]`` for
  add/sub/and/or/xor/imul, and ``lea d, [d + r]`` is ``add d, [m]`` where nothing reads
  the flags the add sets. x86 takes one memory operand in these, and a compare still
  fuses with its jump: nqueens' loop test read its spilled bound `n` into a register every
  iteration, prefix_sums' `s = s + a[i]` was `mov; lea`, matmul's product `mov; imul`.
* ``lea r, [r + c]`` (or ``add``/``sub r, c``) then ``test r, r; j<cc>`` is ``add r, c;
  j<cc'>``: the add sets ZF and SF from the same result the test would see (cc' is ``s``
  for ``l``, ``ns`` for ``ge``, e/ne/s/ns as they are; ``g``/``le`` also read OF, which the
  add may set, and stay). insertion_sort's `j = j - 1` then `j >= 0`: `sub; jns`.

Both keep the flags a later instruction could read the same (the op's own either way;
an add for a lea, or for a test, only where :func:`ssa_course.codegen.dead.flags_dead`
says no one reads them after). Run per function by
:func:`ssa_course.codegen.compile.allocate_functions` after the reload clean-up.
"""

from __future__ import annotations

from ssa_course.codegen.dead import flags_dead
from ssa_course.codegen.liveness import Liveness
from ssa_course.codegen.minstr import fits32
from ssa_course.codegen.mir import Imm, Mem, MFunction, MInstr, PReg, Slot
from ssa_course.codegen.x86_64.peep_float import reuse_xmm

# what a jump on `test r, r` becomes on the flags of `add r, c` (SF and ZF only)
_ON_ADD = {"e": "e", "ne": "ne", "s": "s", "ns": "ns", "l": "s", "ge": "ns"}
# x86-64 ops that leave the flags alone (the Selector's bool Shapes say the same)
_NO_FLAGS = frozenset({"mov", "movzx", "lea", "setcc"})


def peephole(fn: MFunction) -> int:
    """Both rewrites over ``fn`` (allocated, frame not yet laid out), and the float one
    (:mod:`.peep_float`: no ``movq`` back into an xmm register that holds the value);
    how many fired."""
    return _fold_reloads(fn) + _test_after_add(fn) + reuse_xmm(fn)


def _fold_reloads(fn: MFunction) -> int:
    live = Liveness(fn)
    blocks = fn.block_map()
    done = 0
    for block in fn.blocks:
        after = live.live_after(block.label)
        instrs = block.instrs
        out: list[MInstr] = []
        k = 0
        while k < len(instrs):
            i = instrs[k]
            folded = _folded(i, instrs[k + 1]) if k + 1 < len(instrs) else None
            if folded is not None and _loaded(i) not in after[k + 1] and (
                    instrs[k + 1].op != "lea"  # lea -> add: the add's flags must be dead
                    or flags_dead(instrs[k + 2:], block.succs, blocks, _NO_FLAGS)):
                out.append(folded)
                done += 1
                k += 2
                continue
            out.append(i)
            k += 1
        block.instrs = out
    return done


def _loaded(i: MInstr) -> PReg | None:
    """The register of a qword load ``mov r, [m]`` (a slot's reload too), else None."""
    ops = i.operands
    if i.op == "mov" and len(ops) == 2 and isinstance(ops[0], PReg) \
            and isinstance(ops[1], Slot | Mem):
        return ops[0]
    return None


def _folded(load: MInstr, use: MInstr) -> MInstr | None:
    """``use`` reading ``load``'s memory in place of its register, or None."""
    r = _loaded(load)
    if r is None or len(use.operands) != 2:
        return None
    mem = load.operands[1]
    a, b = use.operands
    regs = mem.regs() if isinstance(mem, Mem) else []  # the address is still read
    if use.op == "test":
        if a == r and b == r:
            return MInstr("cmp", [mem, Imm(0)], [], regs, line=use.line)
        return None
    if use.op == "cmp":
        if b == r and a != r and isinstance(a, PReg):
            return MInstr("cmp", [a, mem], [], [a, *regs], line=use.line)
        if a == r and b != r and isinstance(b, PReg | Imm):
            return MInstr("cmp", [mem, b], [], [*([b] if isinstance(b, PReg) else []), *regs],
                          line=use.line)
        return None
    # d = d op r -> d = d op [m] (the flags are the op's either way)
    if use.op in _ALU and b == r and isinstance(a, PReg) and a != r:
        return MInstr(use.op, [a, mem], [a], [a, *regs], line=use.line, comment=use.comment)
    # lea d, [d + r] -> add d, [m] (prefix_sums' `s = s + a[i]`)
    if use.op == "lea" and isinstance(a, PReg) and a != r and isinstance(b, Mem) \
            and b.symbol is None and b.disp == 0 and b.scale == 1 \
            and {b.base, b.index} == {a, r}:
        return MInstr("add", [a, mem], [a], [a, *regs], line=use.line, comment=use.comment)
    return None


# two-address ops with a register/memory second operand (`imul r, r/m` included)
_ALU = frozenset({"add", "sub", "and", "or", "xor", "imul"})


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
