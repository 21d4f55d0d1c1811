"""Escape analysis of a whole program: summaries bottom-up over the call graph, results.

:func:`analyze_program` solves every function of an IRProgram. Callees are solved before
their callers (a post-order of the call graph), each giving its callers a
:class:`~ssa_course.analysis.escape_summary.Summary`; recursion starts from the empty
summary and the whole order is repeated until no summary changes (summaries only grow --
each new one is joined with the old -- and are finite, so this ends). The result maps
every argument and statement to its :class:`~ssa_course.analysis.escape_lattice.EscapeInfo`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ssa_course.analysis.escape_classes import ELEMENTS, _Root
from ssa_course.analysis.escape_lattice import (
    ALIAS_NONE,
    ALIAS_UNKNOWN,
    FIELDS,
    NOT_ANALYZED,
    AliasInfo,
    EscapeInfo,
)
from ssa_course.analysis.escape_lattice import (
    ELEMENTS as ALIAS_ELEMENTS,
)
from ssa_course.analysis.escape_solve import FunctionSolver
from ssa_course.analysis.escape_summary import Summary, join_summaries
from ssa_course.ssa.ircode import Argument, Expr, IRCode, SSAValue, fmt


class FunctionEscapes:
    """The solved escape state of one function: ``result[value]`` is an EscapeInfo for an
    :class:`Argument` or :class:`SSAValue` (``NotAnalyzed`` for ints, bools, no value)."""

    def __init__(self, solver: FunctionSolver, summary: Summary):
        self.ir: IRCode = solver.ir
        self.solver = solver
        self.summary = summary
        self.infos: dict[object, EscapeInfo] = {}
        self._aliases: dict[int, AliasInfo] = {}  # per class root: made once, shared
        # classes a callee stored into: what it stored has no name here
        self._written_elsewhere = {solver.classes.find(w) for w in solver.written_by_callee}
        ir = solver.ir
        # Materialise every answer now: the solver works on alias classes, but a lesson (and
        # `code_escapes`) asks per value, and asking must not re-run any union-find.
        for k, name in enumerate(ir.argnames, start=1):
            self.infos[Argument(k, name)] = self._info(Argument(k, name))
        for pc in range(1, len(ir.stmts) + 1):
            self.infos[SSAValue(pc)] = self._info(SSAValue(pc))

    def _info(self, v: object) -> EscapeInfo:
        s = self.solver
        # Ints and bools cannot be stored into a heap object nor outlive a frame in a way
        # an optimizer cares about, so they stay at bottom (Julia's `NotAnalyzed` likewise).
        if not s.is_ref(v):
            return NOT_ANALYZED
        # Escape state lives on the class root: every name of one object (a phi of two
        # allocations, a PiNode, a load of the field it was stored in) gets the same answer.
        r = s.classes.find(s.n(v))
        root = s.classes.roots[r]
        alias = self._aliases.get(r)
        if alias is None:
            # A callee stored into this class: its contents now include values of the
            # callee's frame that have no name here, so we cannot list them -> Unknown.
            alias = self._aliases[r] = \
                ALIAS_UNKNOWN if r in self._written_elsewhere else self._alias(root)
        return EscapeInfo(True, root.info.returns, root.info.thrown, root.info.args,
                          root.info.everywhere, alias)

    def _alias(self, root: _Root) -> AliasInfo:
        cls = self.solver.classes
        # A collapsed class is its own contents (struct merged with array, or rearranged by
        # a call): any field may hold anything stored anywhere in it -- top.
        if root.collapsed:
            return ALIAS_UNKNOWN
        # Nothing ever stored into or loaded from it: bottom.
        if not root.shape:
            return ALIAS_NONE

        # A content node is itself a class; its members (the stored values and the loads that
        # may read them) are what the field may hold. `None` members are anonymous nodes.
        def names(node: int) -> frozenset[str]:
            return frozenset(fmt(m) for m in cls.root(node).members if m is not None)

        if ELEMENTS in root.shape:
            return AliasInfo(ALIAS_ELEMENTS, elements=names(root.shape[ELEMENTS]))
        return AliasInfo(FIELDS, fields=frozenset((f, names(c)) for f, c in root.shape.items()))

    def __getitem__(self, v: object) -> EscapeInfo:
        return self.infos.get(v, NOT_ANALYZED)

    def allocations(self) -> list[tuple[int, EscapeInfo]]:
        """``(statement, info)`` of every ``newstruct``/``newarr``, in statement order."""
        return [(pc, self.infos[SSAValue(pc)]) for pc, s in enumerate(self.ir.stmts, 1)
                if isinstance(s, Expr) and s.head in ("newstruct", "newarr")]


@dataclass
class ProgramEscapes:
    """Every function's :class:`FunctionEscapes` (by name) and the IRProgram analysed."""

    program: dict
    functions: dict[str, FunctionEscapes]
    rounds: int  # how many times the call graph was walked before summaries settled

    def __getitem__(self, name: str) -> FunctionEscapes:
        return self.functions[name]


def call_graph_postorder(program: dict) -> list[str]:
    """Function names, callees before callers where the call graph allows (an explicit
    depth-first search; a cycle is cut where it is found)."""
    callees = {name: [s.func for s in ir.stmts if isinstance(s, Expr) and s.head == "call"
                      and s.func in program] for name, ir in program.items()}
    order: list[str] = []
    seen: set[str] = set()
    # Iterative DFS (an explicit stack of iterators), so a deep call chain cannot overflow
    # Python's recursion limit. A function is appended when all its callees are done: that
    # is the post-order, and the order that lets each caller read finished summaries.
    for start in program:
        if start in seen:
            continue
        seen.add(start)
        stack = [(start, iter(callees[start]))]
        while stack:
            name, it = stack[-1]
            # A callee already `seen` but not finished is on the stack: a recursive cycle.
            # Skipping it cuts the cycle; the outer fixpoint in analyze_program repairs it.
            nxt = next((c for c in it if c not in seen), None)
            if nxt is None:
                stack.pop()
                order.append(name)
            else:
                seen.add(nxt)
                stack.append((nxt, iter(callees[nxt])))
    return order


def analyze_program(program: dict) -> ProgramEscapes:
    """Solve every function of ``program`` (an IRProgram: name -> IRCode, ``.structs``)."""
    structs = getattr(program, "structs", {})
    order = call_graph_postorder(program)
    # Every function starts from the empty summary (bottom: "escapes nothing"). That is an
    # optimistic guess, only sound because the loop below repeats until no summary grows,
    # so a recursive call is finally analysed with its own, settled, summary.
    summaries: dict[str, Summary] = {name: Summary() for name in program}
    solvers: dict[str, FunctionSolver] = {}
    rounds = 0
    changed = True
    while changed:
        changed = False
        rounds += 1
        for name in order:
            # Re-solve from scratch with the current summaries: a function's own result is
            # not reused, so nothing stale from an earlier round survives.
            solver = FunctionSolver(program[name], structs, summaries).solve()
            solvers[name] = solver
            # Joining with the old summary makes the sequence monotone even if the solver
            # found less this round; monotone + finite height = the loop terminates.
            new = join_summaries(summaries[name], solver.summary())  # never shrinks
            if new != summaries[name]:
                summaries[name] = new
                changed = True
    return ProgramEscapes(program, {name: FunctionEscapes(solvers[name], summaries[name])
                                    for name in program}, rounds)


def analyze_function(ir: IRCode, structs: dict | None = None,
                     summaries: dict[str, Summary] | None = None) -> FunctionEscapes:
    """Solve one function alone; calls use ``summaries`` (a callee without one is
    unknown: its reference operands escape everywhere)."""
    solver = FunctionSolver(ir, structs or {}, summaries or {}).solve()
    return FunctionEscapes(solver, solver.summary())
