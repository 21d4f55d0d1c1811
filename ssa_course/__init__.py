"""ssa_course: a teaching compiler, from quads to graphs.

The small public API used by the lessons:

>>> import ssa_course
>>> prog = ssa_course.compile("fn main() { print(1 + 2); }")
>>> ssa_course.run(prog).stdout
'3\\n'
>>> print(ssa_course.show(prog, "quads"))          # doctest: +SKIP
>>> ssa_course.show(prog, "cfg", "svg")            # a drawing, inline in Jupyter

* :func:`compile` wraps a Tiny (or Bril) text; representations are built on demand.
* :func:`run` executes it through any registered stage (``via="ast"``, ``"quads"``, ...).
* :func:`show` gives any representation's text or drawing.
"""

from __future__ import annotations

from ssa_course.errors import RuntimeTrap, SourceError, SsaCourseError, UsageError, VerifyError
from ssa_course.pipeline import Compilation, compile_source, load_file
from ssa_course.runtime import Limits, RunResult

__all__ = [
    "Compilation", "Limits", "RunResult", "RuntimeTrap", "SourceError", "SsaCourseError",
    "UsageError", "VerifyError", "compile", "explore", "load_file", "run", "show",
    "stage_names",
]

__version__ = "0.1.0"


def compile(source: str | Compilation, filename: str = "<input>",  # noqa: A001
            kind: str | None = None) -> Compilation:
    """Wrap a program text (Tiny by default; ``kind="bril"`` or ``"bril-json"`` for Bril)."""
    if isinstance(source, Compilation):
        return source
    if kind is None and filename == "<input>" and source.lstrip().startswith("@"):
        kind = "bril"
    return compile_source(source, filename, kind)


def run(source: str | Compilation, *args: object, via: str = "quads",
        steps: int | None = None, depth: int | None = None) -> RunResult:
    """Run a program through stage ``via``; arguments may be Python ints/bools or strings.

    Never raises for the program's mistakes: look at ``.status`` and ``.error``.
    """
    from ssa_course.stages import run as run_stage

    comp = compile(source)
    limits = Limits()
    if steps is not None:
        limits.steps = steps
    if depth is not None:
        limits.depth = depth
    argv = None if not args else [_arg_text(a) for a in args]
    return run_stage(comp, argv, via=via, limits=limits)


def _arg_text(value: object) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    return str(value)


def show(source: str | Compilation, view: str = "cfg", fmt: str | None = None):
    """A representation's face: ``fmt`` is "text", "dot", or "draw"/"svg"/"png" for a drawing;
    by default the view's own preferred face (the CFG draws, quads print). Text displays as
    preformatted text in Jupyter, a drawing inline as SVG (or a fallback PNG)."""
    from ssa_course import views
    from ssa_course.viz.display import Text

    comp = compile(source)
    v = views.get_view(view)
    if fmt is None:
        fmt = v.face if v.dot is not None else "text"
    if fmt == "text":
        return Text(views.render(comp, view, "text"))
    if fmt == "dot":
        return Text(views.render(comp, view, "dot"))
    from ssa_course.viz.dot import Drawing

    return Drawing(views.render(comp, view, "dot"))


def explore(source: str | Compilation, view: str = "cfg", face: str = "graph"):
    """An ipywidgets panel onto every representation of ``source`` (see
    :mod:`ssa_course.widgets.explore`); wrong arguments give a panel saying which."""
    from ssa_course.widgets import explore as _explore

    return _explore(source, view, face)


def load_ipython_extension(ipython) -> None:  # noqa: ANN001
    """``%load_ext ssa_course``: registers the ``%%tiny`` cell magic."""
    from ssa_course.magic import load_ipython_extension as _load

    _load(ipython)


def stage_names() -> list[str]:
    """Names of every registered stage, in pipeline order."""
    from ssa_course.stages import all_stages

    return [s.name for s in all_stages()]
