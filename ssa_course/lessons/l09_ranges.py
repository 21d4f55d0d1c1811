"""Lesson 09 adds facts along edges: integer ranges found optimistically with the facts
each branch gives its sides (widening at loop phis, narrowing after), symbolic bounds
such as ``i < len(a)``, and the bounds checks they prove removed -- the ``ranges`` and
``bce`` passes, and ``son-ranges``, the graph after both, drawn with its facts."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ssa_course.compilation import Compilation
from ssa_course.lessons.faces import add_graphs, graphs_dot, graphs_lines
from ssa_course.lessons.l07_optimistic import optimistic_program
from ssa_course.registry import add_pass, build_as

if TYPE_CHECKING:  # modules are imported where they are used: a lesson loads cheaply
    from ssa_course.passes import PassState
    from ssa_course.son.bce import BceResult
    from ssa_course.son.program import SeaOfNodes
    from ssa_course.son.types import Type
    from ssa_course.viz.options import DrawOptions


def _after_sccp(comp: Compilation) -> SeaOfNodes:
    """A fresh graph after SCCP: a copy of ``son-opt``'s (built once and cached; the copy
    is node for node what building and optimizing the graph again would make)."""
    from ssa_course.son.clone import clone_program

    return clone_program(optimistic_program(comp))


def _analysed(comp: Compilation) -> tuple[SeaOfNodes, dict[str, BceResult]]:
    """A fresh graph after SCCP and ``ranges``, and every function's checks decided on
    it (the graph itself keeps its checks: what the drawing shows)."""
    from ssa_course.son.bce import decide_branches, decide_checks

    program = _after_sccp(comp)
    for fg in program.functions.values():
        decide_branches(fg)
    return program, {name: decide_checks(fg) for name, fg in program.functions.items()}


def _build(comp: Compilation) -> SeaOfNodes:
    from ssa_course.son.bce import decide_branches, eliminate_bounds_checks

    program = _after_sccp(comp)
    for fg in program.functions.values():
        proven: dict[int, int] = {}  # one analysis for both (son/bce.py's docstring)
        decide_branches(fg, proven)
        eliminate_bounds_checks(fg, proven)
    # the drawing's graph (with its checks) is another build: made when first drawn
    program.facts = _Drawing(comp)
    return program


class _Drawing:
    """What ``son-ranges`` draws, made on first use and kept."""

    def __init__(self, comp: Compilation):
        self.comp = comp
        self.made: tuple[SeaOfNodes, dict[str, BceResult]] | None = None

    def get(self) -> tuple[SeaOfNodes, dict[str, BceResult]]:
        if self.made is None:
            self.made = _analysed(self.comp)
        return self.made


def _dot(program: SeaOfNodes, title: str, options: DrawOptions | None = None) -> str:
    from ssa_course.son.draw_facts import facts_dot, facts_summary

    if program.facts is None:
        return graphs_dot(program, title, options)
    before, results = program.facts.get()
    return facts_dot(before, results, f"{title} as son-ranges: {facts_summary(results)}",
                     options)


def ranges_program(comp: Compilation) -> SeaOfNodes:
    """The graph after SCCP, ranges and bounds-check elimination (``son-ranges``), cached."""
    from ssa_course.son.program import SeaOfNodes

    return build_as(comp, "son-ranges", SeaOfNodes)


def analysis(comp: Compilation) -> dict[str, BceResult]:
    """Per function, the range analysis and the decision on every bounds check
    (a :class:`~ssa_course.son.bce.BceResult`), made on the graph before the checks go."""
    facts = ranges_program(comp).facts
    assert facts is not None, "son-ranges hangs its facts on its program"
    return facts.get()[1]


def check_stats(comp: Compilation) -> dict[str, tuple[int, int]]:
    """Bounds checks per function before and after elimination."""
    return {name: (len(r.checks), len(r.checks) - len(r.removed()))
            for name, r in analysis(comp).items()}


def join(a: Type, b: Type) -> Type:
    """Lessons 09 and 10's **join** (the start at the bottom, a merge goes up): the least
    fact true on either path -- for two ranges the smallest range holding both. The
    engine's types keep Click's names from lessons 06-07 (drawn the other way up), where
    this is ``meet``."""
    return a.meet(b)


def meet(a: Type, b: Type) -> Type:
    """Lessons 09 and 10's **meet**: what holds when both facts hold -- for two ranges
    their intersection (the engine's ``Type.join``, see :func:`join`)."""
    return a.join(b)


def machine_tests(comp: Compilation) -> tuple[int, int]:
    """Array accesses in the scheduled program, and how many still test their index in
    machine code (the others were proven in bounds). A failing path's ``aload`` (a Trap
    written as the operation that fails; its result is never read) is not an access."""
    accesses = []
    from ssa_course.lessons.l08_scheduling import scheduled_ssa_quads

    for fn in scheduled_ssa_quads(comp).functions.values():
        instrs = fn.instrs()
        read = {a for i in instrs for a in i.args}
        accesses += [i for i in instrs if i.op == "astore"
                     or i.op == "aload" and i.dest in read]
    return len(accesses), sum(1 for i in accesses if not i.in_bounds)


add_graphs("son-ranges", "sea of nodes after SCCP, integer ranges with facts along edges, "
           "and the bounds checks they prove removed", _build, dot=_dot,
           lines=graphs_lines)


@add_pass("ranges", "integer ranges with the facts of branches (widening, narrowing): "
          "ranges become node types, comparisons they decide become constants",
          ("graph",), "graph")
def _ranges(state: PassState) -> None:
    from ssa_course.son.bce import decide_branches

    program = state.graph_program()
    program.proven_checks = {}
    for fg in program.functions.values():
        # The checks the same analysis proves, for a ``bce`` right after (son/bce.py)
        proven = program.proven_checks[fg.name] = {}
        _, decided = decide_branches(fg, proven)
        state.count(fg.name, "branches decided", decided)


@add_pass("bce", "bounds-check elimination: the checks the ranges and the facts along "
          "edges prove (0 <= i < len(a)) are removed", ("graph",), "graph")
def _bce(state: PassState) -> None:
    from ssa_course.son.bce import bounds_checks, eliminate_bounds_checks

    program = state.graph_program()
    # What ``ranges`` proved holds of the graph it left: taken only right after it.
    proven = program.proven_checks if state.done[-1:] == ["ranges"] else None
    program.proven_checks = None
    for fg in program.functions.values():
        if not bounds_checks(fg):  # nothing to decide: no range analysis to pay for
            state.count(fg.name, "bounds checks", 0, 0)
            continue
        _, before, after = eliminate_bounds_checks(
            fg, None if proven is None else proven.get(fg.name))
        state.count(fg.name, "bounds checks", before, after)
