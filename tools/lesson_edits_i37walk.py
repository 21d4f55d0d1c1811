# ruff: noqa: E501  (the lines are lesson text and cell code, wrapped as the cells are)
"""Issue #37, a new learner's walk through the lessons: idempotent text replacements by
cell id and cells inserted after anchor cells with fixed ids (docs/lessons.md), so the
branch can re-apply them after a merge. Run: .venv/bin/python tools/lesson_edits_i37walk.py [05 08 ...]
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


def not_outputs(nb, cid, *phrases, drop=()):
    c = cell(nb, cid)
    listed = c.metadata.setdefault("claims", {}).setdefault("not_outputs", [])
    for p in drop:
        if p in listed:
            listed.remove(p)
    for p in phrases:
        if p not in listed:
            listed.append(p)


def insert_after(nb, anchor, new_cell):
    """Insert (or refresh) ``new_cell`` right after the cell ``anchor``."""
    if any(c.get("id") == new_cell.id for c in nb.cells):
        nb.cells.remove(cell(nb, new_cell.id))
    k = next(i for i, c in enumerate(nb.cells) if c.get("id") == anchor)
    nb.cells.insert(k + 1, new_cell)


def move_after(nb, cid, anchor):
    moving = cell(nb, cid)
    nb.cells.remove(moving)
    k = next(i for i, c in enumerate(nb.cells) if c.get("id") == anchor)
    nb.cells.insert(k + 1, moving)


def claims_cell(cid, source):
    c = nbformat.v4.new_code_cell(source.strip("\n") + "\nchecked()")
    c.id = cid
    c.metadata = {"jupyter": {"source_hidden": True}, "tags": ["claims"]}
    return c


def markdown_cell(cid, source, **meta):
    c = nbformat.v4.new_markdown_cell(source)
    c.id = cid
    c.metadata = meta
    return c


def split_off(nb, cid, marker, new_id, after):
    """Move the text of cell ``cid`` from ``marker`` on into a new markdown cell placed
    after the cell ``after`` (so a claim cell can sit between the two parts)."""
    c = cell(nb, cid)
    if marker in c.source:
        head, tail = c.source.split(marker, 1)
        c.source = head.rstrip("\n")
        insert_after(nb, after, markdown_cell(new_id, marker + tail))


# --------------------------------------------------------------------------------- 05
def lesson_05(nb):
    replace(nb, "3e2f6504",
            "Look for `Proj` and `Parm` in the text face, and for the types: `If` has the\n"
            "tuple type, its projections plain `ctrl`.",
            "Look for `Proj` and `Parm` in the text face, and for the types: `If` has the\n"
            "tuple type, its projections plain `ctrl`. Each line reads `%id = node inputs : type`,\n"
            "the inputs by slot: input 0 is the node's control, `_` when it has none (the `>`,\n"
            "`*` and `-` float), and a constant's only input is `Start` (the function it belongs\n"
            "to). Ids have gaps: the parser also numbers its own scaffolding (the `Scope` that maps\n"
            "variable names to nodes while it reads the program) and removes it when done.")
    replace(nb, "claims-05-if", "\nchecked()",
            "\nmain_nodes = graph.functions[\"main\"].nodes()\n"
            "claim_all(\"input 0 is the node's control, `_` when it has none (the `>`,\\n`*` and `-` float)\",\n"
            "          [n for n in main_nodes if n.label in (\">\", \"*\", \"-\")], lambda n: n.inputs[0] is None)\n"
            "claim_all(\"a constant's only input is `Start`\",\n"
            "          [n for n in main_nodes if n.label.lstrip(\"-\").isdigit()],\n"
            "          lambda n: [x.label for x in n.inputs] == [\"Start\"])\n"
            "claim(\"Ids have gaps\", sorted(n.id for n in main_nodes) != list(range(len(main_nodes))), True)\n"
            "checked()")
    replace(nb, "97256720",
            "Below, each `Select #p.i` reads path *i*'s control (red) and value.",
            "Below, each `Select #p.i` reads path *i*'s control (red) and value; `p` is the\n"
            "number of the phi it came from, which is now its `Compose #p`.")
    insert_after(nb, "6011a5cf", claims_cell("claims-i37w-05-select", (
        'select_dot = ssa_course.show(IF_ELSE, "son-select").dot\n'
        'compose_id = select_dot.split("Compose x\\\\n#")[1].split("\\\\")[0]\n'
        'claim("`p` is the\\nnumber of the phi it came from, which is now its `Compose #p`",\n'
        '      ([f"Select\\\\n#{compose_id}.{i}" in select_dot for i in (1, 2)],\n'
        '       compose_id == str(next(n for n in sea_of_nodes(IF_ELSE, optimize=False).functions["main"].nodes()\n'
        '                              if n.label == "Phi").id)), ([True, True], True))')))
    # section 7 gets its own cell, after the claims of section 6's last paragraph
    split_off(nb, "92af2d35-2", "## 7. Running a graph that has no blocks", "i37w-05-run",
              "claims-05-nested")
    replace(nb, "claims-05-div", "\nchecked()",
            "\ndiv_nodes = sea_of_nodes(DIVIDE, optimize=False).functions[\"main\"].nodes()\n"
            "div = next(n for n in div_nodes if n.label == \"/\")\n"
            "trap = next(n for n in div_nodes if n.label == \"Trap\")\n"
            "claim(\"an `If` whose false side ends in a `Trap`\",\n"
            "      (div.inputs[0].label, trap.inputs[0].label, div.inputs[0].inputs[0] is trap.inputs[0].inputs[0]),\n"
            "      (\"True\", \"False\", True))\n"
            "checked()")


# --------------------------------------------------------------------------------- 07
def lesson_07(nb):
    replace(nb, "37addc38",
            "Nothing can be folded, and the test `x != 1` stays.",
            "Nothing can be folded, and the test `x != 1` stays. The listing below is the text face of\n"
            "lesson 05 with a look ahead at section 2: a `*` marks a node SCCP will find constant,\n"
            "`dead` a node it will prove unreachable, and the comment lines on top count them.")
    replace(nb, "claims-07-pessimist", "\nchecked()",
            "\npess_text = compare_text(pessimistic, \"pessimistic\")\n"
            "marked = lambda end: [line.split()[0] for line in pess_text.splitlines() if line.rstrip().endswith(end)]\n"
            "sccp_constants = compare(pessimistic)[\"main\"][0].constants(pessimistic.functions[\"main\"])\n"
            "claim(\"a `*` marks a node SCCP will find constant\",\n"
            "      (marked(\"*\"), f\"+{len(marked('*'))} constants\" in pess_text), ([f\"%{n.id}\" for n in sccp_constants], True))\n"
            "claim(\"`dead` a node it will prove unreachable\",\n"
            "      (bool(marked(\" dead\")), f\"{len(marked(' dead'))} more dead nodes\" in pess_text), (True, True))\n"
            "checked()")


# --------------------------------------------------------------------------------- 08
def lesson_08(nb):
    replace(nb, "ed742701", "The post on sea-of-nodes reductions uses this one:",
            "Fedor Indutny's post *Sea of Nodes* (2015; lesson 09 builds on it) uses this one:")
    replace(nb, "ed742701", "What is left to hoist\nis `n * 2`.",
            "What is left to hoist,\napart from constants, is `n * 2`.")
    replace(nb, "claims-08-len",
            'claim("What is left to hoist\\nis `n * 2`", [n.label for n in opt_nodes if n.label == "alen"], [])',
            'hoisted = [row[0] for row in schedule(optimistic_program(comp).functions["main"]).table()\n'
            '           if row[3] != row[2] and not row[0].split("#")[0].lstrip("-").isdigit()]\n'
            'claim("What is left to hoist,\\napart from constants, is `n * 2`",\n'
            '      ([n.label for n in opt_nodes if n.label == "alen"], hoisted), ([], ["*#41"]))')
    replace(nb, "f98a8204",
            "`b9` and `b33` are the failing sides of the two checks (they end in a `Trap`).",
            "`b9` and `b33` are the failing sides of the two checks (they end in a `Trap`): the\n"
            "length check of `new int[n]`, `inbounds#6`, which tests `0 <= n < 100000001` (one more\n"
            "than the longest array allowed, lesson 09), and the bounds check of `a[i]`, `inbounds#30`.")
    replace(nb, "claims-08-blocks", "\ndef dominates(a, b):",
            "\nlength_check, index_check = (heads[b].inputs[0].inputs[1] for b in (\"b9\", \"b33\"))\n"
            "from ssa_course.son import intervals\n"
            "claim(\"the\\nlength check of `new int[n]`, `inbounds#6`, which tests `0 <= n < 100000001` (one more\\nthan the longest array allowed\",\n"
            "      (repr(length_check), [repr(x) for x in length_check.inputs[1:]], intervals.LENGTH.hi + 1),\n"
            "      (\"inbounds#6\", [\"n#3\", \"100000001#5\"], 100000001))\n"
            "claim(\"the bounds check of `a[i]`, `inbounds#30`\", repr(index_check), \"inbounds#30\")\n"
            "def dominates(a, b):")
    replace(nb, "59ea4898",
            "then every floating node goes to the deepest of its inputs'\nblocks:",
            "then every floating node goes to the deepest of its inputs'\nblocks. (There is no load of `a[i]`: "
            "the peepholes forwarded the stored `i * 3` to it, so\n`+#39` adds `*#28`.)")
    insert_after(nb, "bd8ffa68", claims_cell("claims-i37w-08-early", (
        'claim("There is no load of `a[i]`", [n.label for n in fg.nodes() if "load" in n.label.lower()], [])\n'
        'claim("`+#39` adds `*#28`", [repr(x) for x in fg.graph.nodes[39].inputs[1:]], ["Phi#18", "*#28"])')))
    replace(nb, "d3a90333", "Users come before the values they\nuse;",
            "Late scheduling visits users before the values\nthey use;")
    replace(nb, "2e2eef59-1", "(`v41 = mul n 2` in `b8`, before the loop\n`b14`;",
            "(`v41 = mul n v40` in `b8`, before the loop\n`b14`, `v40` being the constant 2;")
    replace(nb, "claims-08-scheduled",
            'claim("`v41 = mul n 2` in `b8`, before the loop `b14`", "v41: int = mul n v40;" in blocks["b8"], True)',
            'claim("`v41 = mul n v40` in `b8`, before the loop\\n`b14`, `v40` being the constant 2",\n'
            '      ("v41: int = mul n v40;" in blocks["b8"], "v40: int = const 2;" in blocks["b8"]), (True, True))')
    replace(nb, "2e2eef59-1", "(`newarr` of a negative length)", "(`newarr` of a length out of range)")
    split_off(nb, "61e75cb3", "## 4. What must not move", "i37w-08-pinned", "claims-08-hoist")
    replace(nb, "1bd087a4",
            "GCM\nplaces its `mul` before the loop, in the landing pad `.b15.pad`.",
            "GCM\nplaces its `mul` before the loop, and the pipeline's last pass (`landing`) sinks it onto\n"
            "the edge that enters the loop, the *landing pad* `.b15.pad`: a run that skips the loop\n"
            "does not pay for it.")
    replace(nb, "claims-08-bril",
            'claim("GCM\\nplaces its `mul` before the loop, in the landing pad `.b15.pad`",\n'
            '      (bool(product), "mul" in body), (True, False))',
            'claim("GCM\\nplaces its `mul` before the loop, and the pipeline\'s last pass (`landing`) sinks it onto\\n"\n'
            '      "the edge that enters the loop, the *landing pad* `.b15.pad`",\n'
            '      (bool(product), "mul" in body, passes.DEFAULT_PIPELINE[-1]), (True, False, "landing"))')
    replace(nb, "1bd087a4",
            "* **Exercise 08**: the dominator-tree LCA, the choice between early and late, and loop\n  depths.",
            "* **Exercise 08**: the dominator-tree LCA, the choice between early and late, and loop\n  depths.\n"
            "* **Lesson 09** gives every integer a range and removes the bounds checks the ranges\n"
            "  prove, as `scheduled` did to `a[i]` above.")
    replace(nb, "1bd087a4",
            "## References\n",
            "## References\n"
            "* Fedor Indutny, *Sea of Nodes*, 2015 (a blog post; its reducer is at\n"
            "  github.com/indutny/json-pipeline-reducer) -- reductions on the graph, the post section 1\n"
            "  starts from.\n")


# --------------------------------------------------------------------------------- 09
def lesson_09(nb):
    replace(nb, "81b071cf", "The post on sea-of-nodes reductions removes them",
            "Fedor Indutny's post *Sea of Nodes* (see the references) removes them")
    replace(nb, "dbaac1e2", "the answer is the full range -- never",
            "the answer is the full range (printed `int`, with no bounds) -- never")
    replace(nb, "dbaac1e2",
            "`IntType.meet` is this lesson's join and `IntType.join` its meet. Either way up,",
            "`IntType.meet` is this lesson's join and `IntType.join` its meet. Lesson 03's data-flow\n"
            "table, like the dragon book, calls its merge of paths a *meet* (union for\n"
            "liveness): there too it is the merge, moving away from the start. Either way up,")
    replace(nb, "claims-09-lattice", "\nchecked()",
            "\nclaim(\"the full range (printed `int`, with no bounds)\", str(intervals.add(r(0, INT_MAX), r(1, 1))), \"int\")\n"
            "checked()")
    replace(nb, "4ea00a30", "one step per value it can take, 2^63 in general.",
            "one step per value it can take, 2^63 in general (the trace below prints a range of\n"
            "one value as that value: `0` is `[0, 0]`).")
    replace(nb, "claims-09-loop", "\nchecked()",
            "\nclaim(\"`0` is `[0, 0]`\", (str(r(0, 0)), grown[0]), (\"0\", \"0\"))\nchecked()")
    replace(nb, "4892574d",
            "* **Lesson 11** compiles",
            "* **Lesson 10** runs an analysis the other way, from uses back to definitions, on a\n"
            "  lattice drawn the same way up as this one: which objects escape the call that made\n"
            "  them.\n"
            "* **Lesson 11** compiles")


# --------------------------------------------------------------------------------- 10
def lesson_10(nb):
    replace(nb, "8ec432d9",
            "so the **join** -- what a value\nis when two facts about it hold -- is simply",
            "so the **join** -- the least state\nthat covers two facts about a value, as in lesson 09 -- is simply")
    not_outputs(nb, "8ec432d9", "that covers two facts about a value", drop=["when two facts about it hold"])
    replace(nb, "28875db7",
            "The last step (the worklist) changes nothing\nhere -- no returned object holds further references.",
            "The last step (the worklist) changes nothing\nhere -- no returned object holds further references. The cell below stops at the φ's\n"
            "step: `one` (`%1`) is still `✓` there, and turns `↑` only when the walk reaches\n"
            "`newstruct(one, two)` further up (the slider above shows every step).")
    replace(nb, "claims-10-walk", "\nchecked()",
            "\nphi_step = next(k for k, s in enumerate(steps) if \"φ\" in s.what)\n"
            "turns = next(k for k, s in enumerate(steps) if \"%1\" in s.changed)\n"
            "claim(\"`one` (`%1`) is still `✓` there, and turns `↑` only when the walk reaches\\n`newstruct(one, two)`\",\n"
            "      (glyph_at(step_text(steps[phi_step]), \"6:\")[0], turns > phi_step, \"newstruct(%1, %3)\" in steps[turns].what),\n"
            "      (\"✓\", True, True))\n"
            "checked()")


# --------------------------------------------------------------------------------- 11
def lesson_11(nb):
    replace(nb, "555b8226", "Chaitin's colouring: repeatedly remove",
            "Chaitin's colouring with *k* registers: repeatedly remove")
    replace(nb, "555b8226",
            "(Briggs' test, George's for a register).",
            "(Briggs' test, George's for a register). When colouring picks a register, it\n"
            "prefers one a copy partner already holds. A copy whose two sides end in one register\n"
            "does nothing and is dropped: that is the allocation's `copies removed`, the coalesced\n"
            "pairs and, on top of them, the copies this preference settled.")
    insert_after(nb, "555b8226", claims_cell("claims-i37w-11-copies", (
        'first_alloc = m.allocations["main"]\n'
        'pairs = first_alloc.text().split("coalesced:")[1].split("every value")[0].count("<-")\n'
        'claim("the coalesced\\npairs and, on top of them, the copies this preference settled",\n'
        '      (f"{first_alloc.copies_removed} copies removed" in first_alloc.text(), first_alloc.copies_removed > pairs),\n'
        '      (True, True))')))
    replace(nb, "1bef7a70",
            "The cell lists\nthe potential spills in the order simplify pushed them.",
            "The cell lists\nthe potential spills in the order simplify pushed them. A spilled value is then stored\n"
            "after its definition and reloaded before each use into a new, short-lived value, and\n"
            "the allocator starts again on that code, round after round, until nothing more is\n"
            "spilled; a reload can crowd out a value that had a register in the first round, so\n"
            "the cell also lists what each later round spills.")
    replace(nb, "claims-11-spills", "\n\nchecked()",
            "\nlater = [v for r in alloc.history[1:] for v in r.spilled]\n"
            "claim(\"a reload can crowd out a value that had a register in the first round\",\n"
            "      bool(later) and not any(v in alloc.history[0].spilled for v in later), True)\n"
            "claim(\"until nothing more is\\nspilled\", not alloc.history[-1].spilled, True)\n"
            "checked()")
    insert_after(nb, "claims-11-a64-registers", markdown_cell("i37w-11-r15", (
        "x86-64's file counts `r15` among its 14 allocatable registers, but the code generator\n"
        "keeps the call-depth counter there (section 3), so 13 are left for values; AArch64\n"
        "sets `x28` aside for the same counter, and its 24 already leave it out.")))
    insert_after(nb, "i37w-11-r15", claims_cell("claims-i37w-11-r15", (
        'claim("counts `r15` among its 14 allocatable registers",\n'
        '      ("14 allocatable" in X86_64.text(), len(X86_64.allocatable), DEPTH_REG.name in X86_64.allocatable), (True, 14, True))\n'
        'claim("so 13 are left for values", len(free), 13)\n'
        'claim("sets `x28` aside for the same counter, and its 24 already leave it out",\n'
        '      ("reserved x28: call depth" in AARCH64.text(), len(AARCH64.allocatable), "x28" in AARCH64.allocatable),\n'
        '      (True, 24, False))')))


# --------------------------------------------------------------------------------- 00
def lesson_00(nb):
    replace(nb, "cell-13",
            '        print(f"{stage:10} -> {result.stdout.strip():>6}   ({result.steps} steps)")',
            '        # machine code runs on the processor (or an emulator): nobody counts its steps\n'
            '        steps = f"{result.steps} steps" if result.steps else "machine code: steps not counted"\n'
            '        print(f"{stage:10} -> {result.stdout.strip():>6}   ({steps})")')


# --------------------------------------------------------------------------------- 01
def lesson_01(nb):
    replace(nb, "cell-06",
            "`find_leaders` returns the\npositions in the listing where blocks start:",
            "`find_leaders` returns the\npositions in the listing where blocks start. (`# at 6:15` after the `rem` is where the\n"
            "`%` stands in the source, line 6, column 15: an instruction that can fail keeps its\n"
            "place for the error message.)")
    insert_after(nb, "cell-07", claims_cell("claims-i37w-01-at", (
        'at = claim_line("`# at 6:15` after the `rem`", [format_instr(i) for i in fn.instrs()], "# at")\n'
        'claim("`# at 6:15` after the `rem`", (at.split()[3], at.split("# at ")[1]), ("rem", "6:15"))\n'
        'claim("where the\\n`%` stands in the source, line 6, column 15", LOOP.splitlines()[5][14], "%")')))


# --------------------------------------------------------------------------------- 02
def lesson_02(nb):
    replace(nb, "cell-04",
            "So it finds `a * b` again, knows `y` is 5 wherever it is used, and sees\nthrough `(a + 0) * 1 - a` to `0`.",
            "So it finds `a * b` again and knows `y` is 5 wherever it is used; like the\nwindow, it also sees "
            "through `(a + 0) * 1 - a` to `0` (each step of it is a neighbour's).")
    replace(nb, "claims-02-window",
            'claim_in("sees through `(a + 0) * 1 - a` to `0`", "z: int = const 0;", lvn)',
            'claim("like the\\nwindow, it also sees through `(a + 0) * 1 - a` to `0`",\n'
            '      ("z: int = const 0;" in lvn, "z: int = const 0;" in window), (True, True))')


EDITS = {"00-tour": lesson_00, "01-quads": lesson_01, "02-peepholes": lesson_02, "07-optimistic": lesson_07, "05-control-as-data": lesson_05, "08-scheduling": lesson_08, "09-ranges": lesson_09,
         "10-escape": lesson_10, "11-codegen": lesson_11}


def main(only: list[str]) -> None:
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        if only and path.stem[:2] not in only:
            continue
        if path.stem in EDITS:
            nb = nbformat.read(path, as_version=4)
            EDITS[path.stem](nb)
            nbformat.write(nb, path)


if __name__ == "__main__":
    main(sys.argv[1:])
