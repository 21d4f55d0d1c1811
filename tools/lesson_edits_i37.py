# ruff: noqa: E501  (the lines are lesson text and cell code, wrapped as the cells are)
"""Issue #37's edits to the lessons (items 1-2), as docs/lessons.md asks: idempotent text
replacements by cell id and claim cells inserted after anchor cells with fixed ids, so a
branch can re-apply them after a merge. Run: .venv/bin/python tools/lesson_edits_i37.py
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
IMPORT = "from ssa_course.lessons.claims import checked, claim, claim_all, claim_in, claim_line"


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


def not_outputs(nb, cid, *phrases):
    c = cell(nb, cid)
    listed = c.metadata.setdefault("claims", {}).setdefault("not_outputs", [])
    for p in phrases:
        if p not in listed:
            listed.append(p)


def insert_after(nb, anchor, new_cell):
    if any(c.get("id") == new_cell.id for c in nb.cells):
        existing = cell(nb, new_cell.id)
        existing.source = new_cell.source
        existing.metadata = new_cell.metadata
        return
    k = next(i for i, c in enumerate(nb.cells) if c.get("id") == anchor)
    nb.cells.insert(k + 1, new_cell)


def claims_cell(cid, source):
    c = nbformat.v4.new_code_cell(source)
    c.id = cid
    c.metadata = {"jupyter": {"source_hidden": True}, "tags": ["claims"]}
    return c


def markdown_cell(cid, source, **meta):
    c = nbformat.v4.new_markdown_cell(source)
    c.id = cid
    c.metadata = meta
    return c


def every_lesson(nb):
    """The claims import names every helper, and every claim cell ends with its quiet
    ``✓ checked`` line."""
    for c in nb.cells:
        if c.cell_type != "code":
            continue
        c.source = re.sub(r"from ssa_course\.lessons\.claims import [\w, ]+", IMPORT, c.source)
        if c.get("id", "").startswith("claims-") and not c.source.rstrip().endswith("checked()"):
            c.source = c.source.rstrip() + "\nchecked()"


# --------------------------------------------------------------------------------- 00
def lesson_00(nb):
    insert_after(nb, "claims-00-cfg", markdown_cell("i37-00-claims", (
        "*A word on the thin bars.* Under some cells sits a collapsed cell that ends with a\n"
        "line `✓ checked against the output: ...`. It is a **claim cell**: it checks the text\n"
        "above it against what the cells just showed (here: that the drawing really marks\n"
        "its edges `T` and `F`). Every sentence of a lesson that states an output is either\n"
        "built by a cell from the compiler's own values or checked this way, so when the\n"
        "compiler changes and a sentence\n"
        "stops being true, the lesson stops there with `ClaimError: the lesson says \"...\",\n"
        "but ...` instead of telling you something false. You can open a bar to read the\n"
        "check; you never need to."),
        claims={"not_outputs": ["`✓ checked against the output: ...`"]}))
    replace(nb, "cell-19",
            "* Later lessons add SSA, Julia's flat IR, the sea of nodes, optimistic analysis and\n"
            "  scheduling; each one adds a stage to the table above.",
            "* Then one stage at a time, each adding a row to the table above: lesson 02,\n"
            "  peepholes and local value numbering; lesson 03, SSA; lesson 04, Julia's flat IR;\n"
            "  lesson 05, control as data (the sea of nodes); lesson 06, types and peepholes\n"
            "  while parsing; lesson 07, optimistic analysis (SCCP); lesson 08, global code\n"
            "  motion and scheduling; lesson 09, ranges and bounds checks; lesson 10, escape\n"
            "  analysis; lesson 11, code generation: instruction selection, register allocation\n"
            "  and machine code for x86-64 and AArch64.")
    replace(nb, "cell-19",
            "| 08 GCM | Click, *Global Code Motion / Global Value Numbering*, PLDI 1995 |\n",
            "| 08 GCM | Click, *Global Code Motion / Global Value Numbering*, PLDI 1995 |\n"
            "| 09 ranges | Cousot & Cousot, *Abstract Interpretation*, POPL 1977; Bodík, Gupta & "
            "Sarkar, *ABCD*, PLDI 2000 |\n"
            "| 10 escape | Choi et al., *Escape Analysis for Java*, OOPSLA 1999; Kotzmann & "
            "Mössenböck, VEE 2005; Julia's `EscapeAnalysis` |\n"
            "| 11 codegen | Chaitin, *Register Allocation and Spilling via Graph Coloring*, 1982; "
            "Briggs, Cooper & Torczon, TOPLAS 1994; George & Appel, *Iterated Register "
            "Coalescing*, TOPLAS 1996; Granlund & Montgomery, PLDI 1994 |\n")


    replace(nb, "cell-13", '        print(f"{stage:10} -> {result.error}")',
            '        print(textwrap.fill(f"{stage:10} -> {result.error}", 100,   # within 100 columns\n'
            '                            subsequent_indent=" " * 14))')
    replace(nb, "cell-13", "for stage in ssa_course.stage_names():\n",
            "import textwrap\n\nfor stage in ssa_course.stage_names():\n")


# --------------------------------------------------------------------------------- 03
def lesson_03(nb):
    replace(nb, "cell-08-7",
            "where the value is read, and removes the phis that turn out trivial.",
            "where the value is read, and removes the phis that turn out trivial.\n\n"
            "That is also why, on `try/catch` (the last row of the table), Braun et al. place\n"
            "one phi fewer than pruned SSA. Pruned SSA puts `x.3 = phi x.1 x.1 x.1` at the top\n"
            "of the handler: `x` is assigned in the try body and read in the handler, so the\n"
            "phi is both in the frontier and live. But every edge into the handler brings the\n"
            "same `x.1` -- the only other assignment, `x = fail(10)`, never completes, because\n"
            "`fail` throws. Such a phi is *trivial*: pruned SSA never looks at a phi's operands,\n"
            "Braun et al.'s construction removes it.")
    c = cell(nb, "claims-03-pruned")
    if "try_pruned" not in c.source:
        c.source = c.source.rstrip() + "\n" + (
            "try_quads = ssa_course.compile(PROGRAMS[\"try/catch\"]).quads\n"
            "try_counts = []\n"
            "for build in (lambda s: program_to_ssa(try_quads, pruned=True, stats=s),\n"
            "              lambda s: program_braun_ssa(try_quads, s)):\n"
            "    st = SSAStats()\n"
            "    build(st)\n"
            "    try_counts.append(st.phis)\n"
            "claim(\"the only other assignment, `x = fail(10)`\",\n"
            "      [line.strip() for line in PROGRAMS[\"try/catch\"].splitlines() if line.strip().startswith(\"x = \")],\n"
            "      [\"x = fail(10);\"])\n"
            "claim(\"Braun et al. place\\none phi fewer than pruned SSA\", try_counts[0] - try_counts[1], 1)\n"
            "try_pruned = ssa_course.show(PROGRAMS[\"try/catch\"], \"ssa-pruned\", \"text\")\n"
            "try_braun = ssa_course.show(PROGRAMS[\"try/catch\"], \"ssa-braun\", \"text\")\n"
            "claim_line(\"Pruned SSA puts `x.3 = phi x.1 x.1 x.1` at the top\\nof the handler\",\n"
            "           try_pruned.split(\".catch.1:\")[1].splitlines()[:3], \"x.3: int = phi x.1 x.1 x.1 \")\n"
            "operands = lambda line: {t for t in line.split(\" phi \")[1].rstrip(\";\").split() if t[0] != \".\"}\n"
            "trivial = lambda text: [line for line in text.splitlines()\n"
            "                        if \" phi \" in line and len(operands(line)) == 1]\n"
            "claim(\"Braun et al.'s construction removes it\", (len(trivial(try_pruned)), trivial(try_braun)), (1, []))\n")
    replace(nb, "h23a-df-1",
            "Every pass that needs\nliveness (pruned SSA here, coalescing in lesson 08, ...) "
            "asks this one solver.",
            "Every pass on quads that needs\nliveness asks this one solver: pruned SSA here, and "
            "`coalesce`, which merges the two\nnames of a copy once SSA is left (a pass of lesson "
            "08's pipeline). The register\nallocator of lesson 11, which coalesces registers in "
            "machine code, keeps a liveness of its\nown.")
    not_outputs(nb, "h23a-df-1", "the two\nnames of a copy")
    insert_after(nb, "h23a-df-2", claims_cell("claims-03-solver", (
        "import ssa_course.codegen.liveness as machine_liveness\n"
        "import ssa_course.quads.coalesce as coalesce_pass\n"
        "from ssa_course import passes\n"
        "claim(\"`coalesce`, which merges the two\\nnames of a copy once SSA is left (a pass of lesson 08's pipeline)\",\n"
        "      (\"coalesce\" in passes.DEFAULT_PIPELINE, coalesce_pass.liveness is liveness), (True, True))\n"
        "claim(\"The register\\nallocator of lesson 11, which coalesces registers in machine code, keeps a liveness of its\\nown\",\n"
        "      hasattr(machine_liveness, \"solve\") or hasattr(machine_liveness, \"liveness\"), False)\n"
        "checked()")))
    replace(nb, "h23a-df-2",
            "    print(f\"{name:21} {'forward' if a.forward else 'backward':9} {meet:12} {show(fact)}\")",
            "    facts = textwrap.wrap(show(fact), 100 - 45) or [\"\"]   # tables fit 100 columns\n"
            "    print(f\"{name:21} {'forward' if a.forward else 'backward':9} {meet:12} {facts[0]}\")\n"
            "    for more in facts[1:]:\n"
            "        print(\" \" * 45 + more)")
    replace(nb, "h23a-df-2", "from ssa_course.quads.analyses import TABLE, liveness\n",
            "import textwrap\n\nfrom ssa_course.quads.analyses import TABLE, liveness\n")


# --------------------------------------------------------------------------------- 04
def lesson_04(nb):
    replace(nb, "cell-10",
            "and `%10` come after the call and never run — so the handler prints `1 3 10`.\n",
            "and `%10` come after the call and never run — so the handler prints `1 3 10`.\n\n"
            "The listing's last line, `4 ┄ nothing`, is block 4, where the end of the `try` and\n"
            "the end of the handler meet. A block whose first line has `┄` instead of `─` has\n"
            "more than one predecessor, and this one holds no statement at all (`main` just ends\n"
            "there), so the printer writes `nothing` in its place.\n")
    c = cell(nb, "claims-04-upsilon")
    if "last_line" not in c.source:
        c.source = c.source.rstrip() + "\n" + (
            "last_line = str(code_typed(TRY)).rstrip().splitlines()[-1]\n"
            "claim(\"The listing's last line, `4 ┄ nothing`, is block 4\", last_line.split(), [\"4\", \"┄\", \"nothing\"])\n"
            "ir_src = build_ircode(ssa_course.compile(SRC).quads.functions[\"main\"])\n"
            "rails = [line.split()[1] for line in format_ir(ir_src).splitlines() if line[:1].isdigit()]\n"
            "claim(\"A block whose first line has `┄` instead of `─` has\\nmore than one predecessor\",\n"
            "      rails, [\"┄\" if len(b.preds) > 1 else \"─\" for b in ir_src.blocks])\n"
            "claim(\"this one holds no statement at all\", [line.split()[:2] for line in str(code_typed(TRY)).splitlines()\n"
            "      if line[:1].isdigit()][-1], [\"4\", \"┄\"])\n")


# --------------------------------------------------------------------------------- 05
def lesson_05(nb):
    replace(nb, "38371fad",
            "so it gives\nthe head a Phi for *every* variable in scope (and one for memory, "
            "`$mem`); after the body\nit fills in the back edge.",
            "so it gives\nthe head a Phi for memory (`$mem`) and for each variable the loop "
            "names -- reads or\nassigns -- anywhere inside it; a variable in scope that the loop "
            "never names keeps its\nvalue and gets none (the nested program's inner loop, in "
            "section 6, has no Phi for `n`).\nAfter the body it fills in the back edge.")
    c = cell(nb, "claims-05-loop")
    if "names the loop" not in c.source:
        c.source = c.source.rstrip() + "\n" + (
            "# names the loop reads or assigns, by hand: WHILE's loop names i, n and s\n"
            "claim(\"a Phi for memory (`$mem`) and for each variable the loop names\",\n"
            "      sorted(p.var_name for p in loop.phis()), [\"$mem\", \"i\", \"n\", \"s\"])\n"
            "inner_loop = [n for n in sea_of_nodes(NESTED, optimize=False).functions[\"main\"].nodes()\n"
            "              if isinstance(n, Loop)][1]\n"
            "claim(\"has no Phi for `n`\", \"n\" in [p.var_name for p in inner_loop.phis()], False)\n")
    replace(nb, "0994c3ae",
            "Below: the nested program, then a count of what\neach form needs for the three "
            "programs.",
            "Below: the nested program around its inner loop (the\nnodes at most two edges from "
            "the inner `Loop`: drawn whole, the graph is too big to read),\nthen a count of what "
            "each form needs for the three programs.")
    not_outputs(nb, "0994c3ae", "at most two edges from")
    replace(nb, "e59e7359", 'ssa_course.show(NESTED, "son-raw")',
            'inner = [n for n in sea_of_nodes(NESTED, optimize=False).functions["main"].nodes()\n'
            '         if isinstance(n, Loop)][1]\n'
            'ssa_course.show(NESTED, "son-raw", around=inner.id, radius=2)')


# --------------------------------------------------------------------------------- 07
def lesson_07(nb):
    replace(nb, "6de1ecfc-1",
            "Among the first changes, the control ones all say \"dead\" (`~ctrl`): the `If`s' "
            "predicates\nare still `TOP`, so neither side is live *yet*. That is the optimism at "
            "work — nothing is\nreachable until proven.",
            "Among the first changes, the control ones all say \"dead\" (`~ctrl`) but `Start`'s "
            "at step 1\n(live: the function is entered). The `If`s' predicates are still `TOP`, "
            "so neither side is\nlive *yet*. That is the optimism at work — nothing is reachable "
            "until proven.")
    cell(nb, "claims-07-dead-first").source = (
        "first = [s for s in result.trace[:12] if fg.graph.nodes[s.node].is_control]\n"
        "says_dead = lambda s: str(s.new).strip(\"[]\").split(\", \")[0] == \"~ctrl\"\n"
        "claim_all(\"the control ones all say \\\"dead\\\" (`~ctrl`) but `Start`'s at step 1\", "
        "first, says_dead,\n"
        "          but={\"`Start`'s at step 1\": result.trace[0]})\n"
        "claim(\"`Start`'s at step 1\", result.trace[0].label, \"Start\")\n"
        "checked()")


    replace(nb, "r53-07-switch-code", "print(switch_line)\n",
            "print(textwrap.fill(switch_line, 100, subsequent_indent=\"  \"))\n")
    replace(nb, "r53-07-switch-code", "from ssa_course.lessons.l07_optimistic import compare_modes\n",
            "import textwrap\n\nfrom ssa_course.lessons.l07_optimistic import compare_modes\n")


# --------------------------------------------------------------------------------- 08
def lesson_08(nb):
    replace(nb, "bd8ffa68",
            'print("pinned:", ", ".join(f"{fg.graph.nodes[i]!r} in {b}" for i, b in sorted(fixed.items())))',
            'import textwrap\n'
            'print(textwrap.fill("pinned: " + ", ".join(f"{fg.graph.nodes[i]!r} in {b}"\n'
            '                                           for i, b in sorted(fixed.items())),\n'
            '                    100, subsequent_indent="        "))')
    replace(nb, "2f0a3d34",
            "The whole choice in one table: for each floating node, its early and late block, "
            "the block\nit went to and that block's loop depth:",
            "The whole choice in one table: for each floating node, its early and late block, "
            "the block\nit went to and that block's loop depth. One row differs from the table "
            "above: `2#40` is\nlate in `b32` there and in `b8` here. A value's late block is the "
            "common dominator of the\nblocks its users were *placed* in, and users are placed "
            "first: with the always-late pick\nits only user `*#41` stayed in `b32`, the real "
            "pick hoisted `*#41` to `b8`, so `2#40`\ncan go no later than `b8`.")
    insert_after(nb, "2e2eef59", claims_cell("claims-08-late", (
        "# the table's loop reused the names early and late: the always-late run again\n"
        "late, _ = gcm.schedule_late(fg, cfg, dom, fixed, gcm.schedule_early(fg, cfg, dom, fixed),\n"
        "                            lambda e, lt: lt)\n"
        "by_repr = {repr(fg.graph.nodes[i]): i for i in late}\n"
        "rows = {row[0]: row for row in sched.table()}\n"
        "two, times = by_repr[\"2#40\"], by_repr[\"*#41\"]\n"
        "claim(\"`2#40` is\\nlate in `b32` there and in `b8` here\", (late[two], rows[\"2#40\"][2]), (\"b32\", \"b8\"))\n"
        "claim(\"its only user `*#41` stayed in `b32`\",\n"
        "      ([u.id for u in fg.graph.nodes[two].outputs], late[times]), ([times], \"b32\"))\n"
        "claim(\"the real pick hoisted `*#41` to `b8`\", rows[\"*#41\"][3], \"b8\")\n"
        "claim(\"One row differs from the table above\",\n"
        "      [name for name, i in by_repr.items() if late[i] != rows[name][2]], [\"2#40\"])\n"
        "checked()")))
    replace(nb, "1bd087a4",
            "redundancy spans iterations. The graph sees `a * b + 7` as one value with no control "
            "input,\nand GCM places it before the loop.",
            "redundancy spans iterations. In the graph `a * b` is a value with no control input, "
            "and GCM\nplaces its `mul` before the loop, in the landing pad `.b15.pad`. The `+ 7` "
            "stays in the loop:\nreassociation (lesson 06) has already rewritten `s + (a * b + "
            "7)` as `(s + a * b) + 7`,\nmoving the constant outward, so no `a * b + 7` is left "
            "to hoist and each turn still adds\ntwice to `s` (only the constant `7` itself moves "
            "out).")
    cell(nb, "claims-08-bril").source = (
        "pad = optimized.split(\".b15.pad:\")[1].split(\"\\n.\")[0]\n"
        "body = optimized.split(\".b15:\")[1].split(\"\\n.\")[0]\n"
        "product = re.search(r\"(\\w+): int = mul a b;\", pad)\n"
        "seven = re.search(r\"(\\w+): int = const 7;\", pad)\n"
        "claim(\"GCM\\nplaces its `mul` before the loop, in the landing pad `.b15.pad`\",\n"
        "      (bool(product), \"mul\" in body), (True, False))\n"
        "adds = [line.split(\"=\")[0].strip() for line in body.splitlines() if \"add\" in line]\n"
        "sum_first = re.search(rf\"(\\S+): int = add s\\S* {product.group(1)};\", body)\n"
        "claim(\"reassociation (lesson 06) has already rewritten `s + (a * b + 7)` as `(s + a * b) + 7`\",\n"
        "      bool(sum_first and re.search(rf\"s\\S*: int = add {sum_first.group(1)} {seven.group(1)};\", body)), True)\n"
        "claim(\"each turn still adds\\ntwice to `s`\", sum(\": int = add\" in line and \"i.\" not in line.split(\"=\")[0]\n"
        "                                            for line in body.splitlines()), 2)\n"
        "claim(\"only the constant `7` itself moves out\", (bool(seven), \"const 7\" in body), (True, False))\n"
        "from pathlib import Path\n"
        "makefile = Path(\"../Makefile\").read_text()\n"
        "claim(\"`make bench` prints this comparison for a set of Bril programs\",\n"
        "      \"benchmarks/run_all.py\" in makefile.split(\"\\nbench:\")[1].split(\"\\n\\n\")[0]\n"
        "      and \"Bril dynamic instructions: original, LVN+DCE\" in "
        "Path(\"../benchmarks/run_all.py\").read_text(), True)\n"
        "checked()")
    c = cell(nb, "claims-08-bril")
    if "import re" not in c.source:
        c.source = "import re\n" + c.source


# --------------------------------------------------------------------------------- 09
def lesson_09(nb):
    replace(nb, "dbaac1e2",
            "A range `[lo, hi]` says: every value this node ever takes lies between `lo` and `hi`. Two\n"
            "ranges *meet* in the smallest range holding both (what is true of either value), and\n"
            "*join* in their intersection; the empty range is the top (\"no value yet\"), the full\n"
            "64-bit range the bottom. Each arithmetic node computes its range from its inputs'.\n\n"
            "Which way is up is a convention, and the course uses both. Here, as in lessons 06 and 07\n"
            "(Click's), the top is where an optimistic analysis *starts* (nothing known to be reached)\n"
            "and merging two paths goes **down** with meet, towards \"knows nothing\". Lesson 10 follows\n"
            "Julia's escape analysis and the abstract-interpretation books, with the picture upside\n"
            "down: the start (NoEscape) is the bottom and merging goes **up** with join, towards\n"
            "AllEscape on top. Same idea in both: a merge moves away from the start, and the analysis\n"
            "stops because it can only move so far.",
            "A range `[lo, hi]` says: every value this node ever takes lies between `lo` and `hi`.\n"
            "Each arithmetic node computes its range from its inputs'.\n\n"
            "Lessons 09 and 10 draw their lattices the same way up, the way of the\n"
            "abstract-interpretation books and of Julia's analyses: an analysis starts at the\n"
            "**bottom** -- here the empty range, \"no value yet\" -- and merging two paths goes **up**\n"
            "with **join**, the least fact true on either path: here the smallest range holding both,\n"
            "`[0, 1]` join `[5, 6]` is `[0, 6]`. The top is \"knows nothing\" -- here the full 64-bit\n"
            "range. Going down, **meet** is what holds when both facts hold: the intersection,\n"
            "`[0, 5]` meet `[3, 9]` is `[3, 5]` (narrowing, below, uses it). Lessons 06 and 07 drew\n"
            "the type lattice the other way up, after Click, and the engine keeps his names:\n"
            "`IntType.meet` is this lesson's join and `IntType.join` its meet. Either way up, a merge\n"
            "moves away from the start, and the analysis stops because it can only move so far.")
    not_outputs(nb, "dbaac1e2", "**no** pair of operands overflows")
    replace(nb, "9bddeb1c",
            'print("len(a) is in", intervals.LENGTH, "(an array has at most 100,000,000 elements)")',
            'print("len(a) is in", intervals.LENGTH, "(an array has at most 100,000,000 elements)")\n'
            'print(f"merging two paths: {r(0, 1)} join {r(5, 6)} = {join(r(0, 1), r(5, 6))}")\n'
            'print(f"both facts hold:   {r(0, 5)} meet {r(3, 9)} = {meet(r(0, 5), r(3, 9))}")')
    cell(nb, "claims-09-lattice").source = (
        "claim(\"`[0, 1]` join `[5, 6]` is `[0, 6]`\", join(r(0, 1), r(5, 6)), r(0, 6))\n"
        "merged = join(r(0, 1), r(5, 6))                  # above both: joining either changes nothing\n"
        "claim(\"merging two paths goes **up** with **join**, the least fact true on either path\",\n"
        "      (join(merged, r(0, 1)), join(merged, r(5, 6))), (merged, merged))\n"
        "claim(\"`[0, 5]` meet `[3, 9]` is `[3, 5]`\", meet(r(0, 5), r(3, 9)), r(3, 5))\n"
        "empty = r(1, 0)\n"
        "claim(\"an analysis starts at the **bottom** -- here the empty range\",\n"
        "      (join(empty, r(2, 3)), meet(empty, r(2, 3))), (r(2, 3), empty))\n"
        "full = intervals.add(r(0, INT_MAX), r(1, 1))     # the full range, as `+` that may wrap gives\n"
        "claim(\"The top is \\\"knows nothing\\\" -- here the full 64-bit\\nrange\",\n"
        "      (join(full, r(2, 3)), meet(full, r(2, 3))), (full, r(2, 3)))\n"
        "low, high = r(0, 5), r(3, 9)\n"
        "claim(\"`IntType.meet` is this lesson's join and `IntType.join` its meet\",\n"
        "      (low.meet(high) == join(low, high), low.join(high) == meet(low, high)), (True, True))\n"
        "checked()")
    c = cell(nb, "claims-09-loop")
    c.source = c.source.replace(
        "claim(\"the phi is `[0, 0]` joined with `[1, 10]`, `[0, 10]`\", last[\"narrow\", \"Phi\"], str(r(0, 10)))",
        "claim(\"the phi is `[0, 0]` joined with `[1, 10]`, `[0, 10]`\",\n"
        "      (last[\"narrow\", \"Phi\"], join(r(0, 0), r(1, 10))), (str(r(0, 10)), r(0, 10)))")
    for c in nb.cells:
        if c.cell_type == "code" and "from ssa_course.lessons.l09_ranges import analysis, check_stats, machine_tests" in c.source:
            c.source = c.source.replace(
                "from ssa_course.lessons.l09_ranges import analysis, check_stats, machine_tests",
                "from ssa_course.lessons.l09_ranges import analysis, check_stats, join, machine_tests, meet")


# --------------------------------------------------------------------------------- 10
def lesson_10(nb):
    replace(nb, "8ec432d9",
            "This lattice is drawn the other way up from lessons 06, 07 and 09. There (Click's\n"
            "convention) the start of an optimistic analysis is the top and a merge goes *down* with\n"
            "meet, towards \"knows nothing\" at the bottom. Here (Julia's `EscapeAnalysis`, and the\n"
            "abstract-interpretation books) the start, NoEscape, is the bottom and a merge goes *up*\n"
            "with join, towards AllEscape at the top. The same picture upside down: in both, merging\n"
            "two facts moves away from the start, and each property can only move so far.",
            "Lessons 09 and 10 draw their lattices the same way up, the way of the\n"
            "abstract-interpretation books and of Julia's `EscapeAnalysis`: an analysis starts at the\n"
            "**bottom** -- here NoEscape -- and a merge goes *up* with join, the least fact true on\n"
            "either path, towards \"knows nothing\" at the top -- here AllEscape. (Lesson 09: the empty\n"
            "range at the bottom, the full range on top.) Lessons 06 and 07 drew theirs the other way\n"
            "up, after Click: the start on top and a merge going down with meet. Either way up,\n"
            "merging two facts moves away from the start, and each property can only move so far.")
    c = cell(nb, "claims-10-lattice")
    c.source = c.source.replace("claim(\"the start, NoEscape, is the bottom\"",
                                "claim(\"an analysis starts at the\\n**bottom** -- here NoEscape\"")
    c.source = c.source.replace("claim(\"a merge goes *up* with join, towards AllEscape at the top\",",
                                "claim('a merge goes *up* with join, the least fact true on\\neither path, "
                                "towards \"knows nothing\" at the top -- here AllEscape',")


# --------------------------------------------------------------------------------- 11
def lesson_11(nb):
    replace(nb, "1bef7a70",
            "The allocator spills the values with the lowest cost =\n"
            "(uses + defs) × 10^loop depth ÷ degree: rarely used, much-interfering values go first.",
            "When every value left in the graph has at least *k*\n"
            "neighbours, simplify pushes the one with the lowest cost = (uses + defs) × 10^loop depth ÷\n"
            "degree -- the degree counting only the neighbours still in the graph -- as a *potential*\n"
            "spill. Select still tries to colour it (Briggs' optimism), and only a value that finds no\n"
            "register is spilled. So the cheapest values are not the ones spilled: here the values used\n"
            "once before the loop are pushed first and all find a register; the values the loop reads\n"
            "on every turn cost more, and they are the ones left without a register. The cell lists\n"
            "the potential spills in the order simplify pushed them.")
    replace(nb, "13d1a1af",
            'print(colour.allocations["main"].text()[:1500])',
            'alloc = colour.allocations["main"]\n'
            'print(f"{\'value\':10} {\'weight\':>6} {\'degree\':>6} {\'cost\':>6}  round 1 gives it")\n'
            'for v, c in alloc.history[0].potential_spills.items():\n'
            '    fate = "no register: spilled" if v in alloc.history[0].spilled else "a register"\n'
            '    print(f"{str(v):10} {c.weight:>6g} {c.degree:>6} {c.cost:>6.3f}  {fate}")\n'
            'for k, later in enumerate(alloc.history[1:], start=2):\n'
            '    print(f"round {k} spills:", ", ".join(map(str, later.spilled)) or "nothing")')
    c = cell(nb, "claims-11-spills")
    if "pushed" not in c.source:
        c.source = c.source.rstrip() + "\n" + (
            "pushed = list(alloc.history[0].potential_spills.items())\n"
            "spilled = {v for r in alloc.history for v in r.spilled}\n"
            "claim(\"simplify pushes the one with the lowest cost\",\n"
            "      [c.cost for _, c in pushed] == sorted(c.cost for _, c in pushed), True)\n"
            "once = [v for v, c in pushed if c.weight < 10]\n"
            "claim_all(\"the values used\\nonce before the loop are pushed first and all find a register\",\n"
            "          once, lambda v: v not in spilled)\n"
            "claim(\"are pushed first\", [v for v, _ in pushed[:len(once)]], once)\n"
            "claim_all(\"the values the loop reads\\non every turn cost more, and they are the ones left without a register\",\n"
            "          spilled, lambda v: alloc.graph.weights.get(v, 0) >= 10\n"
            "          and min(r.potential_spills[v].cost for r in alloc.history if v in r.potential_spills)\n"
            "          > max(alloc.history[0].potential_spills[u].cost for u in once))\n")
        c.source = c.source.replace("\nchecked()", "") + "\nchecked()"
    replace(nb, "13d1a1af", "from ssa_course.codegen.mir import ALLOCATABLE\n",
            "from ssa_course.codegen.mir import ALLOCATABLE\n"
            "from ssa_course.lessons.printing import clip\n")
    replace(nb, "asm-by-hand",
            'print(f"r12 is register {n12} = {n12:04b}: B holds the 1, rm the low bits {n12 & 7:03b}, "\n'
            '      f"which in rm mean \'a SIB byte follows\', so an address based on r12 needs a SIB byte")',
            'print(f"r12 is register {n12} = {n12:04b}: B holds the 1, rm the low bits {n12 & 7:03b},\\n"\n'
            '      f"which in rm mean \'a SIB byte follows\', so an address based on r12 needs a SIB byte")')
    replace(nb, "a64-lengths", 'print("aarch64 main, instructions by length in bytes:", dict(a64_counts))',
            'print("aarch64 instructions by length in bytes:", dict(a64_counts))')
    replace(nb, "a64-lengths",
            'print("x86-64 main, instructions by length in bytes: ", dict(sorted(x86_counts.items())))',
            'print("x86-64 instructions by length in bytes: ", dict(sorted(x86_counts.items())))')
    replace(nb, "a64-lengths", "def lengths(image, cs):\n",
            "def lengths(image, cs):   # main's instructions\n")
    replace(nb, "a64-run-fib", '        print(f"{via:>16}: {missing}")',
            '        print(textwrap.fill(f"{via:>16}: {missing}", 100, subsequent_indent=" " * 18))')
    replace(nb, "a64-run-fib", "from ssa_course import registry\n",
            "import textwrap\n\nfrom ssa_course import registry\n")
    replace(nb, "7d230d5d", 'print(ssa_course.show(FIB, "disasm", "text")[:1500])',
            'print(clip(ssa_course.show(FIB, "disasm", "text"), 40))')


def lesson_02(nb):
    not_outputs(nb, nb.cells[0].id, "*never* folding a division by zero")


EDITS = {"02-peepholes": lesson_02, "00-tour": lesson_00, "03-ssa": lesson_03, "04-julia-ir": lesson_04,
         "05-control-as-data": lesson_05, "07-optimistic": lesson_07, "08-scheduling": lesson_08,
         "09-ranges": lesson_09, "10-escape": lesson_10, "11-codegen": lesson_11}


def main(only: list[str]) -> None:
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        if only and path.stem[:2] not in only:
            continue
        nb = nbformat.read(path, as_version=4)
        if path.stem in EDITS:
            EDITS[path.stem](nb)
        every_lesson(nb)
        nbformat.write(nb, path)


if __name__ == "__main__":
    main(sys.argv[1:])
