"""Definedness, checked when a Bril program is loaded: no reachable instruction reads a
variable that no path from the start of its function assigns (a may-be-defined data-flow
problem over the basic blocks), and a function with a result type cannot run off its end.
A ``get`` reads the shadow its ``set`` writes, so it is checked the same way.
"""

from __future__ import annotations

from ssa_course.quads.bril_problem import BrilProblem
from ssa_course.quads.ir import Function, Instr, Label


def _blocks(fn: Function) -> tuple[list[list[Instr]], list[list[int]], list[list[int]]]:
    """Basic blocks of ``fn``, their successors, and their successors when a branch on a
    condition assigned once, by a constant, goes one way only (Tiny's ``while (true)``
    lowers to that). Index ``len(blocks)`` stands for "off the end of the function"."""
    blocks: list[list[Instr]] = [[]]
    starts: dict[str, int] = {}
    for item in fn.body:
        if isinstance(item, Label):
            if blocks[-1]:
                blocks.append([])
            starts[item.name] = len(blocks) - 1
        else:
            blocks[-1].append(item)
            if item.is_terminator():
                blocks.append([])
    defs: dict[str, list[Instr]] = {}
    for item in fn.instrs():
        if item.dest is not None:
            defs.setdefault(item.dest, []).append(item)
    succs: list[list[int]] = []
    decided: list[list[int]] = []
    for b, block in enumerate(blocks):
        last = block[-1] if block else None
        if last is not None and last.op in ("jmp", "br", "enter"):
            succs.append([starts[lb] for lb in last.labels])
        elif last is not None and last.op in ("ret", "throw"):
            succs.append([])
        else:
            succs.append([b + 1])  # falls through (the last block: off the end)
        if last is not None and last.op == "br" and _constant(defs.get(last.args[0], [])):
            decided.append([starts[last.labels[0 if defs[last.args[0]][0].value else 1]]])
        else:
            decided.append(succs[-1])
    return blocks, succs, decided


def _reaches_end(succs: list[list[int]]) -> bool:
    end = len(succs)
    seen, work = {0}, [0]
    while work:
        for s in succs[work.pop()]:
            if s == end:
                return True
            if s not in seen:
                seen.add(s)
                work.append(s)
    return False


def _constant(defs: list[Instr]) -> bool:
    return len(defs) == 1 and defs[0].op == "const" and isinstance(defs[0].value, bool)


_SHADOW = "\0set "  # "set x v" defines the shadow of x: a name no variable can have


def _defines(item: Instr) -> str | None:
    return _SHADOW + item.args[0] if item.op == "set" else item.dest


def check_defined(fn: Function) -> None:
    """No reachable instruction reads a variable that no path from the entry assigns.

    Functions with ``try`` regions (``enter``) keep brilck's flow-insensitive rule: a
    handler is reached from every throwing point, which the block edges do not show.
    """
    if any(i.op == "enter" for i in fn.instrs()):
        return
    blocks, succs, decided = _blocks(fn)
    params = frozenset(name for name, _ in fn.params)
    into: list[set[str] | None] = [None] * len(blocks)
    into[0] = set(params)
    work = [0]
    while work:  # may-be-defined sets, grown to a fixpoint
        b = work.pop()
        out = set(into[b] or ())
        out.update(_defines(i) for i in blocks[b] if _defines(i) is not None)
        for s in succs[b]:
            if s == len(blocks):
                continue
            if into[s] is None or not out <= into[s]:
                into[s] = out | (into[s] or set())
                work.append(s)
    for b, block in enumerate(blocks):
        defined = into[b]
        if defined is None:
            continue  # unreachable: never runs
        for item in block:
            if item.op != "phi":
                reads = item.args[1:] if item.op == "set" else item.args
                for var in reads:
                    if var not in defined:
                        raise BrilProblem(f"'{var}' is read here but no path from the "
                                          f"start of @{fn.name} assigns it", fn.name, item,
                                          "args")
            if item.op == "get" and _SHADOW + item.dest not in defined:
                raise BrilProblem(f"'get' of '{item.dest}' but no path from the start of "
                                  f"@{fn.name} runs a 'set {item.dest}' before it", fn.name,
                                  item)
            if _defines(item) is not None:
                defined.add(_defines(item))
    if fn.ret is not None and _reaches_end(decided):
        raise BrilProblem(f"@{fn.name} returns {fn.ret}, but control can reach its end "
                          "without 'ret'", fn.name)
