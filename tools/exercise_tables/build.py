"""Rebuild the setup cells and graded (test) cells of the exercise sources in solutions/.

The visible tests of each exercise keep their expected answers as data (literal tables in
the test cells); the hidden tests keep the reference code. ``exNN.py`` holds exercise NN's
setup and test cells as templates and computes its tables with the same references the
hidden tests use. Run it after a change to the engine moves node ids, block names or
outputs (``tests/test_exercise_fakes.py`` fails then), or to edit a test cell:

    python tools/exercise_tables/build.py          # every exercise
    python tools/exercise_tables/build.py 05 07    # some
    python tools/make_exercises.py                 # then release them again

Answer cells and markdown are the notebooks' own: edit them in the notebook.
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(HERE))
    chosen = argv or sorted(p.stem[2:] for p in HERE.glob("ex[0-9]*.py"))
    for number in chosen:
        runpy.run_path(str(HERE / f"ex{number}.py"), run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
