"""The explore() panel, driven without a browser."""

from __future__ import annotations

import pytest

from ssa_course.viz import render as render_mod
from ssa_course.widgets import Explorer, explore

SRC = "fn main(n: int) { var i = 0; while (i < n) { i = i + 1; } print(i); }"


def body_text(ex: Explorer) -> str:
    return ex.body.children[0].value


def test_switching_representation_changes_the_picture():
    ex = Explorer(SRC, face="text")
    first = body_text(ex)
    ex.view.value = "julia"
    assert body_text(ex) != first
    ex.face.value = "graph"
    assert "nodes" in ex.stats.value and "edges" in ex.stats.value
    ex.face.value = "text"
    assert "φ (" in body_text(ex)
    ex.view.value = "source"
    assert "while" in body_text(ex)


def test_every_view_renders():
    ex = Explorer(SRC, face="text")
    for name in ex.view.options:
        ex.view.value = name
        assert ex.body.children and "does not compile" not in ex.stats.value, name


def test_compile_error_shows_a_located_message():
    ex = Explorer("fn main() { print(x); }")
    assert "does not compile" in ex.stats.value
    assert "undefined variable" in body_text(ex) and "^" in body_text(ex)
    ex.editor.value = SRC  # fixing the source re-renders
    assert "does not compile" not in ex.stats.value


def test_without_graphviz_a_fallback_image(monkeypatch):
    monkeypatch.setattr(render_mod.shutil, "which", lambda name: None)
    ex = Explorer(SRC)
    assert ex.body.children[0].__class__.__name__ == "Image"


@pytest.mark.parametrize("view", ["cfg", "ssa"])
def test_explore_returns_a_panel(view):
    panel = explore(SRC, view)
    assert panel.children


LOOP = ("fn main(n: int) { var x = 1; var i = 0; while (i < n) { x = 2 - x;"
        " if (x != 1) { print(99); } i = i + 1; } print(x); }")


def test_pessimistic_optimistic_switch():
    ex = Explorer(LOOP, view="son", face="text")
    assert not ex.mode.disabled
    pessimistic = body_text(ex)
    assert "son: pessimistic" in ex.stats.value and "SCCP" in ex.stats.value
    ex.mode.value = "optimistic"
    optimistic = body_text(ex)
    assert optimistic != pessimistic and "son: optimistic" in ex.stats.value
    # the Phi of x: any int for the parser, 1 for SCCP, and marked as differing
    assert any("; x *" in line and ": 1" in line for line in optimistic.splitlines())
    assert "dead" in optimistic  # the print(99) side
    ex.face.value = "graph"
    assert "son: optimistic" in ex.stats.value
    ex.view.value = "cfg"
    assert ex.mode.disabled and "cfg:" in ex.stats.value
