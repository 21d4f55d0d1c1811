"""The machine CFG as Graphviz DOT: one box per block listing its instructions.

Solid edges are the block's successors; a dashed edge goes to the handler an ``rt_enter``
installs; a dotted one to a trap stub a conditional jump in the middle of a block may take.
"""

from __future__ import annotations

from collections.abc import Callable

from ssa_course.codegen.mir import LabelRef, Mem, MFunction, MInstr, MProgram

InstrText = Callable[[MFunction, MInstr], str]


def _escape(text: str) -> str:
    return (text.replace("\\", "\\\\").replace('"', '\\"').replace("{", "\\{")
            .replace("}", "\\}").replace("<", "\\<").replace(">", "\\>")
            .replace("|", "\\|"))


def function_dot(fn: MFunction, prefix: str = "", text: InstrText | None = None) -> list[str]:
    """Node and edge statements for one function (for a cluster or a whole graph);
    ``text`` prints an instruction (the target's listing; by default the default
    machine's, :mod:`ssa_course.codegen.machines`)."""
    if text is None:
        from ssa_course.codegen.machines import machine

        text = machine().instr_text
    names = {b.label: f"{prefix}b{k}" for k, b in enumerate(fn.blocks)}
    out: list[str] = []
    for b in fn.blocks:
        body = "".join(_escape(text(fn, i)) + "\\l" for i in b.instrs)
        style = ', style="filled", fillcolor="#fff0e0"' if b.handler else ""
        out.append(f'  {names[b.label]} [shape=record, label="{{{_escape(b.label)}:|{body}}}"'
                   f"{style}];")
        handler = None
        for k, i in enumerate(b.instrs):
            target = i.operands[0].name if i.operands and isinstance(i.operands[0],
                                                                      LabelRef) else None
            if i.op == "jcc" and k < len(b.instrs) - 2 and target in names:
                out.append(f"  {names[b.label]} -> {names[target]} [style=dotted];")
            if i.op == "lea" and len(i.operands) == 2 and isinstance(i.operands[1], Mem):
                handler = i.operands[1].symbol
        for s in b.succs:
            dashed = " [style=dashed]" if s == handler else ""
            out.append(f"  {names[b.label]} -> {names[s]}{dashed};")
    return out


def mprogram_dot(program: MProgram, text: InstrText | None = None) -> str:
    """Every function of the program, one cluster each."""
    lines = ["digraph mir {", '  node [fontname="monospace", fontsize=10];']
    for n, fn in enumerate(program.functions.values()):
        lines.append(f"  subgraph cluster_{n} {{")
        lines.append(f'    label="{_escape(fn.name)}";')
        lines.extend("  " + s for s in function_dot(fn, f"f{n}_", text))
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"
