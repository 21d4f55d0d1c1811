"""What each quad becomes: the emitting half of the pattern table (:mod:`.patterns`).

Every function here takes the :class:`~ssa_course.codegen.isel.Selector` of the function
being compiled and one quad, and appends machine instructions to its current block. The
row of the pattern table each branch implements is named in a comment after the word
``pattern:``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ssa_course.codegen.magic import magic
from ssa_course.codegen.minstr import fits32
from ssa_course.codegen.mir import NEGATE, SWAP, Imm, LabelRef, Mem, PReg
from ssa_course.codegen.patterns import CodegenError
from ssa_course.codegen.quadcfg import QBlock
from ssa_course.quads.ir import Instr
from ssa_course.tiny.types import BOOL, ArrayType

if TYPE_CHECKING:
    from ssa_course.codegen.isel import Selector

COMPARES = {"eq": "e", "ne": "ne", "lt": "l", "le": "le", "gt": "g", "ge": "ge"}
INT_MIN = -(1 << 63)
RAX, RDX, RDI, RSI, RSP = PReg("rax"), PReg("rdx"), PReg("rdi"), PReg("rsi"), PReg("rsp")
TRAP_DIV, TRAP_BOUNDS, TRAP_UNSET = 0, 1, 4  # runtime_asm.MESSAGES indices


def fusible_compares(qb: QBlock, uses: dict[str, int]) -> dict[str, Instr]:
    """Compares and ``not``s whose only use is this block's ``br`` (directly or through
    other such ``not``s): the branch emits them as ``cmp``/``test`` + ``jcc`` and they get
    no register."""
    term = qb.body[-1]
    if term.op != "br":
        return {}
    defs = {i.dest: i for i in qb.body if i.dest is not None}
    fused: dict[str, Instr] = {}
    name = term.args[0]
    while uses.get(name) == 1 and name in defs:
        d = defs[name]
        if d.op not in COMPARES and d.op != "not":
            break
        fused[name] = d
        if d.op in COMPARES:
            break
        name = d.args[0]
    return fused


def zero_tested(blocks: list[QBlock], uses: dict[str, int], consts: dict[str, int]
                ) -> set[str]:
    """Values whose every use is ``== 0`` or ``!= 0``: only their zero-ness matters."""
    tests: dict[str, int] = {}
    for qb in blocks:
        for i in qb.body:
            if i.op in ("eq", "ne") and len(i.args) == 2:
                a, b = i.args
                if consts.get(b) == 0 and a not in consts:
                    tests[a] = tests.get(a, 0) + 1
                elif consts.get(a) == 0 and b not in consts:
                    tests[b] = tests.get(b, 0) + 1
    return {name for name, n in tests.items() if n == uses.get(name)}


def compare(sel: Selector, instr: Instr) -> str | bool:
    """Set the flags for a comparison; its condition code (a bool if both are constants)."""
    a, b = instr.args
    cc = COMPARES[instr.op]
    ca, cb = sel.const(a), sel.const(b)
    if ca is not None and cb is not None:
        return {"e": ca == cb, "ne": ca != cb, "l": ca < cb, "le": ca <= cb,
                "g": ca > cb, "ge": ca >= cb}[cc]
    if ca is not None:  # pattern: constant on the left -> swap the operands
        a, b, ca, cb, cc = b, a, cb, ca, SWAP[cc]
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
    if d is not None and d.op == "not":  # pattern: compare + branch fused
        return branch_condition(sel, d.args[0], not negate)
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
    if isinstance(cc, bool) or t == f:
        sel.end_jump(t if cc is True or t == f else f)
        return
    sel.emit("jcc", LabelRef(t), cond=cc)
    sel.emit("jmp", LabelRef(f))
    sel.cur.succs = [t, f]


def s_compare_value(sel: Selector, i: Instr) -> None:
    if i.dest in sel.fused:
        return  # the branch emits it
    d = sel.vreg(i.dest)
    cc = compare(sel, i)
    if isinstance(cc, bool):
        sel.emit("mov", d, Imm(int(cc)))
        return
    sel.emit("setcc", d, cond=cc)  # pattern: setcc + movzx when a bool is a value
    sel.emit("movzx", d, d)


def s_not(sel: Selector, i: Instr) -> None:
    if i.dest in sel.fused:
        return
    d = sel.vreg(i.dest)
    sel.emit("mov", d, sel.val(i.args[0]))
    sel.emit("xor", d, Imm(1))


def s_id(sel: Selector, i: Instr) -> None:
    sel.emit("mov", sel.vreg(i.dest), sel.val(i.args[0]))


def s_binary(sel: Selector, i: Instr) -> None:
    """and / or / add / sub on registers and immediates (two-address form)."""
    a, b = i.args
    d = sel.vreg(i.dest)
    op = {"and": "and", "or": "or", "add": "add", "sub": "sub"}[i.op]
    if i.op != "sub" and sel.const(a) is not None and sel.const(b) is None:
        a, b = b, a  # commutative: the constant goes right
    if i.op in ("add", "sub") and sel.const(b) is not None:
        c = sel.const(b) if i.op == "add" else -sel.const(b)  # type: ignore[operator]
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
    d = sel.vreg(i.dest)
    sel.emit("mov", d, sel.val(i.args[0]))
    sel.emit("neg", d)


def s_mul(sel: Selector, i: Instr) -> None:
    a, b = i.args
    if sel.const(a) is not None and sel.const(b) is None:
        a, b = b, a
    d = sel.vreg(i.dest)
    c = sel.const(b)
    if c is None:
        sel.emit("mov", d, sel.val(a))
        sel.emit("imul", d, sel.reg(b))
        return
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
    d = sel.vreg(i.dest)
    c = sel.const(b)
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
    sel.emit("mov", RAX, sel.val(a))
    sel.emit("cqo", defs=(RDX,), uses=(RAX,))
    sel.emit("idiv", rb, defs=(RAX, RDX), uses=(RAX, RDX))
    sel.emit("mov", d, RDX if rem else RAX)
    if rest is not None:
        sel.end_jump(rest)
        sel.start_block(rest)


def _divide_by_constant(sel: Selector, a: str, c: int, d, rem: bool) -> None:  # noqa: ANN001
    """Division by another constant: the high half of a product with its magic reciprocal
    (:mod:`ssa_course.codegen.magic`), corrected, shifted, rounded toward zero."""
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


def _divide_by_power(sel: Selector, a: str, c: int, d, rem: bool) -> None:  # noqa: ANN001
    """Division by +-2^k without idiv: add the bias (2^k - 1 for a negative dividend),
    then shift; the remainder is the dividend minus the rounded-down multiple."""
    k = abs(c).bit_length() - 1
    if rem and k and d.hint in sel.zero_tested and fits32((1 << k) - 1):
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
    ra = sel.reg(a)
    t = sel.new_vreg("bias")
    sel.emit("mov", t, ra)  # pattern: signed divide by 2^k
    sel.emit("sar", t, Imm(63))
    sel.emit("shr", t, Imm(64 - k))
    sel.emit("add", t, ra)
    if rem:  # pattern: remainder by 2^k
        mask = -(1 << k)
        sel.emit("and", t, Imm(mask) if fits32(mask) else sel.materialise(mask))
        sel.emit("mov", d, ra)
        sel.emit("sub", d, t)
        return
    sel.emit("sar", t, Imm(k))
    if c < 0:
        sel.emit("neg", t)
    sel.emit("mov", d, t)


def _bounds(sel: Selector, i: Instr, ra, index: str) -> Mem:  # noqa: ANN001
    """Check ``index`` against the length (one unsigned compare catches negatives too);
    the address of the element."""
    stub = sel.trap_stub(TRAP_BOUNDS, i)
    c = sel.const(index)
    if c is not None and c >= 0 and fits32(8 * c + 8):  # pattern: constant index
        sel.emit("cmp", Mem(ra), Imm(c))
        sel.emit("jcc", LabelRef(stub), cond="be")
        return Mem(ra, disp=8 * c + 8)
    ri = sel.reg(index)
    sel.emit("cmp", ri, Mem(ra))  # pattern: bounds check
    sel.emit("jcc", LabelRef(stub), cond="ae")
    return Mem(ra, ri, scale=8, disp=8)


def s_aload(sel: Selector, i: Instr) -> None:
    ra = sel.reg(i.args[0])
    addr = _bounds(sel, i, ra, i.args[1])
    d = sel.vreg(i.dest)
    sel.emit("mov", d, addr)
    t = sel.types.get(i.args[0])
    if isinstance(t, ArrayType) and t.elem.is_ref():  # pattern: unset check
        sel.emit("test", d, d)
        sel.emit("jcc", LabelRef(sel.trap_stub(TRAP_UNSET, i)), cond="e")


def s_astore(sel: Selector, i: Instr) -> None:
    ra = sel.reg(i.args[0])
    addr = _bounds(sel, i, ra, i.args[1])
    sel.emit("mov", addr, sel.val(i.args[2]))


def s_alen(sel: Selector, i: Instr) -> None:
    sel.emit("mov", sel.vreg(i.dest), Mem(sel.reg(i.args[0])))


def s_newarr(sel: Selector, i: Instr) -> None:
    site = len(sel.sites)
    sel.sites.append((i.pos.line, i.pos.col) if i.pos else (0, 0))
    sel.emit("mov", RDI, sel.val(i.args[0]))
    sel.emit("mov", RSI, Imm(site))
    sel.call("rt_new_array", 2)
    sel.emit("mov", sel.vreg(i.dest), RAX)


def _field_offset(sel: Selector, ref: str, field: str | None) -> int:
    t = sel.types.get(ref)
    struct = sel.program.structs.get(str(t))
    names = [f for f, _ in struct.fields] if struct else []
    if field not in names:
        raise CodegenError(f"@{sel.fn.name}: unknown field '{field}' of '{t}'")
    return 8 * names.index(field)


def s_newstruct(sel: Selector, i: Instr) -> None:
    sel.emit("mov", RDI, Imm(len(i.args)))
    sel.call("rt_new_struct", 1)
    d = sel.vreg(i.dest)
    sel.emit("mov", d, RAX)
    for k, arg in enumerate(i.args):
        sel.emit("mov", Mem(d, disp=8 * k), sel.val(arg))


def s_getf(sel: Selector, i: Instr) -> None:
    off = _field_offset(sel, i.args[0], i.field)
    sel.emit("mov", sel.vreg(i.dest), Mem(sel.reg(i.args[0]), disp=off))


def s_setf(sel: Selector, i: Instr) -> None:
    off = _field_offset(sel, i.args[0], i.field)
    sel.emit("mov", Mem(sel.reg(i.args[0]), disp=off), sel.val(i.args[1]))


def s_print(sel: Selector, i: Instr) -> None:
    for k, arg in enumerate(i.args):
        if k:
            sel.call("rt_print_space")
        sel.emit("mov", RDI, sel.val(arg))
        sel.call("rt_print_bool" if sel.types.get(arg) == BOOL else "rt_print_int", 1)
    sel.call("rt_print_newline")


def s_call(sel: Selector, i: Instr) -> None:
    from ssa_course.codegen.mir import ARG_REGS
    from ssa_course.codegen.names import function_symbol

    n = len(i.args)
    extra = max(0, n - len(ARG_REGS))
    pad = extra % 2  # keep rsp 16-byte aligned at the call
    if pad:
        sel.emit("sub", RSP, Imm(8))
    for arg in reversed(i.args[len(ARG_REGS):]):  # pattern: stack arguments right to left
        sel.emit("push", sel.val(arg))
    for k, arg in enumerate(i.args[:len(ARG_REGS)]):
        sel.emit("mov", PReg(ARG_REGS[k]), sel.val(arg))
    sel.call(function_symbol(i.funcs[0]), min(n, len(ARG_REGS)))
    if extra + pad:
        sel.emit("add", RSP, Imm(8 * (extra + pad)))
    if i.dest is not None:
        sel.emit("mov", sel.vreg(i.dest), RAX)


def s_ret(sel: Selector, i: Instr) -> None:
    if i.args:
        sel.emit("mov", RAX, sel.val(i.args[0]))
        sel.emit("ret", uses=(RAX,))
    else:
        sel.emit("ret")
    sel.cur.succs = []


def s_jmp(sel: Selector, i: Instr) -> None:
    sel.end_jump(sel.label(i.labels[0]))


def s_enter(sel: Selector, i: Instr) -> None:
    body, handler = sel.label(i.labels[0]), sel.label(i.labels[1])
    sel.emit("lea", RDI, Mem(symbol=handler))
    sel.call("rt_enter", 1)
    sel.emit("jmp", LabelRef(body))
    sel.cur.succs = [body, handler]


def s_leave(sel: Selector, i: Instr) -> None:
    sel.call("rt_leave")


def s_throw(sel: Selector, i: Instr) -> None:
    sel.emit("mov", RDI, sel.val(i.args[0]))
    sel.call("rt_throw", 1)
    sel.cur.succs = []


def s_catch(sel: Selector, i: Instr) -> None:
    sel.emit("mov", sel.vreg(i.dest), RAX)  # the thrown value arrives in rax


def s_const(sel: Selector, i: Instr) -> None:
    """Constants were collected before selection: they become immediates where used."""


SELECT = {
    "const": s_const, "id": s_id, "add": s_binary, "sub": s_binary, "and": s_binary,
    "or": s_binary, "mul": s_mul, "div": s_divide, "rem": s_divide, "not": s_not,
    "neg": s_neg, "br": s_br, "jmp": s_jmp, "ret": s_ret, "call": s_call,
    "print": s_print, "newarr": s_newarr, "alen": s_alen, "aload": s_aload,
    "astore": s_astore, "newstruct": s_newstruct, "getf": s_getf, "setf": s_setf,
    "enter": s_enter, "leave": s_leave, "throw": s_throw, "catch": s_catch,
    **{op: s_compare_value for op in COMPARES},
}


def select(sel: Selector, instr: Instr) -> None:
    """Append the machine instructions for one quad to the selector's current block."""
    fn = SELECT.get(instr.op)
    if fn is None:
        raise CodegenError(f"@{sel.fn.name}: no machine pattern for '{instr.op}'")
    fn(sel, instr)
