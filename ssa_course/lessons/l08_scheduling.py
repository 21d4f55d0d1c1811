"""Lesson 08 brings the graph back to blocks: global code motion schedules the optimistic
graph (``scheduled``, run as IRCode; ``scheduled-bril``, the same out of SSA), and the whole
``ssa-course opt`` default pipeline (``optimized``); the passes that make quads good again
(coalescing, try regions, layout, landing pads)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ssa_course.compilation import Compilation
from ssa_course.lessons.faces import add_quads, add_quads_pass, cfg_dot, verify_ssa
from ssa_course.lessons.l04_julia import ir_lines, ir_text, ircode_of, run_ir, verify_ir
from ssa_course.registry import add_pass, add_representation, build_as
from ssa_course.runtime import Limits, Output, Value

if TYPE_CHECKING:  # modules are imported where they are used: a lesson loads cheaply
    from ssa_course.passes import PassState
    from ssa_course.quads.ir import Function, Program
    from ssa_course.srclines import Lines
    from ssa_course.ssa.ircode import IRProgram
    from ssa_course.viz.options import DrawOptions


@dataclass(slots=True)
class Scheduled:
    """The scheduled program three ways: SSA quads as GCM wrote them (drawn), the same out
    of SSA (``scheduled-bril``), and as IRCode (what runs and prints)."""

    ssa: Program
    quads: Program
    ircode: IRProgram


def _build(comp: Compilation) -> Scheduled:
    from ssa_course.lessons.l09_ranges import ranges_program  # (a later lesson's graph)
    from ssa_course.son.to_quads import scheduled_ssa
    from ssa_course.ssa.destruct import program_from_ssa

    # the graph after SCCP and lesson 09's ranges and bounds-check elimination
    ssa, _ = scheduled_ssa(ranges_program(comp), comp.quads.structs)
    verify_ssa(ssa)
    quads = program_from_ssa(ssa)
    return Scheduled(ssa, quads, ircode_of(quads))


def scheduled(comp: Compilation) -> Scheduled:
    """The ``scheduled`` representation of ``comp`` (built once, verified, cached)."""
    return build_as(comp, "scheduled", Scheduled)


def scheduled_ssa_quads(comp: Compilation) -> Program:
    """The optimistic graph scheduled by GCM, as SSA quads (phis at block tops)."""
    return scheduled(comp).ssa


def scheduled_quads(comp: Compilation) -> Program:
    """The scheduled program out of SSA: ordinary quads."""
    return scheduled(comp).quads


def _run(a: Scheduled, args: list[Value], out: Output, limits: Limits) -> int:
    return run_ir(a.ircode, args, out, limits)


def _verify(a: Scheduled) -> None:
    verify_ssa(a.ssa)
    verify_ir(a.ircode)


def _lines(a: Scheduled) -> Lines:
    """The IRCode listing's lines; the drawing is the SSA quads' CFG, so its nodes'."""
    from ssa_course.lessons.lines_faces import quads_lines
    from ssa_course.srclines import Lines

    return Lines(ir_lines(a.ircode).text, quads_lines(a.ssa).node)


def _dot(a: Scheduled, title: str, options: DrawOptions | None = None) -> str:
    return cfg_dot(a.ssa, f"{title}: the graph scheduled into blocks (SSA)")


def _optimized(comp: Compilation) -> Program:
    from ssa_course.passes import DEFAULT_PIPELINE, finish_as_quads, run_pipeline

    return finish_as_quads(run_pipeline(comp, DEFAULT_PIPELINE))


def _text(a: Scheduled) -> str:
    return ir_text(a.ircode)


add_representation("scheduled", "the SCCP'd graph scheduled into blocks by global code "
                   "motion, run as Julia-style IRCode", build=_build, run=_run,
                   verify=_verify, text=_text, dot=_dot,
                   lines=_lines)
add_quads("scheduled-bril", "the scheduled program out of SSA, as Bril",
          scheduled_quads)
add_quads("optimized", "the whole default 'ssa-course opt' pipeline (parse, SCCP, GCM, out "
          "of SSA, coalescing, layout), run as quads", _optimized)


@add_pass("gcm", "global code motion: schedule the graph into blocks, write SSA quads",
          ("graph",), "ssa")
def _gcm(state: PassState) -> None:
    from ssa_course.son.to_quads import scheduled_ssa

    state.quads, _ = scheduled_ssa(state.graph_program(), state.comp.quads.structs)


@add_pass("coalesce-phis", "phi results and arguments that are never alive together share "
          "one name (fewer copies out of SSA)", ("ssa",), "phis")
def _coalesce_phis(state: PassState) -> None:
    from ssa_course.quads.peephole import on_program
    from ssa_course.ssa.phi_coalesce import coalesce_phis

    state.quads = on_program(coalesce_phis, state.quads_program())


# The quads passes after SSA: each loader imports its pass only when a pipeline runs it.
def _coalesce() -> Callable[[Function], Function]:
    from ssa_course.quads.coalesce import coalesce_copies

    return coalesce_copies


def _try_merge() -> Callable[[Function], Function]:
    from ssa_course.quads.try_merge import merge_try_regions

    return merge_try_regions


def _layout() -> Callable[[Function], Function]:
    from ssa_course.quads.layout import layout

    return layout


def _closed_form() -> Callable[[Function], Function]:
    from ssa_course.quads.closed_form import close_loops

    return close_loops


def _thread() -> Callable[[Function], Function]:
    from ssa_course.quads.thread import thread_jumps

    return thread_jumps


def _copies() -> Callable[[Function], Function]:
    from ssa_course.quads.copy_forward import forward_copies

    return forward_copies


def _landing() -> Callable[[Function], Function]:
    from ssa_course.quads.landing import landing_pads

    return landing_pads


add_quads_pass("coalesce", "copy coalescing: the two names of a copy that never hold "
               "different values become one (Chaitin's interference test), and the copy goes",
               _coalesce)
add_quads_pass("try-merge", "try regions merged: the calls of one try share one enter/leave "
               "and one handler again (handler copies hoisted when no path gets longer)",
               _try_merge)
add_quads_pass("layout", "block layout: blocks chained so that jumps fall through (deepest "
               "loops first), small blocks copied in place of a jump (loop rotation)",
               _layout)
add_quads_pass("closed-form", "counting loops that only sum the counter or its square "
               "jump to their closed form (T*a + T(T-1)/2 ...) when the trip count makes it exact",
               _closed_form)
add_quads_pass("thread", "jump threading: a test the branches before it already decided "
               "becomes a jump, an edge into a block that only repeats it goes straight on",
               _thread)
add_quads_pass("copies", "copy forwarding: a read of a copy made earlier in the same block "
               "reads its source (the dead copies then go with dce)", _copies)
add_quads_pass("landing", "landing pads: what only a loop (or a branch's fall-through side) "
               "needs sinks onto that edge, so a loop that runs zero times does not pay",
               _landing)


@add_pass("inline", "inlining: calls of small leaf functions replaced by a renamed copy of "
          "the callee (where the call depth limit cannot tell), before parsing",
          ("source",), "source")
def _inline(state: PassState) -> None:
    from ssa_course.compilation import from_quads
    from ssa_course.quads.inline import inline_calls

    program, count = inline_calls(state.comp.quads)
    state.quads = program  # what the quads verifier checks
    if count:  # untouched programs keep their own front end (Tiny: straight from the AST)
        state.comp = from_quads(program, state.comp.filename)


@add_pass("dom-cse", "dominator-tree value numbering on SSA quads: an operation a "
          "dominating block already computed (a division GVN kept pinned) is reused",
          ("ssa",), "ssa")
def _dom_cse(state: PassState) -> None:
    from ssa_course.quads.peephole import on_program
    from ssa_course.ssa.dom_cse import dom_cse

    state.quads = on_program(dom_cse, state.quads_program())


@add_pass("unroll", "loop unrolling: small innermost loops that rotate their variables "
          "(a, b = b, r) run twice per trip, so coalescing leaves no copy, before parsing",
          ("source",), "source")
def _unroll(state: PassState) -> None:
    from ssa_course.compilation import from_quads
    from ssa_course.quads.peephole import on_program
    from ssa_course.quads.unroll import unroll_loops

    before = state.comp.quads
    program = on_program(unroll_loops, before)
    state.quads = program
    if any(program.functions[n] is not f for n, f in before.functions.items()):
        state.comp = from_quads(program, state.comp.filename)


@add_pass("tail-rec", "tail recursion to loops: a call of a function to itself whose result "
          "is returned (or only added to or multiplied into it) becomes a jump back to its "
          "top, before parsing", ("source",), "source")
def _tail_rec(state: PassState) -> None:
    from ssa_course.compilation import from_quads
    from ssa_course.quads.tail_rec import eliminate_tail_calls

    program, count = eliminate_tail_calls(state.comp.quads)
    state.quads = program
    if count:
        state.comp = from_quads(program, state.comp.filename)


@add_pass("const-params", "the constants of a self-recursive function become parameters "
          "its recursive calls pass along (a call's arguments cost nothing), before parsing",
          ("source",), "source")
def _const_params(state: PassState) -> None:
    from ssa_course.compilation import from_quads
    from ssa_course.quads.const_params import thread_constants

    program, count = thread_constants(state.comp.quads)
    state.quads = program
    if count:
        state.comp = from_quads(program, state.comp.filename)
