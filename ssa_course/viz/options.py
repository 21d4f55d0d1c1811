"""What to draw and how hard Graphviz may try: :class:`DrawOptions`, shared by every view.

A sea of nodes of a 300-line program has a thousand nodes; drawn whole, Graphviz spends
minutes untangling edges that fan out of Start, the constants and memory, and the picture
teaches nothing. Viewers compiler engineers use (HotSpot's Ideal Graph Visualizer,
Seafoam) draw less instead, and so do we:

* ``function`` -- one function at a time (default: ``main``, or every function when the
  whole program fits in the budget);
* ``around`` + ``radius`` -- only the nodes at most ``radius`` edges away from one node
  (a sea-of-nodes id such as ``12`` or ``%12``, or a block name such as ``L3``);
* ``budget`` -- at most this many nodes; past it the drawing keeps the control spine
  first, then the nodes nearest to it, and its caption says what it left out;
* ``inline_leaves`` -- constants and parameters drawn as a small copy next to each user
  instead of as one node with edges from Start;
* ``memory`` -- memory edges ``"thin"`` (default), ``"full"`` or ``"hidden"``;
* ``blocks`` -- sea-of-nodes views: a frame around the nodes global code motion puts in
  one block;
* ``bounded`` -- layout settings that cap Graphviz's crossing minimisation and network
  simplex (see :data:`BOUNDED_LAYOUT`), and ``timeout`` -- seconds Graphviz may take.

The dataclass is neutral (no IR package imported); each producer reads what applies to it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ssa_course.errors import UsageError

DEFAULT_BUDGET = 150  # nodes: Graphviz lays this out in a fraction of a second
DEFAULT_TIMEOUT = 10.0  # seconds
MEMORY_STYLES = ("thin", "full", "hidden")

# Graphviz's documented knobs (https://graphviz.org/docs/attrs/): ``mclimit`` scales the
# crossing-minimisation iterations, ``nslimit``/``nslimit1`` cap the network-simplex
# iterations for x coordinates and ranks, ``searchsize`` caps the negative-cut edges each
# simplex step searches, ``remincross=false`` skips the second crossing pass over
# clusters, ``newrank`` ranks the whole graph at once (clusters do not cost extra passes).
BOUNDED_LAYOUT = {"mclimit": "0.3", "nslimit": "2", "nslimit1": "2", "searchsize": "20",
                  "remincross": "false", "newrank": "true"}
BOUNDED_FROM = 40  # nodes: below this Graphviz is fast anyway, keep its best layout


@dataclass(frozen=True, slots=True)
class DrawOptions:
    """How much of a representation to draw, and how (see the module docstring)."""

    function: str | None = None
    around: str | None = None
    radius: int = 2
    budget: int | None = DEFAULT_BUDGET
    inline_leaves: bool = True
    memory: str = "thin"
    blocks: bool = False
    bounded: bool = True
    timeout: float = DEFAULT_TIMEOUT

    def __post_init__(self) -> None:
        if self.function is not None and not isinstance(self.function, str):
            raise UsageError(f"function= must be a function name, not {self.function!r}")
        if self.around is not None and not isinstance(self.around, str | int):
            raise UsageError(f"around= must be a node id such as 12 or a block name, "
                             f"not {self.around!r}")
        if isinstance(self.around, int):
            object.__setattr__(self, "around", str(self.around))
        if not isinstance(self.radius, int) or self.radius < 0:
            raise UsageError(f"radius= must be a whole number >= 0, not {self.radius!r}")
        if self.budget is not None and (not isinstance(self.budget, int) or self.budget < 1):
            raise UsageError(f"budget= must be a whole number >= 1, not {self.budget!r}")
        if self.memory not in MEMORY_STYLES:
            raise UsageError(f"memory= must be one of {', '.join(MEMORY_STYLES)}, "
                             f"not {self.memory!r}")
        if not isinstance(self.timeout, int | float) or self.timeout <= 0:
            raise UsageError(f"timeout= must be a number of seconds > 0, not {self.timeout!r}")

    def pick_functions(self, names: list[str], sizes: dict[str, int]) -> list[str]:
        """The functions to draw out of ``names`` (``sizes``: nodes per function): the one
        asked for, else every function when they fit the budget together, else ``main``
        (else the first). An unknown name is a :class:`UsageError` listing the known ones."""
        if self.function is not None:
            if self.function not in names:
                raise UsageError(f"function={self.function!r}: no such function "
                                 f"(known: {', '.join(names)})")
            return [self.function]
        if self.around is None and (self.budget is None
                                    or sum(sizes.values()) <= self.budget):
            return list(names)
        return ["main"] if "main" in names else names[:1]


def options_or_default(options: DrawOptions | None) -> DrawOptions:
    return DrawOptions() if options is None else options
