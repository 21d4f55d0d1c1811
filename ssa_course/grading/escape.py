"""Exercise 10's data: escape states and functions as plain data, and how they are shown.

An escape state (:class:`~ssa_course.analysis.escape_lattice.EscapeInfo` without its alias
information) becomes a dict ``{"analyzed": bool, "returns": set, "thrown": set, "args":
set, "everywhere": bool}`` (:func:`state_of`, back with :func:`info_of`). A function's
IRCode becomes an :class:`EscapeFunction`: only what matters to escape -- its reference
arguments and one tuple per statement that creates, merges, loads, stores or returns a
reference (:func:`function_data`). Functions that call another function with references
are left out (``None``): the exercise leaves summaries to the lesson.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from ssa_course.analysis.escape import FunctionEscapes
from ssa_course.analysis.escape_classes import ELEMENTS
from ssa_course.analysis.escape_lattice import EscapeInfo
from ssa_course.ssa.ircode import (
    Argument,
    Expr,
    PhiCNode,
    PhiNode,
    PiNode,
    ReturnNode,
    SSAValue,
    UpsilonNode,
    fmt,
)

KEYS = ("analyzed", "returns", "thrown", "args", "everywhere")
GLYPHS = ("✓", "↑", "*", "X")


def state_of(info: EscapeInfo) -> dict:
    """The plain dict of an escape state (alias information left out)."""
    return {"analyzed": info.analyzed, "returns": set(info.returns),
            "thrown": set(info.thrown), "args": set(info.args),
            "everywhere": info.everywhere}


def info_of(state: dict) -> EscapeInfo:
    """The EscapeInfo of a plain state (the inverse of :func:`state_of`)."""
    return EscapeInfo(bool(state["analyzed"]), frozenset(state["returns"]),
                      frozenset(state["thrown"]), frozenset(state["args"]),
                      bool(state["everywhere"]))


def state_text(state: dict) -> str:
    """``↑ ReturnEscape{6}``: the glyph and the engine's name of a plain state."""
    info = info_of(state)
    return f"{info.glyph()} {info}"


class EscapeFunction(NamedTuple):
    """One function for exercise 10: ``args`` the names of its reference arguments (with
    their numbers, 1-based, among all arguments), ``stmts`` the statements that matter,
    ``allocations`` the names of the values made by ``new``, in order."""

    name: str
    args: dict[str, int]
    stmts: list[tuple]
    allocations: list[str]


def function_data(fe: FunctionEscapes) -> EscapeFunction | None:
    """The plain form of a solved function's IRCode; None when it calls a function with a
    reference (argument or result)."""
    solver = fe.solver
    ir = fe.ir
    args = {n: k for k, n in enumerate(ir.argnames, start=1)
            if solver.is_ref(Argument(k, n))}
    stmts: list[tuple] = []
    allocs: list[str] = []
    for pc, s in enumerate(ir.stmts, start=1):
        me = SSAValue(pc)
        refs = [fmt(v) for v in (s.operands() if hasattr(s, "operands") else [])
                if solver.is_ref(v)]
        if isinstance(s, ReturnNode):
            stmts.extend(("return", v) for v in refs)
        elif isinstance(s, PhiNode | PhiCNode | PiNode | UpsilonNode):
            if solver.is_ref(me):
                stmts.append(("phi", fmt(me), refs))
        elif isinstance(s, Expr):
            step = _expr(s, me, solver, refs)
            if step is False:
                return None
            if step is not None:
                stmts.append(step)
                if step[0] == "new":
                    allocs.append(fmt(me))
    return EscapeFunction(ir.name, args, stmts, allocs)


def _expr(s: Expr, me: SSAValue, solver: object, refs: list[str]
          ) -> tuple | None | Literal[False]:
    """The tuple of one expression, None when it does not matter, False when the
    exercise cannot express it (a call with references)."""
    is_ref = solver.is_ref  # type: ignore[attr-defined]
    head = s.head
    if head == "newstruct":
        fields = solver.structs[str(solver.ir.types[me.id - 1])].fields  # type: ignore
        return ("new", fmt(me), {f: fmt(a) for (f, _), a in zip(fields, s.args, strict=True)
                                 if is_ref(a)})
    if head == "newarr":
        return ("new", fmt(me), {})
    if head in ("getf", "aload"):
        key = s.field if head == "getf" else ELEMENTS
        return ("load", fmt(me), fmt(s.args[0]), key) if is_ref(me) else None
    if head in ("setf", "astore"):
        key = s.field if head == "setf" else ELEMENTS
        val = s.args[-1]
        return ("store", fmt(s.args[0]), key, fmt(val)) if is_ref(val) else None
    if head == "call":
        return False if refs or is_ref(me) else None
    if head in ("throw", "print") and refs:  # never in Tiny (ints only): not expressible
        return False
    return None


def expected_glyphs(fe: FunctionEscapes) -> dict[str, str]:
    """Allocation name -> the engine's glyph without its alias mark (``✓``, ``↑``, ``*``)."""
    return {fmt(SSAValue(pc)): info.glyph()[0] for pc, info in fe.allocations()}


def listing(data: EscapeFunction, glyphs: object = None) -> str:
    """The statements of ``data``, one a line, with a glyph column on allocations when
    ``glyphs`` (a dict name -> glyph) is given. The whole of ``glyphs`` is shown -- an
    answer is drawn with it -- so entries for names that are no allocation, and an answer
    that is not a dict at all, are listed below the statements rather than dropped.

    (It calls no other function of the course: exercise 10 lets a learner's code call it
    while the rest of ssa_course is forbidden.)"""
    marks = glyphs if isinstance(glyphs, dict) else {}
    head = ", ".join(f"{n} (argument {k})" for n, k in data.args.items()) or "none"
    lines = [f"function {data.name}; reference arguments: {head}"]
    made = [s[1] for s in data.stmts if s[0] == "new"]
    for s in data.stmts:
        mark = ""
        if s[0] == "new" and glyphs is not None:
            value = marks.get(s[1], "?")
            mark = value if isinstance(value, str) and len(value) == 1 else repr(value)
        lines.append(f"  {mark:<2} {s!r}")
    if glyphs is not None and not isinstance(glyphs, dict):
        lines.append(f"the answer is not a dict name -> glyph: {glyphs!r:.300}")
    extra = [k for k in marks if k not in made]
    if extra:
        lines.append("also in the answer, for names that are no allocation of this function:")
        lines += [f"  {k!r}: {marks[k]!r:.300}" for k in extra]
    return "\n".join(lines)


def answer_text(state: object) -> str:
    """A state as an answer's picture shows it: the glyph and the engine's name when it
    is a well-formed state, and always the value itself, so a missing or extra key or a
    value of the wrong type is never hidden behind the name."""
    try:
        info = info_of(state)  # type: ignore[arg-type]
        named = f"{info.glyph()}  {info}"
    except Exception:  # not a state at all: the value below says what it is
        named = "(not a state the course can name)"
    return f"{named}\n{state!r:.600}"
