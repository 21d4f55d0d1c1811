"""``explore(source)``: one panel onto every representation of a program.

A representation selector (every registered view: source, AST, quads, CFG, SSA, Julia IR,
... -- later lessons add theirs by registering a view), a text/graph face switch, a
pessimistic/optimistic switch for the sea of nodes (the parser's types or SCCP's, nodes
whose types differ in orange, nodes SCCP proves dead in grey), the
source itself (editable), and a stats line. A program that does not compile shows its
located error message in the panel instead of a traceback. Without Graphviz, graphs are
shown with the matplotlib fallback picture.
"""

from __future__ import annotations

import html
import re

import ipywidgets as w

from ssa_course.errors import SsaCourseError
from ssa_course.pipeline import Compilation, compile_source
from ssa_course.views import all_views, render

SOURCE = "source"
COMPARE_VIEW = "son"  # the view the pessimistic/optimistic switch applies to


class Explorer:
    """The widget and its state; :attr:`panel` is what a notebook displays."""

    def __init__(self, source: str | Compilation, view: str = "cfg", face: str = "graph"):
        comp = source if isinstance(source, Compilation) else compile_source(source)
        self.kind = comp.kind
        self.filename = comp.filename
        names = [SOURCE] + [v.name for v in all_views()
                            if not (v.tiny_only and comp.kind != "tiny")]
        self.view = w.Dropdown(options=names, value=view if view in names else names[1],
                               description="show")
        self.face = w.ToggleButtons(options=["text", "graph"], value=face)
        # the sea of nodes as the parser left it, typed pessimistically or by SCCP
        self.mode = w.ToggleButtons(options=["pessimistic", "optimistic"],
                                    value="pessimistic", tooltips=[
                                        "types the parser's peepholes proved",
                                        "types SCCP proves (orange: they differ)"])
        self.editor = w.Textarea(value=comp.source, continuous_update=False,
                                 layout=w.Layout(width="100%", height="12em"))
        self.stats = w.HTML()
        self.body = w.Box(layout=w.Layout(overflow="auto"))
        self.panel = w.VBox([w.HBox([self.view, self.face, self.mode]), self.stats, self.body,
                             w.Accordion(children=[self.editor], titles=("source",))])
        for control in (self.view, self.face, self.mode, self.editor):
            control.observe(lambda _change: self.refresh(), names="value")
        self.refresh()

    def compilation(self) -> Compilation:
        return compile_source(self.editor.value, self.filename, self.kind)

    def refresh(self) -> None:
        """Re-render the chosen face of the chosen representation."""
        comp = self.compilation()
        name = self.view.value
        self.mode.disabled = name != COMPARE_VIEW
        try:
            comp.check()
            if name == COMPARE_VIEW:
                self._show_compare(comp)
                return
            if name == SOURCE:
                self._show_text(comp.source, f"{comp.source.count(chr(10)) + 1} lines")
                return
            view = next(v for v in all_views() if v.name == name)
            extra = view.stats(comp) if view.stats is not None else ""
            if self.face.value == "graph" and view.dot is not None:
                self._show_graph(render(comp, name, "dot"), extra)
            else:
                text = render(comp, name, "text")
                self._show_text(text, extra or f"{text.count(chr(10))} lines")
        except SsaCourseError as e:
            self.stats.value = "<b style='color:#b00'>does not compile</b>"
            self.body.children = [w.HTML(f"<pre style='color:#b00'>{html.escape(e.render())}"
                                         "</pre>")]

    def _show_compare(self, comp: Compilation) -> None:
        from ssa_course.son.stages import compare_modes

        mode = self.mode.value
        if self.face.value == "graph":
            dot, summary = compare_modes(comp, mode, "dot")
            self._show_graph(dot, f"{mode} | {summary}")
        else:
            text, summary = compare_modes(comp, mode, "text")
            self._show_text(text, f"{mode} | {summary}")

    def _show_text(self, text: str, summary: str) -> None:
        self.stats.value = html.escape(f"{self.view.value}: {summary}")
        self.body.children = [w.HTML(f"<pre>{html.escape(text)}</pre>")]

    def _show_graph(self, dot: str, summary: str = "") -> None:
        from ssa_course.viz.dot import Drawing, dot_available

        if not summary:
            nodes = len(re.findall(r"^\s*\"[^\"]+\" \[", dot, re.M))
            edges = len(re.findall(r"->", dot))
            summary = f"{nodes} nodes, {edges} edges"
        self.stats.value = html.escape(f"{self.view.value}: {summary}")
        drawing = Drawing(dot)
        if dot_available():
            self.body.children = [w.HTML(drawing.svg())]
        else:
            self.body.children = [w.Image(value=drawing.png(), format="png")]


def explore(source: str | Compilation, view: str = "cfg", face: str = "graph") -> w.VBox:
    """A panel showing ``source`` as any representation (pick it, pick text or graph)."""
    return Explorer(source, view, face).panel
