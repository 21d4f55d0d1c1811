"""Reference answers the exercise checks compare with (kept out of the notebooks).

Each function implements the specification of one exercise task independently of the
learner's code. Lesson engines serve as references where they answer exactly the task's
question (``find_leaders``, ``dominance_frontiers``, ...); these cover the rest.
"""

from __future__ import annotations

import itertools

from ssa_course.quads.fold import COMMUTATIVE
from ssa_course.ssa.ircode import Expr, SSAValue, compact
from ssa_course.tiny.types import INT

PURE_OPS = frozenset({"add", "sub", "mul", "eq", "lt", "gt", "le", "ge", "not", "and", "or"})


def value_key(op: str, nums: list[int]) -> tuple:
    """Exercise 02: the LVN key -- commutative operands sorted."""
    return (op, *sorted(nums)) if op in COMMUTATIVE else (op, *nums)


def count_redundant(block: list) -> int:
    """Exercise 02: pure instructions recomputing a value the block still holds."""
    var_num: dict[str, int] = {}
    expr_num: dict[tuple, int] = {}
    home: dict[int, str | None] = {}
    fresh = itertools.count(1)

    def number(v: str) -> int:
        if v not in var_num:
            var_num[v] = next(fresh)
            home[var_num[v]] = v
        return var_num[v]

    count = 0
    for ins in block:
        ns = [number(a) for a in ins.args]
        if ins.dest is None:
            continue
        if ins.op == "id":
            n = ns[0]
        elif ins.op == "const" or ins.op in PURE_OPS:
            key = (("const", type(ins.value).__name__, ins.value) if ins.op == "const"
                   else value_key(ins.op, ns))
            found = expr_num.get(key)
            if found is not None and ins.op in PURE_OPS and home.get(found) is not None:
                count += 1
            if found is None:
                found = expr_num[key] = next(fresh)
            n = found
        else:
            n = next(fresh)
        old = var_num.get(ins.dest)
        if old is not None and home.get(old) == ins.dest:
            home[old] = next((v for v, m in var_num.items() if m == old and v != ins.dest),
                             None)
        var_num[ins.dest] = n
        if home.get(n) is None:
            home[n] = ins.dest
    return count


def uses_of(ir) -> dict[int, list[int]]:  # noqa: ANN001
    """Exercise 04: statement number -> sorted numbers of the statements using it."""
    uses: dict[int, set[int]] = {i: set() for i in range(1, len(ir.stmts) + 1)}
    for j, s in enumerate(ir.stmts, start=1):
        for v in (s.operands() if s is not None else []):
            if isinstance(v, SSAValue):
                uses[v.id].add(j)
    return {i: sorted(js) for i, js in uses.items()}


def dead_pure(ir) -> set[int]:  # noqa: ANN001
    """Exercise 04: pure statements whose value nobody uses."""
    used = {v.id for s in ir.stmts if s is not None for v in s.operands()
            if isinstance(v, SSAValue)}
    return {i for i, s in enumerate(ir.stmts, start=1)
            if isinstance(s, Expr) and s.head in PURE_OPS and i not in used}


def double_to_add(ir):  # noqa: ANN001, ANN201
    """Exercise 04: ``mul(v, 2)`` becomes ``add(v, v)`` via insert_node + compact."""
    for i, s in enumerate(list(ir.stmts), start=1):
        if isinstance(s, Expr) and s.head == "mul":
            a, b = s.args
            v = a if b == 2 and b is not True else b if a == 2 and a is not True else None
            if v is not None:
                ir.replace_uses(SSAValue(i), ir.insert_node(i, Expr("add", [v, v]), INT))
    return compact(ir)
