"""Landing pads: work only a loop needs is done only when the loop is entered (lesson 08).

Global code motion hoists a loop's invariant values out of it, into the block before
the loop. That is the right place when the loop runs -- once instead of every trip --
but a loss when it runs zero times: the input computed those values in the body, which
then never ran. After layout, the block before a rotated loop ends in the loop's entry
test, ``br c .body .exit``, and the body follows it. This pass sinks the instructions
at the end of such a block whose results only the fall-through side needs onto that
edge: a new block ``.body.pad``, placed between the test and the body, reached only from
the test and falling through into the body.

On the path through the pad nothing changes (the same instructions, no jump added); on
the other path they are not executed. So no path gets longer, whatever the pass does:
this is what makes "never more instructions than the input" hold for loops that run
zero times. The same reasoning holds for any ``br`` whose fall-through successor comes
right after it, loop or not.

An instruction sinks when

* it is pure and cannot fail (runtime errors are observable: a division stays);
* its result is not live on the other edge;
* no instruction that stays after it reads its result or writes what it reads or
  writes (the order of what moves is kept);
* what it reads is certainly assigned: a parameter, or a result computed earlier in the
  same block (moving a read of a possibly unassigned variable would move its error).

Functions with exception handlers are left alone (their liveness has extra edges).
"""

from __future__ import annotations

from collections.abc import Set

from ssa_course.quads.analyses import liveness
from ssa_course.quads.cfg import build_cfg
from ssa_course.quads.fold import PURE
from ssa_course.quads.ir import Function, Instr, Item, Label
from ssa_course.quads.names import Names


def landing_pads(fn: Function) -> Function:
    """``fn`` with the tail of each fall-through ``br``'s block sunk onto that edge."""
    if any(i.op in ("phi", "enter") for i in fn.instrs()):
        return fn
    # liveness on the other edge decides what may sink: a result read there must stay
    live_in = liveness(build_cfg(fn, copy=False)).top
    block_of = _label_blocks(fn.body)
    params = {name for name, _ in fn.params}
    labels = Names(block_of)
    body = fn.body
    # Each rewrite replaces body[start:k + 1] (one block); the scan goes on below ``start``
    # in the same, unchanged items, so the replacements are collected and the body is
    # assembled once at the end (a slice assignment per pad moved the whole tail: 10k
    # pads on a 90k-item body).
    edits: list[tuple[int, int, list[Item]]] = []
    k = len(body) - 2
    while k >= 0:  # backwards (fresh pad names are taken in this order)
        item, after = body[k], body[k + 1]
        # a two-way ``br`` whose one successor is the very next block (its fall-through)
        if isinstance(item, Instr) and item.op == "br" and isinstance(after, Label) \
                and len(set(item.labels)) == 2 and after.name in item.labels:
            other = next(lb for lb in item.labels if lb != after.name)
            start = _block_start(body, k)
            moved = _sinkable(body[start:k], item, live_in.get(block_of.get(other, other),
                                                               set()), params)
            if moved:
                pad = labels.fresh(f"{after.name}.pad", sep="")
                br = item.copy()
                br.labels = [pad if lb == after.name else lb for lb in item.labels]
                kept = [x for j, x in enumerate(body[start:k]) if j not in moved]
                sunk = [body[start + j] for j in sorted(moved)]
                # block: what stays, the branch (now to the pad), then the pad with what
                # sank, falling through into the old successor -- no jump added
                edits.append((start, k + 1, kept + [br, Label(pad)] + sunk))
                k = start  # (body[start:k] holds no ``br``: it is one block's inside)
        k -= 1
    out: list[Item] = []
    done = 0
    for start, end, items in reversed(edits):
        out += body[done:start]
        out += items
        done = end
    out += body[done:]
    return Function(fn.name, list(fn.params), fn.ret, out)


def _sinkable(block: list[Item], br: Instr, live_other: Set[str],
              params: set[str]) -> set[int]:
    """Indices (into ``block``) of the instructions that may sink past ``br``."""
    earlier: list[set[str]] = []  # what the block assigned before each instruction
    seen: set[str] = set()
    for x in block:
        earlier.append(set(seen))
        if isinstance(x, Instr) and x.dest is not None:
            seen.add(x.dest)
    stay_reads, stay_writes = set(br.args), set[str]()
    moved: set[int] = set()
    # From the branch upwards: an instruction sinks past everything below it that stays,
    # so what stays below must neither read its result nor write what it reads/writes
    # (the module's conditions, checked against ``stay_reads``/``stay_writes``).
    for j in range(len(block) - 1, -1, -1):
        x = block[j]
        if not isinstance(x, Instr):
            return moved  # a label inside the block: stop (never happens after a leader)
        if x.op in PURE and x.dest is not None and x.dest not in live_other \
                and x.dest not in stay_reads and x.dest not in stay_writes \
                and not (set(x.args) & stay_writes) \
                and all(a in params or a in earlier[j] for a in x.args):
            moved.add(j)
            continue
        # it stays: whatever moves from above must now also pass it
        stay_reads.update(x.args)
        if x.dest is not None:
            stay_writes.add(x.dest)
    return moved


def _block_start(body: list[Item], k: int) -> int:
    """Index of the first instruction of the block that ends at ``body[k]``."""
    j = k
    while j > 0:
        prev = body[j - 1]
        if isinstance(prev, Label) or prev.is_terminator():
            break
        j -= 1
    return j


def _label_blocks(body: list[Item]) -> dict[str, str]:
    """Each label's block name (several labels in a row name one block: the first)."""
    names: dict[str, str] = {}
    first: str | None = None
    for item in body:
        if isinstance(item, Label):
            first = first or item.name
            names[item.name] = first
        else:
            first = None
    return names
