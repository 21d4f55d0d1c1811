"""What float quads become on x86-64: SSE2 scalar doubles (issue #36).

A float lives in a general-purpose virtual register as its IEEE bits
(:mod:`ssa_course.codegen.float_abi`). Each operation copies its operands into the
scratch registers xmm0 and xmm1 with ``movq``, computes there and copies the result back:
the allocator never sees an xmm register (``minstr.ins`` leaves them out of defs and
uses), and nothing it inserts between two of these instructions (a reload, a spill
store: integer ``mov``s) touches one.

Comparisons follow IEEE 754: with a NaN operand every ordered comparison is false and
``==`` is false. ``ucomisd a, b`` sets ZF, PF and CF all to 1 when the operands are
unordered, so ``a > b`` is ``seta`` (CF = 0 and ZF = 0: false on NaN) and ``a >= b`` is
``setae`` (CF = 0: false on NaN); ``a < b`` and ``a <= b`` are those with the operands
swapped. ``==`` needs ZF = 1 *and* PF = 0, two flags: ``cmpsd x, y, 0`` (the EQ_OQ
predicate) makes an all-ones mask exactly when they are ordered and equal, with no
branch, and its low bit is the bool.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ssa_course.codegen.mir import Imm, LabelRef, PReg
from ssa_course.codegen.runtime_abi import CODE
from ssa_course.floats import FLOAT_TO_INT_TRAP
from ssa_course.quads.ir import Instr

if TYPE_CHECKING:
    from collections.abc import Callable

    from ssa_course.codegen.isel import Selector

XMM0, XMM1 = PReg("xmm0"), PReg("xmm1")  # scratch: the allocator never hands them out
ARITH = {"fadd": "addsd", "fsub": "subsd", "fmul": "mulsd", "fdiv": "divsd"}
# ordered comparisons: (swap the operands?, the condition after ucomisd x, y)
ORDERED = {"fgt": (False, "a"), "fge": (False, "ae"), "flt": (True, "a"),
           "fle": (True, "ae")}
TRAP_FTOI = CODE[FLOAT_TO_INT_TRAP]


def _load(sel: Selector, xmm: PReg, name: str) -> None:
    """xmm = the bits of ``name`` (a constant's bits are loaded into a register first)."""
    sel.emit("movq", xmm, sel.reg(name))


def s_farith(sel: Selector, i: Instr) -> None:
    a, b = i.args
    _load(sel, XMM0, a)  # pattern: float arithmetic in xmm0/xmm1
    _load(sel, XMM1, b)
    sel.emit(ARITH[i.op], XMM0, XMM1)
    sel.emit("movq", sel.dest(i), XMM0)


def s_fcompare(sel: Selector, i: Instr) -> None:
    a, b = i.args
    d = sel.dest(i)
    if i.op == "feq":  # pattern: float == by cmpsd
        _load(sel, XMM0, a)
        _load(sel, XMM1, b)
        sel.emit("cmpsd", XMM0, XMM1, Imm(0))  # all ones iff ordered and equal
        sel.emit("movq", d, XMM0)
        sel.emit("and", d, Imm(1))
        return
    swap, cc = ORDERED[i.op]
    x, y = (b, a) if swap else (a, b)
    _load(sel, XMM0, x)  # pattern: float order by ucomisd + seta/setae
    _load(sel, XMM1, y)
    sel.emit("ucomisd", XMM0, XMM1)
    sel.emit("setcc", d, cond=cc)
    sel.emit("movzx", d, d)


def s_itof(sel: Selector, i: Instr) -> None:
    # cvtsi2sd rounds to nearest (MXCSR's default, never changed): Python's float(n)
    sel.emit("cvtsi2sd", XMM0, sel.reg(i.args[0]))  # pattern: float(n) by cvtsi2sd
    sel.emit("movq", sel.dest(i), XMM0)


def s_ftoi(sel: Selector, i: Instr) -> None:
    """``int(x)``: truncation (``cvttsd2si``), and the interpreters' trap when it has no
    64-bit answer (NaN, an infinity, outside [-2^63, 2^63))."""
    x = sel.reg(i.args[0])
    d = sel.dest(i)
    sel.emit("movq", XMM0, x)  # pattern: int(x) by cvttsd2si, checked
    sel.emit("cvttsd2si", d, XMM0)
    # Out of range and NaN give the "integer indefinite" INT_MIN, which is also int(x)
    # for x = -2^63 exactly. `cmp d, 1` overflows only for INT_MIN: one test on the hot
    # path, and the cold path tells the two apart by converting back.
    check, rest = sel.new_label("ftoi"), sel.new_label("ftoiend")
    sel.emit("cmp", d, Imm(1))
    sel.emit("jcc", LabelRef(check), cond="o")
    sel.emit("jmp", LabelRef(rest))
    sel.cur.succs = [check, rest]
    sel.start_block(check, cold=True)
    stub = sel.trap_stub(TRAP_FTOI, i)
    sel.emit("movq", XMM0, x)
    sel.emit("cvtsi2sd", XMM1, d)  # -2^63 exactly
    sel.emit("ucomisd", XMM0, XMM1)
    sel.emit("jcc", LabelRef(stub), cond="p")  # NaN: unordered
    sel.emit("jcc", LabelRef(stub), cond="ne")  # an infinity, 2^63 or more, below -2^63
    sel.end_jump(rest)
    sel.start_block(rest)


# The float rows of the pattern table (select_ops.SELECT takes them in).
SELECT_FLOAT: dict[str, Callable[[Selector, Instr], None]] = {
    **{op: s_farith for op in ARITH},
    **{op: s_fcompare for op in ("feq", *ORDERED)},
    "itof": s_itof, "ftoi": s_ftoi,
}
