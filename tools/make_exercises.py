"""Regenerate ``exercises/`` from the nbgrader source notebooks in ``solutions/``.

It builds a throw-away nbgrader course in a temporary directory, copies every
``solutions/*.ipynb`` into its ``source/lessons/`` folder, runs nbgrader's own
``generate_assignment`` (solutions become stubs, hidden tests disappear, outputs are
cleared), and writes the released notebooks to ``exercises/`` in a normalised form (no
outputs, timings or machine-specific metadata), so the same sources always give the same
bytes. Never edit ``exercises/`` by hand: ``tests/test_notebooks.py`` checks it equals a
fresh regeneration.

    python tools/make_exercises.py            # write exercises/
    python tools/make_exercises.py --check    # exit 1 if exercises/ is out of date
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ASSIGNMENT = "lessons"


def _quiet_environment(tmp: Path) -> None:
    """Keep nbgrader and Jupyter away from the user's own configuration."""
    for var, sub in (("JUPYTER_CONFIG_DIR", "jupyter-config"), ("IPYTHONDIR", "ipython"),
                     ("JUPYTER_DATA_DIR", "jupyter-data")):
        os.environ[var] = str(tmp / sub)
    # nbgrader runs the ``alembic`` command of its own environment to set up its database.
    bin_dir = str(Path(sys.executable).parent)
    if bin_dir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")


def generate(solutions: Path, out_dir: Path) -> list[Path]:
    """Release every solution notebook into ``out_dir``; returns the written files."""
    from nbgrader.apps import NbGraderAPI
    from traitlets.config import Config

    with tempfile.TemporaryDirectory(prefix="ssa-course-nbgrader-") as tmp_name:
        tmp = Path(tmp_name)
        _quiet_environment(tmp)
        course = tmp / "course"
        source = course / "source" / ASSIGNMENT
        source.mkdir(parents=True)
        notebooks = sorted(solutions.glob("*.ipynb"))
        for nb in notebooks:
            shutil.copy(nb, source / nb.name)
        cfg = Config()
        cfg.CourseDirectory.root = str(course)
        cfg.CourseDirectory.course_id = "ssa_course"
        cfg.Exchange.root = str(tmp / "exchange")
        cfg.GenerateAssignment.force = True
        api = NbGraderAPI(config=cfg)
        result = api.generate_assignment(ASSIGNMENT)
        if not result["success"]:
            raise RuntimeError("nbgrader generate_assignment failed:\n" + result["log"]
                               + result.get("error", ""))
        out_dir.mkdir(exist_ok=True)
        written = []
        for nb in notebooks:
            released = course / "release" / ASSIGNMENT / nb.name
            target = out_dir / nb.name
            target.write_text(normalise(released.read_text(encoding="utf-8")), encoding="utf-8")
            written.append(target)
        return written


# Notebook metadata that records where and when a notebook last ran, not what it says.
VOLATILE_NOTEBOOK_KEYS = ("widgets", "toc", "varInspector")
VOLATILE_CELL_KEYS = ("execution", "collapsed", "scrolled", "jp-MarkdownHeadingCollapsed")


def normalise(text: str) -> str:
    """The released notebook in a byte-stable form: no outputs, no execution counts or
    timings, ``language_info`` reduced to the language name, keys sorted, one-space indent."""
    import nbformat

    nb = nbformat.reads(text, as_version=4)
    for key in VOLATILE_NOTEBOOK_KEYS:
        nb.metadata.pop(key, None)
    if "language_info" in nb.metadata:
        nb.metadata["language_info"] = {"name": nb.metadata["language_info"].get("name",
                                                                                 "python")}
    for cell in nb.cells:
        for key in VOLATILE_CELL_KEYS:
            cell.metadata.pop(key, None)
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    nbformat.validate(nb)
    return nbformat.writes(nb) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="do not write; exit 1 when exercises/ differs from a regeneration")
    ns = parser.parse_args(argv)
    if not ns.check:
        for path in generate(ROOT / "solutions", ROOT / "exercises"):
            print(f"wrote {path.relative_to(ROOT)}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        fresh = generate(ROOT / "solutions", Path(tmp))
        stale = [p.name for p in fresh
                 if not (ROOT / "exercises" / p.name).exists()
                 or (ROOT / "exercises" / p.name).read_bytes() != p.read_bytes()]
        names = {p.name for p in fresh}
        stale += [f"{p.name} (no source in solutions/)"
                  for p in sorted((ROOT / "exercises").glob("*.ipynb")) if p.name not in names]
    if stale:
        print("exercises/ is out of date (run `make exercises`): " + ", ".join(stale))
        return 1
    print("exercises/ is up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
