"""The drawing layer's one renderer hook: Graphviz, the WebAssembly Graphviz (browser),
matplotlib, DOT text -- chosen in that order, and never an exception for a missing one."""

from __future__ import annotations

import asyncio
import importlib
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

import ssa_course
from ssa_course.errors import UsageError
from ssa_course.viz import browser, render
from ssa_course.widgets import Explorer

explore_mod = importlib.import_module("ssa_course.widgets.explore")

SRC = "fn main(n: int) { var i = 0; while (i < n) { i = i + 1; } print(i); }"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def no_dot(monkeypatch):
    monkeypatch.setattr(render.shutil, "which", lambda name: None)
    render.notice_missing_graphviz.cache_clear()
    yield
    render.notice_missing_graphviz.cache_clear()


@pytest.fixture
def no_matplotlib(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)


@pytest.fixture
def wasm(monkeypatch):
    """A stand-in WebAssembly Graphviz that records the DOT it is given."""
    seen: list[str] = []

    def fake(dot: str) -> str:
        seen.append(dot)
        return f"<svg><!-- {len(seen)} --></svg>"

    monkeypatch.setattr(render, "_browser_graphviz", None)
    render.set_browser_graphviz(fake)
    return seen


def test_order_of_renderers(monkeypatch, no_dot):
    monkeypatch.setattr(render, "_browser_graphviz", None)
    assert render.renderer() == "matplotlib"
    render.set_browser_graphviz(lambda dot: "<svg/>")
    assert render.renderer() == "wasm" and render.svg_available()
    monkeypatch.setattr(render.shutil, "which", lambda name: "/usr/bin/dot")
    assert render.renderer() == "graphviz"  # the program wins over WebAssembly
    render.set_browser_graphviz(None)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setattr(render.shutil, "which", lambda name: None)
    assert render.renderer() == "text" and not render.svg_available()


def test_browser_graphviz_draws_svg_with_a_font_it_measures(no_dot, wasm):
    drawing = ssa_course.show(SRC, "cfg")
    svg = drawing._repr_svg_()
    assert svg == "<svg><!-- 1 --></svg>"
    assert drawing._repr_png_() is None and drawing._repr_html_() is None
    assert "monospace" not in wasm[0] and 'fontname="Courier"' in wasm[0]
    assert drawing.svg() == svg and len(wasm) == 1  # rendered once


def test_a_failing_browser_graphviz_falls_back(monkeypatch, no_dot, capsys):
    monkeypatch.setattr(render, "_browser_graphviz", None)

    def broken(dot: str) -> str:
        raise RuntimeError("syntax error in line 1\nmore")

    render.set_browser_graphviz(broken)
    drawing = ssa_course.show(SRC, "cfg")
    assert drawing._repr_svg_() is None
    assert drawing._repr_png_()[:8] == PNG_MAGIC
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "WebAssembly" in err and "syntax error" in err
    with pytest.raises(render.RenderError, match="WebAssembly"):
        drawing.svg()


def test_nothing_installed_shows_the_dot_text(no_dot, no_matplotlib, monkeypatch, capsys):
    monkeypatch.setattr(render, "_browser_graphviz", None)
    drawing = ssa_course.show(SRC, "cfg")
    assert drawing._repr_svg_() is None and drawing._repr_png_() is None
    html = drawing._repr_html_()
    assert html.startswith("<pre>") and "digraph" in html and "while.cond" in html
    assert capsys.readouterr().err == render.NOTHING_NOTICE + "\n"
    with pytest.raises(render.RenderError, match="neither is installed"):
        drawing.png()  # asked for a PNG by name (save, CLI): a located one-line error


def test_explorer_without_graphviz_or_matplotlib(no_dot, no_matplotlib, monkeypatch):
    monkeypatch.setattr(render, "_browser_graphviz", None)
    ex = Explorer(SRC)
    shown = ex.body.children[0]
    assert shown.__class__.__name__ == "HTML" and "digraph" in shown.value
    assert "internal error" not in ex.stats.value


def test_explorer_with_browser_graphviz_redraws_on_the_switch(no_dot, wasm):
    ex = Explorer(SRC, "son")
    first = ex.body.children[0].value
    assert "<svg>" in first
    ex.mode.value = "optimistic"
    assert ex.body.children[0].value != first and "optimistic" in ex.stats.value


def test_linked_views_draw_with_the_browser_graphviz(monkeypatch, no_dot, wasm):
    """In Pyodide (no ``dot`` program, viz.js registered) the linked page and the
    explorer's linked face draw as every other drawing does, by the WebAssembly Graphviz."""
    from ssa_course.linked_page import graphviz_missing, linked_html

    monkeypatch.setattr(sys, "platform", "emscripten")
    assert graphviz_missing() is None
    fragment = linked_html(ssa_course.compile(SRC), ["cfg"], draw=True)
    assert "not installed" not in fragment and "<svg><!-- 1 -->" in fragment
    ex = Explorer(SRC, view="son", face="graph")
    ex.linked.value = True
    ex.mode.value = "optimistic"
    fragment = ex.body.children[0].fragment
    assert 'data-pane="son-opt"' in fragment and "<svg><!--" in fragment
    assert "not installed" not in fragment and len(wasm) == 4  # cfg, son, son linked, son-opt


def test_linked_views_in_a_browser_without_graphviz_say_how_to_load_it(monkeypatch, no_dot):
    from ssa_course.linked_page import graphviz_missing

    monkeypatch.setattr(render, "_browser_graphviz", None)
    assert graphviz_missing() == "no drawing: Graphviz ('dot') is not installed"
    monkeypatch.setattr(sys, "platform", "emscripten")  # nothing to install there
    why = graphviz_missing()
    assert "not installed" not in why and "await ssa_course.viz.browser.load()" in why


def test_explore_without_ipywidgets_says_so(monkeypatch):
    monkeypatch.setattr(explore_mod, "w", None)
    with pytest.raises(UsageError, match="needs ipywidgets"):
        explore_mod.explore(SRC)


def test_the_package_imports_without_pydot_ipywidgets_matplotlib():
    code = ("import sys\n"
            "for m in ('pydot', 'ipywidgets', 'matplotlib'): sys.modules[m] = None\n"
            "import ssa_course, ssa_course.viz.dot, ssa_course.widgets.explore\n"
            "from ssa_course.viz import render\n"
            "print(render.matplotlib_available())\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_load_outside_the_browser_changes_nothing(monkeypatch):
    monkeypatch.setattr(render, "_browser_graphviz", None)
    assert not browser.in_browser()
    assert asyncio.run(browser.load()) == render.renderer()
    assert render._browser_graphviz is None


segment = st.text(alphabet="abcxyz0-_.", min_size=1, max_size=8)


@given(st.lists(segment, max_size=3), st.sampled_from(["http://127.0.0.1:8000",
                                                        "https://example.org"]))
def test_site_root_from_the_kernels_address(parts, origin):
    base = origin + "/" + "".join(p + "/" for p in parts)
    worker = base + "extensions/@jupyterlite/pyodide-kernel-extension/static/w.js"
    assert browser.site_root(worker) == base
    assert browser.site_root(base + "lab/index.html") == base
