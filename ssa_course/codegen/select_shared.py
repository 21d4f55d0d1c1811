"""Selection helpers both CPUs share: which compares a branch fuses, which values are
only tested against zero, constant folding of a compare, operand order.

Quads-level questions with target-neutral answers; each CPU's ``select_ops`` asks them
and emits its own instructions.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ssa_course.codegen.quadcfg import QBlock
from ssa_course.quads.ir import Instr

if TYPE_CHECKING:
    from ssa_course.codegen.isel import Selector

# The comparison quads (each CPU maps them to its condition codes).
COMPARE_OPS = frozenset({"eq", "ne", "lt", "le", "gt", "ge"})


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
        if d.op not in COMPARE_OPS and d.op != "not":
            break
        fused[name] = d
        if d.op in COMPARE_OPS:
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


_FOLD = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
         "gt": operator.gt, "ge": operator.ge}


def constant_compare(op: str, a: int, b: int) -> bool:
    """The value of comparison quad ``op`` (``eq``, ``lt``...) on two constants (both
    targets fold it instead of comparing)."""
    return bool(_FOLD[op](a, b))


def compare_operands(sel: Selector, instr: Instr, compares: Mapping[str, str],
                     swap: Mapping[str, str]) -> tuple[str, str, str, int | None] | bool:
    """A comparison quad's operands with a constant moved to the right (its condition
    swapped), the target's condition (``compares``: quad op -> condition) and the right
    one's constant value, if any; or the answer when both are constants (both targets)."""
    a, b = instr.args
    cc = compares[instr.op]
    ca, cb = sel.const(a), sel.const(b)
    if ca is not None and cb is not None:
        return constant_compare(instr.op, ca, cb)
    if ca is not None:
        return b, a, swap[cc], ca
    return a, b, cc, cb


def binary_operands(sel: Selector, i: Instr) -> tuple[str, str, int | None]:
    """An ``and``/``or``/``add``/``sub`` quad's operands, a constant moved to the right
    where the operation is commutative, and the constant an ``add``/``sub`` of a constant
    adds (a ``sub``'s negated), else None (both targets)."""
    a, b = i.args
    if i.op != "sub" and sel.const(a) is not None and sel.const(b) is None:
        a, b = b, a  # commutative: the constant goes right
    cb = sel.const(b)
    if i.op in ("add", "sub") and cb is not None:
        return a, b, cb if i.op == "add" else -cb
    return a, b, None
