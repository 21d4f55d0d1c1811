"""The lines faces of the representation families (see :mod:`ssa_course.srclines` and
docs/lines.md): quads (and SSA quads), CFGs, sea-of-nodes graphs, IRCode, escapes.

Each returns a :class:`~ssa_course.srclines.Lines` aligned with the family's text face
and naming the line of each DOT node the family draws. The rules (one place):

* a quad has the line of the statement it was lowered from (``Instr.line``; Bril input:
  its own line in the Bril file);
* a label, a phi (unless written in Bril input) and any quad a pass added without a
  line of its own (a parallel copy of
  out-of-SSA, a jump added at layout) have the line of the statement that *made their
  block* (``Label.line``: the ``if``/``while``/``for`` whose merge, header or exit the block
  is); with no such statement, the first line of an instruction in the block;
* a sea-of-nodes node has the line of the statement being parsed when it was made
  (``Graph.lines``): a Region or Loop and its Phis have the line of the ``if``/loop, a
  node GCM hoists keeps its line (it moved, its origin did not);
* DOT nodes: a block drawn as a record has the line of its first item with one; a
  constant copied next to its user (``5>10.1``) has its user's line.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from ssa_course.srclines import Lines, split_lines

if TYPE_CHECKING:
    from ssa_course.analysis.escape import ProgramEscapes
    from ssa_course.codegen.aarch64.compile import CompiledA64
    from ssa_course.codegen.compile import CompiledProgram
    from ssa_course.codegen.mir import MProgram
    from ssa_course.lessons.l01_quads import ProgramCfgs
    from ssa_course.quads.ir import Function, Program
    from ssa_course.son.program import SeaOfNodes
    from ssa_course.ssa.ircode import IRCode


def _split(name: str) -> tuple[str | None, str]:
    """``"@main/for.cond.1"`` -> ("main", "for.cond.1"); ``"10"`` -> (None, "10")."""
    if "/" in name:
        fn, local = name.split("/", 1)
        return fn.lstrip("@"), local
    return None, name


# ---------------------------------------------------------------- quads


def function_item_lines(fn: Function) -> list[int | None]:
    """The line of each item of ``fn.body`` (labels and instructions), by the rules above."""
    from ssa_course.quads.ir import Label

    body = fn.body
    out: list[int | None] = [None] * len(body)
    block_line: int | None = None
    start = 0
    for i, item in enumerate([*body, None]):
        if item is None or isinstance(item, Label) and (
                i == 0 or not isinstance(body[i - 1], Label)):
            # close the block [start, i): fill the items without a line
            first = next((x.line for x in body[start:i] if not isinstance(x, Label)
                          and x.line is not None and x.op != "phi"), None)
            fill = block_line if block_line is not None else first
            for k in range(start, i):
                x = body[k]
                own = None if isinstance(x, Label) else x.line
                if own is None and x is not None and not isinstance(x, Label) \
                        and x.pos is not None:
                    own = x.pos.line
                if own is None and isinstance(x, Label):
                    own = x.line
                out[k] = own if own is not None else fill
            start = i
            block_line = item.line if isinstance(item, Label) else None
    return out


def quads_lines(program: Program) -> Lines:
    """Aligned with :func:`ssa_course.quads.bril_write.to_bril_text`."""
    out: list[int | None] = [None] * len(program.structs)
    blocks: dict[tuple[str, str], int | None] = {}
    for name, fn in program.functions.items():
        items = function_item_lines(fn)
        out.append(None)  # the header
        out.extend(items)
        out.append(None)  # the closing brace
        _block_lines(name, fn, items, blocks)
    return Lines(out, _cfg_node(blocks))


def _block_lines(name: str, fn: Function, items: list[int | None],
                 blocks: dict[tuple[str, str], int | None]) -> None:
    from ssa_course.quads.cfg import build_cfg
    from ssa_course.quads.ir import Label

    by_id = {id(x): n for x, n in zip(fn.body, items, strict=True)}
    cfg = build_cfg(fn)
    # build_cfg copies the instructions: match them by position in the body
    flat = [x for x in fn.body if not isinstance(x, Label)]
    k = 0
    for block in cfg.blocks.values():
        line = block.line
        for _ in block.instrs:
            if line is None and k < len(flat):
                line = by_id.get(id(flat[k]))
            k += 1
        blocks[(name, block.name)] = line


def _cfg_node(blocks: dict[tuple[str, str], int | None]) -> Callable[[str], int | None]:
    names = {fn for fn, _ in blocks}
    only = next(iter(names)) if len(names) == 1 else "main"

    def node(dot_name: str) -> int | None:
        fn, local = _split(dot_name)
        return blocks.get((fn or only, local))
    return node


def cfg_lines(a: ProgramCfgs) -> Lines:
    """Aligned with :func:`ssa_course.lessons.l01_quads.cfg_text`."""
    out: list[int | None] = []
    blocks: dict[tuple[str, str], int | None] = {}
    for name, cfg in a.cfgs.items():
        out.append(None)
        for block in cfg.blocks.values():
            own = [i.line if i.line is not None else (i.pos.line if i.pos else None)
                   for i in block.instrs]
            first = next((n for n, i in zip(own, block.instrs, strict=True)
                          if n is not None and i.op != "phi"), None)
            fill = block.line if block.line is not None else first
            out.append(fill)
            out.extend(n if n is not None else fill for n in own)
            blocks[(name, block.name)] = fill
        out.append(None)
    return Lines(out[:-1], _cfg_node(blocks))  # the text's last blank line ends it


# ---------------------------------------------------------------- sea of nodes


def graphs_lines(program: SeaOfNodes) -> Lines:
    """Aligned with :func:`ssa_course.son.printer.format_graphs`: a header, then per
    function a blank line, its header and one line per node."""
    out: list[int | None] = [None]
    lines_of: dict[str, dict[int, int]] = {}
    for name, fg in program.functions.items():
        lines = fg.graph.lines
        lines_of[name] = lines
        out += [None, None]
        out.extend(lines.get(n.id) for n in fg.nodes())
    only = "main" if "main" in lines_of else next(iter(lines_of), "main")

    # a drawing of several functions names a node "fib.6" (a constant's copy drawn next
    # to its user: "fib.3>fib.6.1"); of one function "6" ("3>6.1"); "@fib/6" also reads
    by_length = sorted(lines_of, key=len, reverse=True)

    def node(dot_name: str) -> int | None:
        fn, local = _split(dot_name)
        if fn is None:
            fn = next((f for f in by_length if local.startswith(f"{f}.")), None)
        head = local.split(">", 1)[-1]  # "5>10.1": drawn for node 10
        if fn is not None and head.startswith(f"{fn}."):
            head = head[len(fn) + 1:]
        head = head.split(".", 1)[0]
        return lines_of.get(fn or only, {}).get(int(head)) if head.isdigit() else None
    return Lines(out, node)


def select_lines(program: SeaOfNodes) -> Lines:
    """``son-select``: each Phi printed as several Select/Compose lines; each of them
    has the Phi's line."""
    from ssa_course.son.nodes import Phi
    from ssa_course.son.printer import _select_compose_lines

    out: list[int | None] = [None]
    base = graphs_lines(program)
    for fg in program.functions.values():
        lines = fg.graph.lines
        out += [None, None]
        for n in fg.nodes():
            count = len(_select_compose_lines(n)) if isinstance(n, Phi) else 1
            out += [lines.get(n.id)] * count
    return Lines(out, base.node)


# ---------------------------------------------------------------- IRCode


def escapes_lines(result: ProgramEscapes) -> Lines:
    """Aligned with :func:`ssa_course.analysis.escape_print.format_escapes`."""
    return ir_lines({n: fe.ir for n, fe in result.functions.items()}, escapes=True)


def ir_lines(program: Mapping[str, IRCode], escapes: bool = False) -> Lines:
    """Aligned with :func:`ssa_course.ssa.julia.format_ir` per function (and, with
    ``escapes``, with the escapes listing: the same lines, then its summary)."""
    out: list[int | None] = []
    blocks: dict[tuple[str, str], int | None] = {}
    for index, (name, ir) in enumerate(program.items()):
        src = list(ir.src) + [None] * (len(ir.stmts) - len(ir.src))
        out += [None, None] if index else [None]  # a blank line between functions
        for k, blk in enumerate(ir.blocks, start=1):
            own = src[blk.start - 1:blk.stop]
            out.extend(own if own else [None])
            blocks[(name, f"b{k}")] = next((n for n in own if n is not None), None)
        if escapes:
            out.append(None)  # the summary
    return Lines(out, _cfg_node(blocks))


# ---------------------------------------------------------------- machine code (any target)


def machine_node(mprog: MProgram) -> Callable[[str], int | None]:
    """The line of each block of a machine program's drawing (``f0_b3``: function 0,
    block 3): its first instruction with a line. Duck-typed over ``functions`` -> ``blocks``
    -> ``instrs`` with ``line``, so every target's machine IR gets it."""
    lines: dict[str, int | None] = {}
    for n, fn in enumerate(mprog.functions.values()):
        for k, b in enumerate(fn.blocks):
            line = next((i.line for i in b.instrs if i.line is not None), None)
            lines[f"f{n}_b{k}"] = line
    return lines.get


def machine_lines(compiled: CompiledProgram | CompiledA64, text: str) -> Lines:
    """A listing's lines (``# line N`` comments, :func:`~ssa_course.srclines.listing_lines`)
    and its machine CFG's blocks."""
    from ssa_course.srclines import listing_lines

    return Lines(listing_lines(text).text, machine_node(compiled.mprog))


def disasm_lines(listing: str, disasm: str,
                 node: Callable[[str], int | None] | None = None) -> Lines:
    """A disassembly of the listing's code: its instructions, in order, are the listing's
    instructions (one for one), so each takes the line of its listing twin. When the counts
    differ (an assembler that expands or relaxes), nothing is guessed: no lines."""
    from ssa_course.srclines import listing_lines

    src = listing_lines(listing).text
    ours = [n for t, n in zip(split_lines(listing), src, strict=True) if _is_instruction(t)]
    rows = split_lines(disasm)
    theirs = [i for i, t in enumerate(rows) if _DISASM_INSTR.match(t)]
    out: list[int | None] = [None] * len(rows)
    if len(ours) == len(theirs):
        for i, n in zip(theirs, ours, strict=True):
            out[i] = n
    return Lines(out, node or (lambda name: None))


def _is_instruction(t: str) -> bool:
    s = t.strip()
    return bool(s) and t[:1] in " \t" and not s.startswith((".", "#", "//")) \
        and not s.endswith(":")


_DISASM_INSTR = __import__("re").compile(r"^\s+[0-9a-f]+:\s")


# ---------------------------------------------------------------- Bril JSON


def bril_json_lines(program: Program, text: str) -> Lines:
    """Aligned with the bril-json text face (``json.dumps(indent=2, sort_keys=True)``):
    every line of an instruction's object has that instruction's line."""
    items = [n for fn in program.functions.values() for n in function_item_lines(fn)]
    out: list[int | None] = []
    k, current, in_functions = -1, None, False
    for t in split_lines(text):
        if t == '  "functions": [':
            in_functions = True
        elif t.startswith('  "') and not t.startswith('  "functions"'):
            in_functions = False
        if in_functions and t == "        {":
            k += 1
            current = items[k] if k < len(items) else None
        out.append(current if in_functions and t.startswith("        ") else None)
        if t in ("        }", "        },"):
            current = None
    return Lines(out)
