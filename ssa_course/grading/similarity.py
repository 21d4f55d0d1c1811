"""Is an answer the engine's own code, copied? A score for the instructor, never a grade.

Students may read the package's source while they learn; an answer that *is* the
engine's implementation of the function the task asks for (the entries of
:data:`ssa_course.grading.withheld.WITHHELD`), renamed and reformatted, is flagged
"needs manual grade" with a one-line reason in the instructor's report; the student's
feedback says nothing.

The score compares **normalised tokens**: names become ``N``, numbers ``0``, strings
``S``; comments, docstrings and blank lines go. It is the share of the answer's runs of
:data:`RUN` tokens that also occur in one reference (containment, the measure plagiarism
detectors such as MOSS use): renaming every variable and reflowing the code changes
nothing, while an answer written from the task's description shares only short idioms
with the engine. :data:`THRESHOLD` was measured (``tests/test_grading_similarity.py``
prints it; docs/grading.md "Copied engine code"): the 33 answers of the course's own
solutions score at most 0.83 against the withheld functions of their exercise (task 1
of exercise 01, whose solution follows ``find_leaders`` closely), the 65 withheld
functions long enough to judge, pasted in as answers, score 1.0.
"""

from __future__ import annotations

import ast
import inspect
import io
import keyword
import textwrap
import tokenize
from collections.abc import Iterable

RUN = 8  # tokens in a run
THRESHOLD = 0.9  # share of the answer's runs found in one reference
MIN_RUNS = 12  # shorter answers are too small to say anything


def normalised(source: str) -> list[str]:
    """The answer's tokens with names, numbers and strings made anonymous."""
    out: list[str] = []
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(_without_docstrings(source))
                                               .readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return out
    for tok in tokens:
        if tok.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE,
                        tokenize.ENCODING, tokenize.ENDMARKER):
            continue
        if tok.type == tokenize.NAME:
            out.append(tok.string if keyword.iskeyword(tok.string) else "N")
        elif tok.type == tokenize.NUMBER:
            out.append("0")
        elif tok.type == tokenize.STRING or tok.type == getattr(tokenize, "FSTRING_START", -1):
            out.append("S")
        elif tok.type in (tokenize.INDENT, tokenize.DEDENT):
            out.append(tokenize.tok_name[tok.type])
        else:
            out.append(tok.string)
    return out


def _without_docstrings(source: str) -> str:
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return textwrap.dedent(source)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and \
                isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            del body[0]
            if not body:
                body.append(ast.Pass())
    return ast.unparse(tree)


def pieces(source: str) -> list[str]:
    """The functions and classes a cell defines at its top level, each on its own (a
    copied function is judged without the wrapper around it); the whole cell if none."""
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return [source]
    text = textwrap.dedent(source)
    found = [ast.get_source_segment(text, node) or "" for node in tree.body
             if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    return [f for f in found if f] or [source]


def runs(tokens: list[str]) -> set[tuple[str, ...]]:
    return {tuple(tokens[i:i + RUN]) for i in range(len(tokens) - RUN + 1)}


def containment(answer: str, reference: str) -> float:
    """The share of the answer's token runs that the reference also has (0 for an
    answer too short to judge)."""
    mine = runs(normalised(answer))
    if len(mine) < MIN_RUNS:
        return 0.0
    return len(mine & runs(normalised(reference))) / len(mine)


def reference_sources(entries: Iterable[str]) -> dict[str, str]:
    """The real package's source of each withheld entry (``module:qualname``)."""
    import importlib

    out: dict[str, str] = {}
    for entry in entries:
        module, _, qualname = entry.partition(":")
        try:
            found: object = importlib.import_module(module)
            for part in qualname.split("."):
                found = getattr(found, part)
            out[entry] = inspect.getsource(found)  # type: ignore[arg-type]
        except (ImportError, AttributeError, OSError, TypeError):
            continue
    return out


def copied_from(answer: str, exercise: str) -> tuple[str, float] | None:
    """(entry, score) of the withheld function of ``exercise`` that a function of
    ``answer`` copies, or None."""
    from ssa_course.grading.withheld import withheld

    best: tuple[str, float] | None = None
    references = reference_sources(withheld(exercise))
    for piece in pieces(answer):
        for entry, source in references.items():
            score = containment(piece, source)
            if score >= THRESHOLD and (best is None or score > best[1]):
                best = (entry, score)
    return best
