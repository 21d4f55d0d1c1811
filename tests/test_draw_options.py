"""Drawing options (viz.options / viz.select): what each drawing contains, not how fast.

Speed is measured in ``benchmarks/draw.py``; here: the budget is respected and the caption
names what it left out, constants and parameters sit at their users, a per-function or
around view holds exactly the right nodes, every view draws a 300-line program, and the
DOT text still parses.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pydot
import pytest

import ssa_course
from ssa_course import registry
from ssa_course.compilation import compile_source
from ssa_course.errors import UsageError
from ssa_course.son.draw import _kind
from ssa_course.views import render
from ssa_course.viz import render as render_mod
from ssa_course.viz.options import DrawOptions

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from draw import fuzz, straight

needs_dot = pytest.mark.skipif(not render_mod.dot_available(), reason="no Graphviz")
NODE = re.compile(r'^"([^"]+)" \[(.*)\];$', re.M)
EDGE = re.compile(r'^"([^"]+)" -> "([^"]+)"', re.M)

SMALL = """fn twice(x: int) -> int { return x * 2 + 1; }
fn main(n: int) {
    var s = 0;
    var i = 0;
    while (i < n) { s = s + twice(i) + 7; i = i + 1; }
    print(s);
}
"""


@pytest.fixture(scope="module")
def big() -> str:
    return straight(300)


@pytest.fixture(scope="module")
def many() -> str:
    return fuzz(300)


def nodes_of(dot: str) -> dict[str, str]:
    """id -> attribute text of every node in our deterministic DOT."""
    return dict(NODE.findall(dot))


def real_nodes(dot: str) -> set[str]:
    """Node ids that are not a constant's or parameter's small copy at a user."""
    return {i for i, attrs in nodes_of(dot).items() if "fontsize=8" not in attrs}


def edges_of(dot: str) -> list[tuple[str, str]]:
    return EDGE.findall(dot)


def parses(dot: str) -> None:
    graphs = pydot.graph_from_dot_data(dot)
    assert graphs and graphs[0].get_name()


def son_graph(src: str, name: str = "main", optimize: bool = True):
    from ssa_course.lessons.l05_control import son_program

    return son_program(compile_source(src, kind="tiny"), optimize).functions[name]


def leafish(node) -> bool:
    return _kind(node) in ("constant", "param")


# ------------------------------------------------------------------ the budget


def test_the_budget_is_kept_and_the_caption_says_what_was_left_out(big):
    comp = compile_source(big, kind="tiny")
    dot = render(comp, "son", "dot", DrawOptions(budget=60))
    parses(dot)
    fg = son_graph(big)
    total = sum(1 for n in fg.nodes() if not leafish(n))
    assert len(real_nodes(dot)) == 60
    m = re.search(r"(\d+) of (\d+) nodes shown; (\d+) left out \(([^)]*)\): use function=",
                  dot)
    assert m, dot[:600]
    assert (int(m[1]), int(m[2]), int(m[3])) == (60, total, total - 60)
    counts = {kind: int(k) for k, kind in re.findall(r"(\d+) (\w+)", m[4])}
    assert sum(counts.values()) == total - 60
    shown = {int(i) for i in real_nodes(dot)}
    by_id = {n.id: n for n in fg.nodes()}
    left = Counter("phis" if _kind(n) == "phi" else _kind(n) for n in fg.nodes()
                   if not leafish(n) and n.id not in shown)
    assert counts == dict(left)
    # the control spine comes first: the entry and its successors are kept
    assert {0, 1} <= shown and by_id[0].is_control


def test_without_a_budget_everything_is_drawn(big):
    dot = render(compile_source(big, kind="tiny"), "son", "dot", DrawOptions(budget=None))
    fg = son_graph(big)
    assert real_nodes(dot) == {str(n.id) for n in fg.nodes() if not leafish(n)}
    assert "left out" not in dot


def test_a_small_budget_keeps_the_spine_when_it_fits():
    fg = son_graph(SMALL)
    control = {str(n.id) for n in fg.nodes() if n.is_control}
    budget = 2 * len(control) + 1
    dot = render(compile_source(SMALL, kind="tiny"), "son", "dot",
                 DrawOptions(function="main", budget=budget))
    assert control <= real_nodes(dot) and len(real_nodes(dot)) == budget


def test_the_cfg_budget_counts_blocks(many):
    dot = render(compile_source(many, kind="tiny"), "cfg", "dot",
                 DrawOptions(function="main", budget=5))
    parses(dot)
    assert len(nodes_of(dot)) == 5
    assert re.search(r"5 of \d+ nodes shown; \d+ left out \(\d+ blocks\)", dot)


def test_the_syntax_tree_budget_leaves_out_the_deepest_nodes(big):
    dot = render(compile_source(big, kind="tiny"), "ast", "dot", DrawOptions(budget=40))
    parses(dot)
    assert len(re.findall(r"^    n\d+ \[", dot, re.M)) == 40
    assert re.search(r"40 of \d+ syntax nodes shown; \d+ deeper ones left out", dot)


# ------------------------------------------------------------------ filters


def test_constants_and_parameters_are_drawn_at_their_users():
    fg = son_graph(SMALL)
    leaves = {str(n.id) for n in fg.nodes() if leafish(n)}
    assert leaves
    dot = render(compile_source(SMALL, kind="tiny"), "son", "dot",
                 DrawOptions(function="main"))
    parses(dot)
    edges = edges_of(dot)
    assert not leaves & set(nodes_of(dot))  # no shared constant node...
    assert not [e for e in edges if e[0] == str(fg.start.id) and e[1].split(">")[0] in leaves]
    copies = {i for i in nodes_of(dot) if ">" in i}
    users = {n.id for n in fg.nodes() if any(i is not None and leafish(i) for i in n.inputs)}
    # ... but one small copy per use, with a single edge into its user
    assert {int(c.split(">")[1].split(".")[0]) for c in copies} == users
    for c in copies:
        assert [e for e in edges if c in e] == [(c, c.split(">")[1].split(".")[0])]


def test_the_filter_can_be_switched_off():
    fg = son_graph(SMALL)
    dot = render(compile_source(SMALL, kind="tiny"), "son", "dot",
                 DrawOptions(function="main", inline_leaves=False))
    consts = [n for n in fg.nodes() if leafish(n)]
    assert all((str(fg.start.id), str(n.id)) in edges_of(dot) for n in consts)


def test_memory_edges_thin_or_hidden_and_control_heavy():
    src = "struct P { v: int; }\nfn main() { var p = new P { v: 1 }; p.v = 3; print(p.v); }\n"
    comp = compile_source(src, kind="tiny")
    thin = render(comp, "son", "dot")
    assert re.search(r'color="#1f5fbf"[^\]]*penwidth=0.5', thin)
    assert re.search(r'style=bold, color="#c00000", weight=8', thin)
    hidden = render(comp, "son", "dot", DrawOptions(memory="hidden"))
    assert "#1f5fbf" not in hidden.split("edge [")[1]
    full = render(comp, "son", "dot", DrawOptions(memory="full"))
    assert "penwidth=0.5" not in full


# ------------------------------------------------------------- function and around


def test_one_function_holds_exactly_its_nodes(many):
    comp = compile_source(many, kind="tiny")
    from ssa_course.lessons.l05_control import son_program

    program = son_program(comp, True)
    name = [n for n in program.functions if n != "main"][0]
    dot = render(comp, "son", "dot", DrawOptions(function=name, budget=None))
    fg = program.functions[name]
    assert real_nodes(dot) == {str(n.id) for n in fg.nodes() if not leafish(n)}
    cfg = render(comp, "cfg", "dot", DrawOptions(function=name))
    assert {i.split("/")[0] for i in nodes_of(cfg)} == {f"@{name}"}


def test_by_default_a_large_program_draws_main_and_says_so(many):
    dot = render(compile_source(many, kind="tiny"), "son", "dot")
    assert re.search(r"function main \(not drawn: [\w, ]+; pick one with function=\)", dot)


def test_a_small_program_draws_every_function():
    dot = render(compile_source(SMALL, kind="tiny"), "son", "dot")
    assert any(i.startswith("twice.") for i in nodes_of(dot))
    assert any(i.startswith("main.") for i in nodes_of(dot))


def test_around_keeps_the_nodes_within_the_radius():
    fg = son_graph(SMALL)
    center = next(n for n in fg.nodes() if n.label == "+" and not n.is_control)
    near = {center.id} | {i.id for i in center.inputs if i is not None} | {
        o.id for o in center.outputs}
    expected = {str(i) for i in near if not leafish(fg.graph.nodes[i])}
    for around in (center.id, f"%{center.id}", str(center.id)):
        dot = render(compile_source(SMALL, kind="tiny"), "son", "dot",
                     DrawOptions(around=around, radius=1))
        assert real_nodes(dot) == expected
        assert f"around {center.id}, radius 1" in dot or f"around %{center.id}" in dot


def test_around_a_block_of_the_cfg_and_of_julia():
    from ssa_course.quads.cfg import build_cfg

    comp = compile_source(SMALL, kind="tiny")
    graph = build_cfg(comp.quads.functions["main"])
    entry = graph.entry
    cfg = render(comp, "cfg", "dot", DrawOptions(function="main", around=entry, radius=0))
    assert set(nodes_of(cfg)) == {f"@main/{entry}"}
    cfg = render(comp, "cfg", "dot", DrawOptions(function="main", around=entry, radius=1))
    assert set(nodes_of(cfg)) == {f"@main/{b}" for b in [entry, *graph.blocks[entry].succs,
                                                          *graph.blocks[entry].preds]}
    julia = render(comp, "julia", "dot", DrawOptions(around="1", radius=1))
    assert "main/b1" in nodes_of(julia) and len(nodes_of(julia)) >= 2


def test_blocks_frame_the_nodes_gcm_places_together():
    from ssa_course.son.gcm import schedule

    comp = compile_source(SMALL, kind="tiny")
    dot = render(comp, "son", "dot", DrawOptions(function="main", blocks=True))
    parses(dot)
    sched = schedule(son_graph(SMALL))
    graph = pydot.graph_from_dot_data(dot)[0]
    seen = 0
    for sub in graph.get_subgraphs():
        ids = {n.get_name().strip('"') for n in sub.get_nodes()} - {"node", "edge", "graph"}
        blocks = {sched.block_of[int(i)] for i in ids if i.isdigit() and int(i)
                  in sched.block_of}
        assert len(blocks) <= 1
        seen += len(blocks)
    assert seen >= 2


# ------------------------------------------------------------------ mistakes


@pytest.mark.parametrize("kwargs, words", [
    ({"function": "nope"}, "no such function (known: twice, main)"),
    ({"around": "999"}, "around='999': no such node"),
    # checked by show() itself, as run() checks steps= (issue 39): a ValueError too
    ({"budget": 0}, "show(): 'budget' must be at least 1, not 0"),
    ({"radius": -1}, "show(): 'radius' must be at least 0, not -1"),
])
def test_a_wrong_option_is_a_clear_usage_error(kwargs, words):
    with pytest.raises(UsageError, match=re.escape(words)):
        ssa_course.show(SMALL, "son", "dot", **kwargs)


def test_the_cli_takes_the_options(tmp_path):
    path = tmp_path / "p.tiny"
    path.write_text(SMALL)

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "ssa_course", "show", str(path), *args],
                              capture_output=True, text=True, timeout=120)

    done = cli("--as", "son", "--format", "dot", "--function", "twice")
    assert done.returncode == 0 and not any(i.startswith("main") for i in nodes_of(
        done.stdout))
    done = cli("--as", "son", "--format", "dot", "--function", "main", "--budget", "5")
    assert done.returncode == 0 and len(real_nodes(done.stdout)) == 5
    done = cli("--as", "cfg", "--format", "dot", "--function", "nope")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "no such function" in done.stderr


@needs_dot
def test_a_drawing_that_takes_too_long_is_stopped_with_advice(big):
    dot = render(compile_source(big, kind="tiny"), "son-raw", "dot",
                 DrawOptions(budget=None, bounded=False))
    with pytest.raises(render_mod.RenderError, match=r"took more than 0.05 s .*--budget"):
        render_mod.graphviz_render(dot, "svg", timeout=0.05)


# ------------------------------------------------------------- every view, 300 lines


@needs_dot
@pytest.mark.parametrize("view", [v.name for v in registry.representations() if v.dot is not None])
def test_every_view_draws_a_300_line_program(view, many):
    comp = compile_source(many, kind="tiny")
    dot = render(comp, view, "dot")
    parses(dot)
    svg = render(comp, view, "svg")
    assert svg.lstrip().startswith("<?xml") or "<svg" in svg[:400]


# ------------------------------------------------- machine code: bounded, and a budget

def test_machine_cfgs_are_laid_out_bounded_with_the_same_blocks(big):
    from ssa_course.viz.options import BOUNDED_LAYOUT

    comp = compile_source(big, kind="tiny")
    for view in ("native", "asm-aarch64"):
        dot = render(comp, view, "dot")
        whole = render(comp, view, "dot", DrawOptions(bounded=False))
        bound = [ln for ln in dot.splitlines() if ln.strip().startswith("graph [")]
        assert len(bound) == 1 and all(f"{k}={v}" in bound[0] for k, v in BOUNDED_LAYOUT.items())
        assert [ln for ln in dot.splitlines() if ln not in bound] == whole.splitlines()
        parses(dot)
    small = render(compile_source(SMALL, kind="tiny"), "native", "dot")
    assert "mclimit" not in small  # below BOUNDED_FROM blocks: Graphviz's best layout


def test_the_interference_budget_keeps_the_registers_and_says_what_it_left_out(big):
    comp = compile_source(big, kind="tiny")
    whole = render(comp, "interference", "dot", DrawOptions(budget=None))
    dot = render(comp, "interference", "dot")
    parses(dot)
    values = re.findall(r"^  (n\d+) \[.*shape=ellipse", whole, re.M)
    kept = re.findall(r"^  (n\d+) \[.*shape=ellipse", dot, re.M)
    assert len(values) > 300 and kept == values[:150]  # the first in program order
    registers = re.findall(r"^  (n\d+) \[.*shape=doublecircle", whole, re.M)
    assert registers and re.findall(r"^  (n\d+) \[.*shape=doublecircle", dot, re.M) == registers
    shown = set(kept) | set(registers)
    edges = re.findall(r"^  (n\d+) -- (n\d+)", dot, re.M)
    assert edges and all(a in shown and b in shown for a, b in edges)
    assert edges == [e for e in re.findall(r"^  (n\d+) -- (n\d+)", whole, re.M)
                     if e[0] in shown and e[1] in shown]
    assert f"150 of {len(values)} values shown" in dot and "budget=" in dot
    assert "values shown" not in whole
