"""Issue #37's learner walk of lesson 09, as docs/lessons.md asks (idempotent text
replacements by cell id): after the table of ``shapes``' checks, the adversarial shapes
that keep their check are said to be the test corpus's, not the table's (the table shows
none of them, and its ``i <= len(a)`` loop is one whose check went).
Run: .venv/bin/python tools/lesson_edits_i37lite.py
"""

from __future__ import annotations

from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent

OLD_09 = (
    "Adversarial shapes keep their check, each for its reason: `i <= len(a)` lets `i` reach\n"
    "the length; an index starting at `-1` or computed from an argument may be negative; a\n"
    "length read *before* `a = new int[2]` is the length of another array (SSA makes it\n"
    "another node); and a step that wraps (`i = i + 2^63`) makes `i` negative again --\n"
    "the wrapping-sound `+` gives the full range there, so the check stays. The test corpus\n"
    "(`tests/programs/bce_*.tiny`) runs each through every representation and compares with\n"
    "the reference interpreter.\n")
NEW_09 = (
    "The test corpus (`tests/programs/bce_*.tiny`) holds adversarial shapes (of the\n"
    "table's, only `a[k]` is one), and each keeps its check for its reason: `a[i]` while\n"
    "`i <= len(a)` lets `i` reach the length (the table's `i <= len(a)` loop reads\n"
    "`a[i - 1]`, and its check went); an index starting at `-1` or computed from an\n"
    "argument may be negative; a length read *before* `a = new int[2]` is the length of\n"
    "another array (SSA makes it another node); and a step that wraps (`i = i + 2^63`)\n"
    "makes `i` negative again -- the wrapping-sound `+` gives the full range there, so the\n"
    "check stays. The corpus runs each program through every representation and compares\n"
    "with the reference interpreter.\n")

OLD_11 = ("on every turn cost more, and they are the ones left without a register. The cell lists\n"
          "the potential spills in the order simplify pushed them.")
NEW_11 = (OLD_11 + "\n\nSpill code changes the program: a spilled value lives in a stack slot, "
          "stored and\nreloaded through fresh short-lived registers. So the allocator runs "
          "again on what it\nwrote, round after round, until a round spills nothing; the "
          "lines after the table say\nwhat each later round spilled -- a value that got a "
          "register in round 1 can lose it in a\nlater one.")
CLAIMS_OLD_11 = "\nchecked()"
CLAIMS_NEW_11 = (
    '\nclaim("until a round spills nothing", not alloc.history[-1].spilled)\n'
    'claim("a value that got a register in round 1 can lose it",\n'
    '      any(v in alloc.history[0].potential_spills and v not in alloc.history[0].spilled\n'
    '          for later in alloc.history[1:] for v in later.spilled))\n'
    "checked()")


def _replace(nb, cell_id: str, old: str, new: str) -> None:
    cell = next(c for c in nb.cells if c.get("id") == cell_id)
    if new not in cell.source:
        assert old in cell.source, f"{cell_id}: the text to replace is not there"
        cell.source = cell.source.replace(old, new)


def main() -> None:
    path = ROOT / "notebooks" / "09-ranges.ipynb"
    nb = nbformat.read(path, as_version=4)
    _replace(nb, "4f82753e", OLD_09, NEW_09)
    nbformat.write(nb, path)
    path = ROOT / "notebooks" / "11-codegen.ipynb"
    nb = nbformat.read(path, as_version=4)
    _replace(nb, "1bef7a70", OLD_11, NEW_11)
    _replace(nb, "claims-11-spills", CLAIMS_OLD_11, CLAIMS_NEW_11)
    nbformat.write(nb, path)


if __name__ == "__main__":
    main()
