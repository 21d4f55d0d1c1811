"""Drawing quads CFGs with the neutral graph model of :mod:`ssa_course.viz.dot`.

:func:`cfg_to_dot` draws one CFG: a box per basic block with the block name as its header
and one instruction per left-aligned line, ``T``/``F`` on the two edges of a ``br``, a
dashed edge from an ``enter`` to its handler, and unreachable blocks greyed.
:func:`program_cfg_dot` draws the functions of a program, one framed cluster each.
"""

from __future__ import annotations

from collections.abc import Mapping

from ssa_course.quads.bril_write import format_instr
from ssa_course.quads.cfg import CFG
from ssa_course.quads.ir import Instr
from ssa_course.viz.dot import UNREACHABLE_FILL, GraphEdge, GraphNode, graph_to_dot
from ssa_course.viz.options import DrawOptions, options_or_default


def _edge_label(term: Instr | None, succ: str) -> tuple[str, str]:
    """(label, style) of the edge from a block ending in ``term`` to ``succ``."""
    if term is None or not term.labels:
        return "", "solid"  # fall-through or an unconditional jump: nothing to tell
    if term.op == "br":
        # ``br c .x .x`` takes .x either way: the one edge says T/F
        names = ["T" if succ == term.labels[0] else "", "F" if succ == term.labels[-1] else ""]
        return "/".join(n for n in names if n), "solid"
    if term.op == "enter" and len(term.labels) > 1 and succ == term.labels[1] \
            and succ != term.labels[0]:
        # the edge that keeps a handler reachable: control never takes it by itself
        return "handler", "dashed"
    return "", "solid"


def cfg_graph(cfg: CFG, prefix: str = "", cluster: str | None = None
              ) -> tuple[list[GraphNode], list[GraphEdge]]:
    """Nodes and edges of one CFG, in layout order (``prefix`` keeps ids unique when
    several functions share a picture)."""
    live = cfg.reachable()  # unreachable blocks are drawn, greyed out
    nodes = [GraphNode(prefix + block.name, header=f"{block.name}:",
                       lines=tuple(format_instr(instr) for instr in block.instrs),
                       emphasis=block.name == cfg.entry,
                       fill=None if block.name in live else UNREACHABLE_FILL,
                       cluster=cluster, kind="block")
             for block in cfg.blocks.values()]
    edges: list[GraphEdge] = []
    for block in cfg.blocks.values():
        term = block.terminator
        for succ in block.succs:
            label, style = _edge_label(term, succ)
            edges.append(GraphEdge(prefix + block.name, prefix + succ, label, style,
                                   kind="flow"))
        # the exceptional edge (quads/exceptions.py): where the block's last call may
        # throw to, dotted -- it leaves before that call, not after it
        thrown = block.throws_to
        if thrown is not None and thrown not in block.succs:
            edges.append(GraphEdge(prefix + block.name, prefix + thrown, "throws", "dotted"))
    return nodes, edges


def cfg_to_dot(cfg: CFG, title: str | None = None) -> str:
    """DOT text of one function's CFG (deterministic: blocks in layout order)."""
    nodes, edges = cfg_graph(cfg)
    return graph_to_dot(nodes, edges, title=title or f"@{cfg.function.name}", name="cfg")


def program_cfg_dot(cfgs: Mapping[str, CFG], title: str | None = None,
                    options: DrawOptions | None = None) -> str:
    """DOT text of the functions' CFGs (name -> CFG) that ``options`` picks (by default
    all of them unless they are over the node budget together, then ``main``), one
    framed cluster per function; ``around`` names a block (``L3``) of that function."""
    from ssa_course.viz.select import functions_to_dot

    # each function's drawing is made only if ``options`` picks it (a lambda per function)
    graphs = {fn: (lambda prefix, cluster, cfg=cfg: cfg_graph(cfg, prefix, cluster))
              for fn, cfg in cfgs.items()}
    return functions_to_dot(graphs, {n: len(c.blocks) for n, c in cfgs.items()}, title,
                            options_or_default(options), cluster_title=lambda fn: f"@{fn}",
                            prefix=lambda fn: f"@{fn}/", name="cfg")
