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
* :func:`show` gives any representation's text or drawing; :func:`build` the object itself.
* Every name (``via``, ``view``) is one of :func:`stage_names`: one list, from the lessons.
"""

from __future__ import annotations

from typing import cast

from ssa_course import params
from ssa_course.compilation import KINDS, Compilation, compile_source, load_file
from ssa_course.errors import RuntimeTrap, SourceError, SsaCourseError, UsageError, VerifyError
from ssa_course.runtime import Limits, RunResult
from ssa_course.srclines import split_lines

__all__ = [
    "Compilation", "Limits", "RunResult", "RuntimeTrap", "SourceError", "SsaCourseError",
    "UsageError", "VerifyError", "build", "code_escapes", "code_typed", "compile", "explore",
    "linked", "load_file",
    "run", "sea_of_nodes", "show", "stage_names",
]

__version__ = "0.1.0"


def compile(source: str | Compilation, filename: str = "<input>",
            kind: str | None = None) -> Compilation:
    """Wrap a program text (Tiny by default; ``kind="bril"`` or ``"bril-json"`` for Bril)."""
    try:
        return _compile("compile", source, filename, kind)
    except SsaCourseError as e:
        raise e.with_traceback(None) from None  # the message says it all: no inner frames


def _compile(func: str, source: object, filename: object = "<input>",
             kind: object = None) -> Compilation:
    if isinstance(source, Compilation):
        return source
    params.source_text(func, source)
    params.filename(func, filename)
    params.kind(func, kind, KINDS)
    # the checks above raised unless these are what compile_source takes
    text, name = cast(str, source), cast(str, filename)
    chosen = cast("str | None", kind)
    if chosen is None and name == "<input>":
        chosen = guess_kind(text)
    return compile_source(text, name, chosen)


def _around(around: str | int | None) -> str | None:
    """``around=`` as DrawOptions declares it: DrawOptions itself turns 12 into "12"."""
    return cast("str | None", around)


def guess_kind(text: str) -> str | None:
    """What a program text holds: "bril" when its first line that is not a ``#`` comment
    starts with ``@`` (a Bril function), "bril-json" for a JSON object, None for Tiny."""
    for line in split_lines(text):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("@"):
            return "bril"
        if stripped.startswith("{"):
            return "bril-json"
        return None
    return None


ASSEMBLERS = ["gnu", "keystone", "own"]  # codegen.toolchain.ASSEMBLERS (lazily imported)


def _assembler(func: str, assembler: object) -> None:
    if assembler is not None:
        params.name_in(func, "assembler", assembler, ASSEMBLERS, "assembler")


def run(source: str | Compilation, *args: object, via: str = "quads",
        steps: int | None = None, depth: int | None = None,
        assembler: str | None = None, timeout: int | None = None) -> RunResult:
    """Run a program through stage ``via``; arguments may be Python ints/bools or strings.
    ``assembler`` ("gnu", "keystone", "own") makes the machine code of the ``native`` and
    ``emulated`` stages (default: the first installed of those). ``timeout``: seconds of
    wall-clock time a machine-code run may take (``run --timeout``; default 60).

    Never raises for the program's mistakes: look at ``.status`` and ``.error`` (an
    assembler that is not installed is status 1 with the reason). A wrong call
    (``steps="10"``, an unknown ``via``) raises a ``TypeError``/``ValueError``.
    """
    from ssa_course.stages import run as run_stage

    try:
        comp = _compile("run", source)
        params.name_in("run", "via", via, stage_names(), "stage")
        params.limit("run", "steps", steps)
        params.limit("run", "depth", depth)
        params.limit("run", "timeout", timeout)
        _assembler("run", assembler)
        argv = [params.main_arg("run", i, a) for i, a in enumerate(args, start=1)]
    except SsaCourseError as e:
        raise e.with_traceback(None) from None
    limits = Limits()
    if steps is not None:
        limits.steps = steps
    if depth is not None:
        limits.depth = depth
    if timeout is not None:
        limits.timeout = timeout
    from ssa_course.codegen.assemble import using_assembler

    try:
        with using_assembler(assembler):
            return run_stage(comp, argv or None, via=via, limits=limits)
    except UsageError as e:  # the assembler asked for is not installed
        return RunResult("", 1, e.render())


def show(source: str | Compilation, view: str = "cfg", fmt: str | None = None, *,
         function: str | None = None, around: str | int | None = None, radius: int = 2,
         budget: int | None = 150, assembler: str | None = None):
    """A representation's face: ``fmt`` is "text", "dot", or "draw"/"svg"/"png" for a drawing;
    by default the view's own preferred face (the CFG draws, quads print). Text displays as
    preformatted text in Jupyter, a drawing inline as SVG (or a fallback PNG). A drawing
    shows ``function`` (default: main, or all when small), only the nodes ``radius`` edges
    ``around`` one node, and at most ``budget`` nodes (None: all), saying what it left out.
    ``assembler`` chooses who makes the bytes of the machine-code views (as in :func:`run`).

    A compile error raises :class:`SourceError` (its message has the line and a caret)."""
    from ssa_course import registry

    try:
        comp = _compile("show", source)
        params.name_in("show", "view", view, registry.names(), "representation")
        params.fmt("show", fmt)
        from ssa_course.viz.options import DrawOptions

        _assembler("show", assembler)
        params.draw_options("show", function, around, radius, budget)
        options = DrawOptions(function=function, around=_around(around), radius=radius,
                              budget=budget)
        from ssa_course.codegen.assemble import using_assembler

        with using_assembler(assembler):
            return _show(comp, view, fmt, options)
    except SsaCourseError as e:
        raise e.with_traceback(None) from None


def _show(comp: Compilation, view: str, fmt: str | None, options=None):
    from ssa_course import registry, views
    from ssa_course.viz.display import Text

    if fmt is None:
        fmt = registry.representation(view).face
    if fmt == "text":
        return Text(views.render(comp, view, "text"))
    if fmt == "dot":
        return Text(views.render(comp, view, "dot", options))
    from ssa_course.viz.dot import Drawing

    return Drawing(views.render(comp, view, "dot", options),
                   timeout=options.timeout if options is not None else None)


def linked(source: str | Compilation, *views: str, function: str | None = None,
           around: str | int | None = None, radius: int = 2, budget: int | None = 150):
    """The source beside ``views`` (representation names), linked by line: clicking or
    hovering a source line highlights its items in every view's text and drawing, clicking
    an item its line (docs/lines.md). What ``%%tiny --show A,B --linked`` shows; the
    drawing options are :func:`show`'s. In Jupyter an ipywidgets Output, else the HTML."""
    from ssa_course import registry

    try:
        comp = _compile("linked", source)
        if not views:
            raise UsageError("linked() needs at least one representation, e.g. "
                             "linked(src, 'quads', 'son')")
        for view in views:
            params.name_in("linked", "view", view, registry.names(), "representation")
        from ssa_course.magic import linked_widget
        from ssa_course.viz.options import DrawOptions

        params.draw_options("linked", function, around, radius, budget)
        options = DrawOptions(function=function, around=_around(around), radius=radius,
                              budget=budget)
        return linked_widget(comp, list(views), options)
    except SsaCourseError as e:
        raise e.with_traceback(None) from None


def explore(source: str | Compilation, view: str = "cfg", face: str = "graph"):
    """An ipywidgets panel onto every representation of ``source`` (see
    :mod:`ssa_course.widgets.explore`). Wrong argument types or names raise a
    ``TypeError``/``ValueError`` naming the parameter; a program with a compile error (or bad
    Bril) gives a panel showing the located message."""
    from ssa_course import registry

    try:
        if not isinstance(source, Compilation):
            params.source_text("explore", source)
        params.name_in("explore", "view", view, ["source"] + registry.names(),
                       "representation")
        params.name_in("explore", "face", face, ["text", "graph"], "face")
    except SsaCourseError as e:
        raise e.with_traceback(None) from None
    from ssa_course.widgets import explore as _explore

    return _explore(source, view, face)


def load_ipython_extension(ipython) -> None:
    """``%load_ext ssa_course``: registers the ``%%tiny`` cell magic."""
    from ssa_course.magic import load_ipython_extension as _load

    _load(ipython)


def stage_names() -> list[str]:
    """Names of every representation (each runs, prints and draws), in lesson order."""
    from ssa_course import registry

    return registry.names()


def build(source: str | Compilation, name: str) -> object:
    """Representation ``name`` of a program, built and verified (the object the lessons
    work with: a quads ``Program``, IRCode, a sea of nodes, ...)."""
    from ssa_course import registry

    try:
        comp = _compile("build", source)
        params.name_in("build", "name", name, registry.names(), "representation")
        return registry.build(comp, name)
    except SsaCourseError as e:
        raise e.with_traceback(None) from None


def code_typed(source: str | Compilation, fn: str = "main"):
    """The IRCode of function ``fn``, like Julia's ``@code_typed`` (lesson 04). An
    unknown ``fn`` raises ``ValueError`` (``ArgumentValueError``) listing the functions."""
    from ssa_course.lessons.l04_julia import code_typed as typed

    try:
        comp = _compile("code_typed", source)
        params.name_in("code_typed", "fn", fn, list(comp.quads.functions), "function")
        return typed(comp, fn)
    except SsaCourseError as e:
        raise e.with_traceback(None) from None


def code_escapes(source: str | Compilation):
    """Escape analysis of a program, like Julia's ``code_escapes`` (lesson 10): prints as
    IRCode with a glyph per value, ``["f"]`` gives function ``f``'s result."""
    from ssa_course.lessons.l10_escape import code_escapes as escapes

    return escapes(source)


def sea_of_nodes(source: str | Compilation, optimize: bool = True, options=None):
    """The verified sea of nodes of a Tiny program (lessons 05-07); ``optimize=False``
    switches the parser's peepholes off."""
    from ssa_course.errors import ArgumentTypeError
    from ssa_course.lessons.l05_control import sea_of_nodes as son
    from ssa_course.son.emit import BuildOptions

    try:
        comp = _compile("sea_of_nodes", source)
        if not isinstance(optimize, bool):
            raise ArgumentTypeError(f"sea_of_nodes(): 'optimize' must be a bool, not "
                                    f"{params.type_name(optimize)}")
        if options is not None and not isinstance(options, BuildOptions):
            raise ArgumentTypeError(f"sea_of_nodes(): 'options' must be a BuildOptions or "
                                    f"None, not {params.type_name(options)}")
        return son(comp, optimize, options)
    except SsaCourseError as e:
        raise e.with_traceback(None) from None
