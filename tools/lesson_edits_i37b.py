"""Issue #37 item 7's edits to the lessons, as docs/lessons.md asks (idempotent, cells with
fixed ids inserted after an anchor cell): lesson 07 steps through ``parse,sccp,gcm`` on
``LOOP`` after the explorer's pessimistic/optimistic switch and its claims; lesson 08
through the default pipeline on its Bril loop, after the original/optimized comparison.
Run: .venv/bin/python tools/lesson_edits_i37b.py
"""

from __future__ import annotations

from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent

STEPS_TEXT = (
    "**Step through the optimizer.** The switch above shows where the optimistic pass "
    "ends; the panel below shows the way there. It runs the passes `parse,sccp,gcm` on "
    "`LOOP` and keeps the program after each of them: *prev* and *next* walk through the "
    "passes (a pass that changed nothing is folded away), each shown as a diff against the "
    "step before, added lines green and removed ones struck through. Tick *rewrites* to "
    "watch SCCP lower the types one node at a time, then each rewrite of the peepholes "
    "that follow it. From the shell, `ssa-course opt loop.tiny -p parse,sccp,gcm --format "
    "html -o steps.html` writes the same as one page, for a live demo.")
STEPS_CODE = ('from ssa_course.widgets import step_through\n\n'
              'step_through(LOOP, "parse,sccp,gcm")')

STEPS_08_TEXT = (
    "**Which pass did it?** The panel below steps through the same default pipeline on "
    "`LOOP`, the passes that changed nothing folded away. Each step is shown in its own "
    "form: quads before `parse`, the sea of nodes until `gcm` schedules it, quads again "
    "after. With `emit=\"quads\"` every step is quads (a graph is then scheduled on a "
    "copy to show it).")
STEPS_08_CODE = ('from ssa_course.widgets import step_through\n\n'
                 'step_through(bril, ",".join(passes.DEFAULT_PIPELINE))')


def _insert_after(nb, anchor: str, new) -> None:
    for c in nb.cells:
        if c.get("id") == new.id:
            c.source = new.source
            return
    k = next(i for i, c in enumerate(nb.cells) if c.get("id") == anchor)
    nb.cells.insert(k + 1, new)


def main() -> None:
    path = ROOT / "notebooks" / "07-optimistic.ipynb"
    nb = nbformat.read(path, as_version=4)
    text = nbformat.v4.new_markdown_cell(STEPS_TEXT)
    text.id = "r37b-07-steps-text"
    code = nbformat.v4.new_code_cell(STEPS_CODE)
    code.id = "r37b-07-steps"
    _insert_after(nb, "claims-07-switch", text)
    _insert_after(nb, "r37b-07-steps-text", code)
    nbformat.write(nb, path)

    path = ROOT / "notebooks" / "08-scheduling.ipynb"
    nb = nbformat.read(path, as_version=4)
    text = nbformat.v4.new_markdown_cell(STEPS_08_TEXT)
    text.id = "r37b-08-steps-text"
    code = nbformat.v4.new_code_cell(STEPS_08_CODE)
    code.id = "r37b-08-steps"
    _insert_after(nb, "8a54d174", text)
    _insert_after(nb, "r37b-08-steps-text", code)
    nbformat.write(nb, path)


if __name__ == "__main__":
    main()
