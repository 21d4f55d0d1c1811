"""The sea of nodes as stable text and as a DOT drawing (lessons 05-06).

Text: one line per node in id order (ids are creation order, so the text is stable for
a given program) -- the node, its inputs (``_`` for an empty slot), its type::

    %13 = <         _ %11 %9        : bool

Drawing: the style readers know from the literature -- control nodes are yellow boxes
joined by bold red control edges, memory edges are blue and dashed, data edges plain;
every edge is labelled with the input index it fills, nodes carry their id, and the
program's source is a comment at the top of the DOT text.
"""

from __future__ import annotations

from dataclasses import replace

from ssa_course.runtime import paused_gc
from ssa_course.son.control import Never, Phi, Proj, Region, Start, Stop
from ssa_course.son.data import Constant
from ssa_course.son.emit import FunctionGraph, SeaOfNodes
from ssa_course.son.graph import Node
from ssa_course.viz.dot import GraphEdge, GraphNode, graph_to_dot

CONTROL_FILL = "#fff2a8"
MEMORY_FILL = "#d6e9ff"
PHI_FILL = "#e8f5e0"
CONSTANT_FILL = "#f0f0f0"
CONTROL_COLOR = "#c00000"
MEMORY_COLOR = "#1f5fbf"


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
    inputs = " ".join(f"%{i.id}" if i is not None else "_" for i in node.inputs)
    head = f"%{node.id} = {_text_label(node)}"
    text = f"  {head:<22} {inputs:<22} : {node.type}"
    detail = node.var_name if isinstance(node, Phi) else node.detail()
    if detail:
        text += f"  ; {detail}"
    return text.rstrip()


def _select_compose_lines(phi: Phi) -> list[str]:
    region = phi.inputs[0]
    lines, names = [], []
    for i, value in enumerate(phi.inputs[1:], start=1):
        path = region.inputs[i] if i < len(region.inputs) else None
        if value is None or path is None:
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
        kind = "Parm" if isinstance(node.inputs[0], Start) and node.index >= 2 else "Proj"
        return f"{kind} {node.label}"
    return node.label


def _is_memory(node: Node) -> bool:
    return node.type.kind == "mem"


def _style(node: Node) -> tuple[str, str | None, bool]:
    """(shape, fill, emphasis) of a node."""
    if isinstance(node, (Start, Stop)):
        return "box", CONTROL_FILL, True
    if node.is_control:
        return "box", CONTROL_FILL, isinstance(node, Never)
    if isinstance(node, Phi):
        return "ellipse", MEMORY_FILL if _is_memory(node) else PHI_FILL, False
    if isinstance(node, Constant):
        return "ellipse", CONSTANT_FILL, False
    if node.is_pinned() or _is_memory(node):
        return "box", MEMORY_FILL, False
    return "ellipse", None, False


def _label(node: Node) -> str:
    if isinstance(node, Proj) and not node.is_control and isinstance(node.inputs[0], Start) \
            and node.index >= 2:
        return f"Parm {node.label}"
    if isinstance(node, Phi) and node.var_name:
        return f"Phi {node.var_name}"
    detail = node.detail() if not isinstance(node, Phi) else ""
    if detail and detail not in node.label:
        return f"{node.label} {detail}"
    return node.label


def graph_parts(fg: FunctionGraph, prefix: str = "",
                cluster: str | None = None) -> tuple[list[GraphNode], list[GraphEdge]]:
    nodes: list[GraphNode] = []
    edges: list[GraphEdge] = []
    for node in fg.nodes():
        shape, fill, emphasis = _style(node)
        nodes.append(GraphNode(f"{prefix}{node.id}", _label(node), (f"#{node.id}",),
                               shape, emphasis, fill, cluster))
        for i, inp in enumerate(node.inputs):
            if inp is None:
                continue
            if isinstance(node, Constant) or isinstance(node, Proj) and not node.is_control \
                    and isinstance(inp, Start) and node.type.kind != "mem":
                style, color = "dotted", "#999999"  # constants and parameters hang off Start
            elif isinstance(node, Phi) and i == 0:
                style, color = "dotted", CONTROL_COLOR  # a phi belongs to its region
            elif inp.is_control and (i == 0 or isinstance(node, (Region, Stop))):
                style, color = "bold", CONTROL_COLOR
            elif _is_memory(inp):
                style, color = "dashed", MEMORY_COLOR
            else:
                style, color = "solid", None
            edges.append(GraphEdge(f"{prefix}{inp.id}", f"{prefix}{node.id}", str(i), style,
                                   color, constraint=not (isinstance(node, Phi) and i > 0
                                                          and isinstance(node.inputs[0], Region)
                                                          and inp.id > node.id)))
    return nodes, edges


def program_dot(program: SeaOfNodes, parts, title: str | None) -> str:  # noqa: ANN001
    """One drawing of every function's ``parts(fg, prefix, cluster) -> (nodes, edges)``:
    a frame per function when there are several (node ids prefixed by its name)."""
    several = len(program.functions) > 1
    nodes: list[GraphNode] = []
    edges: list[GraphEdge] = []
    clusters: dict[str, str] = {}
    for name, fg in program.functions.items():
        part_nodes, part_edges = parts(fg, f"{name}." if several else "",
                                       name if several else None)
        nodes += part_nodes
        edges += part_edges
        if several:
            clusters[name] = f"fn {name}"
    return graph_to_dot(nodes, edges, title=title, clusters=clusters)


def graphs_to_dot(program: SeaOfNodes, title: str | None = None) -> str:
    """One drawing for the program: a frame per function when there are several."""
    dot = program_dot(program, graph_parts, title or summary(program))
    comment = "".join(f"// {line}\n" for line in program.source.rstrip().splitlines())
    return comment + dot


# ------------------------------------------------ the stepping stone: Select + Compose


def select_compose_parts(fg: FunctionGraph, prefix: str = "", cluster: str | None = None
                         ) -> tuple[list[GraphNode], list[GraphEdge]]:
    """The graph with every Phi split as the paper's first step did: one ``Select`` per
    incoming path (its control and the value on that path: the value, or *no value* when
    that path did not run) and a ``Compose`` passing on whichever Select has a value."""
    nodes, edges = graph_parts(fg, prefix, cluster)
    phis = {f"{prefix}{n.id}": n for n in fg.nodes() if isinstance(n, Phi)}
    nodes = [n for n in nodes if n.id not in phis]
    edges = [e for e in edges if e.dst not in phis]
    for pid, phi in phis.items():
        name = phi.var_name or ""
        nodes.append(GraphNode(pid, f"Compose {name}".strip(), (f"#{phi.id}",), "ellipse",
                               False, PHI_FILL, cluster))
        region = phi.inputs[0]
        for i, value in enumerate(phi.inputs[1:], start=1):
            path = region.inputs[i] if i < len(region.inputs) else None
            if value is None or path is None:
                continue
            sid = f"{pid}.sel{i}"
            nodes.append(GraphNode(sid, "Select", (f"#{phi.id}.{i}",), "ellipse", False,
                                   PHI_FILL, cluster))
            edges.append(GraphEdge(f"{prefix}{path.id}", sid, "0", "bold", CONTROL_COLOR))
            edges.append(GraphEdge(f"{prefix}{value.id}", sid, "1",
                                   "dashed" if _is_memory(value) else "solid",
                                   MEMORY_COLOR if _is_memory(value) else None,
                                   constraint=value.id < phi.id))
            edges.append(GraphEdge(sid, pid, str(i)))
    return nodes, edges


def select_compose_dot(program: SeaOfNodes, title: str | None = None) -> str:
    return program_dot(program, select_compose_parts, title)


# ------------------------------------------------ pessimistic vs optimistic (lesson 07)

CHANGED_FILL = "#ffb347"  # a node whose type the other mode sees differently
DEAD_FILL = "#dddddd"


def compare(program: SeaOfNodes) -> dict:
    """SCCP's types next to the parser's, per function: ``{name: (result, changed ids,
    dead ids)}``; the graph itself is not changed."""
    from ssa_course.son.sccp import sccp

    out = {}
    for name, fg in program.functions.items():
        result = sccp(fg)
        changed = {n.id for n in fg.nodes() if not n.is_control
                   and result.types.get(n.id) != n.type and not isinstance(n, Constant)}
        dead = {n.id for n in result.dead(fg)}
        out[name] = (result, changed, dead)
    return out


def compare_summary(program: SeaOfNodes, table: dict) -> str:
    pess_consts = program.constants_found()
    pess_dead = sum(f.stats.dead_branches for f in program.functions.values())
    opt_new = sum(len(r.constants(program.functions[n])) for n, (r, _, _) in table.items())
    opt_dead = sum(len(d) for _, _, d in table.values())
    return (f"pessimistic: {pess_consts} constants, {pess_dead} dead branches cut while "
            f"parsing | optimistic (SCCP): +{opt_new} constants, {opt_dead} more dead nodes")


def compare_text(program: SeaOfNodes, mode: str, table: dict | None = None) -> str:
    """The graph's text with each node's type in ``mode``; ``*`` marks a node the other
    mode types differently, ``dead`` one SCCP proves never runs. ``table`` is
    :func:`compare`'s result when the caller has it already."""
    table = table or compare(program)
    lines = [f"// {compare_summary(program, table)}", f"// types: {mode}"]
    for name, fg in program.functions.items():
        result, changed, dead = table[name]
        lines.append("")
        lines.append(_graph_header(fg))
        for node in fg.nodes():
            line = _node_line(node)
            if mode == "optimistic":
                head, _, rest = line.partition(" : ")
                detail = rest.split("  ; ", 1)
                line = f"{head} : {result.types.get(node.id)}" + (
                    f"  ; {detail[1]}" if len(detail) > 1 else "")
            mark = " dead" if node.id in dead else (" *" if node.id in changed else "")
            lines.append(line + mark)
    return "\n".join(lines) + "\n"


def compare_dot(program: SeaOfNodes, mode: str, title: str | None = None,
                table: dict | None = None) -> str:
    """The drawing with types of ``mode`` under each label; nodes the two modes type
    differently are orange, nodes SCCP proves dead grey (in the optimistic picture)."""
    table = table or compare(program)

    def parts(fg, prefix: str, cluster: str | None):  # noqa: ANN001, ANN202
        result, changed, dead = table[fg.name]
        part_nodes, part_edges = graph_parts(fg, prefix, cluster)
        by_id = {n.id: n for n in fg.nodes()}
        shown = []
        for gn in part_nodes:
            node = by_id[int(gn.id[len(prefix):])]
            t = result.types.get(node.id) if mode == "optimistic" else node.type
            fill = CHANGED_FILL if node.id in changed else gn.fill
            if mode == "optimistic" and node.id in dead:
                fill = DEAD_FILL
            lines = gn.lines if node.is_control else (*gn.lines, str(t))
            shown.append(replace(gn, lines=lines, fill=fill))
        return shown, part_edges

    return program_dot(program, parts, title or f"{mode}: {compare_summary(program, table)}")
