"""What each quad becomes: the emitting half of the pattern table (:mod:`.patterns`).

Every function here takes the :class:`~ssa_course.codegen.isel.Selector` of the function
being compiled and one quad, and appends machine instructions to its current block. The
row of the pattern table each branch implements is named in a comment after the word
``pattern:``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ssa_course.codegen import select_effects, select_ptr
from ssa_course.codegen.magic import magic
from ssa_course.codegen.minstr import fits32
from ssa_course.codegen.mir import Imm, LabelRef, Mem, PReg, VReg
from ssa_course.codegen.runtime_abi import CODE
from ssa_course.codegen.select_shared import binary_operands, compare_operands
from ssa_course.codegen.x86_64.registers import NEGATE, SWAP
from ssa_course.codegen.x86_64.select import x86_state
from ssa_course.codegen.x86_64.select_float import SELECT_FLOAT
from ssa_course.quads.ir import Instr

if TYPE_CHECKING:
    from ssa_course.codegen.isel import Selector

COMPARES = {"eq": "e", "ne": "ne", "lt": "l", "le": "le", "gt": "g", "ge": "ge"}
INT_MIN = -(1 << 63)
RAX, RDX, RDI, RSI, RSP = PReg("rax"), PReg("rdx"), PReg("rdi"), PReg("rsi"), PReg("rsp")
TRAP_DIV = CODE["division by zero"]  # the runtime's message codes


def compare(sel: Selector, instr: Instr) -> str | bool:
    """Set the flags for a comparison; its condition code (a bool if both are constants)."""
    # pattern: constant on the left -> swap the operands
    ordered = compare_operands(sel, instr, COMPARES, SWAP)
    if isinstance(ordered, bool):
        return ordered
    a, b, cc, cb = ordered
    masked = x86_state(sel).masked.get(a) if cb == 0 else None
    if masked is not None:  # pattern: x % 2^k == 0 branch -> test x, 2^k-1
        sel.emit("test", masked[0], Imm(masked[1]))
        return cc
    ra = sel.reg(a)
    if cb == 0:  # pattern: compare with zero -> test
        sel.emit("test", ra, ra)
    elif cb is not None and fits32(cb):  # pattern: immediate operand
        sel.emit("cmp", ra, Imm(cb))
    else:
        sel.emit("cmp", ra, sel.reg(b))
    return cc


def branch_condition(sel: Selector, name: str, negate: bool = False) -> str | bool:
    d = sel.fused.get(name)
    while d is not None and d.op == "not":  # pattern: compare + branch fused
        name, negate = d.args[0], not negate
        d = sel.fused.get(name)
    if d is None:  # the bool under the nots: test it
        c = sel.const(name)
        if c is not None:
            return bool(c) != negate
        r = sel.reg(name)
        sel.emit("test", r, r)
        return "e" if negate else "ne"
    cc = compare(sel, d)
    if isinstance(cc, bool):
        return cc != negate
    return NEGATE[cc] if negate else cc


def s_br(sel: Selector, i: Instr) -> None:
    c = i.args[0]
    t, f = sel.label(i.labels[0]), sel.label(i.labels[1])
    cc: str | bool
    if sel.const(c) is not None:
        cc = bool(sel.const(c))
    elif c in sel.fused:  # pattern: compare + branch fused
        cc = branch_condition(sel, c)
    else:  # pattern: branch on a bool value
        r = sel.reg(c)
        sel.emit("test", r, r)
        cc = "ne"
    # A decided branch (constant condition, or both arms the same) is a plain jump: the
    # dead edge never enters succs, so liveness does not keep values alive for it.
    if isinstance(cc, bool) or t == f:
        sel.end_jump(t if cc is True or t == f else f)
        return
    # Always `jcc T; jmp F`, both explicit: block order is decided later (loop inversion,
    # threading, place_taken_arms), and emission drops a jump to the next block.
    sel.emit("jcc", LabelRef(t), cond=cc)
    sel.emit("jmp", LabelRef(f))
    sel.cur.succs = [t, f]


def s_compare_value(sel: Selector, i: Instr) -> None:
    if i.dest in sel.fused:
        return  # the branch emits it
    d = sel.dest(i)
    cc = compare(sel, i)
    if isinstance(cc, bool):
        sel.emit("mov", d, Imm(int(cc)))
        return
    sel.emit("setcc", d, cond=cc)  # pattern: setcc + movzx when a bool is a value
    sel.emit("movzx", d, d)


def s_not(sel: Selector, i: Instr) -> None:
    if i.dest in sel.fused:
        return
    # A bool is 0 or 1 in a full register, so its `not` is xor 1 (one instruction, and no
    # flags needed, unlike sete).
    d = sel.dest(i)
    sel.emit("mov", d, sel.val(i.args[0]))
    sel.emit("xor", d, Imm(1))


# A copy stays a `mov` between virtual registers: the allocator's coalescing is what makes
# it disappear (or not), which is the lesson's point about copies.
def s_id(sel: Selector, i: Instr) -> None:
    sel.emit("mov", sel.dest(i), sel.val(i.args[0]))


def s_binary(sel: Selector, i: Instr) -> None:
    """and / or / add / sub on registers and immediates (two-address form)."""
    # x86 is two-address (`add d, s` means d += s), so the general case is `mov d, a;
    # op d, b`; the special cases below avoid that copy where an instruction allows.
    d = sel.dest(i)
    op = {"and": "and", "or": "or", "add": "add", "sub": "sub"}[i.op]
    a, b, c = binary_operands(sel, i)
    if c is not None:
        if c == 0:
            sel.emit("mov", d, sel.val(a))
            return
        if fits32(c):  # pattern: add of a constant -> lea
            sel.emit("lea", d, Mem(sel.reg(a), disp=c))
            return
    if i.op == "sub" and sel.const(a) == 0:  # pattern: 0 - x -> neg
        sel.emit("mov", d, sel.val(b))
        sel.emit("neg", d)
        return
    if i.op == "add" and sel.const(b) is None:  # pattern: three-address add -> lea
        sel.emit("lea", d, Mem(sel.reg(a), sel.reg(b)))
        return
    sel.emit("mov", d, sel.val(a))
    sel.emit(op, d, sel.val(b))


def s_neg(sel: Selector, i: Instr) -> None:
    d = sel.dest(i)
    sel.emit("mov", d, sel.val(i.args[0]))
    sel.emit("neg", d)


def s_mul(sel: Selector, i: Instr) -> None:
    a, b = i.args
    if sel.const(a) is not None and sel.const(b) is None:
        a, b = b, a
    d = sel.dest(i)
    c = sel.const(b)
    if c is None:
        sel.emit("mov", d, sel.val(a))
        sel.emit("imul", d, sel.reg(b))
        return
    # Tiny's ints wrap at 64 bits, so every rewrite below must agree with the wrapped
    # product: a shift by k is exactly multiplication by 2^k modulo 2^64.
    u = c & ((1 << 64) - 1)  # the multiplier modulo 2^64
    if u == 0:
        sel.emit("mov", d, Imm(0))
    elif u == 1:
        sel.emit("mov", d, sel.val(a))
    elif c == -1:
        sel.emit("mov", d, sel.val(a))
        sel.emit("neg", d)
    elif u & (u - 1) == 0:  # pattern: multiply by 2^k -> shl
        sel.emit("mov", d, sel.val(a))
        sel.emit("shl", d, Imm(u.bit_length() - 1))
    elif c in (3, 5, 9):  # pattern: x*3/5/9 -> lea
        r = sel.reg(a)
        sel.emit("lea", d, Mem(r, r, scale=c - 1))
    elif fits32(c):  # pattern: imul with an immediate
        sel.emit("imul3", d, sel.reg(a), Imm(c))
    else:
        sel.emit("mov", d, sel.val(a))
        sel.emit("imul", d, sel.reg(b))


def s_divide(sel: Selector, i: Instr) -> None:
    """``div``/``rem`` with Tiny's rules: by zero traps, ``INT_MIN / -1`` is ``INT_MIN``
    and ``INT_MIN % -1`` is 0 (``idiv`` would fault: the ``-1`` divisor is done by ``neg``)."""
    a, b = i.args
    rem = i.op == "rem"
    d = sel.dest(i)
    c = sel.const(b)
    # Constant divisors never need idiv (40+ cycles) nor its checks: 0 and INT_MIN are the
    # two constants left to the general path (a trap, and a divisor whose absolute value
    # does not fit a signed 64-bit register).
    if c is not None and c not in (0, INT_MIN) and (abs(c) & (abs(c) - 1)) == 0:
        _divide_by_power(sel, a, c, d, rem)  # 1, -1 and +-2^k: no idiv
        return
    if c is not None and c not in (0, INT_MIN):
        _divide_by_constant(sel, a, c, d, rem)
        return
    rb = sel.reg(b)
    rest = None
    if c is None or c == 0:
        stub = sel.trap_stub(TRAP_DIV, i)
        sel.emit("test", rb, rb)  # pattern: division checks the divisor
        sel.emit("jcc", LabelRef(stub), cond="e")
        # idiv raises #DE on INT_MIN / -1 (the quotient overflows); Tiny defines it as
        # INT_MIN, so -1 takes a cold path that negates (rem: 0) and idiv never sees it.
        minus, plain, rest = (sel.new_label(w) for w in ("divm1", "div", "divend"))
        sel.emit("cmp", rb, Imm(-1))
        sel.emit("jcc", LabelRef(minus), cond="e")
        sel.emit("jmp", LabelRef(plain))
        sel.cur.succs = [minus, plain]
        sel.start_block(minus, cold=True)
        sel.emit("mov", d, Imm(0) if rem else sel.val(a))
        if not rem:
            sel.emit("neg", d)
        sel.end_jump(rest)
        sel.start_block(plain)
    # idiv divides rdx:rax, so the dividend goes to rax and cqo sign-extends it into rdx;
    # the implicit registers are spelled out in defs/uses for the allocator.
    sel.emit("mov", RAX, sel.val(a))
    sel.emit("cqo", defs=(RDX,), uses=(RAX,))
    sel.emit("idiv", rb, defs=(RAX, RDX), uses=(RAX, RDX))
    sel.emit("mov", d, RDX if rem else RAX)
    if rest is not None:
        sel.end_jump(rest)
        sel.start_block(rest)


def _divide_by_constant(sel: Selector, a: str, c: int, d: VReg, rem: bool) -> None:
    """Division by another constant: the high half of a product with its magic reciprocal
    (:mod:`ssa_course.codegen.magic`), corrected, shifted, rounded toward zero."""
    # Granlund-Montgomery: q = hi64(x * m) >> shift, with a correction when m had to be
    # taken modulo 2^64 (its sign disagrees with c's), and +1 for negative quotients so the
    # result truncates toward zero as idiv does.
    m, shift = magic(c)
    ra = sel.reg(a)
    sel.emit("mov", RAX, Imm(m))  # pattern: divide by a constant -> multiply by its reciprocal
    sel.emit("imul1", ra, defs=(RAX, RDX), uses=(RAX,))
    if c > 0 and m < 0:
        sel.emit("add", RDX, ra)
    elif c < 0 and m > 0:
        sel.emit("sub", RDX, ra)
    q = sel.new_vreg("q")
    sel.emit("mov", q, RDX)
    if shift:
        sel.emit("sar", q, Imm(shift))
    t = sel.new_vreg("sign")  # +1 when the quotient is negative: rounds toward zero; for
    sel.emit("mov", t, ra if c > 0 else q)  # c > 0 that is the dividend's sign, which is
    sel.emit("shr", t, Imm(63))  # ready early (off the multiply's critical path)
    sel.emit("add", q, t)
    if not rem:
        sel.emit("mov", d, q)
        return
    p = sel.new_vreg("prod")
    if fits32(c):
        sel.emit("imul3", p, q, Imm(c))
    else:
        sel.emit("mov", p, q)
        sel.emit("imul", p, sel.materialise(c))
    sel.emit("mov", d, ra)
    sel.emit("sub", d, p)


def _divide_by_power(sel: Selector, a: str, c: int, d: VReg, rem: bool) -> None:
    """Division by +-2^k without idiv: add the bias (2^k - 1 for a negative dividend),
    then shift; the remainder is the dividend minus the rounded-down multiple."""
    k = abs(c).bit_length() - 1
    # Only when the remainder is just compared with 0: then its sign does not matter and
    # the low k bits say everything (x % 2^k == 0 iff x & (2^k - 1) == 0, for negative x too).
    if rem and k and d.hint in sel.zero_tested and fits32((1 << k) - 1):
        # Tested only by this block's branch: the branch tests x's low bits itself
        # (`test x, 2^k-1`), and the remainder is never made (collatz's `x % 2 == 0`).
        if sel.uses.get(d.hint) == 1 and any(
                f.op in ("eq", "ne") and d.hint in f.args for f in sel.fused.values()):
            x86_state(sel).masked[d.hint] = (sel.reg(a), (1 << k) - 1)
            return
        sel.emit("mov", d, sel.val(a))  # pattern: x % 2^k == 0 -> and
        sel.emit("and", d, Imm((1 << k) - 1))
        return
    if k == 0:
        if rem:
            sel.emit("mov", d, Imm(0))
        else:
            sel.emit("mov", d, sel.val(a))
            if c == -1:
                sel.emit("neg", d)
        return
    # An arithmetic shift rounds toward minus infinity; adding 2^k - 1 first to a negative
    # dividend (the sar 63 / shr 64-k pair makes exactly that bias, branch-free) turns it
    # into truncation toward zero, idiv's rounding.
    ra = sel.reg(a)
    t = sel.new_vreg("bias")
    sel.emit("mov", t, ra)  # pattern: signed divide by 2^k
    if k > 1:  # all ones for a negative dividend, then its low k bits
        sel.emit("sar", t, Imm(63))
    sel.emit("shr", t, Imm(64 - k))  # (by 2, the sign bit alone is the bias)
    if rem:  # pattern: remainder by 2^k
        sel.emit("add", t, ra)
        mask = -(1 << k)
        sel.emit("and", t, Imm(mask) if fits32(mask) else sel.materialise(mask))
        sel.emit("mov", d, ra)
        sel.emit("sub", d, t)
        return
    # The sum goes into d by a three-address lea, not into t by `add t, x`: t then dies
    # at the lea, and d may take x's register when x dies there too (collatz's `x = x /
    # 2` needs no move back) or another one when x lives on (hash_mix's `h / 65536`),
    # with no copy either way.
    sel.emit("lea", d, Mem(ra, t))
    sel.emit("sar", d, Imm(k))
    if c < 0:
        sel.emit("neg", d)


def s_checkdef(sel: Selector, i: Instr) -> None:
    """``checkdef ok x`` (a Bril read that may find no value): trap unless ``ok``."""
    c = sel.const(i.args[0])
    if c:
        return  # proven: nothing to test
    r = sel.reg(i.args[0]) if c is None else sel.materialise(0)
    sel.emit("test", r, r)  # pattern: a definedness check
    sel.emit("jcc", LabelRef(sel.trap_stub(sel.undefined_code(i.field), i)), cond="e")


def s_const(sel: Selector, i: Instr) -> None:
    """Constants were collected before selection: they become immediates where used."""


# The emitting half of the pattern table: quad opcode -> the function above. A new opcode
# without a row here is a CodegenError naming this file (Selector.select_quad).
SELECT = {
    **select_effects.SELECT,  # memory, calls, exceptions: shared by both targets
    **select_ptr.SELECT,  # Bril pointers and chars: runtime calls, shared too
    "const": s_const, "id": s_id, "add": s_binary, "sub": s_binary, "and": s_binary,
    "or": s_binary, "mul": s_mul, "div": s_divide, "rem": s_divide, "not": s_not,
    "neg": s_neg, "br": s_br, "checkdef": s_checkdef,
    **{op: s_compare_value for op in COMPARES},
    **SELECT_FLOAT,  # SSE2 (issue #36)
}

