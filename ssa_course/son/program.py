"""The sea-of-nodes containers: one function's graph (:class:`FunctionGraph`) and a whole
program (:class:`SeaOfNodes`, one graph per function) with the four faces notebooks use
(``text``, ``draw``, ``verify``, ``run``), and :func:`lattice_type` (a Tiny type's bottom
in the lattice). The builders (:mod:`~ssa_course.son.build`, :mod:`~ssa_course.son.from_ssa`)
make them; everything after reads them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from ssa_course.son.control import Start, Stop
from ssa_course.son.graph import Graph, Node
from ssa_course.son.peephole import PeepholeStats
from ssa_course.son.types import BOOL_BOTTOM, FLOAT_BOTTOM, INT_BOTTOM, Type, ref, tuple_of
from ssa_course.tiny import types as tt

if TYPE_CHECKING:  # the drawing module is imported where a drawing is made
    from ssa_course.son.bce import BceResult
    from ssa_course.viz.render import Drawing


def lattice_type(t: tt.Type | None) -> Type:
    """The bottom of a Tiny type's lattice (what a value of that type could be)."""
    # The bottom, not the top: a parameter or a declared variable may hold any value of its
    # type until something proves more.
    if isinstance(t, tt.IntType):
        return INT_BOTTOM
    if isinstance(t, tt.BoolType):
        return BOOL_BOTTOM
    if isinstance(t, tt.FloatType):
        return FLOAT_BOTTOM
    # No value: the empty tuple (a void call's result type).
    if t is None or isinstance(t, tt.VoidType):
        return tuple_of()
    return ref(str(t))


@dataclass
class FunctionGraph:
    """One function as a graph: its Start and Stop, and what building it found."""

    name: str
    graph: Graph
    start: Start
    stop: Stop
    params: list[tuple[str, tt.Type]]
    returns: tt.Type | None
    optimized: bool
    stats: PeepholeStats = field(default_factory=PeepholeStats)

    # Live nodes only, in id order: every pass that lists nodes sees the same order, so
    # output and drawings are deterministic.
    def nodes(self) -> list[Node]:
        return self.graph.live_nodes()


class RangeFacts(Protocol):
    """What lesson 09's ``son-ranges`` hangs on its program (``SeaOfNodes.facts``)."""

    def get(self) -> tuple[SeaOfNodes, dict[str, BceResult]]:
        """The graph before the checks went, and each function's analysis and decisions
        on it (made on first use): what the drawing shows."""
        ...


@dataclass
class SeaOfNodes:
    """A whole program: one graph per function (``main`` is the entry)."""

    functions: dict[str, FunctionGraph]
    source: str = ""
    optimized: bool = True
    # set by SCCP (lesson 07): what the optimistic pass added on top of the parser's
    sccp_counts: dict[str, int] | None = None
    # set by lesson 09's ``son-ranges``: its ``get()`` gives (the graph before the checks
    # went, the analysis of each function) -- what the drawing shows
    facts: RangeFacts | None = None
    # set by the ``ranges`` pass: per function, the bounds checks its analysis proved
    # (If id -> InBounds id), which a ``bce`` right after takes instead of solving again
    proven_checks: dict[str, dict[int, int]] | None = None

    @property
    # Which stage made the graph, as the lessons name it: raw (peepholes off), pessimistic
    # (peepholes while parsing), optimistic (SCCP ran).
    def mode(self) -> str:
        if self.sccp_counts is not None:
            return "optimistic"
        return "pessimistic" if self.optimized else "raw"

    def node_count(self) -> int:
        return sum(len(f.nodes()) for f in self.functions.values())

    def edge_count(self) -> int:
        return sum(f.graph.edge_count() for f in self.functions.values())

    def constants_found(self) -> int:
        """Nodes turned into constants: while parsing, plus by SCCP when it ran."""
        # The parser's count lives on each function, SCCP's on the program: both are added.
        extra = (self.sccp_counts or {}).get("constants", 0)
        return sum(f.stats.constants_found for f in self.functions.values()) + extra

    # the four faces, for notebooks: print, draw, check, run
    # Imported where used: the printer, verifier and interpreter import this module.
    def text(self) -> str:
        from ssa_course.son.printer import format_graphs

        return format_graphs(self)

    def dot(self) -> str:
        from ssa_course.son.printer import graphs_to_dot

        return graphs_to_dot(self)

    def draw(self) -> Drawing:
        from ssa_course.viz.render import Drawing

        return Drawing(self.dot())

    def verify(self) -> None:
        from ssa_course.son.verify import verify_graphs

        verify_graphs(self)

    def run(self, *args: object) -> str:
        """Run ``main`` with Python values as arguments; returns what it printed."""
        from ssa_course.runtime import Output
        from ssa_course.son.interp import run_graphs

        out = Output()
        run_graphs(self, list(args), out)
        return out.text()

    def __str__(self) -> str:
        return self.text()
