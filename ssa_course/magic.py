"""The ``%%tiny`` cell magic for live demos: compile the cell, show it, run it.

    %load_ext ssa_course
    %%tiny --show quads,julia --args 5 --via quads
    fn main(n: int) { print(n * n); }

``--show`` takes any view names (comma-separated; default: none), ``--face`` text or
graph, ``--args`` the arguments of ``main``, ``--via`` the stage that runs it (``none``
to only show). Compile and runtime errors appear as their one-line messages.
"""

from __future__ import annotations

import argparse
import shlex
import sys

from ssa_course.errors import SsaCourseError


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="%%tiny", add_help=False, exit_on_error=False)
    p.add_argument("--show", default="")
    p.add_argument("--face", choices=("text", "graph"), default="text")
    p.add_argument("--args", nargs="*", default=[])
    p.add_argument("--via", default="quads")
    return p


def tiny_magic(line: str, cell: str) -> object:
    """Run one ``%%tiny`` cell; returns the RunResult (or None when only showing)."""
    import ssa_course
    from ssa_course.viz.display import Text

    try:
        ns = _parser().parse_args(shlex.split(line))
    except (argparse.ArgumentError, SystemExit) as e:
        print(f"error: %%tiny: {e} (options: --show V1,V2 --face text|graph --args ... "
              "--via STAGE)", file=sys.stderr)
        return None
    comp = ssa_course.compile(cell, "<cell>")
    _display = _displayer()
    for view in [v.strip() for v in ns.show.split(",") if v.strip()]:
        try:
            face = "text" if ns.face == "text" else None
            shown = ssa_course.show(comp, view, face)
            _display(Text(f"── {view} ──") if face == "text" else view)
            _display(shown)
        except SsaCourseError as e:
            print(e.render(), file=sys.stderr)
            return None
    if ns.via == "none":
        return None
    result = ssa_course.run(comp, *ns.args, via=ns.via)
    sys.stdout.write(result.stdout)
    if result.error:
        print(result.error, file=sys.stderr)
    return None


def _displayer():  # noqa: ANN202
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:
        return print
    return display if get_ipython() is not None else print


def load_ipython_extension(ipython) -> None:  # noqa: ANN001
    """``%load_ext ssa_course`` registers ``%%tiny``."""
    ipython.register_magic_function(tiny_magic, magic_kind="cell", magic_name="tiny")
