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
    # pessimistic: the Phi of x is any int for the parser, marked as SCCP types it
    # differently; the print(99) side is marked dead
    assert any("; x *" in line and ": int" in line for line in pessimistic.splitlines())
    assert any("Print" in line and line.endswith("dead") for line in pessimistic.splitlines())
    ex.mode.value = "optimistic"
    optimistic = body_text(ex)
    assert optimistic != pessimistic and "son: optimistic" in ex.stats.value
    # optimistic: the graph after son-opt's rewrites, and what they removed
    assert "nodes 28 → 19, phis 4 → 3" in ex.stats.value
    assert "1 branch cut" in ex.stats.value and "9 removed" in ex.stats.value
    listed, removed = optimistic.split("// removed from son (9):")
    assert "; x" not in listed and "99" not in listed  # x is the constant 1, no print(99)
    assert "Phi" in removed and "; x" in removed and "99" in removed
    ex.face.value = "graph"
    assert "son: optimistic" in ex.stats.value and "SCCP" in ex.stats.value
    assert "removed by the optimistic" in ex.legend.value
    ex.view.value = "cfg"
    assert ex.mode.disabled and "cfg:" in ex.stats.value


# ---------------------------------------------------------------- big graphs, zoom, legend

BIG = ("fn main(n: int) { var s = 0; var i = 0; while (i < n) {"
       + "".join(f" if (i == {k}) {{ s = s + {k}; }}" for k in range(25))
       + " i = i + 1; } print(s); }")


def svg_root(ex: Explorer) -> str:
    text = body_text(ex)
    start = text.index("<svg")
    return text[start:text.index(">", start)]


def test_a_large_graph_is_scaled_to_the_panel_width():
    ex = Explorer(BIG, view="cfg")
    root = svg_root(ex)
    assert "max-width:100%" in root and "height:auto" in root
    assert ' width="' not in root and ' height="' not in root  # no fixed size left
    assert "viewBox=" in root


def test_zoom_rescales_without_running_graphviz_again(monkeypatch):
    ex = Explorer(BIG, view="cfg")
    assert not ex.zoom.disabled and ex.zoom.value == "fit"
    calls = []
    real = render_mod.graphviz_render
    monkeypatch.setattr(render_mod, "graphviz_render",
                        lambda dot, fmt: calls.append(fmt) or real(dot, fmt))
    fitted = svg_root(ex)
    width = float(fitted.split("width:")[1].split("pt")[0])
    ex.zoom.value = "200%"
    zoomed = svg_root(ex)
    assert "max-width:none" in zoomed
    assert float(zoomed.split("width:")[1].split("pt")[0]) == 2 * width
    ex.zoom.value = "fit"
    assert svg_root(ex) == fitted
    assert calls == []
    ex.face.value = "text"  # nothing to zoom in a text face
    assert ex.zoom.disabled


def test_the_legend_explains_the_current_drawing():
    ex = Explorer(LOOP, view="cfg")
    assert "control flow" in ex.legend.value and "entry block" in ex.legend.value
    assert "memory edge" not in ex.legend.value
    ex.view.value = "son-raw"
    legend = ex.legend.value
    for meaning in ("control node", "control edge", "memory edge", "data edge", "constant"):
        assert meaning in legend, meaning
    assert "SCCP" not in legend  # no orange or grey node in a plain graph
    ex.view.value = "son"
    assert "typed differently" in ex.legend.value and "dead:" in ex.legend.value
    ex.mode.value = "optimistic"  # son-opt: x's Phi and the print(99) side are gone
    assert "removed by the optimistic pass" in ex.legend.value and "dead:" not in ex.legend.value
    ex.face.value = "text"
    assert ex.legend.value == ""


def test_the_legend_of_a_try_shows_the_handler_edge():
    ex = Explorer("fn main() { try { print(1); } catch (e) { print(e); } }", view="cfg")
    assert "exception handler" in ex.legend.value
    assert "control flow" in ex.legend.value  # edges drawn without any attribute count too


# ---------------------------------------------------------------- bad input: one line, no traceback


@pytest.mark.parametrize("source", [None, b"fn main() {}", 42, ["fn main() {}"]])
def test_explore_of_a_wrong_type_is_one_line_in_a_panel(source):
    panel = explore(source)
    [message] = panel.children
    text = message.value
    assert "&#x27;source&#x27; must be" in text and type(source).__name__ in text
    assert "Traceback" not in text and text.count("\n") == 0


def test_explorer_class_raises_naming_the_parameter():
    with pytest.raises(TypeError, match="'source'"):
        Explorer(None)
    with pytest.raises(TypeError, match="'view'"):
        Explorer(SRC, view=3)
    with pytest.raises(ValueError, match="unknown face 'picture'"):
        Explorer(SRC, face="picture")


@pytest.mark.parametrize("view, face, words", [
    ("nope", "graph", "unknown view &#x27;nope&#x27;"),
    ("cfg", "picture", "unknown face &#x27;picture&#x27;"),
    (None, "graph", "&#x27;view&#x27; must be"),
])
def test_explore_with_a_bad_view_or_face(view, face, words):
    [message] = explore(SRC, view, face).children
    assert words in message.value


def test_the_package_entry_point_raises_naming_the_parameter_but_shows_compile_errors():
    import ssa_course

    with pytest.raises(TypeError, match="'source'"):
        ssa_course.explore(None)
    panel = ssa_course.explore("fn main() { print(x); }")
    texts, todo = [], [panel]
    while todo:
        widget = todo.pop()
        texts.append(str(getattr(widget, "value", "")))
        todo.extend(getattr(widget, "children", ()))
    assert any("undefined variable" in t for t in texts)


def test_bad_bril_text_shows_where():
    ex = Explorer("@main {\n  x: int = const;\n  print x;\n}\n")
    assert ex.kind == "bril"
    assert "does not compile" in ex.stats.value
    assert "&lt;input&gt;:2:17: error:" in body_text(ex) and "^" in body_text(ex)


def test_an_edit_that_breaks_the_program_shows_where_and_recovers():
    ex = Explorer(SRC, view="julia", face="text")
    ex.editor.value = "fn main() {\n  var x = ;\n}\n"
    assert "does not compile" in ex.stats.value and "&lt;input&gt;:2:" in body_text(ex)
    assert ex.zoom.disabled
    ex.editor.value = SRC
    assert "does not compile" not in ex.stats.value and "φ" in body_text(ex)


def test_an_unexpected_failure_is_one_line_not_a_traceback(monkeypatch):
    import importlib

    explore_mod = importlib.import_module("ssa_course.widgets.explore")

    def broken(comp, name, fmt):
        raise KeyError("boom")

    monkeypatch.setattr(explore_mod, "render", broken)
    ex = Explorer(SRC, view="quads", face="text")
    assert "internal error" in ex.stats.value
    assert body_text(ex).count("\n") == 0 and "KeyError" in body_text(ex)


def test_when_graphviz_fails_the_fallback_picture_is_shown(monkeypatch):
    def failing(dot, fmt, timeout=None):
        raise render_mod.RenderError(f"Graphviz failed: out of memory (-T{fmt})")

    monkeypatch.setattr(render_mod, "graphviz_render", failing)
    ex = Explorer(SRC, view="cfg")
    assert ex.body.children[0].__class__.__name__ == "Image"
    assert "Graphviz failed" in ex.stats.value and ex.zoom.disabled
    assert "does not compile" not in ex.stats.value


TWO = ("fn twice(x: int) -> int { return x * 2; }\n"
       "fn main(n: int) { var i = 0; while (i < n) { i = i + twice(i); } print(i); }\n")


def test_the_function_selector_draws_one_function():
    ex = Explorer(TWO, view="cfg", face="graph")
    assert list(ex.function.options) == ["(auto)", "twice", "main"]
    both = ex._svg
    assert "@twice" in both and "@main" in both
    ex.function.value = "twice"
    assert "@twice" in ex._svg and "@main" not in ex._svg
    ex.editor.value = TWO.replace("twice", "thrice")  # a renamed function: back to auto
    assert list(ex.function.options) == ["(auto)", "thrice", "main"]
    assert ex.function.value == "(auto)" and "@thrice" in ex._svg


def test_switching_back_and_forth_reuses_what_was_drawn(monkeypatch):
    from ssa_course.lessons import l07_optimistic as stages

    ex = Explorer(LOOP, view="son", face="graph")
    ex.mode.value = "optimistic"
    pictures = (ex.mode.value, ex._svg)
    calls = []
    real_render = render_mod.graphviz_render
    monkeypatch.setattr(render_mod, "graphviz_render",
                        lambda *a, **k: calls.append(a[1]) or real_render(*a, **k))
    real_compare = stages.compare_modes
    monkeypatch.setattr(stages, "compare_modes",
                        lambda *a, **k: calls.append("compare") or real_compare(*a, **k))
    ex.mode.value = "pessimistic"
    ex.mode.value = "optimistic"
    assert (ex.mode.value, ex._svg) == pictures
    assert calls == []  # neither Graphviz nor the comparison ran again
    ex.editor.value = LOOP.replace("99", "98")  # a new program is drawn anew
    assert calls == ["compare", "svg"]


def test_a_new_source_keeps_one_compilation_per_text():
    ex = Explorer(LOOP, view="son", face="text")
    comp = ex.compilation()
    ex.view.value = "cfg"
    assert ex.compilation() is comp
    ex.editor.value = LOOP + "\n"
    assert ex.compilation() is not comp


def test_the_blocks_switch_frames_sea_of_nodes_by_gcm_block():
    ex = Explorer(LOOP, view="cfg", face="graph")
    assert ex.blocks.disabled
    ex.view.value = "son"
    assert not ex.blocks.disabled and "cluster" not in ex._svg
    ex.blocks.value = True
    assert ex._svg.count('class="cluster"') >= 3


def test_linked_shows_the_source_beside_two_views_and_keeps_the_filters():
    from ssa_course.widgets.explore import NONE

    ex = Explorer(SRC, view="quads", face="text")
    ex.linked.value = True
    ex.beside.value = "son-opt"
    fragment = ex.body.children[0].fragment
    assert 'data-pane="source"' in fragment and 'data-pane="quads"' in fragment
    assert 'data-pane="son-opt"' in fragment and "<svg" not in fragment  # text face
    assert "linked to the source" in ex.stats.value
    ex.beside.value = NONE
    assert 'data-pane="son-opt"' not in ex.body.children[0].fragment
    ex.linked.value = False  # back to the plain listing
    assert "<pre>" in ex.body.children[0].value


def test_linked_graph_face_draws_with_the_function_filter():
    from ssa_course.viz.dot import dot_available

    src = "fn f(x: int) -> int { return x + 1; }\nfn main() { print(f(2)); }\n"
    ex = Explorer(src, view="son-opt", face="graph")
    ex.function.value = "f"
    ex.linked.value = True
    fragment = ex.body.children[0].fragment
    assert 'data-pane="son-opt"' in fragment
    if dot_available():
        assert "<svg" in fragment and 'class="node" data-line="1"' in fragment
        assert 'data-line="2"' not in fragment.split('data-pane="son-opt"')[1].split(
            "<svg")[1]  # the drawing holds f only (line 1), not main


def test_linked_follows_the_pessimistic_optimistic_switch():
    ex = Explorer(LOOP, view="son", face="text")
    ex.linked.value = True
    assert not ex.mode.disabled
    fragment = ex.body.children[0].fragment
    assert 'data-pane="son"' in fragment and 'data-pane="son-opt"' not in fragment
    ex.mode.value = "optimistic"  # the graph after the optimistic pass, linked
    fragment = ex.body.children[0].fragment
    assert 'data-pane="son-opt"' in fragment and 'data-pane="son"' not in fragment
    assert "99" not in fragment.split('data-pane="son-opt"')[1]  # the dead print is gone
    assert "son-opt (optimistic): linked" in ex.stats.value
    ex.mode.value = "pessimistic"
    assert "son (pessimistic): linked" in ex.stats.value
    ex.mode.value = "optimistic"
    ex.beside.value = "son"  # the switch is the main view's: "beside" stays the parser's
    fragment = ex.body.children[0].fragment
    assert 'data-pane="son-opt"' in fragment and 'data-pane="son"' in fragment
    ex.mode.value = "pessimistic"  # son twice is one pane
    assert ex.body.children[0].fragment.count('data-pane="son"') == 1
    ex.stepping.value = True  # each pass's program: the switch does not apply
    assert ex.mode.disabled


def test_a_control_is_enabled_exactly_where_it_changes_what_is_shown():
    from ssa_course.widgets.explore import SOURCE

    def enabled(ex: Explorer) -> set[str]:
        names = ("mode", "face", "function", "blocks", "linked", "beside", "passes")
        return {n for n in names if not getattr(ex, n).disabled}

    ex = Explorer(LOOP, view="son", face="graph")
    assert enabled(ex) == {"mode", "face", "function", "blocks", "linked"}
    ex.face.value = "text"  # a listing: all functions, no frames
    assert enabled(ex) == {"mode", "face", "linked"}
    ex.linked.value = True
    assert enabled(ex) == {"mode", "face", "linked", "beside"}
    ex.face.value = "graph"
    assert enabled(ex) == {"mode", "face", "function", "blocks", "linked", "beside"}
    ex.view.value = "cfg"
    assert enabled(ex) == {"face", "function", "linked", "beside"}
    ex.view.value = SOURCE  # the text itself
    assert enabled(ex) == set()
    ex.stepping.value = True  # each pass's program: only the pipeline applies
    assert enabled(ex) == {"passes"}
    ex.view.value = "son"
    assert enabled(ex) == {"passes"}
