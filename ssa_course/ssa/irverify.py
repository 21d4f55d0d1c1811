"""The IRCode verifier: every invariant Julia's IR relies on, checked and named.

* **blocks cover the statements** -- block ranges are contiguous and in order;
* **one terminator per block** -- a goto/return/enter/throw only as a block's last
  statement, and the block's successors are what that terminator says;
* **preds mirror succs**;
* **phi edges equal predecessors** -- and phis only at the top of a block;
* **uses dominated by defs** -- ``%j`` used in statement ``i`` is defined in a block that
  dominates ``i``'s (earlier in the same block); a phi's value must dominate its edge;
* **PhiC lists Upsilons**;
* **types consistent** -- arithmetic is int, comparisons are bool, a branch condition is
  bool, a phi's operands have the phi's type.
"""

from __future__ import annotations

from collections.abc import Callable

from ssa_course import opcodes
from ssa_course.errors import VerifyError
from ssa_course.quads.domtree import Dominance
from ssa_course.ssa.ircode import (
    Argument,
    EnterNode,
    Expr,
    GotoIfNot,
    GotoNode,
    IRCode,
    OldSSAValue,
    PhiCNode,
    PhiNode,
    PiNode,
    ReturnNode,
    SSAValue,
    UpsilonNode,
    is_terminator,
)
from ssa_course.tiny.types import BOOL, FLOAT, INT

_KINDS = {opcodes.INT: INT, opcodes.BOOL: BOOL, opcodes.FLOAT: FLOAT}  # the table's kinds


def verify_ir(ir: IRCode) -> None:
    """Raise :class:`VerifyError` naming the first broken invariant."""
    name = ir.name

    def fail(invariant: str, where: str, detail: str = "") -> VerifyError:
        return VerifyError(invariant, f"{name} {where}", detail)

    # 1. Julia's blocks are ranges over one flat statement list (1-based, like Julia):
    # they must tile it, in order, with no gap and no overlap
    expected = 1
    for k, b in enumerate(ir.blocks, start=1):
        if b.start != expected or b.stop < b.start - 1:
            raise fail("blocks cover the statements", f"#{k}",
                       f"range {b.start}:{b.stop}, expected to start at {expected}")
        expected = b.stop + 1
    if expected != len(ir.stmts) + 1:
        raise fail("blocks cover the statements", "end", f"{len(ir.stmts)} statements")
    # 2. a terminator only at the end of a block, and the block's successor list is what
    # that terminator (or falling through to the next block) says
    block_of = {}  # statement number -> its block
    for k, b in enumerate(ir.blocks, start=1):
        for i in range(b.start, b.stop + 1):
            block_of[i] = k
        for i in range(b.start, b.stop):
            if is_terminator(ir.stmts[i - 1]):
                raise fail("one terminator per block", f"%{i} in #{k}",
                           "a terminator before the end of its block")
        last = ir.stmts[b.stop - 1] if b.stop >= b.start else None
        want = _successors(last, k, len(ir.blocks))
        if sorted(b.succs) != sorted(want):
            raise fail("one terminator per block", f"#{k}",
                       f"successors {b.succs}, terminator says {want}")
    # as sets: a join of thousands of edges would make list membership quadratic
    # 3. the CFG is stored twice (preds and succs): the two must agree
    pred_sets = [set(b.preds) for b in ir.blocks]
    succ_sets = [set(b.succs) for b in ir.blocks]
    for k, b in enumerate(ir.blocks, start=1):
        for s in b.succs:
            if k not in pred_sets[s - 1]:
                raise fail("preds mirror succs", f"#{k} -> #{s}")
        for p in b.preds:
            if k not in succ_sets[p - 1]:
                raise fail("preds mirror succs", f"#{p} -> #{k}")
    succs = {k: list(b.succs) for k, b in enumerate(ir.blocks, start=1)}
    dom = Dominance(succs, 1) if ir.blocks else None  # O(1) per query (once per use)

    # 4. SSA's one rule: a definition dominates each of its uses -- earlier in the same
    # block, or in a dominating block; a phi's use sits at the end of its edge's block
    def check_use(v: object, use_block: int, use_index: int | None, where: str) -> None:
        if isinstance(v, OldSSAValue):  # a compaction left a pre-renumbering reference
            raise fail("uses dominated by defs", where, f"{v} was never renumbered")
        if not isinstance(v, SSAValue):
            return
        if not 1 <= v.id <= len(ir.stmts):
            raise fail("uses dominated by defs", where, f"{v} does not exist")
        db = block_of[v.id]
        if dom is None or use_block not in dom or db not in dom:
            return  # unreachable code: dominance says nothing there
        ok = (use_index is None or v.id < use_index) if db == use_block else \
            dom.dominates(db, use_block)
        if not ok:
            raise fail("uses dominated by defs", where, f"{v} is defined in #{db}")

    # 5. per statement: phis first and one edge per predecessor, PhiC reads Upsilons
    # only, operands dominated (4), types as the opcode table says
    for k, b in enumerate(ir.blocks, start=1):
        in_phis = True  # still in the block's leading run of phis (and Pi/PhiC nodes)
        for i in range(b.start, b.stop + 1):
            s = ir.stmts[i - 1]
            where = f"%{i} in #{k}"
            if isinstance(s, PhiNode):
                if not in_phis:
                    raise fail("phi edges equal predecessors", where, "a phi after other code")
                if sorted(s.edges) != sorted(b.preds):
                    raise fail("phi edges equal predecessors", where,
                               f"edges {s.edges}, predecessors {b.preds}")
                for e, v in zip(s.edges, s.values, strict=True):
                    check_use(v, e, None, where)
                    _same_type(ir, v, ir.types[i - 1], fail, where)
                continue
            in_phis = in_phis and isinstance(s, PiNode | PhiCNode)
            if isinstance(s, PhiCNode):
                for u in s.values:
                    if not isinstance(u, SSAValue) or not isinstance(
                            ir.stmts[u.id - 1], UpsilonNode):
                        raise fail("PhiC lists Upsilons", where, f"{u} is not an Upsilon")
                continue
            if s is None or isinstance(s, SSAValue | Argument | int):
                continue  # a deleted statement (nothing) or a bare value: no operands
            for v in s.operands():
                check_use(v, k, i, where)
            _check_types(ir, i, s, fail, where)


def _successors(last: object, k: int, n: int) -> list[int]:
    """The blocks a block ``k`` ending in ``last`` goes to (of ``n`` blocks)."""
    if isinstance(last, GotoNode):
        return [last.label]
    if isinstance(last, GotoIfNot):
        return list(dict.fromkeys([k + 1, last.dest]))  # one edge when both agree
    if isinstance(last, EnterNode):  # the try body follows; the handler is the other edge
        return [k + 1, last.catch_dest]
    if isinstance(last, ReturnNode) or (isinstance(last, Expr) and last.head == "throw"):
        return []
    return [k + 1] if k < n else []  # falls through (the last block falls off the end)


# ``fail(invariant, where, detail)``: the error naming the broken invariant
Fail = Callable[[str, str, str], VerifyError]


def _same_type(ir: IRCode, v: object, ty: object, fail: Fail, where: str) -> None:
    vt = ir.type_of(v)
    if vt is not None and ty is not None and vt != ty:
        raise fail("types consistent", where, f"{v} is {vt}, expected {ty}")


def _check_types(ir: IRCode, i: int, s: object, fail: Fail, where: str) -> None:
    ty = ir.types[i - 1]
    if isinstance(s, GotoIfNot):
        _same_type(ir, s.cond, BOOL, fail, where)
    elif isinstance(s, PiNode):
        _same_type(ir, s.val, ty, fail, where)
    elif isinstance(s, Expr) and s.head == "alen":
        if ty != INT:
            raise fail("types consistent", where, f"{s.head} gives int, typed {ty}")
    elif isinstance(s, Expr) and (op := opcodes.bril_op(s.head)) is not None:
        want = _KINDS[op.result]
        if ty != want:
            raise fail("types consistent", where, f"{s.head} gives {want}, typed {ty}")
        if op.operands == opcodes.SAME:
            if len(s.args) == 2:
                _same_type(ir, s.args[1], ir.type_of(s.args[0]), fail, where)
        else:
            for a in s.args:
                _same_type(ir, a, _KINDS[op.operands], fail, where)
