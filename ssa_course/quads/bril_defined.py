"""Definedness, checked when a Bril program is loaded: no reachable instruction reads a
variable that no path from the start of its function assigns (a may-be-defined data-flow
problem over the basic blocks), and a function with a result type cannot run off its end.
A ``get`` reads the shadow its ``set`` writes, so it is checked the same way.
"""

from __future__ import annotations

from ssa_course.quads.bril_problem import BrilProblem
from ssa_course.quads.domtree import Dominance
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

    Growing may-be-defined sets to a fixpoint costs blocks x variables (quadratic on a big
    function), so this asks two cheaper questions instead. First, one walk of the dominator
    tree keeps the names assigned on the way down: a read of one of them is fine (nearly
    every read: a Tiny declaration dominates its uses). Only the other reads are
    *suspects*; for each suspect variable one forward search from the blocks that assign it
    finds the blocks it may reach, and a suspect read outside them is the error.
    """
    if any(i.op == "enter" for i in fn.instrs()):
        return
    blocks, succs, decided = _blocks(fn)
    end = len(blocks)
    graph = {b: [s for s in succs[b] if s != end] for b in range(end)}
    dom = Dominance(graph, 0)
    suspects = _suspects(blocks, dom, frozenset(name for name, _ in fn.params))
    reaches: dict[str, set[int]] = {}
    assigned_in: dict[str, list[int]] = {}
    if suspects:
        for b in dom.pre:
            for item in blocks[b]:
                name = _defines(item)
                if name is not None:
                    assigned_in.setdefault(name, []).append(b)
    for b, _index, var, item, what in sorted(suspects, key=lambda s: (s[0], s[1], s[4])):
        if var not in reaches:
            reaches[var] = _may_reach(assigned_in.get(var, []), graph)
        if b in reaches[var]:
            continue
        if what == 0:
            raise BrilProblem(f"'{var}' is read here but no path from the start of "
                              f"@{fn.name} assigns it", fn.name, item, "args")
        raise BrilProblem(f"'get' of '{item.dest}' but no path from the start of "
                          f"@{fn.name} runs a 'set {item.dest}' before it", fn.name, item)
    if fn.ret is not None and _reaches_end(decided):
        raise BrilProblem(f"@{fn.name} returns {fn.ret}, but control can reach its end "
                          "without 'ret'", fn.name)


def _reads(item: Instr) -> list[str]:
    if item.op == "phi":
        return []
    return item.args[1:] if item.op == "set" else item.args


def _suspects(blocks: list[list[Instr]], dom: Dominance[int], params: frozenset[str]
              ) -> list[tuple[int, int, str, Instr, int]]:
    """Reads of names not assigned earlier on the dominator-tree path to them:
    ``(block, index, name, instr, 0 for a read / 1 for a get)``."""
    out: list[tuple[int, int, str, Instr, int]] = []
    scope: set[str] = set(params)
    stack: list[tuple[int, list[str] | None]] = [(0, None)]
    while stack:
        b, added = stack.pop()
        if added is not None:  # leaving b's subtree: forget what b assigned
            scope.difference_update(added)
            continue
        mine: list[str] = []
        for index, item in enumerate(blocks[b]):
            for var in _reads(item):
                if var not in scope:
                    out.append((b, index, var, item, 0))
            if item.op == "get" and item.dest is not None:  # (shapes: a get has a dest)
                shadow = _SHADOW + item.dest
                if shadow not in scope:
                    out.append((b, index, shadow, item, 1))
            name = _defines(item)
            if name is not None and name not in scope:
                scope.add(name)
                mine.append(name)
        stack.append((b, mine))
        stack.extend((kid, None) for kid in reversed(dom.children[b]))
    return out


def _may_reach(assigned: list[int], graph: dict[int, list[int]]) -> set[int]:
    """Blocks reached along one or more edges from the (reachable) blocks ``assigned``."""
    work = list(assigned)
    seen: set[int] = set()
    while work:
        for s in graph[work.pop()]:
            if s not in seen:
                seen.add(s)
                work.append(s)
    return seen
