"""``ssa-course opt``: pipelines of named passes, verified after every pass.

A pass (declared in the one registry, :mod:`ssa_course.registry`, by the lesson that
teaches it) transforms a :class:`PassState`: the program as a sea of nodes (form
``graph``), as SSA quads (``ssa``; ``phis`` once phi webs share names) or as ordinary
quads (``quads``). Each pass says which
forms it accepts and which it makes, so a pipeline such as ``parse,sccp,gcm,out-of-ssa``
is checked before anything runs, and the program is verified with the verifier of its
form's representation: a pass that breaks an invariant is named.

When the verifier runs (#22: verifying after every pass was a third of ``opt``'s time on
large programs): with ``verify_each`` (``opt --verify-each``, or the environment variable
``SSA_COURSE_VERIFY_EACH=1``, which ``tests/conftest.py`` sets for every test) after every
pass, as before; otherwise once, after the last pass -- and if that check fails, or a pass
crashes, the pipeline runs again from the source verifying after every pass, so the error
still names the first pass that broke an invariant. A correct pipeline pays for one check.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ssa_course import registry
from ssa_course.compilation import Compilation, from_quads
from ssa_course.errors import UsageError, VerifyError
from ssa_course.registry import Pass

if TYPE_CHECKING:
    from ssa_course.quads.ir import Program
    from ssa_course.son.program import SeaOfNodes

# ``tail-rec`` is registered but not here: the frames it saves would change where a deep
# recursion stops with ``stack overflow``, an error every stage must agree on (docs/quads.md,
# "Tail calls").
DEFAULT_PIPELINE = ("inline", "unroll", "const-params", "sroa", "parse", "sccp", "ranges", "bce",
                    "gcm", "dom-cse", "coalesce-phis", "out-of-ssa", "coalesce", "dce",
                    "closed-form", "try-merge", "layout", "thread", "copies", "dce", "landing")



class _FormRepresentation(Mapping[str, str]):
    """Form -> the name of the representation whose verifier checks a program in that form,
    read from the registry (each representation says which forms it ``checks``; "source":
    a pass such as ``inline`` that hands ``parse`` a new program leaves its quads)."""

    def __getitem__(self, form: str) -> str:
        return registry.checker_of(form).name

    def __iter__(self) -> Iterator[str]:
        return iter(registry.FORMS)

    def __len__(self) -> int:
        return len(registry.FORMS)


FORM_REPRESENTATION: Mapping[str, str] = _FormRepresentation()


@dataclass
class PassState:
    comp: Compilation
    graph: SeaOfNodes | None = None  # form "graph"
    quads: Program | None = None  # forms "ssa", "phis" and "quads"
    form: str = "source"
    done: list[str] = field(default_factory=list)
    # what passes counted, per function: counter -> [before, after] (after None: a total)
    counters: dict[str, dict[str, list[int | None]]] = field(default_factory=dict)
    # verified after every pass (run_pipeline's ``verify_each``): ``emit`` then also reads
    # ``--emit bril``'s text back
    verify_each: bool = False

    def count(self, function: str, what: str, before: int, after: int | None = None) -> None:
        """A pass reports a counter of one function (``opt --stats`` prints them): a count
        ``before`` and ``after`` it ran, or with ``after`` None a total. A counter
        reported again keeps its first ``before`` (a total adds up)."""
        slot = self.counters.setdefault(function, {}).get(what)
        if slot is None:
            self.counters[function][what] = [before, after]
        elif after is None:
            slot[0] = (slot[0] or 0) + before
        else:
            slot[1] = after

    def quads_program(self) -> Program:
        """The program of a pass that needs form ``ssa``, ``phis`` or ``quads`` (the
        pipeline was checked: one is there)."""
        assert self.quads is not None, f"form {self.form!r} has no quads program"
        return self.quads

    def graph_program(self) -> SeaOfNodes:
        """The program of a pass that needs form ``graph`` (the pipeline was checked)."""
        assert self.graph is not None, f"form {self.form!r} has no graph"
        return self.graph

    def stats_lines(self) -> list[str]:
        """One line per function: ``main: bounds checks: 3 before, 0 after; ...``."""
        lines = []
        for fn, counters in self.counters.items():
            pairs = [f"{what}: {b} before, {a} after" for what, (b, a) in counters.items()
                     if a is not None]
            totals = [f"{what}: {b}" for what, (b, a) in counters.items() if a is None]
            parts = pairs + totals  # before/after counts first, then totals
            lines.append(f"{fn}: " + "; ".join(parts))
        return lines


def all_passes() -> list[Pass]:
    return registry.passes()


def get_pass(name: str) -> Pass:
    return registry.get_pass(name)


VERIFY_EACH_ENV = "SSA_COURSE_VERIFY_EACH"


def verify_each_default() -> bool:
    """Whether pipelines verify after every pass when not told (the environment)."""
    return os.environ.get(VERIFY_EACH_ENV, "") not in ("", "0")


def run_pass(state: PassState, p: Pass, verify: bool = True) -> None:
    """Run one pass, check the form it leaves, and verify the program (unless ``verify``
    is false: :func:`run_pipeline` then checks the end result)."""
    if state.form not in p.needs:
        raise UsageError(f"pass '{p.name}' works on {' or '.join(p.needs)}, but after "
                         f"{', '.join(state.done) or 'nothing'} the program is {state.form}")
    from ssa_course.runtime import paused_gc

    with paused_gc():  # as in Compilation.cached: a pass builds a new representation
        p.run(state)
    state.form = p.makes
    if p.makes == "graph":
        state.quads = None
    else:
        state.graph = None
    state.done.append(p.name)
    if verify:
        verify_state(state)


def verify_state(state: PassState) -> None:
    """Verify the program as the last pass left it (the error names that pass)."""
    artifact = state.graph if state.form == "graph" else state.quads
    if state.done:
        registry.verify_as(FORM_REPRESENTATION[state.form], artifact, after=state.done[-1])


def check_pipeline(names: list[str] | tuple[str, ...]) -> list[Pass]:
    """The passes of a pipeline, checked before anything runs: every name is known and
    every pass gets the form it needs from the one before it (a program starts as
    ``source``). A bad pipeline raises one UsageError naming the pass and what it needs."""
    passes = [get_pass(name) for name in names]
    form = "source"
    for i, p in enumerate(passes):
        if form not in p.needs:
            done = ", ".join(q.name for q in passes[:i]) or "nothing"
            raise UsageError(f"pass '{p.name}' works on {' or '.join(p.needs)}, but after "
                             f"{done} the program is {form}")
        form = p.makes
    return passes


def accepting(form: str) -> list[Pass]:
    """The passes that take a program in ``form`` (what may come next in a pipeline)."""
    return [p for p in all_passes() if form in p.needs]


def run_pipeline(comp: Compilation, names: list[str] | tuple[str, ...] = DEFAULT_PIPELINE,
                 verify_each: bool | None = None) -> PassState:
    """Run the passes in order (an unknown name, or a pass that does not take what the
    one before it makes, is reported before anything runs: :func:`check_pipeline`).
    ``verify_each``: verify after every pass (None: :func:`verify_each_default`); else
    once at the end, retracing with every check only when something went wrong."""
    from ssa_course.runtime import paused_gc

    passes = check_pipeline(names)
    comp.check()
    if verify_each is None:
        verify_each = verify_each_default()
    state = PassState(comp, verify_each=verify_each)
    with paused_gc():  # the whole pipeline, checks included (not only each pass)
        if verify_each:
            for p in passes:
                run_pass(state, p)
            return state
        try:
            for p in passes:
                run_pass(state, p, verify=False)
            verify_state(state)
        except UsageError:
            raise  # the user's mistake, not a broken pass
        except Exception:
            _retrace(comp, names)  # raises a VerifyError naming the pass that broke a rule
            raise
    return state


def _retrace(comp: Compilation, names: list[str] | tuple[str, ...]) -> None:
    """Run the pipeline again on a fresh compilation of the same source, verifying after
    every pass: a VerifyError it raises names the pass that broke an invariant first."""
    from ssa_course.compilation import compile_source

    again = compile_source(comp.source, comp.filename, comp.kind)  # (quads: their Bril text)
    try:
        run_pipeline(again, names, verify_each=True)
    except VerifyError:
        raise
    except Exception:  # the first error is the one to report
        return


def finish_as_quads(state: PassState) -> Program:
    """The program as ordinary quads, lowering whatever the pipeline left."""
    if state.form == "source":
        return state.comp.quads
    if state.form == "graph":
        run_pass(state, get_pass("gcm"))
    if state.form in ("ssa", "phis"):
        run_pass(state, get_pass("out-of-ssa"))
    return state.quads_program()


def result(state: PassState) -> Compilation:
    """The pipeline's result as a new program, built from quads (SSA quads stay as they
    are: their phis are part of what ``quads`` prints)."""
    if state.form == "source":
        return state.comp
    if state.form == "graph":
        run_pass(state, get_pass("gcm"))
    return from_quads(state.quads_program(), state.comp.filename)


def emit(state: PassState, name: str = "quads", fmt: str = "text") -> str:
    """The pipeline's result as representation ``name`` (any name ``show --as`` accepts),
    as text or DOT. A program still in graph form is shown as it is by the graph
    representations; everything else is built from the result's quads."""
    from ssa_course import views

    rep = registry.representation(name)
    if fmt not in ("text", "dot"):
        raise UsageError(f"unknown format '{fmt}' (text or dot)")
    if state.form == "graph" and rep.form == "graph":  # shown as it is, never rebuilt
        if fmt == "text":
            return rep.text(state.graph)
        return rep.dot(state.graph, os.path.basename(state.comp.filename), None)
    if rep.tiny_only:
        raise UsageError(f"'{rep.name}' shows Tiny source; the optimizer's result is quads "
                         f"(try --emit quads)")
    from ssa_course.runtime import paused_gc

    with paused_gc():  # as in run_pipeline: the result is a new program, read back for
        # ``bril``; the collector would only walk its thousands of fresh objects
        comp = result(state)
        if rep.name == "bril" and fmt == "text" and not state.verify_each:
            return _bril_text(comp)
        return views.render(comp, rep.name, "text" if fmt == "text" else "dot")


def _bril_text(comp: Compilation) -> str:
    """``--emit bril`` outside the tests: the text the ``bril`` representation shows, without
    reading it back (#22: at 10k statements the reading was a fifth of ``opt``'s time). The
    representation prints the program its text reads back as; the printer and the reader
    agree (a program read back prints as the same text), which the tests check on every
    pipeline they run: after a pipeline run with ``verify_each`` (``opt --verify-each``, or
    as ``tests/conftest.py`` sets it) ``emit`` reads the text back as before, and
    ``tests/test_opt.py`` compares the two ways. What the pipeline's last check did not
    see -- an undefined read made explicit, SSA translated out -- is verified here, as the
    representation would."""
    text = comp.bril_text()
    if comp.quads is not comp.quads_as_written:
        registry.verify_as("bril", comp.quads)
    return text
