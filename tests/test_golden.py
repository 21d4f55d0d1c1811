"""Golden text tests: lowering, the AST printer and CFG drawings of the lesson programs.

Each ``tests/golden/NAME.tiny`` has its expected quads (``.quads``), syntax tree
(``.ast``) and CFG drawing (``.dot``). A change to any printer or to the lowering shows up
here as a readable diff. To accept an intended change, regenerate with
``ssa-course show NAME.tiny --as quads > NAME.quads`` (and ``--as ast``,
``--as cfg --format dot``, ``--as son-raw``, ``--as son``, ``--as son --format dot``)
and review the diff.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ssa_course import views
from ssa_course.compilation import load_file

GOLDEN = sorted((Path(__file__).parent / "golden").glob("*.tiny"))
FACES = [("quads", "text", ".quads"), ("ast", "text", ".ast"), ("cfg", "dot", ".dot"),
         ("son-raw", "text", ".son-raw"), ("son", "text", ".son"), ("son", "dot", ".son.dot")]


@pytest.mark.parametrize("view, fmt, suffix", FACES, ids=[f[0] for f in FACES])
@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_golden(path, view, fmt, suffix, monkeypatch):
    monkeypatch.chdir(path.parent.parent.parent)  # file names as the CLI saw them
    comp = load_file(str(path.relative_to(Path.cwd())))
    text = views.render(comp, view, fmt)
    expected = path.with_name(path.stem + suffix).read_text()
    assert text.rstrip("\n") == expected.rstrip("\n")
