"""Block layout for fewer executed jumps (lesson 08).

Quads execute top to bottom, so the order of blocks decides how many ``jmp``s run
(``br`` names both targets and costs the same wherever they are):

* a branch or jump to a block that only jumps on goes straight to the final target, and
  blocks no path reaches any more go;
* blocks are placed in *chains*: a block ending in a ``jmp`` (or falling through) is put
  right before its target, so the jump disappears. A block can follow only one of its
  predecessors, so jumps in deeper loops get their wish first (a loop's back edge before
  the edge into the loop), and the block that falls off the end of the function stays
  last;
* a ``jmp`` to the label right after it does nothing and goes;
* a ``jmp`` to a *small* block that ends in a branch or return (or falls into one, the
  two small together) is replaced by a copy of it -- for a loop whose test sits at its
  head this is *loop rotation*: the end of the body tests the condition itself instead of
  jumping back to the test, saving one jump per iteration;
* a ``ret`` with no value at the very end of a function is what falling off the end does.

Blocks that take part in exception handling (``enter``, ``leave``, ``catch``) are never
copied (a copied ``call`` or ``throw`` is fine: the handler stack is the same at the jump
and at its target). The pass works on ordinary quads (after out-of-SSA), where redefining a
variable in the copy is fine.
"""

from __future__ import annotations

from typing import Any

from ssa_course.quads.cfg import CFG, BasicBlock, build_cfg, remove_unreachable
from ssa_course.quads.ir import Function, Instr, Label
from ssa_course.quads.loops import loop_depths

MAX_COPY = 4  # instructions in a block worth copying in place of a jump
_NEVER_COPY = frozenset({"enter", "leave", "catch", "phi"})


def _blocks(body: list[Any]) -> dict[str, list[Instr]]:
    blocks: dict[str, list[Instr]] = {}
    current: list[Instr] | None = None
    for item in body:
        if isinstance(item, Label):
            current = blocks.setdefault(item.name, [])
        elif current is not None:
            current.append(item)
    return blocks


def layout(fn: Function) -> Function:
    if any(i.op == "phi" for i in fn.instrs()):
        return fn  # phis name their predecessor blocks: the layout stays as it is
    # four steps: jumps to jumps go straight on; a block and its only successor that
    # only it reaches become one; blocks are chained so jumps fall through; small
    # targets of the jumps left are copied in their place
    # (no step changes an instruction -- blocks are joined, reordered, copied whole --
    # so the result may share ``fn``'s instruction objects: no copies made here)
    cfg = build_cfg(_thread_branches(fn), copy=False)
    remove_unreachable(cfg)  # threading may orphan jump-only blocks
    _merge_straight_runs(cfg)
    body = _chain_blocks(cfg).to_function(copy=False).body
    for _ in range(2):  # a copy may end a block a jump earlier in the body goes to
        body = _copy_small_targets(body)
    if body and isinstance(body[-1], Instr) and body[-1].op == "ret" and not body[-1].args \
            and fn.ret is None:
        body.pop()  # falling off the end returns too
    return Function(fn.name, fn.params, fn.ret, _drop_unused_labels(body))


def _copy_small_targets(body: list[Any]) -> list[Any]:
    """Each ``jmp`` to the next label goes; one to a small run ending in a branch or
    return is replaced by a copy of that run."""
    where = {item.name: k for k, item in enumerate(body) if isinstance(item, Label)}
    out: list[Any] = []
    for k, item in enumerate(body):
        if not (isinstance(item, Instr) and item.op == "jmp"):
            out.append(item)
            continue
        target = item.labels[0]
        if target in _labels_after(body, k):
            continue  # falls through anyway
        copy = _straight_run(body, where[target]) if target in where else None
        # (not a jump back to the start of the block being written: a loop's back edge
        # to itself stays a jump)
        if copy and _copyable(copy) and _label_before(out) != target:
            out.extend(i.copy() for i in copy)
            continue
        out.append(item)
    return out


def _straight_run(body: list[Any], k: int) -> list[Instr] | None:
    """What runs from the label at ``body[k]`` up to the first terminator, falling through
    the labels on the way (a block that falls into a small test is copied with it); None
    when that is longer than :data:`MAX_COPY` or runs off the end."""
    run: list[Instr] = []
    for j in range(k + 1, len(body)):  # (not ``body[k + 1:]``: a copy of the whole tail)
        item = body[j]
        if isinstance(item, Label):
            continue
        run.append(item)
        if item.is_terminator():
            return run
        if len(run) > MAX_COPY:
            return None
    return None


def _copyable(instrs: list[Instr]) -> bool:
    """A block small enough to copy in place of a jump to it, and safe to copy."""
    # it must end in a branch or an exit: a copy that fell through would need a jump
    # back, and save nothing
    return 0 < len(instrs) <= MAX_COPY and instrs[-1].op in ("br", "ret", "throw") \
        and not any(i.op in _NEVER_COPY for i in instrs)


def _merge_straight_runs(cfg: CFG) -> None:
    """A block whose only successor has no other predecessor absorbs that successor
    (the jump between them goes)."""
    for name in list(cfg.blocks):
        a = cfg.blocks.get(name)
        while a is not None and len(a.succs) == 1:
            b = cfg.blocks[a.succs[0]]
            term = a.terminator
            # not itself, not the entry (control enters it from outside), not a block
            # another edge reaches, and only across a plain jump or a fall-through
            if b is a or b.name == cfg.entry or b.preds != [a.name] \
                    or (term is not None and term.op != "jmp"):
                break
            a.instrs = (a.instrs[:-1] if term is not None else a.instrs) + b.instrs
            a.succs = b.succs
            for s in b.succs:
                cfg.blocks[s].preds = [a.name if p == b.name else p
                                       for p in cfg.blocks[s].preds]
            del cfg.blocks[b.name]


def _chain_blocks(cfg: CFG) -> CFG:
    """Order the blocks so that as many (frequently run) jumps as possible go to the next
    block. A jump to a block small enough to be copied in its place costs nothing, so
    those wishes come last; among equals, a block already placed after its target stays
    there (the schedule's order is reverse postorder, a good default)."""
    names = list(cfg.blocks)
    position = {name: k for k, name in enumerate(names)}
    depth = loop_depths(cfg)
    wishes = []  # the edges a jump (or a fall-through) takes: (source, target)
    for name, block in cfg.blocks.items():
        term = block.terminator
        if term is not None and term.op == "jmp":
            wishes.append((name, term.labels[0]))
        elif term is None and block.succs:
            wishes.append((name, block.succs[0]))

    # Greedy, like Pettis and Hansen: take the wishes in order of importance and join
    # two chains when the wish's source ends one and its target starts the other.
    def priority(edge: tuple[str, str]) -> tuple[Any, ...]:
        src, dst = edge
        return (_copyable(cfg.blocks[dst].instrs), -depth[src],
                position[dst] != position[src] + 1, position[src])

    wishes.sort(key=priority)
    chain_of = {name: [name] for name in names}  # head or tail -> its chain
    for src, dst in wishes:
        a, b = chain_of.get(src), chain_of.get(dst)
        if a is None or b is None or a is b or a[-1] != src or b[0] != dst \
                or dst == cfg.entry:
            continue
        a.extend(b)  # src stops being a tail, dst a head
        if a[0] != src:
            del chain_of[src]
        del chain_of[dst]
        chain_of[a[-1]] = a
    # each chain once (it is in the map under its head and its tail), the entry's first
    chains = list({id(c): c for c in chain_of.values()}.values())
    ordered = sorted(chains, key=lambda c: (c[0] != cfg.entry, position[c[0]]))
    # one block that leaves the function without a value may come last, where falling off
    # the end costs nothing: the last one in the present order (as in the source)
    ends = sorted((n for n, b in cfg.blocks.items() if _returns_nothing(b)),
                  key=lambda n: -position[n])
    tail = next((c for n in ends for c in ordered if n == c[-1] and c[0] != cfg.entry), None)
    if tail is not None:
        ordered.remove(tail)
        ordered.append(tail)
    blocks = type(cfg.blocks)((n, cfg.blocks[n]) for chain in ordered for n in chain)
    return CFG(cfg.function, blocks, cfg.entry)


def _returns_nothing(block: BasicBlock) -> bool:
    """The block ends the function without a value: ``ret;`` or falling off the end."""
    term = block.terminator
    if term is None:
        return not block.succs
    return term.op == "ret" and not term.args


def _drop_unused_labels(body: list[Any]) -> list[Any]:
    """Labels no jump names go (the first stays: it names the entry block)."""
    used = {lb for i in body if isinstance(i, Instr) for lb in i.labels}
    first = next((k for k, i in enumerate(body) if isinstance(i, Label)), None)
    return [i for k, i in enumerate(body)
            if not isinstance(i, Label) or i.name in used or k == first]


def _thread_branches(fn: Function) -> Function:
    """A branch or jump to a block that only jumps on goes straight to the final target."""
    blocks = _blocks(fn.body)

    resolved: dict[str, str] = {}  # label -> where its chain of jumps ends (no cycle)

    def final(label: str) -> str:
        # Memoised along the way: an else-if chain makes long chains of join blocks that
        # only jump on, and following each from scratch made this quadratic.
        seen: list[str] = []
        seen_set: set[str] = set()
        while label not in seen_set:
            if label in resolved:
                label = resolved[label]
                break
            seen.append(label)
            seen_set.add(label)
            block = blocks.get(label)
            if not block or len(block) != 1 or block[0].op != "jmp":
                break
            label = block[0].labels[0]
        else:  # a cycle of jumps: answer as before (where the walk came round), no memo
            return label
        for name in seen:
            resolved[name] = label
        return label

    body = []
    for item in fn.body:
        if isinstance(item, Instr) and item.op in ("br", "jmp"):
            labels = [final(label) for label in item.labels]
            if labels != item.labels:  # (a copy only when it changes: no step below
                item = item.copy()  # changes an instruction, see ``layout``)
                item.labels = labels
        body.append(item)
    return Function(fn.name, fn.params, fn.ret, body)


def _labels_after(body: list[Any], k: int) -> set[str]:
    """The labels right after ``body[k]`` (several labels in a row name one place)."""
    names = set()
    k += 1
    while k < len(body) and isinstance(body[k], Label):
        names.add(body[k].name)
        k += 1
    return names


def _label_before(body: list[Any]) -> str | None:
    for item in reversed(body):
        if isinstance(item, Label):
            return item.name
    return None
