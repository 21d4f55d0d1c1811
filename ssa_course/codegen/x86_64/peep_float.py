"""A float peephole after allocation: an xmm scratch register that still holds a
register's bits is not loaded with them again (issue #36).

Each float operation moves its operands into xmm0/xmm1 and its result back out
(:mod:`.select_float`), so a chain ``c = a * b; d = c + e`` selects ``movq c, xmm0`` then
``movq xmm0, c``: the second copies back what xmm0 already holds. Within a block, the
scan remembers which general register each xmm register was last copied to or from;
the memory ends for that xmm register when an instruction names it first (every SSE
instruction here writes its first operand; ``ucomisd`` does not, which only forgets more)
or a call clobbers it, and for that general register when an instruction writes it.
The allocator never tracks xmm registers, so this is the one place that may reason
about their contents, and it does so only inside straight-line code.
"""

from __future__ import annotations

from ssa_course.codegen.mir import MFunction, MInstr, PReg


def _xmm(o: object) -> str | None:
    return o.name if isinstance(o, PReg) and o.name.startswith("xmm") else None


def reuse_xmm(fn: MFunction) -> int:
    """Delete each ``movq xmmK, r`` whose xmmK already holds r's bits; how many went."""
    done = 0
    for block in fn.blocks:
        holds: dict[str, PReg] = {}  # xmm register -> the general register it equals
        kept: list[MInstr] = []
        for i in block.instrs:
            ops = i.operands
            if i.op == "movq" and len(ops) == 2 and _xmm(ops[0]) \
                    and isinstance(ops[1], PReg) and _xmm(ops[1]) is None:
                x = _xmm(ops[0])
                if x is not None and holds.get(x) == ops[1]:
                    done += 1
                    continue  # xmmK == r already
                kept.append(i)
                if x is not None:
                    holds[x] = ops[1]
                continue
            if i.op == "call":
                holds.clear()
            elif ops and _xmm(ops[0]) is not None:
                holds.pop(_xmm(ops[0]) or "", None)
            written = set(i.defs)
            for x, r in list(holds.items()):
                if r in written:
                    del holds[x]
            # movq r, xmmK: now r and xmmK hold the same bits (after r's old value died)
            if i.op == "movq" and len(ops) == 2 and isinstance(ops[0], PReg) \
                    and _xmm(ops[0]) is None and _xmm(ops[1]) is not None:
                holds[_xmm(ops[1]) or ""] = ops[0]
            kept.append(i)
        block.instrs = kept
    return done
