"""The ``%%tiny`` cell magic for live demos: compile the cell, show it, run it.

    %load_ext ssa_course
    %%tiny --show quads,julia --args 5 --via quads
    fn main(n: int) { print(n * n); }

``--show`` takes any view names (comma-separated; default: none), ``--linked`` shows
them side by side with the source, linked by line (click or hover a line, click an item),
``--face`` text or graph, ``--args`` the arguments of ``main``, ``--via`` the stage that
runs it (``none`` to only show). A cell whose first line starts with ``@`` is Bril text,
``{`` Bril JSON.

Every mistake -- in the magic's line, in the program, at run time -- is printed as its
one-line message (plus the source line and a caret for compile errors) on standard
error; nothing propagates into the notebook as a traceback.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys

from ssa_course.errors import SourceError, SsaCourseError

_USAGE = ("usage: %%tiny [--show V1,V2] [--linked] [--face text|graph] [--args A ...] "
          "[--via STAGE|none]")


class _LineError(Exception):
    """A mistake in the ``%%tiny`` line itself."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise _LineError(message)  # argparse would print usage and exit the kernel's cell


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="%%tiny", add_help=False, exit_on_error=False)
    p.add_argument("--show", default=None)
    p.add_argument("--face", choices=("text", "graph"), default="text")
    p.add_argument("--linked", action="store_true")
    p.add_argument("--args", nargs="*", default=[])
    p.add_argument("--via", default="quads")
    return p


def _fail(message: str) -> None:
    print(message, file=sys.stderr)


def parse_line(line: str) -> argparse.Namespace:
    """The options of one ``%%tiny`` line; raises :class:`_LineError` with a clear message."""
    try:
        words = shlex.split(line)
    except ValueError as e:  # e.g. "No closing quotation"
        raise _LineError(f"cannot read the options: {str(e).lower()}") from None
    try:
        return _parser().parse_args(words)
    except argparse.ArgumentError as e:
        raise _LineError(str(e)) from None


def _check_names(ns: argparse.Namespace) -> list[str]:
    """The views to show; unknown view or stage names are a :class:`_LineError`."""
    from ssa_course import stage_names
    from ssa_course.registry import name_list

    try:  # the CLI's reader of --as: "quads,," is refused by both
        shown = [] if ns.show is None else name_list(ns.show, "--show")
    except SsaCourseError as e:
        raise _LineError(str(e)) from None
    known_views = stage_names()
    for view in shown:
        if view not in known_views:
            raise _LineError(f"unknown view '{view}' for --show (known: "
                             f"{', '.join(known_views)})")
    if ns.via != "none" and ns.via not in stage_names():
        raise _LineError(f"unknown stage '{ns.via}' for --via (known: none, "
                         f"{', '.join(stage_names())})")
    return shown


def tiny_magic(line: str, cell: str) -> None:
    """Run one ``%%tiny`` cell: show the requested views, then run it (output printed)."""
    try:
        ns = parse_line(line)
        shown = _check_names(ns)
    except _LineError as e:
        _fail(f"error: %%tiny: {e}\n{_USAGE}")
        return None
    try:
        _show_and_run(cell, ns, shown)
    except SourceError as e:  # a compile error: located, with the line and a caret
        _fail(e.render())
    except SsaCourseError as e:
        _fail(e.render())
    except RecursionError:
        _fail("error: the program is nested too deeply for this tool")
    except Exception as e:  # a bug in ssa_course: one line, like the CLI, unless debugging
        if os.environ.get("SSA_COURSE_DEBUG"):
            raise
        _fail(f"internal error (a bug in ssa_course, please report it): {type(e).__name__}: "
              f"{e} -- set SSA_COURSE_DEBUG=1 for details")
    return None


def _show_and_run(cell: str, ns: argparse.Namespace, shown: list[str]) -> None:
    import ssa_course
    from ssa_course.viz.display import Text

    comp = ssa_course.compile(cell, "<cell>", ssa_course.guess_kind(cell))
    display = _displayer()
    if ns.linked and shown:
        display(linked_widget(comp, shown))
        shown = []
    for view in shown:
        face = "text" if ns.face == "text" else None
        picture = ssa_course.show(comp, view, face)
        display(Text(f"── {view} ──") if face == "text" else view)
        display(picture)
    if ns.via == "none":
        return
    result = ssa_course.run(comp, *ns.args, via=ns.via)
    sys.stdout.write(result.stdout)
    if result.error:
        _fail(result.error)


def linked_widget(comp: object, shown: list[str], options: object = None) -> object:
    """The source beside the views, linked by line (:mod:`ssa_course.linked_page`, the same
    page ``show --format html`` writes), in an ipywidgets Output (HTML outside Jupyter)."""
    from ssa_course.linked_page import linked_html

    fragment = linked_html(comp, shown, options)  # type: ignore[arg-type]
    try:
        import ipywidgets
        from IPython import get_ipython
        from IPython.display import HTML
        from IPython.display import display as show
    except ImportError:
        return fragment
    if get_ipython() is None:
        return fragment
    out = ipywidgets.Output()
    with out:
        show(HTML(fragment))
    return out


def _displayer():
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:
        return print
    return display if get_ipython() is not None else print


def load_ipython_extension(ipython) -> None:
    """``%load_ext ssa_course`` registers ``%%tiny``."""
    ipython.register_magic_function(tiny_magic, magic_kind="cell", magic_name="tiny")
