"""Copy coalescing after out-of-SSA (lesson 08).

Leaving SSA puts a copy on every edge into a phi: ``i.2 = add i.1 one; ...; i.1 = id
i.2`` at the end of a loop body. When the copied value has no other use and nothing
between its definition and the copy touches the destination, the two names can be one:
the definition writes ``i.1`` directly and the copy disappears -- one instruction less
per iteration. That is all this pass does, block by block; a copy it cannot prove
harmless to remove stays.
"""

from __future__ import annotations

from collections import Counter

from ssa_course.quads.ir import Function, Instr, Label


def coalesce_copies(fn: Function) -> Function:
    uses: Counter[str] = Counter()
    defs: Counter[str] = Counter()
    for item in fn.body:
        if isinstance(item, Instr):
            uses.update(item.args)
            if item.dest is not None:
                defs[item.dest] += 1
    params = {name for name, _ in fn.params}
    body = [i.copy() if isinstance(i, Instr) else i for i in fn.body]
    renamed = _rename_copied_params(fn, body, uses, defs)
    params -= set(renamed)
    start = 0
    while start < len(body):  # one block at a time: from a label to the next
        end = start + 1
        while end < len(body) and not isinstance(body[end], Label):
            end += 1
        _coalesce_block(body, start, end, uses, defs, params)
        start = end
    new_params = [(renamed.get(name, name), t) for name, t in fn.params]
    return Function(fn.name, new_params, fn.ret, [i for i in body if i is not None])


def _rename_copied_params(fn: Function, body: list, uses: Counter, defs: Counter
                          ) -> dict[str, str]:
    """``a = id p`` at the top of the function, where parameter ``p`` has no other use:
    the parameter can simply be called ``a`` (arguments are positional). ``main`` keeps
    its parameter names: they name the command-line arguments in error messages."""
    if fn.name == "main":
        return {}
    params = [name for name, _ in fn.params]
    renamed: dict[str, str] = {}
    touched: set[str] = set()
    for k, item in enumerate(body):
        if isinstance(item, Label):
            if k > 0:
                break  # only the entry block, before any label but its own
            continue
        if not isinstance(item, Instr) or item.op in ("call", "enter", "throw"):
            break
        if item.op == "id" and item.args[0] in params and uses[item.args[0]] == 1 \
                and defs[item.args[0]] == 0 and item.dest not in touched \
                and item.dest not in params and item.dest not in renamed.values():
            renamed[item.args[0]] = item.dest
            body[k] = None
            continue
        touched.update(item.args)
        if item.dest is not None:
            touched.add(item.dest)
    return renamed


def _coalesce_block(body: list, start: int, end: int, uses: Counter, defs: Counter,
                    params: set[str]) -> None:
    for k in range(start, end):
        copy = body[k]
        if not isinstance(copy, Instr) or copy.op != "id":
            continue
        a, b = copy.dest, copy.args[0]
        if a == b or b in params or uses[b] != 1 or defs[b] != 1 or copy.type is None:
            continue
        # find b's definition earlier in this block, with nothing touching a in between
        j = k - 1
        while j >= start:
            item = body[j]
            if isinstance(item, Instr) and item.dest == b:
                break
            if isinstance(item, Instr) and (item.dest == a or a in item.args
                                            or item.op in ("call", "throw", "enter")):
                j = start - 1  # a touches a, or may throw to a handler that reads a
                break
            j -= 1
        if j < start:
            continue
        definition = body[j]
        if definition.op in ("phi", "catch"):
            continue
        definition.dest = a
        defs[a] += 1
        body[k] = None
