"""Drawings: DOT text built with pydot, rendered by Graphviz, or by matplotlib without it.

:class:`Drawing` is what notebooks display: it holds deterministic DOT text and renders it
to SVG with the ``dot`` program when that is installed. Without Graphviz it prints a
one-line notice (once per process) and falls back to a PNG drawn by networkx and
matplotlib from the same DOT text, so a lesson never crashes for want of a binary.

:func:`cfg_to_dot` and :func:`program_cfg_dot` draw quads CFGs: one box per basic block
with its instructions, ``T``/``F`` labels on branch edges, a dashed edge to a handler.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import sys

import pydot

RENDER_TIMEOUT = 60  # seconds; Graphviz on a lesson-size graph takes milliseconds

_NOTICE_SHOWN: list[bool] = []


def dot_available() -> bool:
    """Is Graphviz's ``dot`` program on the PATH?"""
    return shutil.which("dot") is not None


def _notice_once() -> None:
    if not _NOTICE_SHOWN:
        _NOTICE_SHOWN.append(True)
        print("note: Graphviz 'dot' is not installed; showing a simpler matplotlib drawing "
              "(install graphviz for the real layout)", file=sys.stderr)


class Drawing:
    """A graph to show: DOT text plus ways to render it (SVG via Graphviz, PNG fallback)."""

    def __init__(self, dot: str):
        self.dot = dot

    def __repr__(self) -> str:
        return f"Drawing({len(self.dot)} characters of DOT)"

    def svg(self) -> str:
        """SVG text rendered by Graphviz; raises RuntimeError when it is missing."""
        return self._graphviz("svg").decode("utf-8")

    def png(self) -> bytes:
        """PNG bytes: by Graphviz when available, else the matplotlib fallback."""
        if dot_available():
            return self._graphviz("png")
        _notice_once()
        return fallback_png(self.dot)

    def _graphviz(self, fmt: str) -> bytes:
        exe = shutil.which("dot")
        if exe is None:
            raise RuntimeError("Graphviz 'dot' is not installed (apt-get install graphviz)")
        try:
            done = subprocess.run([exe, f"-T{fmt}"], input=self.dot.encode("utf-8"),
                                  capture_output=True, timeout=RENDER_TIMEOUT, check=False)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"Graphviz took more than {RENDER_TIMEOUT} s") from None
        if done.returncode != 0:
            raise RuntimeError("Graphviz failed: " + done.stderr.decode(errors="replace")[:300])
        return done.stdout

    def _repr_svg_(self) -> str | None:
        if not dot_available():
            return None
        return self.svg()

    def _repr_png_(self) -> bytes | None:
        if dot_available():
            return None  # the SVG is shown instead
        _notice_once()
        return fallback_png(self.dot)

    def save(self, path: str) -> None:
        """Write ``.dot``, ``.svg`` or ``.png`` by the path's extension."""
        if path.endswith(".dot") or path.endswith(".gv"):
            data: str | bytes = self.dot
        elif path.endswith(".svg"):
            data = self.svg()
        else:
            data = self.png()
        mode = "wb" if isinstance(data, bytes) else "w"
        with open(path, mode) as f:
            f.write(data)


# ---------------------------------------------------------------- the fallback picture


def _clean(label: str) -> str:
    label = label.strip('"')
    for esc in ("\\l", "\\n", "\\r"):
        label = label.replace(esc, "\n")
    return label.replace('\\"', '"').strip()


def fallback_png(dot: str) -> bytes:
    """Draw DOT text with networkx + matplotlib (layers by distance from the first node)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    import networkx as nx

    graphs = pydot.graph_from_dot_data(dot) or []
    g = nx.DiGraph()
    labels: dict[str, str] = {}

    def collect(graph: pydot.Graph) -> None:
        for node in graph.get_nodes():
            name = node.get_name().strip('"')
            if name in ("node", "edge", "graph"):
                continue
            g.add_node(name)
            labels[name] = _clean(node.get("label") or name)
        for edge in graph.get_edges():
            src, dst = edge.get_source().strip('"'), edge.get_destination().strip('"')
            g.add_edge(src, dst)
            labels.setdefault(src, src)
            labels.setdefault(dst, dst)
        for sub in graph.get_subgraphs():
            collect(sub)

    for graph in graphs:
        collect(graph)
    text = {name: labels.get(name, name).split("\n") for name in g.nodes}
    pos = layered_layout(g, text)
    width = max((x + len(max(text[n], key=len)) / 2 for n, (x, _) in pos.items()), default=1)
    depth = max((-y + len(text[n]) for n, (_, y) in pos.items()), default=1)
    fig = plt.figure(figsize=(min(2 + width * 0.07, 40), min(1 + depth * 0.16, 60)))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(-1, width + 1)
    ax.set_ylim(-depth - 1, 1)
    ax.axis("off")
    for src, dst in g.edges:
        (x1, y1), (x2, y2) = pos[src], pos[dst]
        ax.annotate("", xy=(x2, y2), xytext=(x1, y1 - len(text[src])),
                    arrowprops={"arrowstyle": "->", "color": "gray", "lw": 0.8})
    for name, (x, y) in pos.items():
        ax.text(x, y, "\n".join(text[name]), ha="center", va="top", family="monospace",
                fontsize=7, multialignment="left",
                bbox={"boxstyle": "square", "fc": "lightyellow", "ec": "gray"})
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    plt.close(fig)
    return buf.getvalue()


def layered_layout(g, text: dict[str, list[str]]) -> dict[str, tuple[float, float]]:  # noqa: ANN001
    """Rows by BFS distance from the first node; coordinates in characters and lines.

    Returns the top-centre of each node's box: x in character widths, y in (negative)
    text lines, so the caller can size the figure to fit every label.
    """
    depth: dict[str, int] = {}
    for start in g.nodes:
        if start in depth:
            continue
        depth[start] = max(depth.values(), default=-1) + 1
        queue = [start]
        while queue:
            node = queue.pop(0)
            for succ in g.successors(node):
                if succ not in depth:
                    depth[succ] = depth[node] + 1
                    queue.append(succ)
    rows: dict[int, list[str]] = {}
    for node, d in sorted(depth.items(), key=lambda item: item[1]):
        rows.setdefault(d, []).append(node)
    pos: dict[str, tuple[float, float]] = {}
    y = 0.0
    for d in sorted(rows):
        x = 0.0
        for node in rows[d]:
            w = len(max(text[node], key=len)) + 2
            pos[node] = (x + w / 2, y)
            x += w + 3
        y -= max(len(text[n]) for n in rows[d]) + 3
    return pos


# ---------------------------------------------------------------- CFG drawings


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("{", "\\{") \
        .replace("}", "\\}").replace("<", "\\<").replace(">", "\\>")


def _block_label(block, fmt) -> str:  # noqa: ANN001
    lines = [f"{block.name}:"] + ["  " + fmt(i) for i in block.instrs]
    return "\\l".join(_escape(line) for line in lines) + "\\l"


def _add_cfg(graph: pydot.Graph, cfg, prefix: str) -> None:  # noqa: ANN001
    from ssa_course.quads.bril import format_instr

    for block in cfg.blocks.values():
        attrs = {"label": f'"{_block_label(block, format_instr)}"'}
        if block.name == cfg.entry:
            attrs["penwidth"] = "2"
        graph.add_node(pydot.Node(f'"{prefix}{block.name}"', **attrs))
    for block in cfg.blocks.values():
        term = block.terminator
        for i, succ in enumerate(block.succs):
            attrs: dict[str, str] = {}
            if term is not None and term.op == "br":
                attrs["label"] = '"T"' if i == 0 else '"F"'
            if term is not None and term.op == "enter" and i == 1:
                attrs["style"] = "dashed"
                attrs["label"] = '"handler"'
            graph.add_edge(pydot.Edge(f'"{prefix}{block.name}"', f'"{prefix}{succ}"', **attrs))


def _new_graph(title: str | None) -> pydot.Dot:
    graph = pydot.Dot("cfg", graph_type="digraph")
    graph.set_node_defaults(shape="box", fontname="monospace", fontsize="10")
    graph.set_edge_defaults(fontname="monospace", fontsize="9")
    if title:
        graph.set("label", f'"{_escape(title)}"')
        graph.set("labelloc", "t")
    return graph


def cfg_to_dot(cfg, title: str | None = None) -> str:  # noqa: ANN001
    """DOT text of one function's CFG (deterministic: blocks in layout order)."""
    graph = _new_graph(title or f"@{cfg.function.name}")
    _add_cfg(graph, cfg, "")
    return graph.to_string()


def program_cfg_dot(cfgs: dict, title: str | None = None) -> str:
    """DOT text of every function's CFG, one cluster per function."""
    graph = _new_graph(title)
    for name, cfg in cfgs.items():
        cluster = pydot.Cluster(_cluster_name(name), label=f'"@{name}"', fontname="monospace")
        _add_cfg(cluster, cfg, f"{name}.")
        graph.add_subgraph(cluster)
    return graph.to_string()


def _cluster_name(name: str) -> str:
    return "fn_" + "".join(c if c.isalnum() else "_" for c in name)
