"""The sea of nodes as stable text (lessons 05-07).

Text: one line per node in id order (ids are creation order, so the text is stable for
a given program) -- the node, its inputs (``_`` for an empty slot), its type::

    %13 = <         _ %11 %9        : bool

Drawing: :mod:`ssa_course.son.draw` (its functions are importable from here too).
"""

from __future__ import annotations

from typing import Any

from ssa_course.runtime import paused_gc
from ssa_course.son.control import Phi, Proj, Start
from ssa_course.son.data import Constant
from ssa_course.son.draw import (  # the drawing half, importable from here too
    compare_dot,
    graph_parts,
    graphs_to_dot,
    program_dot,
    select_compose_dot,
    select_compose_parts,
)
from ssa_course.son.graph import Node
from ssa_course.son.program import FunctionGraph, SeaOfNodes
from ssa_course.viz.palette import (  # the colours, importable from here too
    CHANGED_FILL,
    CONSTANT_FILL,
    CONTROL_COLOR,
    CONTROL_FILL,
    DEAD_FILL,
    MEMORY_COLOR,
    MEMORY_FILL,
    PHI_FILL,
)


def summary(program: SeaOfNodes) -> str:
    mode = {"raw": "raw, peepholes off", "pessimistic": "pessimistic peepholes",
            "optimistic": "pessimistic peepholes, then SCCP"}[program.mode]
    k = program.constants_found()
    text = (f"{program.node_count()} nodes, {program.edge_count()} edges, "
            f"{k} constant{'' if k == 1 else 's'} found")
    if program.sccp_counts is not None:
        c = program.sccp_counts
        text += (f" ({c.get('constants', 0)} by SCCP), {c.get('dead branches', 0)} dead "
                 f"branch{'' if c.get('dead branches', 0) == 1 else 'es'} removed")
    return f"{text} ({mode})"


def _node_line(node: Node) -> str:
    # Every input slot is shown, empty ones as ``_``: input 0 is control, so a floating
    # node's line starts with ``_`` and a pinned one names where it hangs.
    inputs = " ".join(f"%{i.id}" if i is not None else "_" for i in node.inputs)
    head = f"%{node.id} = {_text_label(node)}"
    # Fixed columns: two versions of a graph line up when compared in a lesson or a diff.
    text = f"  {head:<22} {inputs:<22} : {node.type}"
    detail = node.var_name if isinstance(node, Phi) else node.detail()
    if detail:
        text += f"  ; {detail}"
    return text.rstrip()


# Lesson 05's other view of a Phi: one Select per path (the value if control came that
# way) and a Compose of them -- the same phi, its choice made explicit.
def _select_compose_lines(phi: Phi) -> list[str]:
    region = phi.operand(0)
    lines, names = [], []
    for i, value in enumerate(phi.inputs[1:], start=1):
        path = region.inputs[i] if i < len(region.inputs) else None
        if value is None or path is None:
            # A dead or missing path chooses nothing: no Select for it.
            continue
        names.append(f"%{phi.id}.{i}")
        head = f"%{phi.id}.{i} = Select"
        lines.append(f"  {head:<22} %{path.id} %{value.id}")
    head = f"%{phi.id} = Compose"
    lines.append(f"  {head:<22} {' '.join(names):<22} : {phi.type}  ; {phi.var_name}")
    return lines


def _graph_header(fg: FunctionGraph) -> str:
    params = ", ".join(f"{n}: {t}" for n, t in fg.params)
    ret = f" -> {fg.returns}" if fg.returns is not None else ""
    return f"graph {fg.name}({params}){ret}"


def format_graph(fg: FunctionGraph, select_compose: bool = False) -> str:
    """One function, a line per node; with ``select_compose`` every Phi is shown split
    into its Selects and a Compose."""
    lines = [_graph_header(fg)]
    # Id order is creation order: the same program prints the same text every run.
    for node in fg.nodes():
        if select_compose and isinstance(node, Phi):
            lines.extend(_select_compose_lines(node))
        else:
            lines.append(_node_line(node))
    return "\n".join(lines)


def format_graphs(program: SeaOfNodes, select_compose: bool = False) -> str:
    with paused_gc():  # one line per node of a big live graph: nothing here is garbage
        header = f"// sea of nodes: {summary(program)}"
        return "\n\n".join([header] + [format_graph(fg, select_compose)
                                       for fg in program.functions.values()]) + "\n"


def _text_label(node: Node) -> str:
    if isinstance(node, Proj):
        # Start's elements 2.. are the parameters: printed as such, though they are projections.
        kind = "Parm" if isinstance(node.inputs[0], Start) and node.index >= 2 else "Proj"
        return f"{kind} {node.label}"
    return node.label


# ------------------------------------------------ pessimistic vs optimistic (lesson 07)



def compare(program: SeaOfNodes) -> dict[Any, Any]:
    """SCCP's types next to the parser's, per function: ``{name: (result, changed ids,
    dead ids)}``; the graph itself is not changed."""
    from ssa_course.son.sccp import sccp

    out = {}
    for name, fg in program.functions.items():
        result = sccp(fg)
        # Constants are left out: their type is their value, which SCCP never changes.
        changed = {n.id for n in fg.nodes() if not n.is_control
                   and result.types.get(n.id) != n.type and not isinstance(n, Constant)}
        dead = {n.id for n in result.dead(fg)}
        out[name] = (result, changed, dead)
    return out


def compare_summary(program: SeaOfNodes, table: dict[Any, Any]) -> str:
    pess_consts = program.constants_found()
    pess_dead = sum(f.stats.dead_branches for f in program.functions.values())
    opt_new = sum(len(r.constants(program.functions[n])) for n, (r, _, _) in table.items())
    opt_dead = sum(len(d) for _, _, d in table.values())
    return (f"pessimistic: {pess_consts} constants, {pess_dead} dead branches cut while "
            f"parsing | optimistic (SCCP): +{opt_new} constants, {opt_dead} more dead nodes")


def compare_text(program: SeaOfNodes, mode: str, table: dict[Any, Any] | None = None) -> str:
    """The graph's text with each node's type in ``mode``; ``*`` marks a node the other
    mode types differently, ``dead`` one SCCP proves never runs. ``table`` is
    :func:`compare`'s result when the caller has it already."""
    table = table or compare(program)
    # the summary's two halves on lines of their own: the listing stays within 100 columns
    lines = [f"// {half}" for half in compare_summary(program, table).split(" | ")]
    lines.append(f"// types: {mode}")
    for name, fg in program.functions.items():
        result, changed, dead = table[name]
        lines.append("")
        lines.append(_graph_header(fg))
        for node in fg.nodes():
            line = _node_line(node)
            # Only the type column is replaced; the rest of the line is the parser's graph, so
            # the two modes differ exactly where SCCP knows more.
            if mode == "optimistic":
                head, _, rest = line.partition(" : ")
                detail = rest.split("  ; ", 1)
                line = f"{head} : {result.types.get(node.id)}" + (
                    f"  ; {detail[1]}" if len(detail) > 1 else "")
            mark = " dead" if node.id in dead else (" *" if node.id in changed else "")
            lines.append(line + mark)
    return "\n".join(lines) + "\n"


__all__ = [
    "CHANGED_FILL", "CONSTANT_FILL", "CONTROL_COLOR", "CONTROL_FILL", "DEAD_FILL",
    "MEMORY_COLOR", "MEMORY_FILL", "PHI_FILL", "compare", "compare_dot", "compare_summary",
    "compare_text", "format_graph", "format_graphs", "graph_parts", "graphs_to_dot",
    "program_dot", "select_compose_dot", "select_compose_parts", "summary",
]
