"""The %%tiny cell magic, in a real IPython shell."""

from __future__ import annotations

import pytest
from IPython.testing.globalipapp import get_ipython

CELL = "fn main(n: int) { print(n * n); }"


@pytest.fixture(scope="module")
def ip():
    shell = get_ipython()
    shell.run_line_magic("load_ext", "ssa_course")
    return shell


def test_runs_the_cell(ip, capsys):
    ip.run_cell_magic("tiny", "--args 7", CELL)
    assert capsys.readouterr().out.strip().endswith("49")


def test_shows_views_then_runs(ip, capsys):
    ip.run_cell_magic("tiny", "--show quads,julia --args 3 --via julia", CELL)
    out = capsys.readouterr().out
    assert "mul" in out and "φ" not in out and out.strip().endswith("9")


def test_errors_are_one_line(ip, capsys):
    ip.run_cell_magic("tiny", "", "fn main() { print(y); }")
    err = capsys.readouterr().err
    assert "undefined variable 'y'" in err and "Traceback" not in err
    ip.run_cell_magic("tiny", "--bogus", CELL)
    assert "%%tiny" in capsys.readouterr().err


def test_shows_the_sea_of_nodes(ip, capsys):
    ip.run_cell_magic("tiny", "--show son,son-opt --face text --args 3 --via son-opt", CELL)
    out = capsys.readouterr().out
    assert "graph main" in out and "SCCP" in out
