"""Lesson 10 adds escape analysis after Julia's ``EscapeAnalysis``: the ``escapes``
representation is IRCode with every value's escape glyph (``code_escapes``), and its first
use, scalar replacement of structs that never escape: the ``sroa`` pass of ``opt`` and the
``sroa`` representation (the quads after it, so every corpus program runs through it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ssa_course.compilation import Compilation, compile_source
from ssa_course.lessons.faces import bril_text, cfg_dot, quads_lines, run_quads, verify_quads
from ssa_course.registry import add_pass, add_representation, build_as
from ssa_course.runtime import Limits, Output, Value

if TYPE_CHECKING:  # modules are imported where they are used: a lesson loads cheaply
    from ssa_course.analysis.escape import FunctionEscapes, ProgramEscapes
    from ssa_course.analysis.sroa import SroaReport
    from ssa_course.passes import PassState
    from ssa_course.quads.ir import Program
    from ssa_course.srclines import Lines
    from ssa_course.ssa.ircode import IRProgram
    from ssa_course.viz.dot import Drawing
    from ssa_course.viz.options import DrawOptions


def escapes_of(ircode: IRProgram) -> ProgramEscapes:
    """The escape analysis of an IRProgram (a ``ProgramEscapes``)."""
    from ssa_course.analysis.escape import analyze_program

    return analyze_program(ircode)


def _build(comp: Compilation) -> ProgramEscapes:
    from ssa_course.ssa.ircode import IRProgram

    # the analysis reads the IRCode, never changes it
    return escapes_of(build_as(comp, "julia", IRProgram))


def _run(result: ProgramEscapes, args: list[Value], out: Output, limits: Limits) -> int:
    from ssa_course.ssa.irinterp import run_ircode

    return run_ircode(result.program, args, out, limits)


def _verify(result: ProgramEscapes) -> None:
    from ssa_course.analysis.escape_verify import verify_escapes

    verify_escapes(result)


def _text(result: ProgramEscapes) -> str:
    from ssa_course.analysis.escape_print import format_escapes

    return format_escapes(result)


def _lines(result: ProgramEscapes) -> Lines:
    from ssa_course.lessons.lines_faces import escapes_lines

    return escapes_lines(result)


def _dot(result: ProgramEscapes, title: str, options: DrawOptions | None = None) -> str:
    from ssa_course.analysis.escape_print import escapes_to_dot

    return escapes_to_dot(result, title, options)


def _stats(result: ProgramEscapes) -> str:
    allocs = [info for fe in result.functions.values() for _, info in fe.allocations()]
    local = sum(info.has_no_escape() for info in allocs)
    return (f"{len(allocs)} allocations, {local} never escape; summaries settled after "
            f"{result.rounds} round(s)")


def code_escapes(source: str | Compilation) -> EscapesView:
    """The escape analysis of a Tiny (or Bril) program (text or Compilation): ``print`` it
    for the glyph listing, index it by function name for the per-value ``EscapeInfo``."""
    from ssa_course.analysis.escape import ProgramEscapes

    comp = source if isinstance(source, Compilation) else compile_source(source)
    return EscapesView(build_as(comp, "escapes", ProgramEscapes))


class EscapesView:
    """What :func:`code_escapes` returns: prints as the listing, ``[name]`` gives a
    function's result, ``.draw()`` the coloured blocks."""

    def __init__(self, result: ProgramEscapes):
        self.result = result

    def __getitem__(self, name: str) -> FunctionEscapes:
        return self.result[name]

    def __str__(self) -> str:
        return _text(self.result)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        import html

        return f"<pre>{html.escape(_text(self.result))}</pre>"

    def draw(self) -> Drawing:
        from ssa_course.viz.dot import Drawing

        return Drawing(_dot(self.result, "escapes"))


add_representation("escapes", "IRCode with Julia-style escape analysis: a glyph per value "
                   "(◌ ✓ ↑ * X, ′ for field/element aliases)", build=_build, run=_run,
                   verify=_verify, text=_text, dot=_dot, stats=_stats, lines=_lines)


# The reports of the last few ``sroa`` builds, by artifact: the stats face takes only the
# program, and what was removed cannot be read back from it (kept allocations can).
_REPORTS: dict[int, tuple[Program, SroaReport]] = {}
_REPORTS_KEPT = 32


def scalar_replaced(comp: Compilation) -> Program:
    """The compilation's quads with non-escaping structs replaced by their fields."""
    from ssa_course.analysis.sroa import scalar_replace

    program, report = scalar_replace(comp.quads)
    _REPORTS[id(program)] = (program, report)
    while len(_REPORTS) > _REPORTS_KEPT:
        del _REPORTS[next(iter(_REPORTS))]
    return program


def _sroa_stats(program: Program) -> str:
    """The pass's report in one line: removed / kept, kept allocations with reasons."""
    from ssa_course.analysis.sroa import scalar_replace

    known = _REPORTS.get(id(program))
    if known is not None and known[0] is program:
        return known[1].summary()
    return scalar_replace(program)[1].summary()  # kept only


add_representation("sroa", "quads after scalar replacement: structs that never escape "
                   "(escape analysis) become one variable per field", build=scalar_replaced,
                   run=run_quads, verify=verify_quads, text=bril_text, dot=cfg_dot,
                   stats=_sroa_stats, lines=quads_lines)


@add_pass("sroa", "scalar replacement: structs that never escape become one variable per "
          "field (escape analysis on IRCode), before parsing", ("source", "quads"), "source")
def _sroa_pass(state: PassState) -> None:
    from ssa_course.analysis.sroa import scalar_replace
    from ssa_course.compilation import from_quads

    before = state.quads if state.quads is not None else state.comp.quads
    program, report = scalar_replace(before)
    state.quads = program  # what the quads verifier checks
    if report.total():  # untouched programs keep their own front end (Tiny: from the AST)
        state.comp = from_quads(program, state.comp.filename)


# -- what the lesson's notebook shows (appended for notebooks/10-escape.ipynb) ------------


def lattice_dot() -> str:
    """DOT of the escape lattice drawn with glyphs: ``◌`` below ``✓``, the three ways out of
    a frame (returned, thrown, stored into an argument) and their joins above it, AllEscape
    on top. Each edge adds one property; each node is the engine's own join of the ones
    below it (``EscapeInfo.join``), labelled by its glyph and its ``str``."""
    from ssa_course.analysis.escape_lattice import ALL_ESCAPE, NO_ESCAPE, NOT_ANALYZED, EscapeInfo

    ways = {"R": EscapeInfo(True, returns=frozenset({5})),
            "T": EscapeInfo(True, thrown=frozenset({3})),
            "A": EscapeInfo(True, args=frozenset({1}))}
    elements: dict[str, EscapeInfo] = {"◌": NOT_ANALYZED, "": NO_ESCAPE}
    for key in ("R", "T", "A", "RT", "RA", "TA", "RTA"):
        info = NO_ESCAPE
        for k in key:
            info = info.join(ways[k])
        elements[key] = info
    elements["X"] = elements["RTA"].join(ALL_ESCAPE)
    edges = [("◌", "")] + [(a, b) for a in elements for b in elements
                           if a not in ("◌", "X") and b not in ("◌", "X")
                           and len(b) == len(a) + 1 and set(a) <= set(b)] + [("RTA", "X")]
    fills = {"◌": "#ffffff", "✓": "#d8f0d0", "↑": "#d6e9ff", "*": "#ffe08a", "X": "#ffb0a8"}
    lines = ["digraph lattice {", "  rankdir=BT; node [shape=box, style=filled, "
             "fontname=\"DejaVu Sans\"];"]
    for key, info in elements.items():
        glyph = info.glyph()
        label = f"{glyph}  {info}".replace('"', '\\"')
        lines.append(f'  "n{key}" [label="{label}", fillcolor="{fills[glyph[0]]}"];')
    for a, b in edges:
        assert elements[a].leq(elements[b])  # the picture is the engine's order
        lines.append(f'  "n{a}" -> "n{b}";')
    lines.append("}")
    return "\n".join(lines) + "\n"


def dynamic_counts(source: str, *args: object) -> dict[str, object]:
    """Instructions executed (the quads interpreter's ``steps``) by ``source`` after the
    default ``opt`` pipeline without ``sroa`` and with it (as the default has it), and the
    outputs."""
    from ssa_course import passes
    from ssa_course.stages import run as run_stage

    without = tuple(name for name in passes.DEFAULT_PIPELINE if name != "sroa")
    counts: dict[str, object] = {}
    for label, pipeline in (("without sroa", without), ("with sroa", passes.DEFAULT_PIPELINE)):
        optimized = passes.result(passes.run_pipeline(compile_source(source), pipeline))
        result = run_stage(optimized, [str(a) for a in args] or None, via="quads")
        counts[label] = (result.steps, result.stdout.strip())
    return counts


def native_seconds(source: str, *args: object, repeat: int = 5
                   ) -> dict[str, tuple[float, str]] | str:
    """The best of ``repeat`` native runs of ``source`` (seconds, and what it printed) with
    its small arrays that never escape in the heap and in the frame (assembling and linking
    not counted; the step and allocation limits lifted); or the one line saying why native
    code cannot run here."""
    import time

    from ssa_course.codegen import toolchain
    from ssa_course.codegen.native import run_values_native
    from ssa_course.lessons.l11_codegen import compile_machine, image_of

    missing = toolchain.native_missing()
    if missing:
        return missing
    values = list(args)
    seconds: dict[str, tuple[float, str]] = {}
    for label, frame in (("heap", False), ("frame", True)):
        image = image_of(compile_machine(compile_source(source), frame_arrays=frame),
                         Limits(steps=10**15, cells=10**12))  # timing, not limits
        best, out = float("inf"), Output()
        for _ in range(repeat):
            out = Output()
            start = time.perf_counter()
            run_values_native(image, values, out)
            best = min(best, time.perf_counter() - start)
        seconds[label] = (best, out.text().strip())
    return seconds
