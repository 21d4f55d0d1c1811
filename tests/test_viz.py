"""Drawings: deterministic DOT, SVG through Graphviz, a PNG fallback without it."""

from __future__ import annotations

import pytest

import ssa_course
from ssa_course.viz import dot as dotmod

SRC = "fn main(n: int) { var i = 0; while (i < n) { i = i + 1; } print(i); }"


def test_dot_is_deterministic():
    a = ssa_course.show(ssa_course.compile(SRC), "cfg", "dot")
    b = ssa_course.show(ssa_course.compile(SRC), "cfg", "dot")
    assert a == b and "while.cond" in a


def test_branch_edges_are_labelled():
    text = ssa_course.show(SRC, "cfg", "dot")
    assert 'label="T"' in text or "label=T" in text


@pytest.mark.skipif(not dotmod.dot_available(), reason="Graphviz is not installed")
def test_svg_with_graphviz():
    drawing = ssa_course.show(SRC, "cfg")
    svg = drawing._repr_svg_()
    assert svg.lstrip().startswith("<?xml") or "<svg" in svg
    assert drawing._repr_png_() is None


def test_fallback_without_graphviz(monkeypatch, capsys):
    monkeypatch.setattr(dotmod.shutil, "which", lambda name: None)
    monkeypatch.setattr(dotmod, "_NOTICE_SHOWN", [])
    drawing = ssa_course.show(SRC, "cfg")
    assert drawing._repr_svg_() is None
    png = drawing._repr_png_()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert "Graphviz" in capsys.readouterr().err
    drawing._repr_png_()
    assert capsys.readouterr().err == ""  # the notice is shown once
    with pytest.raises(RuntimeError, match="not installed"):
        drawing.svg()


def test_ast_drawing_is_a_tree():
    import re

    text = ssa_course.show(SRC, "ast", "dot")
    nodes = len(re.findall(r"^\s*n\d+ \[label=", text, re.M))
    edges = text.count("->")
    assert edges == nodes - 1  # one function: a tree has one edge fewer than nodes


def test_save_by_extension(tmp_path):
    drawing = ssa_course.show(SRC, "cfg")
    drawing.save(str(tmp_path / "g.dot"))
    assert (tmp_path / "g.dot").read_text() == drawing.dot
    drawing.save(str(tmp_path / "g.png"))
    assert (tmp_path / "g.png").read_bytes()[:4] == b"\x89PNG"
