"""Lesson 10 adds escape analysis after Julia's ``EscapeAnalysis``: the ``escapes``
representation is IRCode with every value's escape glyph (``code_escapes``), and its first
use, scalar replacement of structs that never escape: the ``sroa`` pass of ``opt`` and the
``sroa`` representation (the quads after it, so every corpus program runs through it)."""

from __future__ import annotations

from ssa_course.compilation import Compilation, compile_source
from ssa_course.lessons.faces import add_quads
from ssa_course.registry import add_pass, add_representation, build
from ssa_course.runtime import Limits, Output


def escapes_of(ircode: object) -> object:
    """The escape analysis of an IRProgram (a ``ProgramEscapes``)."""
    from ssa_course.analysis.escape import analyze_program

    return analyze_program(ircode)  # type: ignore[arg-type]


def _build(comp: Compilation) -> object:
    return escapes_of(build(comp, "julia"))  # the analysis reads the IRCode, never changes it


def _run(result: object, args: list[object], out: Output, limits: Limits) -> int:
    from ssa_course.ssa.irinterp import run_ircode

    return run_ircode(result.program, args, out, limits)  # type: ignore[attr-defined]


def _verify(result: object) -> None:
    from ssa_course.analysis.escape_verify import verify_escapes

    verify_escapes(result)  # type: ignore[arg-type]


def _text(result: object) -> str:
    from ssa_course.analysis.escape_print import format_escapes

    return format_escapes(result)  # type: ignore[arg-type]


def _dot(result: object, title: str, options: object = None) -> str:
    from ssa_course.analysis.escape_print import escapes_to_dot

    return escapes_to_dot(result, title, options)  # type: ignore[arg-type]


def _stats(result: object) -> str:
    allocs = [info for fe in result.functions.values()  # type: ignore[attr-defined]
              for _, info in fe.allocations()]
    local = sum(info.has_no_escape() for info in allocs)
    return (f"{len(allocs)} allocations, {local} never escape; summaries settled after "
            f"{result.rounds} round(s)")  # type: ignore[attr-defined]


def code_escapes(source: str) -> object:
    """The escape analysis of a Tiny (or Bril) program: ``print`` it for the glyph
    listing, index it by function name for the per-value ``EscapeInfo``."""
    from ssa_course.lessons.l04_julia import ircode_of

    return EscapesView(escapes_of(ircode_of(compile_source(source).quads)))


class EscapesView:
    """What :func:`code_escapes` returns: prints as the listing, ``[name]`` gives a
    function's result, ``.draw()`` the coloured blocks."""

    def __init__(self, result: object):
        self.result = result

    def __getitem__(self, name: str) -> object:
        return self.result[name]  # type: ignore[index]

    def __str__(self) -> str:
        return _text(self.result)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        import html

        return f"<pre>{html.escape(_text(self.result))}</pre>"

    def draw(self):  # noqa: ANN201
        from ssa_course.viz.dot import Drawing

        return Drawing(_dot(self.result, "escapes"))


add_representation("escapes", "IRCode with Julia-style escape analysis: a glyph per value "
                   "(◌ ✓ ↑ * X, ′ for field/element aliases)", build=_build, run=_run,
                   verify=_verify, text=_text, dot=_dot, stats=_stats)


def scalar_replaced(comp: Compilation) -> object:
    """The compilation's quads with non-escaping structs replaced by their fields."""
    from ssa_course.analysis.sroa import scalar_replace

    return scalar_replace(comp.quads)[0]


add_quads("sroa", "quads after scalar replacement: structs that never escape (escape "
          "analysis) become one variable per field", scalar_replaced)


@add_pass("sroa", "scalar replacement: structs that never escape become one variable per "
          "field (escape analysis on IRCode)", ("quads", "source"), "quads")
def _sroa_pass(state) -> None:  # noqa: ANN001
    from ssa_course.analysis.sroa import scalar_replace

    state.quads = scalar_replace(state.quads or state.comp.quads)[0]
