"""Merging the per-call try regions that code generation makes (lesson 08).

Writing a sea of nodes back as quads wraps *each* call inside a ``try`` in its own
``enter .inner .H; .inner: call; leave``, with a handler block ``H`` of its own: in SSA
every call's exceptional edge reaches the catch block with different values, so out of SSA
each handler gets its own copies (``e = catch; x = id v12; jmp .catch_body``). A ``try``
with k calls then runs 2k ``enter``/``leave`` where the source ran 2. This pass undoes
that, for a *chain* of wrapped calls joined by straight-line code::

    enter .X1 .H1;  .X1: call f;  leave;  S;  enter .X2 .H2;  .X2: call g;  leave
    =>  c1;  enter .X1 .H1;  .X1: call f;  S;  c2;  call g;  leave

1. *Same handler*: when ``H1`` and ``H2`` are the same code (same ``catch``, same copies,
   same target), ``leave; S; enter .X2 .H2`` can go, and ``H2`` with it: ``S`` cannot throw
   (no ``call``; runtime errors are not exceptions), so no throw sees the handler stack
   while ``S`` runs, and a throw in ``g`` lands in ``H1``, which does what ``H2`` did with
   the variables as they are at the throw -- the same variables.
2. *Hoisting*: otherwise the copies ``ci`` that start each handler (``a = id b``) move to
   just before their ``enter``, when that changes no value anyone reads:

   * the region is exactly one ``call``, and a call that throws writes nothing in this
     frame (not even its destination), so ``b`` holds at the ``enter`` what it held in
     the handler;
   * ``a`` is not live on the normal path after the ``enter`` (the call does not read it,
     nor does anything before ``a`` is written again), so the early write is invisible;
   * neither name is the ``catch`` destination (``catch`` now runs after the copies), and
     ``b`` is assigned on every path to the ``enter`` (the copy now runs every time).

   Then the handlers are the same code and step 1 applies.

Hoisting is not free: each hoisted copy runs on the normal path too, and each merge saves
one ``leave`` and one ``enter``. A group of chained calls ``i..j`` is merged with hoisting
only when no path gets longer: the normal path (``sum |c| <= 2 (j - i)``) and a throw from
every call ``m`` of the group (``sum of |c| before m <= 2 (m - i)``). Each group is chosen
greedily from the first call of a chain: the longest group either way, hoisting when it
saves more on the normal path, or when it is the only merge there is and the normal path
stays as long (a throw then runs fewer). Merged regions take part again, one group at a
time, so a ``try`` with many calls ends up as one region. Straight-line means that every
block after the first is entered only from the one before it, so no other path reaches
the middle of the merged region.

The pass works on ordinary quads (no phis), after coalescing; block layout afterwards
removes the jumps between the blocks of a merged region.
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass
from typing import Any

from ssa_course.quads.analyses import liveness
from ssa_course.quads.cfg import CFG, build_cfg
from ssa_course.quads.exceptions import add_exception_edges
from ssa_course.quads.ir import Function, Instr

# Not allowed between the regions of a chain: anything that may throw or moves the
# handler stack or control elsewhere.
_NOT_QUIET = frozenset({"call", "throw", "enter", "leave", "catch", "ret", "br", "phi"})


@dataclass(slots=True)
class _Link:
    """One wrapped region of a chain: ``enter .X .H`` ending ``block``, the handler
    ``H``, the instructions of the region, and its ``leave`` (with the block it is in)."""

    block: str
    enter: Instr
    handler: str
    region: list[Instr]
    leave: tuple[str, Instr]


def merge_try_regions(fn: Function) -> Function:
    """``fn`` with chains of try regions merged wherever no path runs longer."""
    if any(i.op == "phi" for i in fn.instrs()) or not any(i.op == "enter" for i in fn.instrs()):
        return fn
    while True:  # one group at a time, with liveness recomputed: each merge removes an enter
        cfg = build_cfg(fn)
        if not _merge_one_group(cfg, fn):
            return fn
        fn = cfg.to_function()


def _walk(cfg: CFG, start: str, stop: Set[str]) -> tuple[list[Instr], str, Instr] | None:
    """Follow straight-line code from block ``start`` (which must have exactly one
    predecessor, as every later block) up to the first instruction whose op is in
    ``stop``: the instructions before it (jumps left out), its block, and it. None when the
    way ends, branches, or meets a block that another path also enters."""
    seen: set[str] = set()  # (a loop of straight blocks would walk forever)
    name = start
    instrs: list[Instr] = []
    while name not in seen:
        seen.add(name)
        block = cfg.blocks[name]
        if len(block.preds) != 1:
            return None
        for instr in block.instrs:
            if instr.op in stop:
                return instrs, name, instr
            if instr.op != "jmp":
                instrs.append(instr)
        if block.terminator is not None and block.terminator.op != "jmp":
            return None
        if len(block.succs) != 1:
            return None
        name = block.succs[0]
    return None


def _handler_ok(cfg: CFG, enter_block: str, handler: str) -> bool:
    # a handler only this ``enter`` reaches, starting with its ``catch``: merging may
    # give it another region's throws without surprising anyone else
    block = cfg.blocks.get(handler)
    return (block is not None and block.preds == [enter_block] and bool(block.instrs)
            and block.instrs[0].op == "catch")


def _chain(cfg: CFG, first: str) -> list[_Link]:
    """The chain of wrapped regions that starts with the ``enter`` ending block ``first``."""
    links: list[_Link] = []
    name = first
    while True:
        enter = cfg.blocks[name].terminator
        if enter is None or enter.op != "enter" or len(enter.labels) != 2:
            return links
        body, handler = enter.labels
        if body == handler or not _handler_ok(cfg, name, handler):
            return links
        # the region: straight code from the body to its own ``leave`` (no nested try)
        walked = _walk(cfg, body, {"leave", "enter", "catch", "throw", "ret", "br", "phi"})
        if walked is None or walked[2].op != "leave":
            return links
        region, leave_block, leave = walked
        links.append(_Link(name, enter, handler, region, (leave_block, leave)))
        # what follows the leave: quiet code, then the next enter
        block = cfg.blocks[leave_block]
        term = block.terminator
        rest = block.instrs[block.instrs.index(leave) + 1:len(block.instrs) - (term is not None)]
        if any(i.op in _NOT_QUIET for i in rest):
            return links
        if term is not None and term.op == "enter":
            name = leave_block
            continue
        if (term is not None and term.op != "jmp") or len(block.succs) != 1:
            return links
        walked = _walk(cfg, block.succs[0], _NOT_QUIET)
        if walked is None or walked[2].op != "enter" or walked[2] is not \
                cfg.blocks[walked[1]].terminator:
            return links
        name = walked[1]


def _sig(instr: Instr) -> tuple[Any, ...]:
    # everything that makes two instructions do the same thing (not their positions)
    return (instr.op, instr.dest, str(instr.type), tuple(instr.args), tuple(instr.funcs),
            tuple(instr.labels), instr.value, instr.field)


def _handler_key(cfg: CFG, name: str, skip: int = 0) -> tuple[Any, ...]:
    """What a handler block does, for comparing handlers: its instructions (without the
    first ``skip`` copies after ``catch``) and where it goes next (by a ``jmp`` or by
    falling through: the same)."""
    block = cfg.blocks[name]
    instrs = block.instrs[:1] + block.instrs[1 + skip:]
    if len(instrs) > 1 and instrs[-1].op == "jmp":
        instrs = instrs[:-1]
    return tuple(_sig(i) for i in instrs), tuple(block.succs)


def _hoistable(cfg: CFG, link: _Link, normal_live: Set[str], maybe_unset: Set[str]) -> int:
    """How many copies at the start of the link's handler may run before its ``enter``."""
    if len(link.region) != 1 or link.region[0].op != "call":
        return 0
    block = cfg.blocks[link.handler]
    caught = block.instrs[0].dest
    # A copy the handler starts with may run before the region (one call) instead: on
    # the throwing path the call wrote nothing, so the copy reads the same value earlier.
    # Allowed when the normal path does not need the destination's old value (not live
    # there) and the source is certainly assigned (an early read must not fail).
    n = 0
    for instr in block.instrs[1:]:
        if instr.op != "id" or instr.dest is None:
            break
        a, b = instr.dest, instr.args[0]
        if caught in (a, b) or a in normal_live or b in maybe_unset:
            break
        n += 1
    return n


def _call_liveness(fn: Function) -> tuple[list[frozenset[str] | None], frozenset[str]]:
    """For the k-th ``call`` of ``fn``: when it runs inside a try, the variables live right
    before it on its *normal* path (its arguments, and what is live after it except its
    destination), else None; and the variables some path may read before assigning."""
    ecfg = build_cfg(fn)
    add_exception_edges(ecfg)
    live = liveness(ecfg)
    live_in = live.top
    result: list[frozenset[str] | None] = []
    for block in ecfg.blocks.values():  # blocks and calls stay in the order of fn
        for instr in block.instrs:
            if instr.op != "call":
                continue
            if instr is block.instrs[-1] and block.throws_to is not None:
                after = live.bottom[block.name] - {instr.dest}  # the normal path
                result.append(after | set(instr.args))
            else:
                result.append(None)
    return result, live_in[ecfg.entry] - {name for name, _ in fn.params}


def _merge_one_group(cfg: CFG, fn: Function) -> bool:
    """Find the first group worth merging and merge it in ``cfg``; False when none is."""
    calls: dict[int, int] | None = None
    for name in list(cfg.blocks):
        links = _chain(cfg, name)
        if len(links) < 2:
            continue
        if calls is None:
            order = [i for b in cfg.blocks.values() for i in b.instrs if i.op == "call"]
            calls = {id(c): k for k, c in enumerate(order)}
            live, maybe_unset = _call_liveness(fn)
        hoist = []
        for link in links:
            k = calls.get(id(link.region[0])) if link.region else None
            normal = live[k] if k is not None else None
            hoist.append(0 if normal is None else _hoistable(cfg, link, normal, maybe_unset))
        for i in range(len(links) - 1):
            group = _best_group(cfg, links, i, hoist)
            if group is not None:
                _apply(cfg, links, i, *group, hoist)
                return True
    return False


def _best_group(cfg: CFG, links: list[_Link], i: int, hoist: list[int]
                ) -> tuple[int, bool] | None:
    """The links ``i..j`` to merge, as ``(j, hoisting?)``, or None when no group starting
    at ``i`` is worth it."""
    same = _handler_key(cfg, links[i].handler)
    j_same = i
    while j_same + 1 < len(links) and _handler_key(cfg, links[j_same + 1].handler) == same:
        j_same += 1
    rest = _handler_key(cfg, links[i].handler, hoist[i])
    j_hoist, j, before = i, i, hoist[i]  # before: copies hoisted before call j + 1
    while j + 1 < len(links):
        nxt = links[j + 1]
        if _handler_key(cfg, nxt.handler, hoist[j + 1]) != rest or before > 2 * (j + 1 - i):
            break  # a throw from call j + 1 would run more than before
        j += 1
        before += hoist[j]
        if before <= 2 * (j - i):  # and so would the normal path
            j_hoist = j
    saved_same = 2 * (j_same - i)
    saved_hoist = 2 * (j_hoist - i) - sum(hoist[i:j_hoist + 1])
    if j_hoist > i and saved_hoist > saved_same:
        return j_hoist, True
    if j_same > i:
        return j_same, False
    if j_hoist > i:  # as many instructions on the normal path, fewer after a throw
        return j_hoist, True
    return None


def _apply(cfg: CFG, links: list[_Link], i: int, j: int, hoisting: bool, hoist: list[int]
           ) -> None:
    """Merge the regions of links ``i..j`` into the first one (see the module doc)."""
    for k in range(i, j + 1):
        link = links[k]
        block = cfg.blocks[link.block]
        if hoisting and hoist[k]:
            handler = cfg.blocks[link.handler]
            copies = handler.instrs[1:1 + hoist[k]]
            del handler.instrs[1:1 + hoist[k]]
            at = block.instrs.index(link.enter)
            block.instrs[at:at] = copies
        if k == i:
            continue
        # the previous region's leave and this enter go; so does this handler
        leave_block, leave = links[k - 1].leave
        cfg.blocks[leave_block].instrs.remove(leave)
        block.instrs.remove(link.enter)
        block.succs = [link.enter.labels[0]]
        del cfg.blocks[link.handler]
