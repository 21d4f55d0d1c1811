"""Copy forwarding in blocks (the ``copies`` pass of ``ssa-course opt``).

Out of SSA, a phi becomes copies at the ends of its predecessors, and block layout then
copies small blocks into the places that jumped to them. What is left are blocks like::

    v29: int = id op2;   v30: int = id op1;   v31: int = sub v29 v30;

where the copies are read only by the instructions after them in the same block. Each
read of a copy is made a read of its source, as long as neither was written since
(``sub op2 op1``); the copies nobody reads any more are then dead, and the ``dce`` after
this pass removes them. This is the copy propagation of local value numbering (lesson 02)
without the rest of it: one walk over each function's body, a dictionary flushed at every
label and after every jump, nothing else -- so it costs almost nothing on a function
without copies (it returns at once) and is linear on any other. It never adds an
instruction: it only renames operands.
"""

from __future__ import annotations

from ssa_course.quads.ir import Function, Instr, Item, Label


def forward_copies(fn: Function) -> Function:
    """``fn`` with each read of a copy made in the same block, before the read, turned
    into a read of the copy's source (when neither changed in between)."""
    if not any(isinstance(i, Instr) and i.op == "id" for i in fn.body):
        return fn  # the cheap exit
    if any(isinstance(i, Instr) and i.op == "phi" for i in fn.body):
        return fn  # (phis read on edges: not a straight-line block)
    source: dict[str, str] = {}  # copy -> the name it copies (itself no copy here)
    copies: dict[str, set[str]] = {}  # name -> the copies of it made in this block
    body: list[Item] = []
    changed = False
    for item in fn.body:
        if isinstance(item, Label):
            source.clear()
            copies.clear()
            body.append(item)
            continue
        if source and any(a in source for a in item.args):
            item = item.renamed(source)
            changed = True
        body.append(item)
        if item.is_terminator():
            source.clear()
            copies.clear()
            continue
        dest = item.dest
        if dest is None:
            continue
        for copy in copies.pop(dest, ()):  # their source changes: no longer copies
            source.pop(copy, None)
        old = source.pop(dest, None)
        if old is not None:
            copies[old].discard(dest)
        if item.op == "id" and item.args[0] != dest:
            source[dest] = item.args[0]  # (already forwarded: never itself a copy here)
            copies.setdefault(item.args[0], set()).add(dest)
    return Function(fn.name, fn.params, fn.ret, body) if changed else fn
