"""Drawings: deterministic DOT, SVG through Graphviz, a PNG fallback without it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import ssa_course
from ssa_course.quads.bril import parse_bril_text
from ssa_course.quads.cfg import build_cfg
from ssa_course.quads.cfg_dot import cfg_to_dot
from ssa_course.viz import render
from ssa_course.viz.dot import (
    UNREACHABLE_FILL,
    Drawing,
    GraphEdge,
    GraphNode,
    RenderError,
    graph_drawing,
    graph_to_dot,
    node_label,
)

SRC = "fn main(n: int) { var i = 0; while (i < n) { i = i + 1; } print(i); }"
_EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "sum.tiny"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
needs_dot = pytest.mark.skipif(not render.dot_available(), reason="Graphviz is not installed")

BRIL = """
@main(c: bool) {
  x: int = const 1;
  br c .same .same;
.same:
  enter .body .handler;
.body:
  throw x;
.handler:
  e: int = catch;
  print e;
  ret;
.dead:
  print x;
}
"""


def _cfg(text: str = BRIL):
    return build_cfg(parse_bril_text(text, "t.bril").functions["main"])


def _without_graphviz(monkeypatch) -> None:
    monkeypatch.setattr(render.shutil, "which", lambda name: None)
    render.notice_missing_graphviz.cache_clear()


# ---------------------------------------------------------------- DOT text


def test_dot_is_deterministic_within_a_process():
    a = ssa_course.show(ssa_course.compile(SRC), "cfg", "dot")
    b = ssa_course.show(ssa_course.compile(SRC), "cfg", "dot")
    assert a == b and "while.cond" in a


def test_dot_does_not_depend_on_the_hash_seed():
    code = ("import ssa_course, sys; "
            f"sys.stdout.write(ssa_course.show({SRC!r}, 'cfg', 'dot'))")
    outs = set()
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              env=env, timeout=120, check=True)
        outs.add(done.stdout)
    assert len(outs) == 1


def test_blocks_are_records_with_a_header_and_left_aligned_lines():
    text = cfg_to_dot(_cfg())
    assert '"b0" [label="{b0:|x: int = const 1;\\lbr c .same .same;\\l}", shape=record' in text
    order = [m.group(1) for m in re.finditer(r'^"([\w.]+)" \[label=', text, re.M)]
    assert order == ["b0", "same", "body", "handler", "dead"]  # layout order
    assert 'label="@main"' in text  # the default title names the function


def test_edges_are_labelled_and_styled():
    text = cfg_to_dot(_cfg(), title="mine")
    assert '"b0" -> "same" [label="T/F"];' in text  # both branch targets are one block
    assert '"same" -> "body";' in text
    assert '"same" -> "handler" [label="handler", style=dashed];' in text
    assert 'label="mine"' in text
    two_way = cfg_to_dot(build_cfg(ssa_course.compile(SRC).quads.functions["main"]))
    assert re.search(r'"while\.cond\.\d+" -> "while\.body\.\d+" \[label="T"\]', two_way)
    assert re.search(r'"while\.cond\.\d+" -> "while\.end\.\d+" \[label="F"\]', two_way)


def test_entry_is_bold_and_unreachable_blocks_are_grey():
    text = cfg_to_dot(_cfg())
    assert re.search(r'^"b0" \[.*penwidth=2', text, re.M)
    assert re.search(rf'^"dead" \[.*fillcolor="{UNREACHABLE_FILL}"', text, re.M)
    assert not re.search(r'^"handler" \[.*fillcolor', text, re.M)


def test_program_drawing_has_one_cluster_per_function():
    src = "fn sq(x: int) -> int { return x * x; }\nfn main() { print(sq(3)); }"
    text = ssa_course.show(src, "cfg", "dot")
    assert text.count("subgraph cluster_") == 2
    assert 'label="@sq"' in text and 'label="@main"' in text
    assert '"@sq/b0"' in text and '"@main/b0"' in text


def test_generic_graph_keeps_node_order_and_groups_edges_by_source():
    nodes = [GraphNode("z", "Z"), GraphNode("a", "A", ("x = 1",), shape="box")]
    edges = [GraphEdge("a", "z", "back", "dotted", color="red", constraint=False),
             GraphEdge("z", "a", "go")]
    text = graph_to_dot(nodes, edges, rankdir="LR")
    assert text.index('"z" [') < text.index('"a" [')
    assert text.index('"z" -> "a"') < text.index('"a" -> "z"')
    assert '"a" -> "z" [label="back", style=dotted, color="red", constraint=false];' in text
    assert '"a" [label="A\\nx = 1\\l", shape=box];' in text
    assert '"z" [label="Z", shape=record];' in text  # left to right: no braces
    assert isinstance(graph_drawing(nodes, edges), Drawing)


def test_generic_graph_rejects_unknown_and_duplicate_nodes():
    with pytest.raises(ValueError, match="unknown node q"):
        graph_to_dot([GraphNode("a")], [GraphEdge("a", "q")])
    with pytest.raises(ValueError, match="share an id"):
        graph_to_dot([GraphNode("a"), GraphNode("a")], [])


_line = st.text(st.characters(codec="ascii", exclude_categories=("Cc",)), max_size=12)


@given(st.text(st.characters(codec="ascii", exclude_categories=("Cc",)), min_size=1,
               max_size=12).filter(str.strip), st.lists(_line.filter(str.strip), max_size=4))
def test_record_labels_read_back_to_their_text(header, lines):
    label = node_label(GraphNode("n", header.strip(), tuple(lines)))
    assert render.unescape_label(label) == [header.strip()] + [s.rstrip() for s in lines]


@needs_dot
def test_graphviz_shows_special_characters_literally():
    node = GraphNode("n", "{head}", ("a  |  <b>", 'say "hi" \\ ok'))
    svg = graph_drawing([node], []).svg()
    assert "{head}" in svg
    assert "a &#160;| &#160;&lt;b&gt;" in svg or "a  |  &lt;b&gt;" in svg
    assert "say &quot;hi&quot; \\ ok" in svg or 'say "hi" \\ ok' in svg


# ---------------------------------------------------------------- rendering


@needs_dot
def test_svg_with_graphviz():
    drawing = ssa_course.show(SRC, "cfg")
    svg = drawing._repr_svg_()
    assert "<svg" in svg and "while.cond" in svg
    assert drawing._repr_png_() is None  # Jupyter shows the SVG
    assert drawing.png()[:8] == PNG_MAGIC


def test_fallback_without_graphviz(monkeypatch, capsys):
    _without_graphviz(monkeypatch)
    assert not render.dot_available()
    drawing = ssa_course.show(SRC, "cfg")
    assert drawing._repr_svg_() is None
    assert drawing._repr_png_()[:8] == PNG_MAGIC
    assert capsys.readouterr().err == render.MISSING_NOTICE + "\n"
    ssa_course.show(SRC, "cfg")._repr_png_()
    assert drawing.png()[:8] == PNG_MAGIC
    assert capsys.readouterr().err == ""  # the notice is shown once per process
    with pytest.raises(RenderError, match="not installed"):
        drawing.svg()


def test_fallback_when_graphviz_fails(monkeypatch, tmp_path, capsys):
    broken = tmp_path / "dot"
    broken.write_text("#!/bin/sh\necho 'dot: something broke' >&2\nexit 3\n")
    broken.chmod(0o755)
    monkeypatch.setattr(render.shutil, "which", lambda name: str(broken))
    drawing = ssa_course.show(SRC, "cfg")
    assert drawing._repr_svg_() is None
    assert drawing._repr_png_()[:8] == PNG_MAGIC
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "something broke" in err
    with pytest.raises(RenderError, match="Graphviz failed"):
        drawing.svg()


def test_fallback_draws_the_graph_it_is_given(monkeypatch):
    _without_graphviz(monkeypatch)
    small = Drawing(graph_to_dot([GraphNode("a", "A")], []))._repr_png_()
    big = ssa_course.show(SRC, "cfg")._repr_png_()
    tree = Drawing(ssa_course.show(SRC, "ast", "dot"))._repr_png_()  # plain boxes
    assert len({small, big, tree}) == 3
    assert all(p[:8] == PNG_MAGIC for p in (small, big, tree))


def test_layered_layout_rows_follow_breadth_first_distance():
    nodes = {"a": ["a"], "b": ["b", "b2"], "c": ["c"], "lone": ["lone"]}
    pos = render.layered_layout(nodes, [("a", "b"), ("a", "c"), ("b", "a")])
    assert pos["b"][1] == pos["c"][1] < pos["a"][1]
    assert pos["b"][0] < pos["c"][0]
    assert pos["lone"][1] < pos["b"][1]  # a new component starts below the others


def test_save_by_extension(tmp_path, monkeypatch):
    drawing = ssa_course.show(SRC, "cfg")
    drawing.save(tmp_path / "g.dot")
    assert (tmp_path / "g.dot").read_text() == drawing.dot
    with pytest.raises(ValueError, match="'.pdf'"):
        drawing.save(tmp_path / "g.pdf")
    if render.dot_available():
        drawing.save(str(tmp_path / "g.svg"))
        assert "<svg" in (tmp_path / "g.svg").read_text()
    _without_graphviz(monkeypatch)
    drawing.save(str(tmp_path / "g.png"))
    assert (tmp_path / "g.png").read_bytes()[:8] == PNG_MAGIC


def test_ast_drawing_is_a_tree():
    text = ssa_course.show(SRC, "ast", "dot")
    nodes = len(re.findall(r"^\s*n\d+ \[label=", text, re.M))
    edges = text.count("->")
    assert edges == nodes - 1  # one function: a tree has one edge fewer than nodes


def test_cli_svg_without_graphviz_is_a_plain_error(monkeypatch, tmp_path, capsys):
    from ssa_course.cli import main

    _without_graphviz(monkeypatch)
    status = main(["show", str(_EXAMPLE), "--as", "cfg", "--format", "svg",
                   "-o", str(tmp_path / "x.svg")])
    assert status == 1
    assert capsys.readouterr().err.startswith("error: Graphviz 'dot' is not installed")
    assert main(["show", str(_EXAMPLE), "--as", "cfg", "--format", "png",
                 "-o", str(tmp_path / "x.png")]) == 0
    assert (tmp_path / "x.png").read_bytes()[:8] == PNG_MAGIC


def test_an_exceptional_successor_is_a_dotted_edge():
    cfg = _cfg()
    cfg.blocks["body"].throws_to = "handler"
    text = cfg_to_dot(cfg)
    assert '"body" -> "handler" [label="throws", style=dotted];' in text


# ------------------------------------------- lesson pictures and the explorer's helpers


def test_lattice_picture_follows_meet():
    from ssa_course.son.lattice_dot import LESSON_TYPES, hasse_edges, lattice_dot
    from ssa_course.son.types import BOTTOM, INT_BOTTOM, TOP, int_const

    edges = hasse_edges(LESSON_TYPES)
    for upper, lower in edges:
        assert upper.meet(lower) == lower and upper != lower
    pairs = {(str(a), str(b)) for a, b in edges}
    assert ("3", "int[3..4]") in pairs and ("4", "int[3..4]") in pairs
    assert ("int[3..4]", "int") in pairs and ("int", "BOTTOM") in pairs
    assert ("TOP", "int") not in pairs  # int:TOP, 3 and int[3..4] lie between
    # every type hangs between TOP and BOTTOM
    tops = {b for a, b in edges}
    assert all(t in tops for t in LESSON_TYPES if t != TOP)
    assert [str(t) for t in LESSON_TYPES if not any(a == t for a, _ in edges)] == ["BOTTOM"]
    # a chain is drawn as a chain
    chain = [TOP, int_const(1), int_const(1).meet(int_const(2)), INT_BOTTOM, BOTTOM]
    assert len(hasse_edges(chain)) == 4
    dot = lattice_dot(chain)
    assert dot.count("->") == 4 and "int[1..2]" in dot


def _loop_dominance():
    from ssa_course.ssa.dom import dominance_frontiers, immediate_dominators

    succs = {"entry": ["head"], "head": ["body", "exit"], "body": ["then", "else"],
             "then": ["join"], "else": ["join"], "join": ["head"], "exit": [],
             "lost": ["join"]}
    reachable = {k: v for k, v in succs.items() if k != "lost"}
    idom = immediate_dominators(reachable, "entry")
    return succs, idom, dominance_frontiers(reachable, idom)


def test_frontier_drawing_colours_one_blocks_dominance():
    from ssa_course.ssa.dominance_dot import (
        CHOSEN_FILL,
        DOMINATED_FILL,
        FRONTIER_COLOR,
        FRONTIER_FILL,
        frontier_dot,
    )

    succs, idom, df = _loop_dominance()
    dot = frontier_dot(succs, idom, df, block="then")
    fills = dict(re.findall(r'"(\w+)" \[label=[^\]]*fillcolor="([^"]+)"', dot))
    assert fills == {"then": CHOSEN_FILL, "join": FRONTIER_FILL}
    assert "DF(then) = {join}" in dot and "lost" not in dot
    dot = frontier_dot(succs, idom, df, block="body")
    fills = dict(re.findall(r'"(\w+)" \[label=[^\]]*fillcolor="([^"]+)"', dot))
    assert fills == {"body": CHOSEN_FILL, "then": DOMINATED_FILL, "else": DOMINATED_FILL,
                     "join": DOMINATED_FILL, "head": FRONTIER_FILL}
    # one frontier edge per frontier block, dominator-tree edges for every non-root block
    assert len(re.findall(f'label="DF".*color="{FRONTIER_COLOR}"', dot)) == len(df["body"])
    assert dot.count("style=dashed") == len(idom) - 1
    everything = frontier_dot(succs, idom, df)
    assert everything.count('label="DF"') == sum(len(f) for f in df.values())
    with pytest.raises(ValueError, match="lost"):
        frontier_dot(succs, idom, df, block="lost")


def test_scaled_svg_fits_or_zooms():
    from ssa_course.viz.zoom import natural_size, scaled_svg, zoom_factor

    svg = ('<?xml version="1.0"?>\n<!DOCTYPE svg>\n<svg width="600pt" height="300pt" '
           'viewBox="0 0 600 300"><g/></svg>')
    assert natural_size(svg) == (600.0, 300.0)
    fit = scaled_svg(svg)
    assert fit.startswith('<svg style="width:600pt;max-width:100%;height:auto"')
    assert 'width="' not in fit and "<?xml" not in fit and 'viewBox="0 0 600 300"' in fit
    assert 'style="width:300pt;max-width:none' in scaled_svg(svg, zoom_factor("50%"))
    no_viewbox = scaled_svg('<svg width="40px" height="20px"><g/></svg>', 2.0)
    assert 'viewBox="0 0 30 15"' in no_viewbox and "width:60pt" in no_viewbox
    assert scaled_svg("<svg><g/></svg>") == "<svg><g/></svg>"  # no size: left alone
    assert zoom_factor("fit") is None and zoom_factor("150%") == 1.5
    for bad in ("0%", "big", "150", "-5%"):
        with pytest.raises(ValueError):
            zoom_factor(bad)


def test_legend_lists_only_what_the_drawing_uses():
    from ssa_course.viz.legend import family_of, legend_entries, legend_html, legend_text

    prog = ssa_course.compile("fn main(n: int) { var x = n; if (n > 0) { x = 1; } print(x); }")
    cfg_dot = ssa_course.show(prog, "cfg", "dot")
    texts = [e.text for e in legend_entries(cfg_dot, family_of("cfg"))]
    assert texts[0].startswith("entry block") and any("control flow" in t for t in texts)
    assert not any("handler" in t or "unreachable" in t for t in texts)
    son_dot = ssa_course.show(prog, "son", "dot")
    son = legend_text(legend_entries(son_dot, family_of("son")))
    assert "control edge" in son and "memory edge" in son and "data edge" in son
    assert "SCCP" not in son
    assert legend_html([]) == ""
    assert "<svg" in legend_html(legend_entries(son_dot, "son"))
    with pytest.raises(ValueError):
        legend_entries(son_dot, "pictures")


def test_legend_reads_fills_after_a_label_with_brackets():
    from ssa_course.viz.dot import UNREACHABLE_FILL
    from ssa_course.viz.legend import legend_entries

    prog = ssa_course.compile("fn main() { return; var a = new int[2]; print(a[0]); }")
    dot = ssa_course.show(prog, "cfg", "dot")
    assert "[int]" in dot and UNREACHABLE_FILL in dot
    assert any("unreachable" in e.text for e in legend_entries(dot, "blocks"))
