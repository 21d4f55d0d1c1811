"""``step_through(source, passes)``: the optimizer step by step in a notebook.

The widget twin of ``ssa-course opt FILE -p ... --format html`` (:mod:`ssa_course.
steps_page`; the steps are :mod:`ssa_course.opt_steps`'): prev / next buttons and a
slider over the steps, "unchanged passes" (folded away by default), "rewrites" (SCCP's
steps and each peephole rewrite inside the graph passes), and the step's program as a
diff against the step before (added lines green, removed red and struck through) or as
text. Plain ipywidgets, no script of its own: it works in Jupyter and in JupyterLite.
The explorer (:func:`ssa_course.widgets.explore.explore`) shows it under "step through".
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from ssa_course.compilation import Compilation, compile_source
from ssa_course.errors import UsageError
from ssa_course.opt_steps import Step, pipeline_steps

if TYPE_CHECKING:
    import ipywidgets

try:
    import ipywidgets as w
except ImportError:
    w = None

DEFAULT_PASSES = "parse,sccp,gcm,out-of-ssa,dce,copies"
_LINE = {" ": "", "+": "background:#d8f5d0",
         "-": "background:#fbd9d9;text-decoration:line-through;color:#822"}


def diff_html(step: Step, as_text: bool = False) -> str:
    """The step's program: its diff (``as_text``: only the lines it has) as HTML."""
    rows = []
    for tag, line in step.diff:
        if as_text and tag == "-":
            continue
        style = "" if as_text else _LINE[tag]
        mark = " " if as_text or tag == " " else tag
        rows.append(f'<div class="{ {" ": "same", "+": "add", "-": "del"}[tag] }" '
                    f'style="{style}">{mark} {html.escape(line)}</div>')
    return ('<div style="font-family:monospace;font-size:12px;white-space:pre;'
            f'overflow:auto;max-height:70vh">{"".join(rows)}</div>')


def visible(steps: list[Step], same: bool, fine: bool) -> list[int]:
    """The steps prev/next go through: the start, the passes that changed something (all
    with ``same``), and with ``fine`` the SCCP and rewrite steps of those passes."""
    def shown(i: int) -> bool:
        s = steps[i]
        if s.kind == "start":
            return True
        if s.kind == "pass":
            return s.changed or same
        assert s.parent is not None
        return fine and (s.changed or same) and shown(s.parent)

    return [i for i in range(len(steps)) if shown(i)]


class StepThrough:
    """The widget and its state; :attr:`panel` is what a notebook displays."""

    def __init__(self, source: str | Compilation, passes: str = DEFAULT_PASSES,
                 emit: str | None = None):
        comp = source if isinstance(source, Compilation) else compile_source(source)
        names = [p.strip() for p in passes.split(",") if p.strip()]
        self.steps = pipeline_steps(comp, names, emit)
        self.prev = w.Button(description="◀ prev", layout=w.Layout(width="6em"))
        self.next = w.Button(description="next ▶", layout=w.Layout(width="6em"))
        self.slider = w.IntSlider(min=0, max=0, value=0, readout=False,
                                  continuous_update=True)
        self.same = w.Checkbox(value=False, description="unchanged passes", indent=False)
        fine = sum(1 for s in self.steps if s.kind in ("sccp", "rewrite"))
        self.fine = w.Checkbox(value=False, description=f"rewrites ({fine})", indent=False)
        self.as_text = w.Checkbox(value=False, description="text (no diff)", indent=False)
        folded = [s.title for s in self.steps if s.kind == "pass" and not s.changed]
        self.folded = w.HTML(html.escape(
            f"changed nothing (folded away): {', '.join(folded)}" if folded else
            "every pass changed something"))
        self.title = w.HTML()
        self.view = w.HTML()
        self.order = visible(self.steps, False, False)
        self.panel = w.VBox([w.HBox([self.prev, self.slider, self.next]),
                             w.HBox([self.same, self.fine, self.as_text]),
                             self.folded, self.title, self.view])
        self.prev.on_click(lambda _b: self.move(-1))
        self.next.on_click(lambda _b: self.move(1))
        self.slider.observe(lambda _c: self.show(), names="value")
        for box in (self.same, self.fine):
            box.observe(lambda _c: self.refold(), names="value")
        self.as_text.observe(lambda _c: self.show(), names="value")
        self.refold()

    @property
    def current(self) -> int:
        """The index (into :attr:`steps`) of the step shown."""
        return self.order[self.slider.value]

    def refold(self) -> None:
        """Apply the two switches, staying on the step shown (or the one before it)."""
        current = self.order[min(self.slider.value, len(self.order) - 1)]
        self.order = visible(self.steps, self.same.value, self.fine.value)
        k = max((k for k, i in enumerate(self.order) if i <= current), default=0)
        self.slider.max = len(self.order) - 1
        self.slider.value = k
        self.show()

    def move(self, by: int) -> None:
        self.slider.value = min(len(self.order) - 1, max(0, self.slider.value + by))

    def show(self) -> None:
        step = self.steps[self.current]
        counts = "" if step.kind == "start" else f" (+{step.added} -{step.removed})"
        note = step.note or ("" if step.changed else "this step changed nothing")
        self.title.value = (f"<b>{self.slider.value + 1}/{len(self.order)} "
                            f"{html.escape(step.title)}</b>{counts} as {step.shown_as}"
                            + (f"<br><i>{html.escape(note)}</i>" if note else ""))
        self.view.value = diff_html(step, self.as_text.value)


def step_through(source: str | Compilation, passes: str = DEFAULT_PASSES,
                 emit: str | None = None) -> ipywidgets.VBox:
    """The optimizer on ``source``, pass by pass (``passes``: as ``opt -p``; ``emit``: a
    representation for every step, default each form's own)."""
    if w is None:
        raise UsageError("step_through() needs ipywidgets (pip install ipywidgets); "
                         "'ssa-course opt FILE -p ... --format html' writes the same as a page")
    return StepThrough(source, passes, emit).panel
