"""Drawings for exercise 11 (register allocation): a wrong answer next to the expected one.

The tasks work on :class:`~ssa_course.codegen.mir_data.FunctionData` (machine IR as
names); these helpers draw what a learner returned -- live sets on the machine CFG, an
interference graph given as name pairs, a colouring -- with the engine's own drawings.
Every helper accepts any value as the learner's answer: what cannot be read is shown as
such, never raised (a drawing must not hide the failure message).

No answer to a task lives here: the exercise keeps its expected answers as data and its
references in hidden tests, and :mod:`ssa_course.grading.forbid` refuses an answer that
calls into ``ssa_course``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ssa_course.codegen.interference import interference_drawing
from ssa_course.codegen.mir_data import FunctionData, named_graph
from ssa_course.viz.dot import GraphEdge, GraphNode, graph_drawing
from ssa_course.viz.render import Drawing

MAX_SHOWN = 12  # instructions listed per block; a longer block is cut (the sets matter)


def names_text(names: object) -> str:
    """``{%1.n, rdi}``: a set of names sorted, or the value itself if it is no set."""
    if isinstance(names, (set, frozenset, list, tuple)):
        try:
            return "{" + ", ".join(sorted(str(n) for n in names)) + "}"
        except Exception:  # a learner's element whose str() fails
            return "(unreadable)"
    return f"(not a set: {type(names).__name__})"


def _entry(table: object, label: str) -> object:
    if isinstance(table, Mapping):
        return table.get(label, "(missing)")
    return "(no table)"


def _pair(answer: object) -> tuple[object, object]:
    if isinstance(answer, tuple) and len(answer) == 2:
        return answer
    return ({}, {}) if isinstance(answer, BaseException) else (answer, answer)


def draw_live_sets(data: FunctionData, answer: object,
                   expected: tuple[Mapping, Mapping] | None = None,
                   title: str = "live-in and live-out sets") -> Drawing:
    """The machine CFG, each block with its instructions between its live-in and live-out
    sets as ``answer`` (``(live_in, live_out)``) says; a block whose sets differ from
    ``expected`` is filled red."""
    got_in, got_out = _pair(answer)
    nodes, edges = [], []
    for label, instrs in data.blocks.items():
        shown_in = names_text(_entry(got_in, label))
        shown_out = names_text(_entry(got_out, label))
        body = [f"  {i.text}" for i in instrs[:MAX_SHOWN]]
        if len(instrs) > MAX_SHOWN:
            body.append(f"  ... {len(instrs) - MAX_SHOWN} more")
        wrong = expected is not None and (
            shown_in != names_text(expected[0].get(label, set()))
            or shown_out != names_text(expected[1].get(label, set())))
        nodes.append(GraphNode(label, header=label,
                               lines=(f"in  {shown_in}", *body, f"out {shown_out}"),
                               emphasis=label == data.entry,
                               fill="#ffc9c9" if wrong else None))
        edges += [GraphEdge(label, s) for s in data.succs.get(label, ()) if s in data.blocks]
    return graph_drawing(nodes, edges, title=title)


def registers_of(data: FunctionData) -> list[str]:
    """Every register name the function's instructions write or read, in order."""
    seen: dict[str, None] = {}
    for instrs in data.blocks.values():
        for i in instrs:
            seen.update(dict.fromkeys((*i.defs, *i.uses)))
    return list(seen)


def _edge_pairs(edges: object) -> list[tuple[str, str]]:
    """The name pairs of an answer's edges; elements that are no pair of names are
    left out (the message already says what is wrong)."""
    out = []
    if isinstance(edges, (set, frozenset, list, tuple)):
        for e in edges:
            if isinstance(e, (set, frozenset, tuple, list)) and len(e) == 2:
                a, b = sorted(e, key=str)
                if isinstance(a, str) and isinstance(b, str):
                    out.append((a, b))
    return out


def draw_edges(data: FunctionData, edges: object, registers: Iterable[str] | None = None,
               title: str | None = None) -> Drawing:
    """The interference graph given by ``edges`` (pairs of names), drawn by the engine:
    every register of ``data`` a node, physical ones as double circles, copies dashed."""
    copies = [i.copy for instrs in data.blocks.values() for i in instrs if i.copy]
    kwargs = {"registers": tuple(registers)} if registers is not None else {}
    graph, _ = named_graph(data.name, registers_of(data), _edge_pairs(edges), copies,
                           **kwargs)
    return interference_drawing(graph, title=title or f"@{data.name}")


def draw_colouring(data: FunctionData, adj: Mapping[str, Iterable[str]], answer: object,
                   registers: Iterable[str], title: str | None = None) -> Drawing:
    """The interference graph ``adj`` coloured by an answer ``(colouring, spilled)``:
    each value filled with its register's colour, spilled values as red boxes."""
    colouring, spilled = _pair(answer)
    edges = [(a, b) for a, bs in adj.items() for b in bs if str(a) < str(b)]
    copies = [i.copy for instrs in data.blocks.values() for i in instrs if i.copy]
    graph, regs = named_graph(data.name, list(adj), edges,
                              [c for c in copies if c[0] in adj and c[1] in adj],
                              tuple(registers))
    shown: dict = {}
    if isinstance(colouring, Mapping):
        shown = {regs[n]: str(r) for n, r in colouring.items()
                 if isinstance(n, str) and n in regs}
    gone: list[Any] = [regs[n] for n in spilled if isinstance(n, str) and n in regs] \
        if isinstance(spilled, (list, tuple, set)) else []
    return interference_drawing(graph, shown, gone, title=title or f"@{data.name}")
