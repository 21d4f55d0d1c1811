"""The backward walk of one function, step by step (lesson 10's replay slider).

:func:`trace_function` solves a function the way
:class:`~ssa_course.analysis.escape_solve.FunctionSolver` does -- statements last to
first, then the worklist that passes a container's escape to its contents -- and keeps a
snapshot of every value's :class:`~ssa_course.analysis.escape_lattice.EscapeInfo` after
each step. Calls use the summaries the whole-program analysis settled on, so the last
snapshot equals the function's final result (``tests/test_escape_trace.py`` checks it).
The engine is reused, not copied: the tracer only changes the order in which it asks for
snapshots.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ssa_course.analysis.escape import FunctionEscapes, ProgramEscapes
from ssa_course.analysis.escape_solve import FunctionSolver
from ssa_course.analysis.escape_summary import EMPTY
from ssa_course.ssa.ircode import IRCode
from ssa_course.ssa.julia import format_ir

_BOX = re.compile(r"^[\d\s─│└┄]+")  # block number and tree drawing in front of a statement


@dataclass(frozen=True, slots=True)
class TraceStep:
    """One step of the walk: ``pc`` the statement just visited (``None`` for the start and
    for the worklist phase), ``what`` a one-line caption, ``escapes`` every value's state
    after the step (a :class:`FunctionEscapes`), ``changed`` the values whose glyph moved."""

    pc: int | None
    what: str
    escapes: FunctionEscapes
    changed: tuple[str, ...]


def _glyphs(fe: FunctionEscapes) -> dict[str, str]:
    from ssa_course.ssa.ircode import fmt

    return {fmt(v): info.glyph() for v, info in fe.infos.items()}


# A subclass, not a copy of the rules: the tracer calls the very transfer() and
# propagate() the analysis uses, so what the lesson animates is what the analysis does.
class _Tracer(FunctionSolver):
    """A solver that records a snapshot after each statement and after the worklist (the
    steps of :meth:`FunctionSolver.solve`, taken one at a time)."""

    def run(self) -> list[TraceStep]:
        ir = self.ir
        # The three phases of FunctionSolver.solve (parameters, backward sweep, worklist),
        # each the solver's own method, with a snapshot between steps.
        self.mark_params()
        text = format_ir(ir).rstrip("\n").split("\n")
        listing = {pc: line for pc, line in zip(_pcs(ir), text[1:], strict=False) if pc}
        steps = [self._snap(None, "start: every reference NoEscape, nothing else known", {})]
        for pc in self.statements():
            self.transfer(pc)
            line = _BOX.sub("", listing.get(pc, "")).strip()
            steps.append(self._snap(pc, f"visit %{pc}: {line}", _glyphs(steps[-1].escapes)))
        self.propagate()
        steps.append(self._snap(None, "worklist: each container passes its escape to its "
                                      "contents", _glyphs(steps[-1].escapes)))
        return steps

    def _snap(self, pc: int | None, what: str, before: dict[str, str]) -> TraceStep:
        # FunctionEscapes reads the classes as they are now and copies every answer, so a
        # snapshot stays as it was while the tracer goes on (EMPTY: no summary mid-walk).
        fe = FunctionEscapes(self, EMPTY)
        now = _glyphs(fe)
        changed = tuple(sorted(v for v, g in now.items() if before and before.get(v) != g))
        return TraceStep(pc, what, fe, changed)


def _pcs(ir: IRCode) -> list[int | None]:
    """The statement number of each line of ``format_ir`` after the header (blocks that
    hold no statement print one line of their own)."""
    out: list[int | None] = []
    for blk in ir.blocks:
        if blk.stop < blk.start:
            out.append(None)
        else:
            out.extend(range(blk.start, blk.stop + 1))
    return out


def trace_function(result: ProgramEscapes, name: str) -> list[TraceStep]:
    """The steps of the backward walk over function ``name`` of an analysed program,
    calls read through the settled summaries."""
    # Calls read the *settled* summaries: the trace replays the last round of
    # analyze_program for one function, which is the round whose result the lesson shows.
    fe = result[name]
    summaries = {n: f.summary for n, f in result.functions.items()}
    return _Tracer(fe.ir, getattr(result.program, "structs", {}), summaries).run()


def step_text(step: TraceStep) -> str:
    """The function's glyph listing after ``step``, the visited statement marked ``▶``."""
    from ssa_course.analysis.escape_print import function_lines

    lines = function_lines(step.escapes)[:-1]  # the summary line speaks of the end only
    out = [lines[0]]
    for pc, line in zip(_pcs(step.escapes.ir), lines[1:], strict=False):
        mark = "▶ " if pc is not None and pc == step.pc else "  "
        out.append(mark + line)
    return "\n".join(out)


def step_dot(result: ProgramEscapes, step: TraceStep, title: str | None = None) -> str:
    """DOT of the function's blocks after ``step``, each filled by its worst glyph so far."""
    from ssa_course.analysis.escape_print import escapes_to_dot

    fe = step.escapes
    return escapes_to_dot(ProgramEscapes(result.program, {fe.ir.name: fe}, result.rounds),
                          title if title is not None else step.what)
