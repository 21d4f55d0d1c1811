"""The interference graph: which values may not share a register.

Nodes are the function's virtual registers plus the physical registers of the palette
that the code names (precoloured nodes: ``rdi`` before a call, ``rax`` around ``idiv``).
Walking each block backwards from its live-out set, every register an instruction
*defines* interferes with every register live right after it -- except, for a copy
``mov d, s``, the source ``s``: the two hold the same value, so they may share a register
and the copy disappears (that is what coalescing tries). Copies are kept aside as *move
edges* with the weight ``10**loop_depth`` of their block. Two physical registers always
interfere; those edges are implied, never stored.

A call's ``defs`` list every caller-saved register, so a value live across a call
interferes with all of them and can only get a callee-saved register (or a slot).

:meth:`InterferenceGraph.text` is a stable text form; :func:`interference_dot` draws the
graph coloured by assigned register, spilled nodes as red boxes, move edges dashed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ssa_course.codegen.liveness import Liveness, loop_depths
from ssa_course.codegen.mir import MFunction, PReg, Reg, VReg
from ssa_course.codegen.target import default_register_file

if TYPE_CHECKING:
    from ssa_course.viz.render import Drawing


@dataclass(frozen=True, slots=True)
class Move:
    """A copy ``mov dst, src`` between two graph nodes, ``weight`` = 10**loop depth."""

    dst: Reg
    src: Reg
    weight: int
    block: str


def node_key(r: Reg) -> tuple[int, int, str]:
    """The stable order of nodes: physical registers (by name), then virtual by number."""
    return (1, r.id, "") if isinstance(r, VReg) else (0, 0, r.name)


class InterferenceGraph:
    """``adj`` maps each node to its neighbours; ``moves`` the copies between nodes;
    ``weights`` each vreg's (defs + uses) counted ``10**loop_depth`` each (the numerator
    of the spill cost); ``edge_steps`` counts edge insertions (a measure of work)."""

    __slots__ = ("name", "registers", "adj", "moves", "weights", "edge_steps")

    def __init__(self, name: str, registers: Iterable[str]):
        self.name = name
        self.registers = tuple(registers)
        self.adj: dict[Reg, set[Reg]] = {}
        self.moves: list[Move] = []
        self.weights: dict[VReg, int] = {}
        self.edge_steps = 0

    # A physical register outside the palette (rsp, rbp, a withheld register) is never a
    # node: no value can be given it, so there is nothing for an edge to forbid.
    def is_node(self, r: Reg) -> bool:
        return isinstance(r, VReg) or r.name in self.registers

    def add_node(self, r: Reg) -> None:
        if r not in self.adj and self.is_node(r):
            self.adj[r] = set()

    def add_edge(self, a: Reg, b: Reg) -> None:
        self.edge_steps += 1
        # No self-loops (a value does not conflict with itself), and no edge between two
        # machine registers: they differ by construction, and storing those K*(K-1)/2 edges
        # would only inflate every precoloured node's degree.
        if a is b or a == b or isinstance(a, PReg) and isinstance(b, PReg):
            return
        if a not in self.adj or b not in self.adj:  # a register outside the palette
            return
        self.adj[a].add(b)
        self.adj[b].add(a)

    def interferes(self, a: Reg, b: Reg) -> bool:
        # Answers for the implied edges too, so callers need not know they are not stored.
        if isinstance(a, PReg) and isinstance(b, PReg):
            return a != b
        return b in self.adj.get(a, ())

    def nodes(self) -> list[Reg]:
        return sorted(self.adj, key=node_key)

    def vregs(self) -> list[VReg]:
        return [n for n in self.nodes() if isinstance(n, VReg)]

    def edges(self) -> list[tuple[Reg, Reg]]:
        """Every stored edge once, in node order."""
        out: list[tuple[Reg, Reg]] = []
        for a in self.nodes():
            ka = node_key(a)
            out.extend((a, b) for b in sorted(self.adj[a], key=node_key) if node_key(b) > ka)
        return out

    def text(self) -> str:
        """Stable text: one line per node with its neighbours, then the moves."""
        lines = [f"interference @{self.name}"]
        for n in self.nodes():
            kids = " ".join(str(b) for b in sorted(self.adj[n], key=node_key))
            lines.append(f"  {n}: {kids}".rstrip())
        if self.moves:
            lines.append("moves:")
            lines.extend(f"  {m.dst} <- {m.src}  (weight {m.weight}, {m.block})"
                         for m in self.moves)
        return "\n".join(lines) + "\n"


def build_interference(fn: MFunction, registers: Iterable[str] | None = None,
                       liveness: Liveness | None = None,
                       depths: Mapping[str, int] | None = None) -> InterferenceGraph:
    """The interference graph of ``fn`` (see the module docstring); ``registers`` default
    to the default machine's allocatable ones."""
    if registers is None:
        registers = default_register_file().allocatable
    liveness = liveness or Liveness(fn)
    depths = depths if depths is not None else loop_depths(fn)
    graph = InterferenceGraph(fn.name, registers)
    # First pass: every node and its spill weight. A value defined and never read still
    # needs a register for its def, so it must be a node even if it interferes with nothing.
    for block in fn.blocks:
        weight = 10 ** depths.get(block.label, 0)
        for instr in block.instrs:
            for r in (*instr.defs, *instr.uses):
                graph.add_node(r)
                if isinstance(r, VReg):
                    graph.weights[r] = graph.weights.get(r, 0) + weight
    # Second pass: edges. Chaitin's rule -- a definition interferes with what is live after
    # it -- gives fewer edges than "two live ranges overlap" and is enough: two values
    # whose ranges overlap always have one defined while the other is live.
    for block in fn.blocks:
        weight = 10 ** depths.get(block.label, 0)
        live = set(liveness.live_out[block.label])
        moves: list[Move] = []
        for instr in reversed(block.instrs):
            source: Reg | None = None
            pair = instr.copy_pair()
            if pair is not None:
                dst, source = pair
                if dst in graph.adj and source in graph.adj and dst != source:
                    moves.append(Move(dst, source, weight, block.label))
            defs = instr.defs
            # `live` is "live after instr" here: we have not yet moved past it backwards.
            for d in defs:
                for r in live:
                    if r is not source:
                        graph.add_edge(d, r)
            if len(defs) > 1:  # values written together are all live at once
                for i, d in enumerate(defs):
                    for e in defs[i + 1:]:
                        graph.add_edge(d, e)
            # Step to "live before instr", as liveness.live_after does.
            live.difference_update(defs)
            live.update(instr.uses)
        graph.moves.extend(reversed(moves))  # program order, as the listing shows them
    return graph


# ---------------------------------------------------------------- drawing

# One light fill per register, so the picture reads as "same colour = same register"
# (the default machine's own table; another target's registers get a fill from their name).
_PALETTE = ("#ffb3ba", "#ffdfba", "#ffffba", "#baffc9", "#bae1ff", "#e0bbff", "#ffc8e6",
            "#c9f2ef", "#f2e1c9", "#d4f0a8", "#a8d4f0", "#f0a8d4", "#d9d9ff", "#ffe0a8")


def register_fill(name: str) -> str:
    """The fill of register ``name`` in a drawing (the same in every process)."""
    fill = default_register_file().fills.get(name)
    if fill is not None:
        return fill
    # From the register's number, not hash(name): string hashes vary per process, and a
    # notebook's picture must not change colour between two runs.
    digits = "".join(ch for ch in name if ch.isdigit())
    return _PALETTE[int(digits) % len(_PALETTE)] if digits else "#dddddd"


SPILL_COLOR = "#c00000"


def _q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def interference_dot(graph: InterferenceGraph, colouring: Mapping[VReg, str] | None = None,
                     spilled: Iterable[VReg] = (), title: str | None = None) -> str:
    """DOT text (undirected) of ``graph``: a vreg is an ellipse filled with the colour of
    its register (``colouring``) and labelled ``%3.x / rbx``; a spilled vreg is a red
    dashed box labelled ``spill``; a physical register is a filled double circle;
    interference edges are solid, move edges dashed (blue). Deterministic."""
    colouring = colouring or {}
    spilled = set(spilled)
    # Node ids by position in the sorted node list, so the DOT text is byte-stable (the
    # tests compare it) whatever the allocation history.
    nodes = graph.nodes()
    ids = {n: f"n{k}" for k, n in enumerate(nodes)}
    lines = [f"graph {_q('interference_' + graph.name)} {{",
             "  layout=neato; overlap=false; fontname=monospace;",
             "  node [fontname=monospace, fontsize=10, style=filled, fillcolor=white];",
             "  edge [color=\"#555555\"];"]
    if title is not None or graph.name:
        lines.append(f"  label={_q(title if title is not None else '@' + graph.name)}; "
                     "labelloc=t;")
    for n in nodes:
        if isinstance(n, PReg):
            fill = register_fill(n.name)
            lines.append(f"  {ids[n]} [label={_q(n.name)}, shape=doublecircle, "
                         f"fillcolor={_q(fill)}];")
        elif n in spilled:
            label = _q(f"{n}")[:-1] + '\\nspill"'
            lines.append(f"  {ids[n]} [label={label}, shape=box, "
                         f"style=\"filled,dashed\", color={_q(SPILL_COLOR)}, "
                         f"fontcolor={_q(SPILL_COLOR)}, fillcolor=\"#fff0f0\"];")
        elif n in colouring:
            reg = colouring[n]
            fill = register_fill(reg)
            label = _q(f"{n}")[:-1] + "\\n" + reg + '"'
            lines.append(f"  {ids[n]} [label={label}, shape=ellipse, "
                         f"fillcolor={_q(fill)}];")
        else:
            lines.append(f"  {ids[n]} [label={_q(str(n))}, shape=ellipse];")
    for a, b in graph.edges():
        lines.append(f"  {ids[a]} -- {ids[b]};")
    # One dashed edge per pair, even when several copies join the same two values; and
    # constraint=false so move edges do not pull the layout the way interference does.
    seen: set[tuple[str, str]] = set()
    for m in graph.moves:
        low, high = sorted((ids[m.dst], ids[m.src]))
        if (low, high) in seen:
            continue
        seen.add((low, high))
        lines.append(f"  {low} -- {high} [style=dashed, color=\"#1f5fbf\", "
                     "constraint=false];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def interference_drawing(graph: InterferenceGraph, colouring: Mapping[VReg, str] | None = None,
                         spilled: Iterable[VReg] = (), title: str | None = None
                         ) -> Drawing:
    """:func:`interference_dot` wrapped in a :class:`~ssa_course.viz.render.Drawing`
    (SVG/PNG in a notebook)."""
    from ssa_course.viz.render import Drawing

    return Drawing(interference_dot(graph, colouring, spilled, title))
