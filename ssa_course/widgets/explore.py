"""``explore(source)``: one panel onto every representation of a program.

A representation selector (every registered view: source, AST, quads, CFG, SSA, Julia IR,
... -- later lessons add theirs by registering a view), a text/graph face switch, a
pessimistic/optimistic switch for the sea of nodes (pessimistic: the parser's graph and
types, nodes SCCP types differently in orange, nodes SCCP proves dead in grey;
optimistic: the graph after the optimistic pass, ``son-opt``, with the nodes it made in
blue, retyped in orange, and the parser's nodes it removed listed, as red boxes in a
drawing, and counted with the rewrites that fired), a zoom for drawings, the
source itself (editable), and a stats line. "linked" shows the source beside the
representation (and a second one, "beside"), linked by line: clicking or hovering a source
line highlights its items in the text and the drawing, clicking an item its line (the
page of ``show --format html``, :mod:`ssa_course.linked_page`). "step through the
optimizer" runs the pipeline in "passes" and steps through it (prev/next, a slider; the
program after each pass as a diff, unchanged passes folded away, SCCP's steps and each
peephole rewrite on request: :mod:`ssa_course.widgets.steps`).
Every switch is honoured in every mode, or disabled where it would change nothing (the
function selector in a listing, "beside" when not linked, all but "passes" while
stepping): linked to the source, the pessimistic/optimistic switch picks ``son`` or
``son-opt``.

Drawings are scaled to the panel's width ("fit": a large graph shrinks to fit, a small one
keeps its size) or zoomed, and carry a legend of the colours and line styles the current
drawing uses. Graphs are drawn by the renderer hook of :mod:`ssa_course.viz.render`
(Graphviz, in the browser its WebAssembly build, else the matplotlib picture, else the
DOT text).
A function selector draws one function (default: ``main``, or all when they are small);
drawings follow :class:`~ssa_course.viz.options.DrawOptions` (a node budget, constants at
their users) so a large program still draws in a fraction of a second.

Nothing is recomputed that did not change: the compilation is kept while the source text
stays the same (so its representations and SCCP's table are built once), and every
picture or text shown is remembered by what it depends on (source, view, face, mode,
function) -- flipping the pessimistic/optimistic switch back and forth, or between views,
shows the remembered picture at once.

Mistakes are shown in the panel as one located message, never as a traceback: a program
that does not compile (Tiny or Bril, also after editing it in the panel), and arguments of
the wrong type or an unknown view given to :func:`explore`.
"""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING

from ssa_course import registry
from ssa_course.compilation import Compilation, compile_source
from ssa_course.errors import SsaCourseError, UsageError, VerifyError
from ssa_course.views import render, stats
from ssa_course.viz.legend import family_of, legend_entries, legend_html
from ssa_course.viz.options import DrawOptions
from ssa_course.viz.zoom import ZOOMS, scaled_svg, zoom_factor
from ssa_course.widgets.steps import DEFAULT_PASSES, StepThrough

if TYPE_CHECKING:
    import ipywidgets

try:  # optional: the module imports without it, explore() then says what is missing
    import ipywidgets as w
except ImportError:
    w = None

NO_WIDGETS = ("explore() needs ipywidgets (pip install ipywidgets); "
              "ssa_course.show(program, view) draws without it")

SOURCE = "source"
COMPARE_VIEW = "son"  # the view the pessimistic/optimistic switch applies to
FACES = ("text", "graph")
ERROR_STYLE = "color:#b00;white-space:pre-wrap"
AUTO = "(auto)"  # the function selector's default: main, or all when they are small
NONE = "(none)"  # the "beside" selector's default: one representation


def _kind_of_text(text: str) -> str:
    """Bril text starts with ``@``, Bril JSON with ``{``; anything else is Tiny."""
    head = text.lstrip()[:1]
    return {"@": "bril", "{": "bril-json"}.get(head, "tiny")


def argument_problem(source: object, view: object, face: object) -> Exception | None:
    """Why ``explore(source, view, face)`` cannot show anything (a TypeError for a wrong
    type, a ValueError for an unknown view or face), or None when it can."""
    if not isinstance(source, str | Compilation):
        return TypeError("explore(): 'source' must be the program text (a str) or a "
                         f"Compilation, not {type(source).__name__}")
    if not isinstance(view, str):
        return TypeError(f"explore(): 'view' must be a view name (a str), not "
                         f"{type(view).__name__}")
    if not isinstance(face, str):
        return TypeError(f"explore(): 'face' must be 'text' or 'graph' (a str), not "
                         f"{type(face).__name__}")
    names = [SOURCE] + [v.name for v in registry.representations()]
    if view not in names:
        return ValueError(f"explore(): unknown view {view!r}; the views are: "
                          f"{', '.join(names)}")
    if face not in FACES:
        return ValueError(f"explore(): unknown face {face!r}; the faces are: "
                          f"{', '.join(FACES)}")
    return None


class Explorer:
    """The widget and its state; :attr:`panel` is what a notebook displays.

    Raises TypeError (a wrong type) or ValueError (an unknown view or face) naming the
    parameter; :func:`explore` shows the same message in a panel instead."""

    def __init__(self, source: str | Compilation, view: str = "cfg", face: str = "graph"):
        problem = argument_problem(source, view, face)
        if problem is not None:
            raise problem
        comp = source if isinstance(source, Compilation) else compile_source(
            source, kind=_kind_of_text(source))
        self.kind = comp.kind
        self.filename = comp.filename
        names = [SOURCE] + [v.name for v in registry.representations()
                            if not (v.tiny_only and comp.kind != "tiny")]
        self.view = w.Dropdown(options=names, value=view if view in names else names[1],
                               description="show")
        self.face = w.ToggleButtons(options=list(FACES), value=face)
        # the sea of nodes as the parser left it, or after the optimistic pass (son-opt)
        self.mode = w.ToggleButtons(options=["pessimistic", "optimistic"],
                                    value="pessimistic", tooltips=[
                                        "the parser's graph and types (orange: SCCP types "
                                        "it differently, grey: SCCP proves it dead)",
                                        "the graph after inlining, SCCP and the iterative "
                                        "peepholes (son-opt): blue made, red removed, "
                                        "orange retyped"])
        self.zoom = w.SelectionSlider(options=list(ZOOMS), value="fit", description="zoom",
                                      continuous_update=False)
        self.function = w.Dropdown(options=[AUTO], value=AUTO, description="function")
        # sea-of-nodes drawings: frame the nodes by the block global code motion gives them
        self.blocks = w.Checkbox(value=False, description="GCM blocks", indent=False)
        self.linked = w.Checkbox(value=False, description="linked to the source",
                                 indent=False)
        self.beside = w.Dropdown(options=[NONE] + names[1:], value=NONE, description="beside")
        # the optimizer step by step (ssa_course.widgets.steps): the program after each
        # pass of the pipeline, in the chosen representation (the source: each form's own)
        self.stepping = w.Checkbox(value=False, description="step through the optimizer",
                                   indent=False)
        self.passes = w.Text(value=DEFAULT_PASSES, description="passes",
                             continuous_update=False, layout=w.Layout(width="40em"))
        self._comp: Compilation | None = comp  # kept while the source text stays the same
        self._shown: dict[tuple, tuple] = {}  # (source, view, face, mode, fn) -> what showed
        self._busy = False
        self._set_functions(comp)
        self.editor = w.Textarea(value=comp.source, continuous_update=False,
                                 layout=w.Layout(width="100%", height="12em"))
        self.stats = w.HTML()
        self.legend = w.HTML()
        self.body = w.Box(layout=w.Layout(overflow="auto", width="100%"))
        self._svg: str | None = None  # the last drawing, re-scaled without re-rendering
        self.panel = w.VBox([w.HBox([self.view, self.face, self.mode]),
                             w.HBox([self.function, self.blocks, self.zoom]),
                             w.HBox([self.linked, self.beside]),
                             w.HBox([self.stepping, self.passes]),
                             self.stats, self.legend, self.body,
                             w.Accordion(children=[self.editor], titles=("source",))])
        for control in (self.view, self.face, self.mode, self.function, self.blocks,
                        self.editor, self.linked, self.beside, self.stepping, self.passes):
            control.observe(lambda _change: self.refresh(), names="value")
        self.zoom.observe(lambda _change: self._rescale(), names="value")
        self.refresh()

    def compilation(self) -> Compilation:
        """The program in the editor, compiled once per text (the same object while the
        text does not change, with every representation it built)."""
        if self._comp is None or self._comp.source != self.editor.value:
            self._comp = compile_source(self.editor.value, self.filename, self.kind)
            self._shown.clear()
        return self._comp

    def _set_functions(self, comp: Compilation) -> None:
        """Offer the program's functions (kept as they are when it does not compile)."""
        try:
            names = [AUTO] + list(comp.quads.functions)
        except (SsaCourseError, RecursionError):
            return
        if list(self.function.options) != names:
            keep = self.function.value if self.function.value in names else AUTO
            self._busy = True  # changing the options fires the observer: no redraw yet
            try:
                self.function.options = names
                self.function.value = keep
            finally:
                self._busy = False

    def options(self) -> DrawOptions:
        """The drawing options the panel's controls say."""
        fn = self.function.value
        return DrawOptions(function=None if fn == AUTO else fn, blocks=self.blocks.value)

    def refresh(self) -> None:
        """Show the chosen face of the chosen representation (remembered when nothing it
        depends on changed)."""
        if self._busy:
            return
        name = self.view.value
        self._enable_what_applies(name)
        self._svg = None
        self.legend.value = ""
        try:
            comp = self.compilation()
            self._set_functions(comp)
            key = (comp.source, name, self.face.value, self.mode.value, self.function.value,
                   self.blocks.value, self.linked.value, self.beside.value,
                   self.stepping.value, self.passes.value)
            if key in self._shown:
                self._restore(self._shown[key])
            else:
                self._show(comp, name)
                self._shown[key] = (self.stats.value, self.legend.value, self._svg,
                                    self.body.children)
        except VerifyError as e:
            self._show_error("an IR verifier failed", e.render())
        except SsaCourseError as e:
            self._show_error("does not compile", e.render())
        except RecursionError:
            self._show_error("too deep", f"{name}: the program is nested too deeply to show")
        except Exception as e:
            self._show_error("internal error",
                             f"{name}: {type(e).__name__}: {e} (please report this)")
        self.zoom.disabled = self._svg is None

    def _enable_what_applies(self, name: str) -> None:
        """Every control that would change nothing in the current mode is disabled, so no
        switch says one thing while the panel shows another. The pessimistic/optimistic
        switch applies to the sea of nodes, drawn, listed or linked to the source (linked,
        optimistic: the son-opt graph); the function selector and the GCM frames to
        drawings; "beside" to the linked view; stepping through the optimizer shows each
        pass's program in ``name``, and only "passes" applies there."""
        stepping = self.stepping.value
        drawn = self.face.value == "graph" and name != SOURCE and not stepping
        self.mode.disabled = name != COMPARE_VIEW or stepping
        self.face.disabled = name == SOURCE or stepping
        self.function.disabled = not drawn
        self.blocks.disabled = not (drawn and name.startswith("son"))
        self.linked.disabled = name == SOURCE or stepping
        self.beside.disabled = not (self.linked.value and name != SOURCE) or stepping
        self.passes.disabled = not stepping

    def _restore(self, shown: tuple) -> None:
        self.stats.value, self.legend.value, self._svg, children = shown
        if self._svg is not None:
            self._rescale()  # at the zoom chosen now
        else:
            self.body.children = children

    def _show(self, comp: Compilation, name: str) -> None:
        comp.check()
        if self.stepping.value:
            self._show_steps(comp, name)
            return
        if self.linked.value and name != SOURCE:
            self._show_linked(comp, name)
            return
        if name == COMPARE_VIEW:
            self._show_compare(comp)
            return
        if name == SOURCE:
            self._show_text(comp.source, f"{comp.source.count(chr(10)) + 1} lines")
            return
        extra = stats(comp, name) or ""
        if self.face.value == "graph":
            self._show_graph(render(comp, name, "dot", self.options()), extra)
        else:
            text = render(comp, name, "text")
            self._show_text(text, extra or f"{text.count(chr(10))} lines")

    def _show_linked(self, comp: Compilation, name: str) -> None:
        """The source, ``name`` and the "beside" view, linked by line (the page's HTML and
        script, in an Output widget so the script runs)."""
        from IPython.display import HTML, display

        from ssa_course.linked_page import linked_html

        names = [self._as_mode(name)]
        beside = self.beside.value  # a second view, as chosen (the switch is the main one's)
        if beside not in (NONE, SOURCE, *names):
            names.append(beside)
        fragment = linked_html(comp, names, self.options(), draw=self.face.value == "graph")
        mode = f" ({self.mode.value})" if name == COMPARE_VIEW else ""
        self.stats.value = html.escape(f"{' | '.join(names)}{mode}: linked to the source "
                                       "by line")
        out = w.Output(layout=w.Layout(width="100%"))
        with out:
            display(HTML(fragment))
        out.fragment = fragment  # what it shows (tests read it)
        self.body.children = [out]

    def _as_mode(self, name: str) -> str:
        """The sea of nodes the pessimistic/optimistic switch says when linked to the
        source: the parser's graph (``son``) or the graph after the optimistic pass
        (``son-opt``); any other view as it is."""
        if name == COMPARE_VIEW and self.mode.value == "optimistic":
            return "son-opt"
        return name

    def _show_steps(self, comp: Compilation, name: str) -> None:
        """The pipeline in "passes", step by step, shown as ``name`` (the source: each
        form's own representation)."""
        emit = None if name == SOURCE or registry.representation(name).tiny_only else name
        self.steps = StepThrough(comp, self.passes.value, emit)
        self.stats.value = html.escape(f"opt -p {self.passes.value}: "
                                       f"{len(self.steps.steps)} steps")
        self.body.children = [self.steps.panel]

    def _show_error(self, headline: str, message: str) -> None:
        self.stats.value = f"<b style='color:#b00'>{html.escape(headline)}</b>"
        self.body.children = [w.HTML(f"<pre style='{ERROR_STYLE}'>{html.escape(message)}"
                                     "</pre>")]

    def _show_compare(self, comp: Compilation) -> None:
        from ssa_course.lessons.l07_optimistic import compare_modes

        mode = self.mode.value
        if self.face.value == "graph":
            dot, summary = compare_modes(comp, mode, "dot", self.options())
            self._show_graph(dot, f"{mode} | {summary}")
        else:
            text, summary = compare_modes(comp, mode, "text")
            self._show_text(text, f"{mode} | {summary}")

    def _show_text(self, text: str, summary: str) -> None:
        self.stats.value = html.escape(f"{self.view.value}: {summary}")
        self.body.children = [w.HTML(f"<pre>{html.escape(text)}</pre>")]

    def _show_graph(self, dot: str, summary: str = "") -> None:
        from ssa_course.viz import render as renderers

        if not summary:
            nodes = len(re.findall(r"^\s*\"[^\"]+\" \[", dot, re.M))
            edges = len(re.findall(r"->", dot))
            summary = f"{nodes} nodes, {edges} edges"
        self.stats.value = html.escape(f"{self.view.value}: {summary}")
        self.legend.value = legend_html(legend_entries(dot, family_of(self.view.value)))
        drawing = renderers.Drawing(dot)
        if renderers.svg_available():
            try:
                self._svg = drawing.svg()
                self._rescale()
                return
            except renderers.RenderError as e:  # Graphviz failed on this graph
                self.stats.value += html.escape(f" ({e.render()}; a simpler drawing below)")
        if renderers.matplotlib_available():
            self.body.children = [w.Image(value=drawing.png(), format="png",
                                          layout=w.Layout(max_width="100%"))]
        else:  # neither Graphviz nor matplotlib: the graph as DOT text
            self.body.children = [w.HTML(renderers.dot_text_html(dot))]

    def _rescale(self) -> None:
        """Show the last SVG at the chosen zoom (no new Graphviz run)."""
        if self._svg is None:
            return
        self.body.children = [w.HTML(scaled_svg(self._svg, zoom_factor(self.zoom.value)),
                                     layout=w.Layout(width="100%"))]


def error_panel(message: str) -> ipywidgets.VBox:
    """A panel holding one message (what :func:`explore` shows instead of a traceback)."""
    return w.VBox([w.HTML(f"<pre style='{ERROR_STYLE}'>{html.escape(message)}</pre>")])


def explore(source: str | Compilation, view: str = "cfg", face: str = "graph") -> ipywidgets.VBox:
    """A panel showing ``source`` (Tiny text, Bril text or JSON, or a Compilation) as any
    representation (pick it, pick text or graph). Wrong arguments give a panel with one
    message saying which parameter is wrong."""
    if w is None:
        raise UsageError(NO_WIDGETS)
    problem = argument_problem(source, view, face)
    if problem is not None:
        return error_panel(str(problem))
    return Explorer(source, view, face).panel
