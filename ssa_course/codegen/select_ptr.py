"""Selection of Bril's memory and char operations, on both CPUs (issue #36).

Every memory operation is a call of a runtime entry (``codegen/x86_64/runtime_ptr.py``,
``codegen/aarch64/runtime_ptr.py``) that checks what brili checks -- freed block, bounds,
a slot never stored, a size below 1, an offset on ``free`` -- and traps with the
interpreters' message: ``alloc`` -> ``rt_ptr_alloc(n, site)``, ``free`` ->
``rt_ptr_free(p, site)``, ``store`` -> ``rt_ptr_store(p, v, site)``, ``load`` ->
``rt_ptr_load(p, site)``, ``ptradd`` -> ``rt_ptr_add(p, k)``. A ``site`` is an index into
the program's trap-site table (the one ``newarr`` uses), so a trap names the
instruction's position when it has one. The shapes are the same on both CPUs (arguments
in the first argument registers, the result in the result register), so this module is
target-neutral.

Chars are their sort keys (:mod:`ssa_course.codegen.ptr_abi`): :func:`lower_chars`
rewrites a function's char constants to their keys and ``ceq``/``clt``/... to the int
compares, which the CPUs' own patterns then select (fused into a branch where only one
reads them); ``char2int`` and ``int2char`` (which checks for a Unicode scalar value) are
runtime calls.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import TYPE_CHECKING

from ssa_course.codegen.mir import Imm, PReg
from ssa_course.codegen.ptr_abi import char_key
from ssa_course.quads.ir import Function, Instr

if TYPE_CHECKING:
    from ssa_course.codegen.isel import Selector

# The char compares and the int compares that give the same answer on keys.
CHAR_COMPARES = {"ceq": "eq", "clt": "lt", "cle": "le", "cgt": "gt", "cge": "ge"}


def lower_chars(fn: Function) -> Function:
    """``fn`` with its char constants as keys and its char compares as int compares (a
    copy when anything changes: the scheduled program stays as the interpreters run it)."""
    if not any(isinstance(i, Instr) and (i.op in CHAR_COMPARES or isinstance(i.value, str))
               for i in fn.body):
        return fn
    body: list[object] = []
    for item in fn.body:
        if isinstance(item, Instr) and item.op in CHAR_COMPARES:
            item = copy.copy(item)
            item.op = CHAR_COMPARES[item.op]
        elif isinstance(item, Instr) and item.op == "const" and isinstance(item.value, str):
            value = item.value
            item = copy.copy(item)
            item.value = char_key(value)
        body.append(item)
    out = copy.copy(fn)
    out.body = body  # type: ignore[assignment]
    return out


def _arg(sel: Selector, k: int) -> PReg:
    return PReg(sel.machine.arg_regs[k])


def _site(sel: Selector, i: Instr) -> Imm:
    """The instruction's trap site: its (line, col) in the program's table, (0, 0) when
    it has no position (the message then names none, as the interpreters')."""
    sel.sites.append((i.pos.line, i.pos.col) if i.pos else (0, 0))
    return Imm(len(sel.sites) - 1)


def _call(sel: Selector, i: Instr, symbol: str, args: list[str], site: bool) -> None:
    """``symbol(args..., site)`` with the result, if any, in ``i``'s destination."""
    for k, a in enumerate(args):
        sel.emit("mov", _arg(sel, k), sel.val(a))
    n = len(args)
    if site:
        sel.emit("mov", _arg(sel, n), _site(sel, i))
        n += 1
    sel.call(symbol, n)
    if i.dest is not None:
        sel.emit("mov", sel.dest(i), sel.machine.effects.result)


def s_alloc(sel: Selector, i: Instr) -> None:
    _call(sel, i, "rt_ptr_alloc", i.args, True)


def s_free(sel: Selector, i: Instr) -> None:
    _call(sel, i, "rt_ptr_free", i.args, True)


def s_store(sel: Selector, i: Instr) -> None:
    _call(sel, i, "rt_ptr_store", i.args, True)


def s_load(sel: Selector, i: Instr) -> None:
    _call(sel, i, "rt_ptr_load", i.args, True)


def s_ptradd(sel: Selector, i: Instr) -> None:
    _call(sel, i, "rt_ptr_add", i.args, False)


def s_char2int(sel: Selector, i: Instr) -> None:
    _call(sel, i, "rt_char2int", i.args, False)


def s_int2char(sel: Selector, i: Instr) -> None:
    _call(sel, i, "rt_int2char", i.args, True)


# Each CPU's select_ops table adds these rows.
SELECT: dict[str, Callable[[Selector, Instr], None]] = {
    "alloc": s_alloc, "free": s_free, "store": s_store, "load": s_load,
    "ptradd": s_ptradd, "char2int": s_char2int, "int2char": s_int2char,
}
