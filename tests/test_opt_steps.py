"""The optimizer step by step (ssa_course.opt_steps, the page of ``opt --format html``):
the steps, the passes that changed nothing, the diffs, SCCP's and the peepholes' steps,
and that listening to the rewrites changes nothing."""

from __future__ import annotations

import json
import os
import re

import pytest

from ssa_course import passes, registry
from ssa_course.cli import main
from ssa_course.compilation import compile_source, load_file
from ssa_course.opt_steps import line_diff, pipeline_steps
from ssa_course.son.peephole import Rewrite, recording_rewrites
from ssa_course.steps_page import steps_html

HERE = os.path.dirname(os.path.abspath(__file__))
SUM = os.path.join(HERE, "..", "examples", "sum.tiny")
PIPELINE = ["parse", "sccp", "gcm", "dom-cse", "out-of-ssa", "dce", "copies", "dce"]
# SCCP proves x is 1 (the pessimistic parser cannot): the peepholes after it rewrite
FLIP = """fn main(n: int) {
    var x = 1;
    while (n > 0) { x = 2 - x; n = n - 1; }
    print(x + n);
}
"""


def _sides(diff: list[tuple[str, str]]) -> tuple[list[str], list[str]]:
    return ([line for tag, line in diff if tag != "+"], [line for tag, line in diff if tag != "-"])


def test_line_diff_has_both_texts() -> None:
    before, after = "a\nb\nc\n", "a\nB\nc\nd\n"
    diff = line_diff(before, after)
    assert _sides(diff) == (before.splitlines(), after.splitlines())
    assert ("-", "b") in diff and ("+", "B") in diff and ("+", "d") in diff
    assert ("  ", "a") not in diff and (" ", "a") in diff


def test_a_step_per_pass_with_its_diff_and_the_unchanged_ones_marked() -> None:
    comp = load_file(SUM)
    steps = pipeline_steps(comp, PIPELINE, rewrites=False)
    top = [s for s in steps if s.kind in ("start", "pass")]
    assert [s.title for s in top[1:]] == PIPELINE and top[0].kind == "start"
    assert steps[0].title == "sum.tiny: before any pass"
    for prev, s in zip(top, top[1:], strict=False):
        if s.shown_as == prev.shown_as:
            assert _sides(s.diff) == (prev.text.splitlines(), s.text.splitlines())
            assert s.changed == (s.text != prev.text)
        else:  # parse: quads -> the sea of nodes; gcm: back to quads
            assert s.changed and s.note.startswith("now shown as")
    assert [s.shown_as for s in top] == ["quads", "son", "son"] + ["quads"] * 6
    by_name = {s.title: s for s in top[1:-1]}
    assert by_name["out-of-ssa"].changed and by_name["out-of-ssa"].removed > 0
    assert not top[-1].changed and top[-1].added == top[-1].removed == 0  # dce again
    # the last step is what ``opt`` prints
    state = passes.run_pipeline(load_file(SUM), PIPELINE)
    assert top[-1].text == passes.emit(state, "quads")


def test_emit_shows_every_step_in_one_representation() -> None:
    comp = load_file(SUM)
    steps = pipeline_steps(comp, ["parse", "sccp", "gcm"], emit="quads")
    assert {s.shown_as for s in steps} == {"quads"}
    assert all(s.kind in ("start", "pass") for s in steps)  # rewrites: graph views only
    state = passes.run_pipeline(load_file(SUM), ["parse", "sccp", "gcm"])
    assert steps[-1].text == passes.emit(state, "quads")


def test_sccp_and_each_rewrite_are_steps() -> None:
    comp = compile_source(FLIP, "flip.tiny")
    steps = pipeline_steps(comp, ["parse", "sccp", "gcm"])
    sccp = next(s for s in steps if s.title == "sccp")
    kids = [steps[i] for i in sccp.children]
    assert all(k.parent == steps.index(sccp) for k in kids)
    types = [k for k in kids if k.kind == "sccp"]
    assert types and all(re.match(r"main: %\d+ .*: .* -> ", k.title) for k in types)
    assert types[0].title.startswith("main: %0 Start: TOP -> ")
    rewrites = [k for k in kids if k.kind == "rewrite"]
    assert any(": constant " in k.title for k in rewrites), [k.title for k in rewrites]
    # the rewrites, one after the other, end where the pass ends
    assert rewrites[-1].text == sccp.text
    for k in rewrites:
        before, after = _sides(k.diff)
        assert after == k.text.splitlines()


def test_listening_to_the_rewrites_changes_nothing() -> None:
    heard: list[Rewrite] = []
    quiet = passes.run_pipeline(compile_source(FLIP, "flip.tiny"), ["parse", "sccp"])
    with recording_rewrites(heard.append):
        loud = passes.run_pipeline(compile_source(FLIP, "flip.tiny"), ["parse", "sccp"])
    son = registry.representation("son")
    assert son.text(quiet.graph_program()) == son.text(loud.graph_program())
    assert heard and all(r.function == "main" and r.before.startswith("#") for r in heard)
    assert {r.rule.split()[0] for r in heard} <= {"constant", "gvn", "idealized"}


def test_the_page_holds_the_steps_and_loads_nothing(tmp_path) -> None:
    out = tmp_path / "steps.html"
    assert main(["opt", SUM, "-p", ",".join(PIPELINE), "--format", "html",
                 "-o", str(out)]) == 0
    text = out.read_text()
    assert text.startswith("<!DOCTYPE html>") and 'class="ssa-steps"' in text
    data = json.loads(re.search(r'<script type="application/json" class="steps-data">(.*?)'
                                r"</script>", text, re.S).group(1))
    assert [d["title"] for d in data if d["kind"] == "pass"] == PIPELINE
    assert "2 passes changed nothing (folded away): dom-cse, dce" in text or \
        re.search(r"\d+ pass(es)? changed nothing \(folded away\)", text)
    for needle in ('button class="prev"', 'button class="next"', 'type="range"',
                   'class="show-same"', 'class="show-fine"', "ssaStep"):
        assert needle in text
    scripts = "".join(re.findall(r"<script>(.*?)</script>", text, re.S))
    assert not re.search(r"https?:|src=|import\(", scripts)
    assert "<link" not in text and " src=" not in text


def test_a_title_cannot_close_the_data_script() -> None:
    from ssa_course.opt_steps import Step

    evil = Step("a</script><b>", "start", "quads", "x", True, [(" ", "</script>")])
    text = steps_html([evil], "t", ["parse"])
    body = text[text.index('class="steps-data">'):]
    assert body.index("</script>") > body.index("<\\/script>")


def test_bad_pipelines_and_names_are_one_line(capsys) -> None:
    assert main(["opt", SUM, "-p", "parse,dce", "--format", "html"]) == 1
    assert main(["opt", SUM, "-p", "parse", "--emit", "nope", "--format", "html"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("error") for line in err), err


def test_the_widget_steps_folds_and_shows_rewrites() -> None:
    pytest.importorskip("ipywidgets")
    from ssa_course.widgets.steps import StepThrough

    st = StepThrough(FLIP, ",".join(PIPELINE))
    passes_shown = [st.steps[i].title for i in st.order]
    assert passes_shown[0].endswith("before any pass")
    assert "dom-cse" not in passes_shown and "dce" not in passes_shown  # folded
    assert all(st.steps[i].kind in ("start", "pass") for i in st.order)
    st.next.click()
    assert st.steps[st.current].title == "parse" and "as son" in st.title.value
    st.prev.click()
    assert st.current == 0
    oos = passes_shown.index("out-of-ssa")
    st.slider.value = oos
    assert 'class="add"' in st.view.value and 'class="del"' in st.view.value
    st.as_text.value = True
    assert 'class="del"' not in st.view.value
    st.same.value = True
    assert "dom-cse" in [st.steps[i].title for i in st.order]
    assert st.steps[st.current].title == "out-of-ssa"  # still on the step it showed
    st.fine.value = True
    assert any(st.steps[i].kind == "rewrite" for i in st.order)
    assert any(st.steps[i].kind == "sccp" for i in st.order)


def test_the_explorer_steps_through_the_optimizer() -> None:
    pytest.importorskip("ipywidgets")
    from ssa_course.widgets.explore import Explorer

    ex = Explorer(FLIP, view="quads", face="text")
    ex.passes.value = "parse,sccp,gcm"
    ex.stepping.value = True
    assert ex.body.children == (ex.steps.panel,)
    assert {s.shown_as for s in ex.steps.steps} == {"quads"}
    assert "opt -p parse,sccp,gcm" in ex.stats.value
    ex.stepping.value = False
    assert ex.body.children != (ex.steps.panel,)


def test_a_rewrite_keeps_only_the_lines_around_its_change() -> None:
    from ssa_course.opt_steps import condensed

    diff = [(" ", f"l{i}") for i in range(40)]
    diff[20] = ("+", "new")
    short = condensed(diff, 3)
    assert short == [("=", "17 unchanged lines"), *diff[17:20], ("+", "new"), *diff[21:24],
                     ("=", "16 unchanged lines")]
    assert condensed(diff[:4], 3) == diff[:4]
    assert condensed(diff[:9], 3) == [*diff[:3], ("=", "6 unchanged lines")]
