"""Run an exercise notebook's cells in this process, with some answers replaced.

This is what autograding does to a submission, without a kernel: the setup cell, then each
answer cell (the released stub first, then the learner's code), then one graded cell --
the source version, with its hidden tests. Other graded cells are *not* run, so a graded
cell that leans on another one's definitions fails here. Each cell is compiled under its
own file name (``<solutions/01-quads.ipynb:test_leaders>``), as a kernel does, so
code the learner writes is never mistaken for the course's.
"""

from __future__ import annotations

import functools
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent


def _meta(cell: nbformat.NotebookNode) -> dict:
    return cell.metadata.get("nbgrader", {})


@functools.cache
def _cells(folder: str, name: str) -> tuple[tuple[str, str, str], ...]:
    """(kind, grade id, source) of each code cell; kind is setup, answer or graded."""
    nb = nbformat.read(ROOT / folder / name, as_version=4)
    out = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        meta = _meta(cell)
        kind = "answer" if meta.get("solution") else "graded" if meta.get("grade") else "setup"
        out.append((kind, meta.get("grade_id", ""), cell.source))
    return tuple(out)


def graded_ids(name: str) -> list[str]:
    return [gid for kind, gid, _ in _cells("solutions", name) if kind == "graded"]


def answer_ids(name: str) -> list[str]:
    return [gid for kind, gid, _ in _cells("solutions", name) if kind == "answer"]


def _exec(source: str, where: str, ns: dict) -> None:
    exec(compile(source, f"<{where}>", "exec"), ns)  # noqa: S102 - running notebook cells


def outcome(name: str, graded: str, answers: dict[str, str] | None = None,
            released: bool = False) -> str | None:
    """Run ``name`` up to the graded cell ``graded``; None if it passes, else the error.

    ``answers`` maps answer-cell ids to replacement code (run after the released stub);
    the others get the solution. ``released`` runs the released graded cell (no hidden
    tests) instead of the source one."""
    answers = answers or {}
    source = _cells("solutions", name)
    stubs = {gid: src for kind, gid, src in _cells("exercises", name) if kind != "graded"}
    shown = {gid: src for kind, gid, src in _cells("exercises", name) if kind == "graded"}
    ns: dict = {"__name__": "__main__"}
    for kind, gid, src in source:
        where = f"{name}:{gid}"
        if kind == "setup":
            _exec(src, where, ns)
        elif kind == "answer":
            _exec(stubs[gid], where, ns)
            try:
                _exec(answers.get(gid, src), where, ns)
            except Exception as e:  # a fake that cannot even be written: the stub stays
                if gid not in answers:
                    raise
                del e
        elif gid == graded:
            try:
                _exec(shown[gid] if released else src, where, ns)
            except Exception as e:  # noqa: BLE001 - any failure is the answer
                return f"{type(e).__name__}: {e}"
            return None
    raise KeyError(f"{name} has no graded cell {graded!r}")
