"""The registry of named passes and ``ssa-course opt`` pipelines (lessons 06-08).

A pass transforms a :class:`PassState`: the program as a sea of nodes (``graph``) or as
quads (``quads``, in SSA form or not). Each pass says what it needs and what it makes, so
a pipeline such as ``parse,sccp,gcm,out-of-ssa,coalesce`` is checked before it runs and a
pass in the wrong place gets a clear message. Registering a pass is one decorator.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ssa_course.errors import UsageError
from ssa_course.pipeline import Compilation


@dataclass
class PassState:
    comp: Compilation
    graph: object | None = None  # a SeaOfNodes
    quads: object | None = None  # a quads Program
    ssa: bool = False  # quads in SSA form (phis)?
    done: list[str] = field(default_factory=list)

    @property
    def form(self) -> str:
        if self.graph is not None:
            return "graph"
        if self.quads is not None:
            return "ssa" if self.ssa else "quads"
        return "source"


@dataclass(frozen=True)
class Pass:
    name: str
    description: str
    needs: tuple[str, ...]  # forms it accepts: "source", "graph", "ssa", "quads"
    run: Callable[[PassState], None]


_PASSES: dict[str, Pass] = {}

DEFAULT_PIPELINE = ("parse", "sccp", "gcm", "coalesce-phis", "out-of-ssa", "coalesce", "dce",
                    "try-merge", "layout", "landing")


def register_pass(name: str, description: str, needs: tuple[str, ...]):
    def wrap(fn: Callable[[PassState], None]) -> Callable[[PassState], None]:
        if name in _PASSES:
            raise ValueError(f"pass {name!r} registered twice")
        _PASSES[name] = Pass(name, description, needs, fn)
        return fn

    return wrap


def all_passes() -> list[Pass]:
    return list(_PASSES.values())


def get_pass(name: str) -> Pass:
    if name not in _PASSES:
        raise UsageError(f"unknown pass '{name}' (known passes: {', '.join(_PASSES)})")
    return _PASSES[name]


def run_pipeline(comp: Compilation, names: list[str] | tuple[str, ...] = DEFAULT_PIPELINE
                 ) -> PassState:
    """Run the passes in order; each is checked against the form the program is in."""
    from ssa_course.runtime import paused_gc

    comp.check()
    state = PassState(comp)
    for name in names:
        p = get_pass(name)
        if state.form not in p.needs:
            raise UsageError(f"pass '{name}' works on {' or '.join(p.needs)}, but after "
                             f"{', '.join(state.done) or 'nothing'} the program is "
                             f"{state.form}")
        with paused_gc():  # as in Compilation.cached: a pass builds a new representation
            p.run(state)
        state.done.append(name)
    return state


def finish_as_quads(state: PassState) -> object:
    """The program as ordinary quads, lowering whatever the pipeline left."""
    if state.form == "source":
        return state.comp.quads
    if state.form == "graph":
        get_pass("gcm").run(state)
    if state.form == "ssa":
        get_pass("out-of-ssa").run(state)
    return state.quads


# ---------------------------------------------------------------- the passes


@register_pass("parse", "parse straight into the sea of nodes, pessimistic peepholes on "
               "(Bril: from SSA)", ("source",))
def _parse(state: PassState) -> None:
    from ssa_course.son.stages import build_program

    state.graph = build_program(state.comp, True)


@register_pass("parse-raw", "parse into the sea of nodes with peepholes off", ("source",))
def _parse_raw(state: PassState) -> None:
    from ssa_course.son.stages import build_program

    state.graph = build_program(state.comp, False)


@register_pass("sccp", "sparse conditional constant propagation (optimistic), then "
               "constants and dead control removed", ("graph",))
def _sccp(state: PassState) -> None:
    from ssa_course.son.sccp import apply_to_program
    from ssa_course.son.verify import verify_graphs

    apply_to_program(state.graph)
    verify_graphs(state.graph)


@register_pass("gcm", "global code motion: schedule the graph into blocks, write SSA quads",
               ("graph",))
def _gcm(state: PassState) -> None:
    from ssa_course.son.to_quads import scheduled_ssa
    from ssa_course.ssa.verify import verify_ssa_program

    state.quads, _ = scheduled_ssa(state.graph, state.comp.quads.structs)
    verify_ssa_program(state.quads)
    state.graph, state.ssa = None, True


@register_pass("ssa", "quads into pruned SSA form (lesson 03)", ("quads", "source"))
def _ssa(state: PassState) -> None:
    from ssa_course.ssa.construct import program_to_ssa

    state.quads = program_to_ssa(state.quads or state.comp.quads)
    state.ssa = True


@register_pass("coalesce-phis", "phi results and arguments that are never alive together "
               "share one name (fewer copies out of SSA)", ("ssa",))
def _coalesce_phis(state: PassState) -> None:
    from ssa_course.quads.peephole import on_program
    from ssa_course.quads.phi_coalesce import coalesce_phis

    state.quads = on_program(coalesce_phis, state.quads)


@register_pass("out-of-ssa", "phis become copies (critical edges split, parallel copies "
               "sequentialized)", ("ssa",))
def _out_of_ssa(state: PassState) -> None:
    from ssa_course.ssa.destruct import program_from_ssa

    state.quads, state.ssa = program_from_ssa(state.quads), False


def _quads_pass(name: str, description: str, module: str, fn_name: str) -> None:
    """Register a quads function pass (``module.fn_name(fn) -> fn``), applied to every
    function."""

    def run(state: PassState) -> None:
        import importlib

        from ssa_course.quads.peephole import on_program

        fn = getattr(importlib.import_module(module), fn_name)
        state.quads = on_program(fn, state.quads or state.comp.quads)

    register_pass(name, description, ("quads", "source"))(run)


_quads_pass("coalesce", "copy coalescing: the two names of a copy that never hold different "
            "values become one (Chaitin's interference test), and the copy goes",
            "ssa_course.quads.coalesce", "coalesce_copies")
_quads_pass("try-merge", "try regions merged: the calls of one try share one enter/leave "
            "and one handler again (handler copies hoisted when no path gets longer)",
            "ssa_course.quads.try_merge", "merge_try_regions")
_quads_pass("layout", "block layout: blocks chained so that jumps fall through (deepest loops "
            "first), small blocks copied in place of a jump (loop rotation)",
            "ssa_course.quads.layout", "layout")
_quads_pass("landing", "landing pads: what only a loop (or a branch's fall-through side) needs "
            "sinks onto that edge, so a loop that runs zero times does not pay for it",
            "ssa_course.quads.landing", "landing_pads")
_quads_pass("lvn", "local value numbering (lesson 02)", "ssa_course.quads.peephole",
            "local_value_numbering")
_quads_pass("dce", "dead-code elimination on quads (lesson 02)", "ssa_course.quads.peephole",
            "dead_code")
_quads_pass("window", "fixed-window peephole (lesson 02)", "ssa_course.quads.peephole",
            "window_peephole")


def emit(state: PassState, what: str) -> str:
    """The pipeline's result as text: ``bril``, ``bril-json``, ``julia``, ``dot`` or
    ``text`` (the graph's own text when the program is still a graph)."""
    import os

    if what in ("dot", "text") and state.form == "graph":
        from ssa_course.son.printer import format_graphs, graphs_to_dot

        return graphs_to_dot(state.graph) if what == "dot" else format_graphs(state.graph)
    if state.form == "ssa" and what in ("bril", "text", "dot"):
        program = state.quads  # SSA quads print as Bril with phis
    else:
        program = finish_as_quads(state)
    from ssa_course.quads import bril

    if what in ("bril", "text"):
        return bril.to_bril_text(program)
    if what == "bril-json":
        return bril.dumps_json(program)
    if what == "julia":
        from ssa_course.ssa.julia import format_ir, program_ircode

        return "\n".join(format_ir(ir) for ir in program_ircode(program).values())
    if what == "dot":
        from ssa_course.quads.cfg import build_cfg
        from ssa_course.viz.dot import program_cfg_dot

        cfgs = {n: build_cfg(f) for n, f in program.functions.items()}
        return program_cfg_dot(cfgs, title=os.path.basename(state.comp.filename))
    raise UsageError(f"unknown output '{what}' (bril, bril-json, julia, dot, text)")
