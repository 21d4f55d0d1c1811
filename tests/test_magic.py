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


@pytest.mark.parametrize("line, cell, needle", [
    ("--args '5", CELL, "no closing quotation"),
    ("--show nope", CELL, "unknown view 'nope' for --show (known: ast, quads"),
    # the CLI's reader of --as (issue 39): an empty name is refused, as `--as quads,` is
    ("--show quads,,son", CELL, "empty representation name in --show 'quads,,son'"),
    ("--show quads,", CELL, "empty representation name in --show 'quads,'"),
    ("--show quads, --linked", CELL, "empty representation name in --show 'quads,'"),
    ("--via nope --args 3", CELL, "unknown stage 'nope' for --via (known: none, ast"),
    ("--face 3d", CELL, "invalid choice: '3d'"),
    ("--bogus", CELL, "unrecognized arguments: --bogus"),
    ("--args x", CELL, "argument 'n' must be an int, not 'x'"),
    ("--args 1 2", CELL, "main takes 1 argument"),
    ("--args 3", "fn main(n: int) {\n  print(10 / (n - 3));\n}", "division by zero at 2:12"),
    ("--args 3", "fn main(n: int) { var a = new int[n * 100000000]; }", "array too large"),
    ("", "@main { print }", "<cell>:1:15: error: expected an operand"),
    ("", "{\"functions\": 5}", "functions"),
    ("--show quads", "fn main() {\n  print(y);\n}", "<cell>:2:9: error: undefined variable"),
    ("--show cfg --face graph", "fn main( {", "<cell>:1:10: error: expected"),
])
def test_mistakes_are_one_message_never_a_traceback(ip, capsys, line, cell, needle):
    result = ip.run_cell_magic("tiny", line, cell)
    captured = capsys.readouterr()
    assert result is None
    assert needle in captured.err, captured.err
    assert "Traceback" not in captured.err + captured.out
    lines = captured.err.strip().splitlines()
    if lines[0].startswith("<cell>:"):  # a compile error: message, source line, caret
        assert len(lines) == 3 and lines[2].strip().startswith("^")
    elif lines[0].startswith("error: %%tiny"):  # a mistake in the line: message and usage
        assert len(lines) == 2 and lines[1].startswith("usage: %%tiny")
    else:
        assert len(lines) == 1


def test_bril_cells_run(ip, capsys):
    ip.run_cell_magic("tiny", "--args 6", "# a Bril cell\n@main(n: int) {\n  print n;\n}\n")
    assert capsys.readouterr().out.strip() == "6"


def test_only_showing(ip, capsys):
    ip.run_cell_magic("tiny", "--show quads --via none", CELL)
    captured = capsys.readouterr()
    assert "mul" in captured.out and captured.err == ""


def test_linked_shows_the_source_beside_the_views(ip, capsys):
    import ipywidgets

    from ssa_course import compile as compile_program
    from ssa_course.magic import linked_widget

    ip.run_cell_magic("tiny", "--show quads,son-opt --linked --args 3", CELL)
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and captured.err == ""
    assert captured.out.strip().endswith("9")  # and it still runs
    comp = compile_program(CELL, "<cell>", "tiny")
    assert isinstance(linked_widget(comp, ["quads", "son-opt"]), ipywidgets.Output)


def test_linked_outside_jupyter_is_the_page_fragment(monkeypatch):
    import IPython

    from ssa_course import compile as compile_program
    from ssa_course.magic import linked_widget

    monkeypatch.setattr(IPython, "get_ipython", lambda: None)
    fragment = linked_widget(compile_program(CELL, "<cell>", "tiny"), ["quads"])
    assert 'data-pane="source"' in fragment and 'data-pane="quads"' in fragment
    assert 'data-line="1"' in fragment


def test_linked_with_an_unknown_view_is_one_line(ip, capsys):
    ip.run_cell_magic("tiny", "--show quads,nope --linked", CELL)
    err = capsys.readouterr().err
    assert "unknown view 'nope'" in err and "Traceback" not in err
