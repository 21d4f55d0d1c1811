"""Helpers for exercise 09 (ranges and bounds checks): the engine's range transfers as
plain data, and a number line that draws ranges side by side.

The exercise works on plain pairs ``(lo, hi)`` of Python ints (``None``: the empty range,
a side of a branch control never takes). :func:`engine_add` and :func:`engine_branch` ask
the course's engine (:mod:`ssa_course.son.intervals`, the fact narrowing of
:class:`~ssa_course.son.range_facts.RangeAnalysis`) the same questions and answer in that
form; they serve the hidden tests and the table builder, and an answer that calls them is
refused by :mod:`ssa_course.grading.forbid`. No answer to a task lives here.

:class:`NumberLine` is the picture a wrong answer is shown with: one bar per range on an
axis whose ticks are the ranges' own ends in order (64-bit ends such as ``INT_MAX`` and a
length such as ``10`` cannot share a linear scale). It renders as SVG in a notebook and as
text elsewhere.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import cast

from ssa_course.son import intervals
from ssa_course.son.edge_facts import Fact
from ssa_course.son.range_facts import DEPTH, RangeAnalysis
from ssa_course.son.types import INT_MAX, INT_MIN, IntType

Pair = tuple[int, int]
OPS = ("<", "<=", ">", ">=", "==", "!=")


def as_pair(r: IntType) -> Pair | None:
    """An engine range as a pair; None for the empty range."""
    return None if r.lo > r.hi else (r.lo, r.hi)


def as_range(p: Pair | None) -> IntType:
    """A pair as an engine range (None: the empty one)."""
    return IntType("int", 1, 0) if p is None else IntType("int", p[0], p[1])


def engine_add(a: Pair, b: Pair) -> Pair | None:
    """What the engine's transfer of ``+`` gives for operands in ``a`` and ``b``."""
    return as_pair(intervals.add(as_range(a), as_range(b)))


class _Other:
    """The right-hand side of a fact, whose range is what the caller says."""

    __slots__ = ("range",)

    def __init__(self, r: IntType):
        self.range = r

    def range_of(self, _node: object) -> IntType:
        return self.range


def engine_narrow(x: Pair, op: str, y: Pair) -> Pair | None:
    """The range of ``i`` (in ``x``) where ``i op n`` holds, ``n`` in ``y``: the engine's
    own narrowing by a fact, asked with its operands' ranges given."""
    if op not in OPS:
        raise ValueError(f"not a comparison: {op!r}")
    given = _Other(as_range(y))
    fact = Fact(None, None, 0, op, given)  # type: ignore[arg-type]
    # depth DEPTH: the other side's range is read as it is (range_of), not re-derived
    return as_pair(RangeAnalysis._apply(given, as_range(x), fact, None, DEPTH))  # type: ignore[arg-type]


NEGATE = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}


def engine_branch(x: Pair, op: str, y: Pair) -> tuple[Pair | None, Pair | None]:
    """The ranges of ``i`` on the true and the false side of ``if (i op n)``."""
    return engine_narrow(x, op, y), engine_narrow(x, NEGATE[op], y)


def engine_widen(old: Pair | None, new: Pair | None) -> Pair | None:
    """The engine's widening of a loop phi's range ``old`` that grew to ``new``."""
    return as_pair(intervals.widen(as_range(old), as_range(new)))


def engine_narrowing(old: Pair | None, new: Pair | None) -> Pair | None:
    """The engine's narrowing step: ``old`` kept where ``new`` (what the equations give
    now) agrees."""
    return as_pair(intervals.narrow(as_range(old), as_range(new)))


@dataclass(frozen=True)
class LoopBack:
    """The back edge of ``while (i op limit) { i = i + step; }``: called with the loop
    phi's range, the range of ``i + step`` where the loop's test holds (None: nothing comes
    back) -- the engine's narrowing and ``+``. (A class, not a closure, so a regrade can
    send it to the learner's process.)"""

    op: str
    limit: Pair
    step: int

    def __call__(self, r: Pair | None) -> Pair | None:
        if r is None:
            return None
        inside = engine_narrow(tuple(r), self.op, self.limit)  # type: ignore[arg-type]
        return None if inside is None else engine_add(inside, (self.step, self.step))


def loop_back(op: str, limit: Pair, step: int) -> LoopBack:
    """The back edge of ``while (i op limit) { i = i + step; }`` (see :class:`LoopBack`)."""
    return LoopBack(op, limit, step)


# ------------------------------------------------------------------------- drawing


def bound(v: int) -> str:
    """An end of a range as the lessons write it (``INT_MIN``, ``INT_MAX - 1``, ``7``)."""
    if not isinstance(v, int) or isinstance(v, bool):
        return repr(v)
    for name, edge in (("INT_MIN", INT_MIN), ("INT_MAX", INT_MAX)):
        if abs(v - edge) <= 16:
            d = v - edge
            return name if d == 0 else f"{name} {'+' if d > 0 else '-'} {abs(d)}"
    return str(v)


def written(value: object, depth: int = 0) -> str:
    """A value for a message, ints at the 64-bit edges by name: ``(0, INT_MAX - 1)``."""
    kind = type(value)
    if kind is int:
        return bound(value)  # type: ignore[arg-type]
    if depth < 20 and kind in (tuple, list):
        items = [written(v, depth + 1) for v in value]  # type: ignore[attr-defined]
        text = ", ".join(items) + ("," if kind is tuple and len(items) == 1 else "")
        return f"({text})" if kind is tuple else f"[{text}]"
    try:
        return repr(value)
    except Exception:  # a learner's object whose __repr__ fails
        return f"<{kind.__name__} object>"


def pair_text(p: object) -> str:
    """``[lo, hi]`` of a pair, ``empty`` for None, the value's repr for anything else."""
    if p is None:
        return "empty"
    if isinstance(p, (tuple, list)) and len(p) == 2 and all(
            isinstance(v, int) and not isinstance(v, bool) for v in p):
        return f"[{bound(p[0])}, {bound(p[1])}]"
    try:
        return repr(p)
    except Exception:
        return f"<{type(p).__name__} object>"


def _is_pair(p: object) -> bool:
    return isinstance(p, (tuple, list)) and len(p) == 2 and all(
        isinstance(v, int) and not isinstance(v, bool) for v in p) and p[0] <= p[1]


@dataclass
class NumberLine:
    """Ranges drawn as bars over one axis (``rows``: (label, pair or None or anything))."""

    rows: list[tuple[str, object]] = field(default_factory=list)
    title: str = ""

    def add(self, label: str, value: object) -> NumberLine:
        self.rows.append((label, value))
        return self

    def ticks(self) -> list[int]:
        ends = {v for _, p in self.rows if _is_pair(p) for v in cast(tuple, p)}
        return sorted(ends)

    def __str__(self) -> str:
        width = max((len(label) for label, _ in self.rows), default=0)
        lines = [self.title] if self.title else []
        lines += [f"{label:<{width}}  {pair_text(p)}" for label, p in self.rows]
        return "\n".join(lines)

    def _repr_svg_(self) -> str:
        ticks = self.ticks()
        step, left, top, row_h = 90, 150, 24 if self.title else 8, 26
        width = left + step * max(len(ticks) - 1, 1) + 80
        height = top + row_h * len(self.rows) + 40
        x_of = {v: left + i * step for i, v in enumerate(ticks)}
        out = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
               "font-family='monospace' font-size='11'>"]
        if self.title:
            out.append(f"<text x='4' y='14'>{html.escape(self.title)}</text>")
        for k, (label, p) in enumerate(self.rows):
            y = top + row_h * k + 14
            out.append(f"<text x='4' y='{y + 4}'>{html.escape(label)}</text>")
            if _is_pair(p):
                a, b = x_of[p[0]], x_of[p[1]]  # type: ignore[index]
                out.append(f"<line x1='{a}' y1='{y}' x2='{b}' y2='{y}' stroke='#1f77b4' "
                           "stroke-width='6' stroke-linecap='round'/>")
                out.append(f"<circle cx='{a}' cy='{y}' r='4' fill='#1f77b4'/>"
                           f"<circle cx='{b}' cy='{y}' r='4' fill='#1f77b4'/>")
            else:
                out.append(f"<text x='{left}' y='{y + 4}' fill='#b22'>"
                           f"{html.escape(pair_text(p))}</text>")
        axis = top + row_h * len(self.rows) + 8
        if ticks:
            out.append(f"<line x1='{left - 10}' y1='{axis}' x2='{x_of[ticks[-1]] + 10}' "
                       f"y2='{axis}' stroke='#555'/>")
        for i, v in enumerate(ticks):
            x = x_of[v]
            dy = 14 if i % 2 == 0 else 26  # alternate rows so long labels do not collide
            out.append(f"<line x1='{x}' y1='{axis - 4}' x2='{x}' y2='{axis + 4}' "
                       "stroke='#555'/>")
            out.append(f"<text x='{x}' y='{axis + dy}' text-anchor='middle'>"
                       f"{html.escape(bound(v))}</text>")
        out.append("</svg>")
        return "".join(out)


# ------------------------------------------------------------------ real programs


@dataclass(frozen=True)
class Situation:
    """One bounds check of a compiled program as task 3 sees it: the ranges of the index
    and the length at the check, the symbolic facts ``(k, op)`` (``i + k op len(a)``) in
    scope, and the engine's verdict (True: the check goes)."""

    function: str
    check: int  # the id of the check's If in the analysed graph
    index: Pair
    length: Pair
    facts: tuple[tuple[int, str], ...]
    removed: bool


def check_situations(source: str) -> list[Situation]:
    """Every bounds check of a Tiny program, analysed as ``son-ranges`` does (SCCP, the
    ``ranges`` pass, then the checks decided), in plain data. The facts are those of the
    branches in scope about the index itself (not ``i + 1``'s base) against the checked
    length, and the symbolic upper bounds the analysis found for it (``i <= len(a) + d``
    becomes ``(-d, "<=")``, e.g. from a loop phi, unless a fact says just that). Checks
    never reached are left out."""
    from ssa_course.compilation import compile_source
    from ssa_course.lessons.faces import fresh_graphs
    from ssa_course.son.bce import decide_branches, decide_checks  # (bce: always)
    from ssa_course.son.edge_facts import peel
    from ssa_course.son.sccp import apply_to_program
    from ssa_course.son.symbolic import same_length

    program = fresh_graphs(compile_source(source, "exercise.tiny"), True)
    apply_to_program(program)
    out = []
    for name, fg in program.functions.items():
        decide_branches(fg)
        result = decide_checks(fg)
        ra = result.analysis
        for iff_id, decision in sorted(result.checks.items()):
            iff = decision.iff
            test = iff.operand(1)
            x, n = test.operand(1), test.operand(2)
            block = ra.facts.block_of(iff)
            index, length = as_pair(ra.in_block(x, block)), as_pair(ra.in_block(n, block))
            if index is None or length is None:
                continue
            facts: list[tuple[int, str]] = []
            if peel(x)[0] is x:
                facts += [(f.offset, f.op) for f in ra.facts.holding(x, block)
                          if f.other is not None and same_length(f.other, n)]
            given = {_upper_offset(k, op) for k, op in facts}
            for node, d in (ra.upper(x, block) or {}).values():
                if same_length(node, n) and d not in given:  # not just a fact restated
                    facts.append((-d, "<="))
            out.append(Situation(name, iff_id, index, length,
                                 tuple(dict.fromkeys(facts)), decision.proven is True))
    return out


def _upper_offset(k: int, op: str) -> int | None:
    """``d`` of the bound ``i <= len(a) + d`` the fact ``i + k op len(a)`` gives."""
    return {"<": -1 - k, "<=": -k, "==": -k}.get(op)
