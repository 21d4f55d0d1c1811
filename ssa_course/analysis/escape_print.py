"""``code_escapes``: the IRCode listing with an escape glyph in front of every statement.

Each line starts with the glyph of the value it defines (see
:meth:`~ssa_course.analysis.escape_lattice.EscapeInfo.glyph`); the header gives every
argument its glyph; allocation lines (``newstruct``/``newarr``) end with the source
position of their ``new`` (``# at 6:13``) so they are easy to match with the program; a
last comment line states the function's summary for its callers. The drawing is the
IRCode block graph with the same lines, each block filled by the worst escape among the
values it defines.

``✓`` (NoEscape) says the object does not outlive this frame -- not that scalar
replacement can remove it: one stored in an array slot or handed to a callee that writes
it stays ``✓`` and stays allocated (the ``sroa`` representation's stats give each one's
reason).
"""

from __future__ import annotations

from ssa_course.analysis.escape import FunctionEscapes, ProgramEscapes
from ssa_course.errors import Pos
from ssa_course.ssa.ircode import Argument, Expr, SSAValue
from ssa_course.ssa.julia import format_ir

GLYPH_WIDTH = 3  # the widest glyph is two characters ("*′"), then a space
ALLOCATIONS = ("newstruct", "newarr")

# Fills for the drawing, mildest first (the worst glyph of a block picks one): a block is
# as bad as its worst value, which is where a reader should look first.
FILLS = {"✓": "#d8f0d0", "↑": "#d6e9ff", "*": "#ffe08a", "X": "#ffb0a8"}
SEVERITY = ("◌", "✓", "↑", "*", "X")


def _pos(line: Pos | None) -> str:
    return "" if line is None else f"  # at {line.line}:{line.col}"


def function_lines(fe: FunctionEscapes) -> list[str]:
    """The listing of one function, line by line (header first)."""
    ir = fe.ir
    # Reuse the lesson 04 IRCode printer and prefix a glyph column: the reader sees the
    # same text as before, with one column of escape states added (Julia's code_escapes).
    listing = format_ir(ir).rstrip("\n").split("\n")
    args = ", ".join(f"{fe[Argument(k, n)].glyph()} {n}::{t}" for k, (n, t) in
                     enumerate(zip(ir.argnames, ir.argtypes, strict=True), start=1))
    out = [f"{ir.name}({args})" + (f" => {ir.ret}" if ir.ret is not None else "")]
    row = 1
    for blk in ir.blocks:
        # An empty block still has a line in the listing (its label); keep rows aligned.
        if blk.stop < blk.start:
            out.append(" " * GLYPH_WIDTH + listing[row])
            row += 1
            continue
        for pc in range(blk.start, blk.stop + 1):
            s = ir.stmts[pc - 1]
            text = fe[SSAValue(pc)].glyph().ljust(GLYPH_WIDTH) + listing[row]
            # Allocations carry their source position: the glyph a reader checks first
            # should point back at the `new` it is about.
            if isinstance(s, Expr) and s.head in ALLOCATIONS:
                text += _pos(ir.lines[pc - 1])
            out.append(text)
            row += 1
    out.append(f"# summary: {fe.summary.describe(ir.argnames)}")
    return out


def format_escapes(result: ProgramEscapes) -> str:
    """Every function's ``code_escapes`` listing, in program order."""
    return "\n".join("\n".join(function_lines(fe)) + "\n" for fe in result.functions.values())


def allocation_glyphs(result: ProgramEscapes) -> list[tuple[str, int, str]]:
    """``(function, statement, glyph)`` of every allocation, in source order (by position,
    then function order) -- what a reader checks first."""
    found = []
    for order, (name, fe) in enumerate(result.functions.items()):
        for pc, info in fe.allocations():
            line = fe.ir.lines[pc - 1]
            # Source order across functions (then function, then statement) so a test or a
            # lesson sentence can list allocations the way the program text shows them.
            key = (getattr(line, "line", 0), getattr(line, "col", 0), order, pc)
            found.append((key, (name, pc, info.glyph())))
    return [item for _, item in sorted(found)]


def _block_fill(fe: FunctionEscapes, start: int, stop: int) -> str | None:
    worst = 0
    for pc in range(start, stop + 1):
        mark = fe[SSAValue(pc)].glyph()[0]
        worst = max(worst, SEVERITY.index(mark))
    return FILLS.get(SEVERITY[worst])


def escapes_to_dot(result: ProgramEscapes, title: str | None = None,
                   options=None) -> str:
    """DOT of the functions' IRCode blocks with glyphs, blocks filled by their worst value."""
    from dataclasses import replace

    from ssa_course.ssa.julia import ir_graph
    from ssa_course.viz.options import options_or_default
    from ssa_course.viz.select import functions_to_dot

    def build(fe: FunctionEscapes, prefix: str, cluster: str | None) -> tuple[list, list]:
        nodes, edges = ir_graph(fe.ir, prefix, cluster)
        body = function_lines(fe)[1:-1]
        row = 0
        coloured = []
        for node, blk in zip(nodes, fe.ir.blocks, strict=True):
            count = max(1, blk.stop - blk.start + 1)
            lines = tuple(line[:GLYPH_WIDTH] + line[GLYPH_WIDTH + len(str(len(fe.ir.blocks)))
                                                    + 3:] for line in body[row:row + count])
            row += count
            coloured.append(replace(node, lines=lines,
                                    fill=_block_fill(fe, blk.start, blk.stop)))
        return coloured, edges

    graphs = {fn: (lambda prefix, cluster, fe=fe: build(fe, prefix, cluster))
              for fn, fe in result.functions.items()}
    return functions_to_dot(graphs, {n: len(fe.ir.blocks) for n, fe in
                                     result.functions.items()},
                            title, options_or_default(options),
                            cluster_title=lambda fn: f"{fn} (escapes)",
                            prefix=lambda fn: f"{fn}/", name="escapes",
                            around_prefix=lambda fn: f"{fn}/b")
