"""Exercise 10's "yours" pictures show the whole answer (#37): nothing a wrong answer holds
is dropped by the drawing."""

from __future__ import annotations

from ssa_course.grading.escape import EscapeFunction, answer_text, listing


def _fn() -> EscapeFunction:
    return EscapeFunction("f", {"h": 1}, (("new", "%1", ()), ("return", "%1")), ("%1",))


def test_glyphs_for_names_that_are_no_allocation_are_listed():
    text = listing(_fn(), {"%1": "↑", "%7": "*", 3: "✓"})
    assert "  ↑  ('new', '%1', ())" in text
    assert "'%7': '*'" in text and "3: '✓'" in text


def test_an_answer_that_is_not_a_dict_is_shown():
    assert "not a dict name -> glyph: ['↑']" in listing(_fn(), ["↑"])


def test_a_wrong_glyph_is_shown_as_given():
    assert "'up'" in listing(_fn(), {"%1": "up"})


def test_a_state_is_named_and_shown_whole():
    state = {"analyzed": True, "returns": {6}, "thrown": set(), "args": [1],
             "everywhere": False, "extra": 1}
    text = answer_text(state)
    assert "ReturnEscape{6}" in text.splitlines()[0]
    assert "'args': [1]" in text and "'extra': 1" in text
    assert answer_text({"analyzed": True}).startswith("(not a state the course can name)")
