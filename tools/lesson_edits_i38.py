"""Issue #38's edits to the lessons (items 2-3), as docs/lessons.md asks: idempotent text
replacements by cell id and cells inserted after anchor cells with fixed ids, so a branch
can re-apply them after a merge. Run: .venv/bin/python tools/lesson_edits_i38.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent


def cell(nb, cid):
    for c in nb.cells:
        if c.get("id") == cid:
            return c
    raise SystemExit(f"no cell {cid}")


def replace(nb, cid, old, new):
    c = cell(nb, cid)
    if new in c.source and (old not in c.source or old in new):
        return
    if old not in c.source:
        raise SystemExit(f"cell {cid}: text to replace not found: {old[:80]!r}")
    c.source = c.source.replace(old, new)


def insert_after(nb, anchor, new_cell):
    if any(c.get("id") == new_cell.id for c in nb.cells):
        existing = cell(nb, new_cell.id)
        existing.source = new_cell.source
        existing.metadata = new_cell.metadata
        return
    k = next(i for i, c in enumerate(nb.cells) if c.get("id") == anchor)
    nb.cells.insert(k + 1, new_cell)


def markdown_cell(cid, source, **meta):
    c = nbformat.v4.new_markdown_cell(source)
    c.id = cid
    c.metadata = meta
    return c


def code_cell(cid, source):
    c = nbformat.v4.new_code_cell(source)
    c.id = cid
    return c


# --------------------------------------------------------------------------------- 06
def lesson_06(nb):
    # The listing shows the steps the list names (they live in ``peephole()``), not the
    # parse-time driver's budgets around them.
    replace(nb, "c2210636", "5. whatever lost its last user is deleted.",
            "5. whatever lost its last user is deleted.\n\n"
            "`peephole()` below is the look at one node, its steps numbered as in the list; the\n"
            "last step is the driver's, which deletes a node a step replaced once nobody reads it.")
    replace(nb, "486f1f89",
            "from ssa_course.son.peephole import Peephole\n"
            "print(inspect.getsource(Peephole.__call__))",
            "from ssa_course.son.peephole import peephole\n"
            "print(inspect.getsource(peephole))")
    insert_after(nb, "claims-06-idealize", markdown_cell("i38-06-driver", (
        "The same look runs again once the graph is finished: after SCCP (lesson 07) a node\n"
        "may simplify further (`x + z` is `x + 0` once `z` is known to be zero). The iterative\n"
        "driver (Simple's `IterPeeps`) keeps every node that might simplify on a worklist and\n"
        "looks at them one at a time. A change puts back on the list the nodes it may unlock:\n"
        "the node's users, the nodes whose rules read it from afar (a rule reads such a node\n"
        "with `dep_read`, which registers it in the same call), and the node itself when it lost\n"
        "a user (it may be dead now). That push rule is one method, `unlock`; the driver's loop:"),
        claims={"not_outputs": ["`x + z` is `x + 0`"]}))
    insert_after(nb, "i38-06-driver", code_cell("i38-06-driver-code", (
        "from ssa_course.son.iterate import IterativePeepholes\n"
        "print(inspect.getsource(IterativePeepholes._run))")))


# --------------------------------------------------------------------------------- 03
def lesson_03(nb):
    # The solver the lesson names is the plain one (quads/dataflow.py); the table's rows
    # reach it through the layer over quads (quads/flow.py).
    replace(nb, "h23a-df-2", "from ssa_course.quads.dataflow import solve\n",
            "from ssa_course.quads.flow import solve\n")
    insert_after(nb, "claims-03-solver", markdown_cell("i38-03-solver", (
        "The solver itself fits on one screen: `solve` of `ssa_course/quads/dataflow.py`, the\n"
        "shape of Bril's `df.py`, over blocks and edges only. A layer over it,\n"
        "`ssa_course/quads/flow.py`, runs it on a function's quads: a fact at every\n"
        "instruction, the rule for exceptions below, and a shortcut for the rows of the table\n"
        "(each is a gen/kill problem, so a block's effect is summarized once).")))
    insert_after(nb, "i38-03-solver", code_cell("i38-03-solver-code", (
        "import inspect\n\n"
        "from ssa_course.quads import dataflow\n\n"
        "print(inspect.getsource(dataflow.solve))")))
    replace(nb, "h23a-df-5", "(the solver gives a throwing instruction a node of its own)",
            "(the layer over the solver gives a throwing instruction a block of its own)")
    replace(nb, "h23a-df-5", "This rule is written once, in the solver,",
            "This rule is written once, in that layer (`quads/flow.py`),")


EDITS = {"03-ssa": lesson_03, "06-types-and-peepholes": lesson_06}


def main(only: list[str]) -> None:
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        if only and path.stem[:2] not in only:
            continue
        if path.stem not in EDITS:
            continue
        nb = nbformat.read(path, as_version=4)
        EDITS[path.stem](nb)
        nbformat.write(nb, path)


if __name__ == "__main__":
    main(sys.argv[1:])
