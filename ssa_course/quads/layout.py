"""Block layout for fewer executed jumps (lesson 08).

Quads execute top to bottom, so the order of blocks decides how many ``jmp``s run:

* a ``jmp`` to the label right after it does nothing and goes;
* a ``jmp`` to a *small* block that ends in a branch or return is replaced by a copy of
  that block -- for a loop whose test sits at its head this is *loop rotation*: the end
  of the body tests the condition itself instead of jumping back to the test, saving one
  jump per iteration;
* a ``ret`` with no value at the very end of a function is what falling off the end does.

Blocks that take part in exception handling (``enter``, ``leave``, ``catch``, calls) are
never copied. The pass works on ordinary quads (after out-of-SSA), where redefining a
variable in the copy is fine.
"""

from __future__ import annotations

from ssa_course.quads.ir import Function, Instr, Label

MAX_COPY = 4  # instructions in a block worth copying in place of a jump
_NEVER_COPY = frozenset({"enter", "leave", "catch", "call", "phi", "throw"})


def _blocks(body: list) -> dict[str, list[Instr]]:
    blocks: dict[str, list[Instr]] = {}
    current: list[Instr] | None = None
    for item in body:
        if isinstance(item, Label):
            current = blocks.setdefault(item.name, [])
        elif current is not None:
            current.append(item)
    return blocks


def layout(fn: Function) -> Function:
    fn = _drop_unreachable(fn)
    fn = _thread_branches(fn)
    blocks = _blocks(fn.body)
    body: list = []
    for k, item in enumerate(fn.body):
        if not (isinstance(item, Instr) and item.op == "jmp"):
            body.append(item)
            continue
        target = item.labels[0]
        nxt = fn.body[k + 1] if k + 1 < len(fn.body) else None
        if isinstance(nxt, Label) and nxt.name == target:
            continue  # falls through anyway
        copy = blocks.get(target)
        if copy and len(copy) <= MAX_COPY and copy[-1].op in ("br", "ret") \
                and not any(i.op in _NEVER_COPY for i in copy) \
                and _label_before(body) != target:
            body.extend(i.copy() for i in copy)
            continue
        body.append(item)
    if body and isinstance(body[-1], Instr) and body[-1].op == "ret" and not body[-1].args \
            and fn.ret is None:
        body.pop()  # falling off the end returns too
    return Function(fn.name, fn.params, fn.ret, body)


def _drop_unreachable(fn: Function) -> Function:
    """Blocks no path from the entry reaches (e.g. a check's trap the quad now performs
    itself) are deleted."""
    from ssa_course.quads.cfg import build_cfg, remove_unreachable

    cfg = build_cfg(fn)
    if remove_unreachable(cfg):
        return cfg.to_function()
    return fn


def _thread_branches(fn: Function) -> Function:
    """A branch or jump to a block that only jumps on goes straight to the final target."""
    blocks = _blocks(fn.body)

    def final(label: str) -> str:
        seen = set()
        while label not in seen:
            seen.add(label)
            block = blocks.get(label)
            if not block or len(block) != 1 or block[0].op != "jmp":
                return label
            label = block[0].labels[0]
        return label

    body = []
    for item in fn.body:
        if isinstance(item, Instr) and item.op in ("br", "jmp"):
            item = item.copy()
            item.labels = [final(label) for label in item.labels]
        body.append(item)
    return Function(fn.name, fn.params, fn.ret, body)


def _label_before(body: list) -> str | None:
    for item in reversed(body):
        if isinstance(item, Label):
            return item.name
    return None
