"""The SSA verifier for quads: names the invariant a function breaks, and where.

Checked invariants:

* **single assignment** -- every variable is assigned by exactly one instruction;
* **phis first** -- phis only at the top of a block;
* **phi edges** -- a phi has one argument per predecessor, labelled by that predecessor;
* **defs dominate uses** -- a use is dominated by its definition (a phi argument's
  definition dominates the end of the predecessor it comes from).
"""

from __future__ import annotations

from ssa_course.errors import VerifyError
from ssa_course.quads.cfg import build_cfg
from ssa_course.quads.domtree import Dominance
from ssa_course.quads.exceptions import add_exception_edges
from ssa_course.quads.ir import UNDEFINED, Function, Program


def verify_ssa(fn: Function) -> None:
    """Raise :class:`VerifyError` at the first broken SSA invariant of ``fn``."""
    cfg = build_cfg(fn)
    add_exception_edges(cfg)
    where_def: dict[str, tuple[str, int]] = {name: (cfg.entry, -1) for name, _ in fn.params}
    for bname, block in cfg.blocks.items():
        seen_other = False
        for i, instr in enumerate(block.instrs):
            if instr.op == "phi":
                if seen_other:
                    raise VerifyError("phis first", f"@{fn.name} .{bname}: {instr.dest}",
                                      "a phi after an ordinary instruction")
                if sorted(instr.labels) != sorted(block.preds):
                    raise VerifyError("phi edges", f"@{fn.name} .{bname}: {instr.dest}",
                                      f"labels {instr.labels}, predecessors {block.preds}")
            else:
                seen_other = True
            if instr.dest is not None:
                if instr.dest in where_def:
                    raise VerifyError("single assignment", f"@{fn.name} .{bname}: "
                                      f"{instr.dest}", "assigned more than once")
                where_def[instr.dest] = (bname, i)
    succs = {name: list(b.succs) for name, b in cfg.blocks.items()}
    dom = Dominance(succs, cfg.entry)  # O(1) per query: the check runs once per use

    def check(var: str, use_block: str, use_index: int, what: str) -> None:
        if var == UNDEFINED or var not in where_def:
            return  # an undefined value: allowed (Bril reads it as an error at run time)
        def_block, def_index = where_def[var]
        if use_block not in dom:
            return  # unreachable code is never run
        ok = (def_index < use_index if def_block == use_block
              else def_block in dom and dom.dominates(def_block, use_block))
        if not ok:
            raise VerifyError("defs dominate uses", f"@{fn.name} .{use_block}: {what}",
                              f"'{var}' is defined in .{def_block}, which does not dominate")

    for bname, block in cfg.blocks.items():
        for i, instr in enumerate(block.instrs):
            if instr.op == "phi":
                for arg, pred in zip(instr.args, instr.labels, strict=True):
                    p = cfg.blocks[pred]
                    # on an exceptional edge the value is read before the last instruction
                    at = len(p.instrs) - (1 if p.throws_to == bname else 0)
                    check(arg, pred, at, f"{instr.dest} = phi")
            else:
                for arg in instr.args:
                    check(arg, bname, i, f"{instr.op} {' '.join(instr.args)}")


def verify_ssa_program(program: Program) -> None:
    for fn in program.functions.values():
        verify_ssa(fn)
