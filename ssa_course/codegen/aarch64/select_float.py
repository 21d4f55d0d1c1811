"""What float quads become on AArch64: scalar doubles in the FP/SIMD ``d`` registers.

A float lives in a general-purpose virtual register as its IEEE bits
(:mod:`ssa_course.codegen.float_abi`). Each operation copies its operands into the
scratch registers ``d0`` and ``d1`` with ``fmov`` (a bit copy, no conversion), computes
there and copies the result back: the allocator never sees a ``d`` register
(:func:`.minstr.ins` leaves them out of defs and uses), and nothing it inserts between
two of these instructions (a reload, a spill store: integer loads and stores) touches one.

Comparisons follow IEEE 754: ``fcmp`` sets NZCV to ``0011`` when the operands are
unordered (a NaN), and the conditions chosen are false on that: ``eq`` (Z), ``mi`` for
``<`` (N), ``ls`` for ``<=`` (C = 0 or Z), ``gt`` (Z = 0 and N = V), ``ge`` (N = V). Not
``lt``/``le``: those hold when N != V, which unordered is. Unlike x86-64 (``ucomisd``'s
parity flag), one flags test answers each comparison, ``==`` included.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ssa_course.codegen.aarch64.encode_fp import fp_imm8
from ssa_course.codegen.float_abi import float_bits
from ssa_course.codegen.mir import Imm, LabelRef, PReg
from ssa_course.codegen.runtime_abi import CODE
from ssa_course.floats import FLOAT_TO_INT_TRAP, TWO_63
from ssa_course.quads.ir import Instr

if TYPE_CHECKING:
    from collections.abc import Callable

    from ssa_course.codegen.isel import Selector

D0, D1, D2 = PReg("d0"), PReg("d1"), PReg("d2")  # scratch: never handed out
XZR = PReg("xzr")
ARITH = frozenset({"fadd", "fsub", "fmul", "fdiv"})
# the condition after `fcmp a, b` that is the quad's answer (false when unordered)
COND = {"feq": "eq", "flt": "mi", "fle": "ls", "fgt": "gt", "fge": "ge"}
# the condition after `fcmp b, a` (the operands swapped: a constant 0.0 goes right)
MIRROR = {"eq": "eq", "mi": "gt", "ls": "ge", "gt": "mi", "ge": "ls"}
MINUS_ONE = float_bits(-1.0)
ZEROS = frozenset({float_bits(0.0), float_bits(-0.0)})  # fcmp: -0.0 == 0.0
LOW, HIGH = float_bits(-TWO_63), float_bits(TWO_63)  # int(x) needs LOW <= x < HIGH
TRAP_FTOI = CODE[FLOAT_TO_INT_TRAP]


def _load(sel: Selector, d: PReg, name: str) -> None:
    """``d`` = the bits of ``name``: a constant from ``xzr`` (0.0) or ``fmov``'s 8-bit
    immediate where it fits, else through an x register like any other value."""
    c = sel.const(name)
    if c == 0:  # pattern: 0.0 from the zero register
        sel.emit("fmov", d, XZR)
    elif c is not None and fp_imm8(c) is not None:  # pattern: a float constant in fmov's 8 bits
        sel.emit("fmov", d, Imm(c))
    else:
        sel.emit("fmov", d, sel.reg(name))


def s_farith(sel: Selector, i: Instr) -> None:
    a, b = i.args
    if i.op == "fmul" and MINUS_ONE in (sel.const(a), sel.const(b)):
        # pattern: x * -1.0 -> fneg
        # Tiny's -x on floats is written `fmul x -1.0` in quads (0.0 - x would be +0.0
        # for x = 0.0); the product by -1.0 is exact, the sign flip is the same value.
        _load(sel, D0, b if sel.const(a) == MINUS_ONE else a)
        sel.emit("fneg", D0, D0)
    else:
        _load(sel, D0, a)  # pattern: float arithmetic in d0/d1
        _load(sel, D1, b)
        sel.emit(i.op, D0, D0, D1)
    sel.emit("fmov", sel.dest(i), D0)


def s_fcompare(sel: Selector, i: Instr) -> None:
    a, b = i.args
    d = sel.dest(i)
    ca, cb = sel.const(a), sel.const(b)
    cc = COND[i.op]
    if ca in ZEROS:  # pattern: compare with 0.0 -> fcmp d, #0.0
        a, b, cc, cb = b, a, MIRROR[cc], ca
    _load(sel, D0, a)
    if cb in ZEROS:
        sel.emit("fcmp", D0, Imm(0))
    else:
        _load(sel, D1, b)  # pattern: float compare by fcmp + cset
        sel.emit("fcmp", D0, D1)
    sel.emit("cset", d, cond=cc)


def s_itof(sel: Selector, i: Instr) -> None:
    # scvtf rounds as FPCR says: to nearest, the reset value (never changed): float(n)
    sel.emit("scvtf", D0, sel.reg(i.args[0]))  # pattern: float(n) by scvtf
    sel.emit("fmov", sel.dest(i), D0)


def s_ftoi(sel: Selector, i: Instr) -> None:
    """``int(x)``: ``fcvtzs`` truncates, but saturates out of range and gives 0 for NaN,
    where the interpreters stop with an error. One test on the hot path: |x| < 2^63
    (``fabs``, then ``b.pl``, true also when unordered); the cold path lets through only
    x = -2^63 exactly (its ``fcvtzs`` is right: INT_MIN) and traps on the rest."""
    x = sel.reg(i.args[0])
    d = sel.dest(i)
    sel.emit("fmov", D0, x)  # pattern: int(x) by fcvtzs, range checked
    sel.emit("fcvtzs", d, D0)
    sel.emit("fabs", D1, D0)
    sel.emit("fmov", D2, sel.materialise(HIGH))
    sel.emit("fcmp", D1, D2)
    check, rest = sel.new_label("ftoi"), sel.new_label("ftoiend")
    sel.emit("jcc", LabelRef(check), cond="pl")  # |x| >= 2^63, or NaN
    sel.emit("jmp", LabelRef(rest))
    sel.cur.succs = [check, rest]
    sel.start_block(check, cold=True)
    stub = sel.trap_stub(TRAP_FTOI, i)
    sel.emit("fmov", D0, x)
    sel.emit("fmov", D1, sel.materialise(LOW))
    sel.emit("fcmp", D0, D1)
    sel.emit("jcc", LabelRef(stub), cond="ne")  # not -2^63 (ne holds on NaN too)
    sel.end_jump(rest)
    sel.start_block(rest)


# The float rows of the pattern table (select_ops.SELECT takes them in).
SELECT_FLOAT: dict[str, Callable[[Selector, Instr], None]] = {
    **{op: s_farith for op in ARITH},
    **{op: s_fcompare for op in COND},
    "itof": s_itof, "ftoi": s_ftoi,
}
