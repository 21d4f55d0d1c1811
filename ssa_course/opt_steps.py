"""Step through the optimizer (Compiler Explorer's "Opt Pipeline" viewer, for the course).

:func:`pipeline_steps` runs an ``opt`` pipeline one pass at a time and keeps the program
after each pass as text -- in the representation asked for (``emit``: any name ``opt
--emit`` takes), or by default in its form's own (quads before ``parse`` and after
``gcm``, the sea of nodes in between) -- with a line diff against the step before and
whether anything changed (the page and the widget fold the passes that changed nothing).

Inside a pass on the sea of nodes (``sccp``, ``son-inline``, ...) two finer kinds of step,
when ``rewrites`` is on and the representation is the graph's own:

* ``sccp`` -- the analysis of lesson 07, one step per type that fell (its trace:
  :func:`ssa_course.son.sccp.sccp` with ``trace=True``, run on a copy), the function's
  listing with the types known so far (TOP where the worklist has not been yet);
* ``rewrite`` -- each rewrite of the peepholes' worklist (constant, GVN, a node's own
  ``idealize()`` rule), reported by :func:`ssa_course.son.peephole.recording_rewrites`
  (a hook that only listens: the graph made is the same), the listing after it.

At most :data:`SUBSTEPS` of each per pass (the rest are counted in the pass's note). The
page is :mod:`ssa_course.steps_page` (``ssa-course opt FILE -p ... --format html``), the
notebook widget :func:`ssa_course.widgets.steps.step_through`.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field

from ssa_course import passes, registry
from ssa_course.compilation import Compilation

SUBSTEPS = 200  # rewrite (and SCCP) steps kept per pass; the others are counted


@dataclass
class Step:
    """The program after one step: ``kind`` is ``start`` (before any pass), ``pass``,
    ``sccp`` (a type SCCP lowered) or ``rewrite`` (one peephole); ``parent`` is the index
    of the pass a finer step belongs to. ``diff``: the text against the step before, a
    ``(" " | "+" | "-", line)`` per line."""

    title: str
    kind: str
    shown_as: str
    text: str
    changed: bool
    diff: list[tuple[str, str]]
    note: str = ""
    parent: int | None = None
    children: list[int] = field(default_factory=list)

    @property
    def added(self) -> int:
        return sum(1 for tag, _ in self.diff if tag == "+")

    @property
    def removed(self) -> int:
        return sum(1 for tag, _ in self.diff if tag == "-")


def line_diff(before: str, after: str) -> list[tuple[str, str]]:
    """``after`` line by line, with the lines of ``before`` it lost in their place."""
    out: list[tuple[str, str]] = []
    a, b = before.splitlines(), after.splitlines()
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            out += [(" ", line) for line in a[i1:i2]]
            continue
        out += [("-", line) for line in a[i1:i2]]
        out += [("+", line) for line in b[j1:j2]]
    return out


def _own(form: str) -> str:
    return "son" if form == "graph" else "quads"


def _render(state: passes.PassState, emit: str | None) -> tuple[str, str]:
    """The program as the state holds it: (representation, text). A graph shown as quads
    is scheduled on a copy (the pipeline goes on with the graph)."""
    name = emit or _own(state.form)
    rep = registry.representation(name)
    if state.form == "graph":
        if rep.form == "graph":
            return name, rep.text(state.graph_program())
        from ssa_course.son.clone import clone_program

        copy = passes.PassState(state.comp, graph=clone_program(state.graph_program()),
                                form="graph", done=list(state.done))
        return name, passes.emit(copy, name)
    return name, passes.emit(state, name)


def _sccp_steps(state: passes.PassState, limit: int) -> tuple[list[tuple[str, str]], int]:
    """SCCP's trace on a copy of the graph: (title, listing) per type that fell, and how
    many steps there were in all."""
    from ssa_course.son.clone import clone_program
    from ssa_course.son.printer import format_graph
    from ssa_course.son.sccp import sccp
    from ssa_course.son.types import TOP

    program = clone_program(state.graph_program())
    out: list[tuple[str, str]] = []
    total = 0
    for name, fg in program.functions.items():
        result = sccp(fg, trace=True)
        total += len(result.trace)
        nodes = fg.nodes()
        saved = {n.id: n.type for n in nodes}
        types: dict[int, object] = {}
        try:
            for step in result.trace:
                if len(out) >= limit:
                    break
                types[step.node] = step.new_type
                for n in nodes:
                    n.type = types.get(n.id, TOP)  # type: ignore[assignment]
                pushed = " ".join(f"%{p}" for p in step.pushed)
                title = (f"{name}: %{step.node} {step.label}: {step.old} -> {step.new}"
                         + (f" (pushes {pushed})" if pushed else ""))
                out.append((title, format_graph(fg) + "\n"))
        finally:
            for n in nodes:
                n.type = saved[n.id]
    return out, total


def _run_recording(state: passes.PassState, p: registry.Pass, limit: int
                   ) -> tuple[list[tuple[str, str]], int]:
    """Run pass ``p`` listening to the peepholes: (title, listing before it) per rewrite
    (at most ``limit`` listings), and how many rewrites there were."""
    from ssa_course.son.peephole import Rewrite, recording_rewrites

    rep = registry.representation("son")
    seen: list[tuple[str, str]] = []
    count = 0

    def heard(r: Rewrite) -> None:
        nonlocal count
        count += 1
        if len(seen) < limit + 1:  # one more: the listing after the last one kept
            seen.append((f"{r.function}: {r.rule}: {r.before} -> {r.after}",
                         rep.text(state.graph_program())))

    with recording_rewrites(heard):
        passes.run_pass(state, p)
    return seen, count


def pipeline_steps(comp: Compilation, names: list[str] | tuple[str, ...],
                   emit: str | None = None, rewrites: bool = True,
                   limit: int = SUBSTEPS) -> list[Step]:
    """The program before the pipeline and after each of its passes (and, with
    ``rewrites``, each SCCP step and peephole rewrite inside the graph passes)."""
    plan = passes.check_pipeline(names)
    if emit is not None:
        registry.representation(emit)  # an unknown name: one line, before any work
    comp.check()
    state = passes.PassState(comp, verify_each=passes.verify_each_default())
    shown, text = _render(state, emit)
    steps = [Step(f"{os.path.basename(comp.filename)}: before any pass", "start", shown, text, True,
                  [(" ", line) for line in text.splitlines()])]
    for p in plan:
        fine = rewrites and state.form == "graph" and (emit is None or registry.representation(
            emit).form == "graph")
        sub: list[tuple[str, str, str]] = []  # (kind, title, text after)
        note = ""
        if fine:
            if p.name == "sccp":
                traced, total = _sccp_steps(state, limit)
                sub += [("sccp", t, x) for t, x in traced]
                if total > len(traced):
                    note += f"SCCP: {total} type changes, the first {len(traced)} shown. "
            heard, count = _run_recording(state, p, limit)
        else:
            passes.run_pass(state, p)
        shown, after = _render(state, emit)
        if fine:
            # each listing was taken as a rewrite was found, before it was applied: the
            # one after rewrite i is the one heard at i + 1 (the last: the pass's result)
            kept = heard[:limit]
            if kept and kept[0][1] != steps[-1].text:
                sub.append(("rewrite", "before the first rewrite (what the pass did "
                            "before its worklist: types installed, dead code swept)",
                            kept[0][1]))
            sub += [("rewrite", title, heard[i + 1][1] if i + 1 < len(heard) else after)
                    for i, (title, _) in enumerate(kept)]
            if count > len(kept):
                note += f"{count} rewrites, the first {len(kept)} shown."
        before = steps[-1].text
        same_rep = steps[-1].shown_as == shown
        diff = line_diff(before, after) if same_rep else [("+", line)
                                                          for line in after.splitlines()]
        changed = after != before or not same_rep
        index = len(steps)
        steps.append(Step(p.name, "pass", shown, after, changed, diff,
                          note.strip() or ("" if same_rep else
                                           f"now shown as {shown} (was {steps[-1].shown_as})")))
        previous, kind_before = (before if same_rep else ""), ""
        for kind, title, text in sub:
            if kind != kind_before:  # SCCP's listings are one function's; rewrites the
                # whole program's, from where the pass started
                previous = text if kind == "sccp" else (before if same_rep else "")
                kind_before = kind
            steps[index].children.append(len(steps))
            steps.append(Step(title, kind, shown, text, kind == "sccp" or text != previous,
                              line_diff(previous, text), parent=index))
            previous = text
    return steps


CONTEXT = 8  # unchanged lines kept around a change in a rewrite's or SCCP step's diff


def condensed(diff: list[tuple[str, str]], context: int = CONTEXT) -> list[tuple[str, str]]:
    """``diff`` with each run of more than ``2 * context`` unchanged lines cut to its
    first and last ``context``, the cut one ``("=", "N unchanged lines")`` entry."""
    out: list[tuple[str, str]] = []
    run: list[tuple[str, str]] = []

    def flush(first: bool, last: bool) -> None:
        head = 0 if first and not last else context  # (no change at all: its start)
        tail = 0 if last else context
        if len(run) > head + tail + 1:
            out.extend(run[:head])
            out.append(("=", f"{len(run) - head - tail} unchanged lines"))
            out.extend(run[len(run) - tail:] if tail else [])
        else:
            out.extend(run)
        run.clear()

    first = True
    for entry in diff:
        if entry[0] == " ":
            run.append(entry)
            continue
        flush(first, False)
        first = False
        out.append(entry)
    flush(first, True)
    return out


def as_data(steps: list[Step]) -> list[dict]:
    """The steps as plain data (the page embeds it as JSON): a pass's whole program, a
    rewrite's or SCCP step's changes with :data:`CONTEXT` lines around them (each is one
    small change in a long listing)."""
    return [{"title": s.title, "kind": s.kind, "shown_as": s.shown_as, "changed": s.changed,
             "note": s.note, "parent": s.parent, "children": s.children,
             "added": s.added, "removed": s.removed,
             "diff": [[tag, line] for tag, line in (
                 s.diff if s.kind in ("start", "pass") else condensed(s.diff))]}
            for s in steps]
