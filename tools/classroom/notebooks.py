"""What a student writes into a notebook, and what must never reach them (plain JSON dicts)."""

from __future__ import annotations

import copy

HIDDEN_BEGIN, HIDDEN_END = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
SOLUTION_MARKS = ("### BEGIN SOLUTION", "### END SOLUTION")


def _text(cell: dict) -> str:
    source = cell["source"]
    return source if isinstance(source, str) else "".join(source)


def _answer_cell(cell: dict) -> bool:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return cell["cell_type"] == "code" and bool(meta.get("solution")) \
        and not meta.get("grade")


def answers_of(source: dict) -> dict[str, str]:
    """grade_id -> the instructor's answer (a solution cell without nbgrader's markers)."""
    return {cell["metadata"]["nbgrader"]["grade_id"]:
            "\n".join(line for line in _text(cell).splitlines()
                      if not any(mark in line for mark in SOLUTION_MARKS))
            for cell in source["cells"] if _answer_cell(cell)}


def answered(released: dict, answers: dict[str, str]) -> dict:
    """The released notebook with ``answers`` (by grade_id) written into its answer cells."""
    nb = copy.deepcopy(released)
    for cell in nb["cells"]:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if _answer_cell(cell) and grade_id in answers:
            cell["source"] = answers[grade_id]
    return nb


def hidden_lines(source: dict, shortest: int = 12) -> list[str]:
    """The hidden tests' own lines (stripped, at least ``shortest`` characters, and not
    part of any visible line): none may appear in what a student is shown."""
    hidden, visible, inside = [], [], False
    for cell in source["cells"]:
        for line in _text(cell).splitlines():
            if HIDDEN_BEGIN in line:
                inside = True
            elif HIDDEN_END in line:
                inside = False
            elif inside:
                hidden.append(line.strip())
            else:
                visible.append(line)
    shown = "\n".join(visible)
    return [line for line in hidden if len(line) >= shortest and line not in shown]
