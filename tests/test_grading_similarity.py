"""Copied engine code is flagged for the instructor, never shown to the student.

The threshold (``similarity.THRESHOLD``) separates the course's own solutions (honest
answers, written from the tasks) from the engine's withheld functions pasted in as
answers; a regrade of such a copy carries a flag, and its outputs say nothing of it.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest

from ssa_course.grading import similarity
from ssa_course.grading.box import check
from ssa_course.grading.withheld import WITHHELD

ROOT = Path(__file__).resolve().parent.parent


def _answers() -> list[tuple[str, str, str]]:
    out = []
    for path in sorted((ROOT / "solutions").glob("*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            meta = cell["metadata"].get("nbgrader", {})
            if cell["cell_type"] == "code" and meta.get("solution") and not meta.get("grade"):
                out.append((path.stem, meta["grade_id"], "".join(cell["source"])))
    return out


def test_names_numbers_strings_and_comments_do_not_count():
    a = "def f(x):\n    # add one\n    return x + 1  # done\n"
    b = 'def g(total):\n    """Doc."""\n    return total + 7\n'
    assert similarity.normalised(a) == similarity.normalised(b)
    assert similarity.containment("x = (", "x = (") == 0.0  # too short to judge
    two = "def f(a):\n    return a\n\n\nclass K:\n    pass\n"
    assert similarity.pieces(two) == ["def f(a):\n    return a", "class K:\n    pass"]


def test_the_threshold_separates_solutions_from_copies():
    honest = []
    for exercise, gid, source in _answers():
        refs = similarity.reference_sources(WITHHELD.get(exercise, ()))
        honest.append((max([similarity.containment(piece, r) for r in refs.values()
                            for piece in similarity.pieces(source)] or [0.0]), exercise, gid))
    copies = []
    for exercise, entries in WITHHELD.items():
        for entry, source in similarity.reference_sources(entries).items():
            renamed = source.replace("self", "me").replace("node", "n_")
            if len(similarity.runs(similarity.normalised(source))) >= similarity.MIN_RUNS:
                copies.append((similarity.copied_from(renamed, exercise), entry))
    print("honest, highest:", sorted(honest, reverse=True)[:3])
    assert max(h[0] for h in honest) < similarity.THRESHOLD, max(honest)
    assert len(copies) > 40
    assert all(found is not None for found, _ in copies), [e for f, e in copies if f is None]


@pytest.mark.skipif(check() is not None, reason="no sandbox here")
def test_a_regrade_flags_a_copy_and_says_nothing_to_the_student(tmp_path):
    from test_regrade import _grade, _notebook, _submission

    from ssa_course.quads.cfg import find_leaders

    name = "01-quads.ipynb"
    copied = inspect.getsource(find_leaders).replace("find_leaders", "my_leaders")
    answer = (copied + "\n\ndef leaders(body):\n"
              "    return my_leaders(Function('f', [], None, list(body)))\n")
    cells = _submission(name, {"leaders": answer})
    verdicts = _grade(name, cells, tmp_path, flags=True)
    flag = verdicts["test_leaders"][3]
    assert "matches ssa_course's own ssa_course.quads.cfg.find_leaders" in flag
    assert not verdicts["test_successors"][3]  # the honest solution of task 2
    shown = json.dumps([v[1] for v in verdicts.values()])
    assert "matches" not in shown and "needs manual" not in shown
    assert _notebook("solutions", name)
