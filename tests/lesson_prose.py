"""Which sentences of a lesson state an output, and which claims back them.

The convention (``docs/lessons.md``): a markdown sentence *states an output* when, once
the parts that cannot be about an output are set aside, it still holds a number, a number
word, a comparison of amounts, "prints", a register name, an escape glyph (lesson 10), a
superlative of cost ("the lowest cost") or an emphasised quantifier (*every*, **all**,
**no**: the emphasis says the lesson means every single one, which the output can deny).
Set aside are headings, fenced code, the reference list, link targets, code spans that quote the
lesson's own code cells (the program, not what it prints), and the numbering of the course
itself (lesson 06, exercise 11, section 6, phase 3, rule 2, a year, 64-bit, x86-64,
AArch64).

Such a sentence is *backed* when a code cell after its markdown cell, before the next
markdown cell, calls a claim helper of :mod:`ssa_course.lessons.claims` whose first
argument (a string literal) is a verbatim piece of the sentence. The claim runs when the
lesson runs, so the sentence and the output cannot drift apart unnoticed.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

CLAIM_HELPERS = {"claim", "claim_all", "claim_in", "claim_line"}

_FENCE = re.compile(r"```.*?```", re.S)
_TAIL = re.compile(r"^#+ (References|The papers behind).*", re.S | re.M)
_HEADING = re.compile(r"^#+ .*$", re.M)
_LINK_TARGET = re.compile(r"\]\([^)]*\)")
_CODE_SPAN = re.compile(r"`([^`]+)`")
_ITEM = re.compile(r"\n\s*(?:[*-]\s+|\d+\.\s+|(?=\|))")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*(\"'_])")
_COURSE_NUMBERING = re.compile(
    r"\b(?:[Ll]essons?|[Ee]xercises?|[Ss]ections?|[Pp]hases?|[Rr]ules?|[Cc]hapters?|"
    r"[Ss]teps?)\s+\d+(?:\s*(?:,|and|or|–|-)\s*\d+)*"
    r"|§\s*\d+(?:\.\d+)*|\b(?:19|20)\d\d\b|\b64-bit\b|\bx86-64\b|\bAMD64\b|\bPEP \d+\b"
    r"|\b(?:AArch64|ARM64|aarch64|arm64|AAPCS64|x86|int64|i386)\b"
    r"|\b\d\d\s·|\bthree-address\b|[\w./-]*\.(?:ipynb|tiny|py|md|svg|bril|json)\b")
_TOKENS = re.compile(
    r"\d|\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|"
    r"fourteen|fifteen|sixteen|twenty|hundred|thousand|million|twice|half|"
    r"fewer|faster|slower|saves?|saved|prints|printed|"
    r"r[abcd]x|r[sd]i|r[bs]p|e[abcd]x|lowest(?!\s+common)|highest|cheapest|costliest)\b|[✓↑◌]|[*X]′"
    r"|\*{1,2}(?:every|all|each|none|no|only|never|always)\*{1,2}", re.I)


def normalise(text: str) -> str:
    """One space for every run of white space (markdown wraps lines anywhere)."""
    return " ".join(text.split())


@dataclass(frozen=True, slots=True)
class Sentence:
    cell: int       # index of the markdown cell in the notebook
    text: str       # whitespace-normalised, as written
    tokens: tuple[str, ...]  # what makes it a statement about an output


def _sentences(markdown: str) -> list[str]:
    text = _TAIL.sub("", markdown)
    text = _FENCE.sub("\n", text)
    text = _HEADING.sub("\n", text)
    pieces = _ITEM.split("\n" + text)
    out: list[str] = []
    for piece in pieces:
        for sentence in _SENTENCE_END.split(normalise(piece)):
            if sentence:
                out.append(sentence)
    return out


def _code_text(cells: list[dict]) -> str:
    """The lesson's own code: every code cell but the claim cells (a claim naming a value
    must not make the prose that states it look like a quote of the program)."""
    return normalise("\n".join(c["source"] for c in cells if c["cell_type"] == "code"
                                and "claims" not in c.get("metadata", {}).get("tags", [])))


def claim_tokens(sentence: str, code: str) -> tuple[str, ...]:
    """What in ``sentence`` states an output (empty: nothing). ``code`` is the lesson's
    code, whitespace-normalised: a code span quoting it is the program, not an output."""
    def span(m: re.Match) -> str:
        inner = normalise(m.group(1))
        return " " if inner in code else f" {inner} "

    text = _LINK_TARGET.sub("]", sentence)
    text = _CODE_SPAN.sub(span, text)
    text = _COURSE_NUMBERING.sub(" ", text)
    found: list[str] = []
    end = -1
    for m in _TOKENS.finditer(text):
        if m.start() < end:
            continue  # a digit inside a number already taken
        token, end = m.group(0), m.end()
        if token.isdigit():
            word = re.match(r"[\w.^…-]*", text[m.start():]).group(0).rstrip(".")
            token, end = word, m.start() + len(word)
        if token not in found:
            found.append(token)
    return tuple(found)


def not_outputs(cell: dict) -> list[str]:
    """Phrases of a markdown cell that hold a number about the *idea*, not about an
    output (the two successors of a branch, the six argument registers of System V):
    listed in the cell's metadata, ``{"claims": {"not_outputs": [...]}}``."""
    return list(cell.get("metadata", {}).get("claims", {}).get("not_outputs", []))


def output_sentences(cells: list[dict]) -> list[Sentence]:
    """Every sentence of the notebook's markdown that states an output."""
    code = _code_text(cells)
    found: list[Sentence] = []
    for i, cell in enumerate(cells):
        if cell["cell_type"] != "markdown":
            continue
        ideas = [normalise(p) for p in not_outputs(cell)]
        for sentence in _sentences(cell["source"]):
            scanned = sentence
            for phrase in ideas:
                scanned = scanned.replace(phrase, " ")
            tokens = claim_tokens(scanned, code)
            if tokens:
                found.append(Sentence(i, sentence, tokens))
    return found


@dataclass(frozen=True, slots=True)
class Claim:
    cell: int   # index of the code cell holding it
    line: int   # line inside that cell
    says: str   # the quoted piece of a sentence, whitespace-normalised


def claims_in(source: str, cell: int) -> list[Claim]:
    """The claims a code cell makes (calls of a claim helper with a literal quote).
    IPython magics (``%...`` lines) are blanked before parsing."""
    python = "\n".join("" if line.lstrip().startswith(("%", "!")) else line
                       for line in source.splitlines())
    try:
        tree = ast.parse(python)
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        first = node.args[0]
        if name in CLAIM_HELPERS and isinstance(first, ast.Constant) \
                and isinstance(first.value, str):
            found.append(Claim(cell, node.lineno, normalise(first.value)))
    return found


def backing_window(cells: list[dict], markdown: int) -> range:
    """The code cells that may back a sentence of markdown cell ``markdown``: those after
    it, up to the next markdown cell."""
    end = markdown + 1
    while end < len(cells) and cells[end]["cell_type"] != "markdown":
        end += 1
    return range(markdown + 1, end)


def nearest_markdown_above(cells: list[dict], index: int) -> int | None:
    for i in range(index - 1, -1, -1):
        if cells[i]["cell_type"] == "markdown":
            return i
    return None


def audit(cells: list[dict]) -> list[str]:
    """Every breach of the convention in one notebook, one line each (empty: none)."""
    problems: list[str] = []
    claims = [c for i, cell in enumerate(cells) if cell["cell_type"] == "code"
              for c in claims_in(cell["source"], i)]
    for s in output_sentences(cells):
        window = backing_window(cells, s.cell)
        if not any(c.cell in window and c.says and c.says in s.text for c in claims):
            problems.append(f"cell {s.cell}: states an output ({', '.join(s.tokens)}) "
                            f"that no claim below it checks: \"{s.text}\"")
    for i, cell in enumerate(cells):
        said = normalise(cell["source"])
        for phrase in not_outputs(cell):
            if normalise(phrase) not in said:
                problems.append(f"cell {i}: metadata lists \"{phrase}\" as not about an "
                                f"output, but the cell no longer says it")
    for c in claims:
        above = nearest_markdown_above(cells, c.cell)
        said = normalise(cells[above]["source"]) if above is not None else ""
        if not c.says or c.says not in said:
            problems.append(f"cell {c.cell} line {c.line}: claim(\"{c.says}\") quotes text "
                            f"the markdown cell above it does not say")
    if problems:
        problems.append("(back a sentence with claim(\"<a piece of it>\", ...) in a code cell "
                        "below it, print it from the cell, or list a phrase about the idea in "
                        "the cell's metadata claims.not_outputs: docs/lessons.md)")
    return problems
