"""What each quad becomes on AArch64: the emitting half of :mod:`.patterns`.

Every function takes the :class:`~ssa_course.codegen.isel.Selector` of the function
being compiled and one quad, and appends machine instructions to its current block; the
pattern-table row a
branch implements is named after ``pattern:``. Operations are three-address (no copy
before an ``add``); an immediate goes into the instruction only where its field can hold
it (:mod:`.immediates`), else the constant is built in a register first.

Arrays: a reference points at element 0; the length is the qword just below it
(``ldur len, [a, #-8]``), so an element is one ``ldr x, [a, i, lsl #3]``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ssa_course.codegen import select_effects, select_ptr
from ssa_course.codegen.aarch64.immediates import arith_imm, logical_imm
from ssa_course.codegen.aarch64.minstr import Shift
from ssa_course.codegen.aarch64.registers import COMPARES, NEGATE, SWAP
from ssa_course.codegen.aarch64.select import a64_state
from ssa_course.codegen.aarch64.select_float import SELECT_FLOAT
from ssa_course.codegen.magic import magic
from ssa_course.codegen.mir import Imm, LabelRef, VReg
from ssa_course.codegen.runtime_abi import CODE
from ssa_course.codegen.select_shared import binary_operands, compare_operands
from ssa_course.quads.ir import Instr

if TYPE_CHECKING:
    from ssa_course.codegen.isel import Selector

INT_MIN = -(1 << 63)
TRAP_DIV = CODE["division by zero"]


def arith(sel: Selector, name: str) -> VReg | Imm:
    """``name`` as the second operand of add/sub/cmp: an imm12 when it fits."""
    c = sel.const(name)
    if c is not None and (arith_imm(c) is not None or arith_imm(-c) is not None):
        return Imm(c)
    return sel.reg(name)


def logical(sel: Selector, name: str) -> VReg | Imm:
    """``name`` as the second operand of and/orr/eor/tst: a bitmask immediate when it is one."""
    c = sel.const(name)
    if c is not None and logical_imm(c) is not None:
        return Imm(c)
    return sel.reg(name)


def add_const(sel: Selector, d: VReg, a: VReg, c: int) -> None:
    """``d = a + c``: ``add``/``sub`` with an imm12, or the constant in a register."""
    if arith_imm(c) is not None:  # pattern: arithmetic immediate
        sel.emit("add", d, a, Imm(c))
    elif arith_imm(-c) is not None:
        sel.emit("sub", d, a, Imm(-c))
    else:  # pattern: constant that fits no field -> register
        sel.emit("add", d, a, sel.materialise(c))


def compare(sel: Selector, instr: Instr) -> str | bool:
    """Set the flags for a comparison; its condition (a bool if both are constants)."""
    # pattern: constant on the left -> swap the operands
    ordered = compare_operands(sel, instr, COMPARES, SWAP)
    if isinstance(ordered, bool):
        return ordered
    a, b, cc, _ = ordered
    sel.emit("cmp", sel.reg(a), arith(sel, b))
    return cc


def branch_condition(sel: Selector, name: str, negate: bool = False
                     ) -> tuple[str | bool, VReg | None]:
    """The condition a branch on ``name`` takes (and the register of a cbz/cbnz)."""
    d = sel.fused.get(name)
    while d is not None and d.op == "not":
        name, negate = d.args[0], not negate
        d = sel.fused.get(name)
    if d is None:
        c = sel.const(name)
        if c is not None:
            return bool(c) != negate, None
        return ("z" if negate else "nz"), sel.reg(name)  # pattern: branch on a bool value
    if d.op in ("eq", "ne"):  # pattern: compare with zero and branch -> cbz/cbnz
        x, y = d.args
        if sel.const(y) == 0 and sel.const(x) is None or \
                sel.const(x) == 0 and sel.const(y) is None:
            r = sel.reg(x if sel.const(y) == 0 else y)
            zero = (d.op == "eq") != negate
            return ("z" if zero else "nz"), r
    cc = compare(sel, d)  # pattern: compare + branch fused
    if isinstance(cc, bool):
        return cc != negate, None
    return (NEGATE[cc] if negate else cc), None


def s_br(sel: Selector, i: Instr) -> None:
    c = i.args[0]
    t, f = sel.label(i.labels[0]), sel.label(i.labels[1])
    cc, r = branch_condition(sel, c)
    if isinstance(cc, bool) or t == f:
        sel.end_jump(t if cc is True or t == f else f)
        return
    if r is not None:
        sel.emit("jcc", LabelRef(t), r, cond=cc)
    else:
        sel.emit("jcc", LabelRef(t), cond=cc)
    sel.emit("jmp", LabelRef(f))
    sel.cur.succs = [t, f]


def s_compare_value(sel: Selector, i: Instr) -> None:
    if i.dest in sel.fused:
        return
    d = sel.dest(i)
    cc = compare(sel, i)
    if isinstance(cc, bool):
        sel.emit("mov", d, Imm(int(cc)))
        return
    sel.emit("cset", d, cond=cc)  # pattern: cset when a bool is a value


def s_not(sel: Selector, i: Instr) -> None:
    if i.dest in sel.fused:
        return
    sel.emit("eor", sel.dest(i), sel.reg(i.args[0]), Imm(1))


def s_id(sel: Selector, i: Instr) -> None:
    sel.emit("mov", sel.dest(i), sel.val(i.args[0]))


def s_binary(sel: Selector, i: Instr) -> None:
    a, b = i.args
    d = sel.dest(i)
    # madd d, x, y, z = z + x*y and msub = z - x*y: add may take the product on either
    # side, sub only as the subtrahend (z - m, not m - z).
    for m, other in ((b, a), (a, b)) if i.op == "add" else ((b, a),):
        mul = a64_state(sel).madds.get(m)
        if mul is not None:  # pattern: multiply-add
            x, y = mul.args
            if sel.const(x) is not None:
                x, y = y, x
            sel.emit("madd" if i.op == "add" else "msub", d, sel.reg(x), sel.reg(y),
                     sel.reg(other))
            return
    a, b, c = binary_operands(sel, i)
    if c is not None:
        if c == 0:
            sel.emit("mov", d, sel.val(a))
        else:
            add_const(sel, d, sel.reg(a), c)
        return
    if i.op == "sub" and sel.const(a) == 0:  # pattern: 0 - x -> neg
        sel.emit("neg", d, sel.reg(b))
        return
    op = {"and": "and", "or": "orr", "add": "add", "sub": "sub"}[i.op]
    cb = sel.const(b)
    if op in ("and", "orr") and cb is not None and logical_imm(cb) is None:
        # 0 or -1: and x 0 = 0, or x -1 = -1, and x -1 = or x 0 = x
        sel.emit("mov", d, Imm(cb) if (cb == 0) == (op == "and") else sel.val(a))
        return
    # Three-address, unlike x86-64: no `mov d, a` first, and a stays live for free.
    second = logical(sel, b) if op in ("and", "orr") else sel.reg(b)
    sel.emit(op, d, sel.reg(a), second)


def general_multiply(sel: Selector, i: Instr) -> bool:
    """Does :func:`s_mul` make this ``mul`` a ``mul`` instruction (no constant it turns
    into a move, a negation or a shift)?"""
    a, b = i.args
    c = sel.const(b) if sel.const(a) is None else sel.const(a)
    if c is None:
        return True
    if sel.const(a) is not None and sel.const(b) is not None:
        return False
    u = c & ((1 << 64) - 1)
    return not (u <= 1 or c == -1 or u & (u - 1) == 0 or (c > 2 and (c - 1) & (c - 2) == 0))


def fusible_multiplies(sel: Selector, body: list[Instr]) -> dict[str, Instr]:
    """``mul``s whose only use is a later ``add`` of this block (either side) or the
    subtrahend of a ``sub``: that ``add``/``sub`` becomes ``madd``/``msub`` and the
    ``mul`` emits nothing. A constant addend goes into a register (hoisted out of a
    call-free loop): ``movz`` + ``madd`` is no longer than ``mul`` + ``add #c``."""
    # Only a product used once: the fused instruction consumes it, so no other use may
    # need it in a register; and only a real `mul` (a shift or move is cheaper unfused).
    muls = {i.dest: i for i in body if i.op == "mul" and i.dest is not None
            and sel.uses.get(i.dest) == 1 and general_multiply(sel, i)}
    fused: dict[str, Instr] = {}
    for i in body:
        if i.op not in ("add", "sub") or i.dest is None or len(i.args) != 2:
            continue
        a, b = i.args
        for m, other in ((b, a), (a, b)) if i.op == "add" else ((b, a),):
            if m in muls and m != other and m not in fused:
                fused[m] = i
                break
    return {m: muls[m] for m in fused}


def s_neg(sel: Selector, i: Instr) -> None:
    sel.emit("neg", sel.dest(i), sel.reg(i.args[0]))


def s_mul(sel: Selector, i: Instr) -> None:
    a, b = i.args
    if sel.const(a) is not None and sel.const(b) is None:
        a, b = b, a
    if i.dest in a64_state(sel).madds:
        return  # its add or sub emits madd/msub
    d = sel.dest(i)
    c = sel.const(b)
    if c is None:
        sel.emit("mul", d, sel.reg(a), sel.reg(b))
        return
    # As on x86-64: every case agrees with the product modulo 2^64.
    u = c & ((1 << 64) - 1)
    if u == 0:
        sel.emit("mov", d, Imm(0))
    elif u == 1:
        sel.emit("mov", d, sel.val(a))
    elif c == -1:
        sel.emit("neg", d, sel.reg(a))
    elif u & (u - 1) == 0:  # pattern: multiply by 2^k -> lsl
        sel.emit("lsl", d, sel.reg(a), Imm(u.bit_length() - 1))
    elif c > 2 and (c - 1) & (c - 2) == 0:  # pattern: x*(2^k+1) -> add with a shifted operand
        r = sel.reg(a)
        sel.emit("add", d, r, r, Shift("lsl", (c - 1).bit_length() - 1))
    else:
        sel.emit("mul", d, sel.reg(a), sel.materialise(c))


def s_divide(sel: Selector, i: Instr) -> None:
    """``div``/``rem`` with Tiny's rules. ``sdiv`` never faults: by zero it gives 0 (so
    the code tests for zero and traps) and ``INT_MIN / -1`` gives ``INT_MIN`` -- exactly
    Tiny's answer; ``msub`` then makes ``INT_MIN % -1`` 0."""
    a, b = i.args
    rem = i.op == "rem"
    d = sel.dest(i)
    c = sel.const(b)
    if c is not None and c not in (0, INT_MIN) and (abs(c) & (abs(c) - 1)) == 0:
        _divide_by_power(sel, a, c, d, rem)
        return
    if c is not None and c not in (0, INT_MIN):
        _divide_by_constant(sel, a, c, d, rem)
        return
    rb = sel.reg(b)
    if c is None or c == 0:  # pattern: division checks the divisor
        sel.emit("jcc", LabelRef(sel.trap_stub(TRAP_DIV, i)), rb, cond="z")
    # No -1 special case here (x86-64 needs one): sdiv already gives INT_MIN for
    # INT_MIN / -1, and the remainder is rebuilt as a - q*b by one msub.
    ra = sel.reg(a)
    q = sel.new_vreg("q") if rem else d
    sel.emit("sdiv", q, ra, rb)
    if rem:
        sel.emit("msub", d, q, rb, ra)


def _divide_by_constant(sel: Selector, a: str, c: int, d: VReg, rem: bool) -> None:
    """The high half of the product with the magic reciprocal (``smulh``), corrected,
    shifted, rounded toward zero (the sign bit added with a shifted operand)."""
    m, shift = magic(c)
    ra = sel.reg(a)
    h = sel.new_vreg("hi")
    sel.emit("smulh", h, ra, sel.materialise(m))  # pattern: divide by a constant -> smulh
    if c > 0 and m < 0:
        sel.emit("add", h, h, ra)
    elif c < 0 and m > 0:
        sel.emit("sub", h, h, ra)
    if shift:
        sel.emit("asr", h, h, Imm(shift))
    q = d if not rem else sel.new_vreg("q")
    sel.emit("add", q, h, ra if c > 0 else h, Shift("lsr", 63))
    if rem:
        sel.emit("msub", d, q, sel.materialise(c), ra)


def _divide_by_power(sel: Selector, a: str, c: int, d: VReg, rem: bool) -> None:
    """By +-2^k: add 2^k - 1 to a negative dividend (``csel``), shift; the remainder is
    the dividend minus that multiple of 2^k."""
    k = abs(c).bit_length() - 1
    if k == 0:
        if rem:
            sel.emit("mov", d, Imm(0))
        elif c == -1:
            sel.emit("neg", d, sel.reg(a))
        else:
            sel.emit("mov", d, sel.val(a))
        return
    if rem and d.hint in sel.zero_tested:  # pattern: x % 2^k == 0 -> and
        sel.emit("and", d, sel.reg(a), Imm((1 << k) - 1))
        return
    ra = sel.reg(a)
    t = sel.new_vreg("bias")
    add_const(sel, t, ra, (1 << k) - 1)  # pattern: signed divide by 2^k -> csel
    sel.emit("cmp", ra, Imm(0))
    sel.emit("csel", t, t, ra, cond="lt")
    if rem:
        sel.emit("and", t, t, Imm(-(1 << k)))
        sel.emit("sub", d, ra, t)
        return
    if c < 0:
        sel.emit("neg", d, t, Shift("asr", k))
    else:
        sel.emit("asr", d, t, Imm(k))


def s_checkdef(sel: Selector, i: Instr) -> None:
    """``checkdef ok x`` (a Bril read that may find no value): trap unless ``ok``."""
    if sel.const(i.args[0]):
        return  # proven: nothing to test
    ok = sel.reg(i.args[0])  # pattern: a definedness check
    sel.emit("jcc", LabelRef(sel.trap_stub(sel.undefined_code(i.field), i)), ok, cond="z")


def s_const(sel: Selector, i: Instr) -> None:
    """Constants become immediates where they fit (see :mod:`.immediates`)."""
    return  # pattern: constant


SELECT = {
    **select_effects.SELECT,  # memory, calls, exceptions: shared by both targets
    **select_ptr.SELECT,  # Bril pointers and chars: runtime calls, shared too
    **SELECT_FLOAT,  # floats in d0/d1 (select_float.py)
    "const": s_const, "id": s_id, "add": s_binary, "sub": s_binary, "and": s_binary,
    "or": s_binary, "mul": s_mul, "div": s_divide, "rem": s_divide, "not": s_not,
    "neg": s_neg, "br": s_br, "checkdef": s_checkdef,
    **{op: s_compare_value for op in COMPARES},
}

