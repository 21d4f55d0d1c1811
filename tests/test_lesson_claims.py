"""Lesson prose that states an output is backed by a claim (``docs/lessons.md``).

Statically, every lesson: each markdown sentence that states an output (a number, a count,
"prints", "fewer", a register name...) quotes-matches a claim in a code cell below it, and
each claim quotes a sentence the markdown above it still says. The claims themselves run
with the lesson (``test_notebooks.py::test_lesson_runs_headless``): a claim that no longer
holds stops the lesson with the sentence it checks.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from lesson_prose import audit, claim_tokens, claims_in, output_sentences

from ssa_course.lessons.claims import ClaimError, checked, claim, claim_all, claim_in, claim_line
from ssa_course.lessons.printing import clip

ROOT = Path(__file__).resolve().parent.parent
LESSONS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _cells(path: Path) -> list[dict]:
    return nbformat.read(path, as_version=4).cells


@pytest.mark.parametrize("path", LESSONS, ids=[p.stem for p in LESSONS])
def test_every_sentence_about_an_output_is_backed(path):
    problems = audit(_cells(path))
    assert not problems, f"{path.name}:\n" + "\n".join(problems)


def test_all_thirteen_lessons_are_scanned():
    assert [p.name[:2] for p in LESSONS] == [f"{k:02d}" for k in range(13)]


def test_claim_cells_are_hidden_and_tagged():
    """A cell that only checks claims is collapsed in JupyterLab and tagged ``claims``."""
    for path in LESSONS:
        for cell in _cells(path):
            if cell.cell_type != "code" or not cell.get("id", "").startswith("claims-"):
                continue
            assert "claims" in cell.metadata.get("tags", []), (path.name, cell.id)
            assert cell.metadata.get("jupyter", {}).get("source_hidden"), (path.name, cell.id)
            # its one visible line: "✓ checked against the output: ..." (lesson 00 explains)
            assert cell.source.rstrip().endswith("checked()"), (path.name, cell.id)


def md(text: str, **meta) -> dict:
    return {"cell_type": "markdown", "source": text, "metadata": meta}


def code(text: str) -> dict:
    return {"cell_type": "code", "source": text, "metadata": {}}


@pytest.mark.parametrize("sentence", [
    "The cell prints `int[1..11]`.",
    "Fourteen registers are free for values.",
    "It runs 13.8% fewer instructions.",
    "`n` is kept in `rbx` across the call.",
    "The phi reads `[0, 9] + 1`.",
    "So `q` stays `✓′`.",
    "The parser gives the head a Phi for *every* variable in scope.",
    "**All** the copies vanish.",
    "The allocator spills the values with the lowest cost.",
])
def test_sentences_about_outputs_are_found(sentence):
    assert claim_tokens(sentence, code="")


@pytest.mark.parametrize("sentence", [
    "Lesson 06 and exercise 11 come back to it (section 3, phases 1 and 2).",
    "Cytron et al., 1991, on a 64-bit x86-64 machine.",
    "The same program on AArch64 (AAPCS64), under qemu-aarch64.",
    "Open `exercises/09-ranges.ipynb` and the picture.",
    "The loop tests `i < 10` on every turn.",   # a quote of the program below
])
def test_course_numbering_and_program_quotes_are_not_outputs(sentence):
    assert not claim_tokens(sentence, code="while (i < 10) { i = i + 1; }")


def test_a_sentence_needs_a_claim_below_it_before_the_next_markdown():
    cells = [md("The loop runs three times."), code("x = 3"),
             md("Next part."), code('claim("runs three times", x, 3)')]
    problems = audit(cells)
    assert len(problems) == 3  # unbacked; a claim quoting the wrong cell; how to fix
    assert "docs/lessons.md" in problems[-1]
    assert "cell 0: states an output (three)" in problems[0]
    assert "quotes text the markdown cell above it does not say" in problems[1]
    cells[1] = code('x = 3\nclaim("runs three times", x, 3)')
    cells[3] = code("pass")
    assert audit(cells) == []


def test_a_claim_must_quote_the_sentence_it_backs():
    cells = [md("The loop runs three times."), code('claim("runs four times", 3, 3)')]
    assert len(audit(cells)) == 3


def test_a_phrase_about_the_idea_may_be_listed_in_the_cell_metadata():
    cells = [md("A branch has two successors.")]
    assert audit(cells)
    cells = [md("A branch has two successors.",
                claims={"not_outputs": ["two successors"]})]
    assert audit(cells) == []
    stale = [md("A branch has successors.", claims={"not_outputs": ["two successors"]})]
    assert "no longer says it" in audit(stale)[0]


def test_sentences_split_on_list_items_and_full_stops():
    cells = [md("Intro.\n* first item has 2 parts;\n* second has none. Then 3 more.\n\n"
                "## References\n* A paper, 1999, pages 1-20.")]
    found = [s.text for s in output_sentences(cells)]
    assert found == ["first item has 2 parts;", "Then 3 more."]


def test_claims_are_read_from_literal_first_arguments_only():
    src = 'claim("a", 1, 1)\nclaims.claim_in("b c", "x", "x")\nclaim(f"{y}", 1)\n%time x = 1'
    assert [c.says for c in claims_in(src, 5)] == ["a", "b c"]


def test_claim_helpers_raise_with_the_sentence():
    claim("holds", 1 + 1, 2)
    claim("holds", True)
    with pytest.raises(ClaimError, match='the lesson says "prints 3", but the cell gives 4'):
        claim("prints 3", 4, 3)
    with pytest.raises(ClaimError, match="finds it false"):
        claim("it is true", [])
    claim_in("has mov", "mov", "  mov rax, 1")
    with pytest.raises(ClaimError, match="'idiv' is not in the cell's output"):
        claim_in("uses idiv", "idiv", "imul rax")
    assert claim_line("push", ["mov a, b", "push rbx"], "push") == "push rbx"
    with pytest.raises(ClaimError, match="no line of the cell's output holds 'pop'"):
        claim_line("pops", ["mov a, b"], "pop")
    assert isinstance(ClaimError("s", "p"), AssertionError)


@pytest.mark.parametrize("sentence", [
    "the lowest common ancestor of its uses' blocks",   # a definition, not a cost
    "every variable the loop names",                     # a quantifier without emphasis
])
def test_plain_quantifiers_and_the_lca_are_not_outputs(sentence):
    assert not claim_tokens(sentence, code="")


def test_claim_all_must_name_its_exceptions_in_the_sentence():
    steps = ["live", "dead", "dead"]
    claim_all("all say dead but the first", steps[1:], lambda s: s == "dead")
    claim_all("all say dead but the first", steps, lambda s: s == "dead",
              but={"the first": steps[0]})
    with pytest.raises(ClaimError, match="does not hold of"):   # skipped silently: refused
        claim_all("all say dead", steps, lambda s: s == "dead")
    with pytest.raises(ClaimError, match="which the sentence does not say"):
        claim_all("all say dead", steps, lambda s: s == "dead", but={"the first": steps[0]})
    with pytest.raises(ClaimError, match="holds like the rest"):
        claim_all("all say dead but the second", steps, lambda s: s == "dead",
                  but={"the second": steps[1]})
    with pytest.raises(ClaimError, match="nothing to check"):
        claim_all("all say dead", [], lambda s: s == "dead")


def test_checked_prints_one_quiet_line_for_the_claims_since_the_last(capsys):
    checked()
    capsys.readouterr()
    claim("two", 2, 2)
    claim_in("a b", "a", "a b")
    checked()
    assert capsys.readouterr().out == "✓ checked against the output: 2 claims of the text above\n"
    checked()  # none since: silent
    assert capsys.readouterr().out == ""


def test_clip_cuts_at_line_boundaries_and_says_how_much_is_left():
    text = "\n".join(f"line {k}" for k in range(10)) + "\n"
    assert clip(text, 10) == text
    assert clip(text, 3) == "line 0\nline 1\nline 2\n... 7 more lines\n"
    assert clip(text, 9).endswith("line 8\n... 1 more line\n")
