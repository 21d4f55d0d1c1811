"""Turning DOT text into pictures: one renderer hook for every drawing.

:class:`Drawing` is what notebooks display and what ``ssa-course show --format svg|png``
writes. It holds deterministic DOT text (``.dot``) and renders it on demand with the
first renderer that works (:func:`renderer` says which, :data:`RENDERERS` in order):

* ``"graphviz"`` -- Graphviz's ``dot`` program on the PATH: Jupyter shows the SVG;
* ``"wasm"`` -- Graphviz compiled to WebAssembly, in the browser (JupyterLite, where no
  program can be started): :func:`set_browser_graphviz` registers it
  (:mod:`ssa_course.viz.browser` does so); the same SVG;
* ``"matplotlib"`` -- a simpler picture of the *same* graph, laid out in layers with
  networkx and drawn by matplotlib (:mod:`ssa_course.viz.fallback`), a PNG;
* ``"text"`` -- none of those: the DOT text itself, in a ``<pre>`` block.

When a renderer fails on one graph the next one down draws it. A lesson never crashes
for want of a binary or a library. The notice about a missing Graphviz is one line on
standard error, printed once per process (``print``, not ``warnings``: a warning would
add a second line of source code and could be silenced by a filter a learner never set).
"""

from __future__ import annotations

import functools
import html
import importlib.util
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from ssa_course.errors import SsaCourseError
from ssa_course.viz.fallback import (  # noqa: F401 (re-exported: the fallback's API)
    FONT_POINTS,
    MAX_INCHES,
    fallback_png,
    layered_layout,
    unescape_label,
)

# seconds; Graphviz lays out a lesson-size graph in milliseconds, and the drawing
# options (viz.options) keep every view small enough to take well under one
RENDER_TIMEOUT = 10.0

RENDERERS = ("graphviz", "wasm", "matplotlib", "text")

MISSING_NOTICE = ("note: Graphviz 'dot' is not installed; showing a simpler matplotlib "
                  "drawing (install graphviz for the real layout)")
NOTHING_NOTICE = ("note: neither Graphviz nor matplotlib is available; showing the DOT "
                  "text of each drawing (install graphviz to see the graphs)")


class RenderError(SsaCourseError, RuntimeError):
    """No renderer can make this picture, or Graphviz failed or took too long (the CLI
    prints ``error: ...``)."""

    def render(self) -> str:
        return f"error: {self}"


# DOT text -> SVG text, synchronously; registered by the browser set-up (viz.browser)
_browser_graphviz: Callable[[str], str] | None = None


def set_browser_graphviz(fn: Callable[[str], str] | None) -> None:
    """Register (or with ``None`` forget) the WebAssembly Graphviz: a function from DOT
    text to SVG text that raises on bad input."""
    global _browser_graphviz
    _browser_graphviz = fn


def dot_available() -> bool:
    """Is Graphviz's ``dot`` program on the PATH?"""
    return shutil.which("dot") is not None


def matplotlib_available() -> bool:
    """Can the fallback picture be drawn (matplotlib importable)?"""
    try:
        return importlib.util.find_spec("matplotlib") is not None
    except (ImportError, ValueError):  # a None in sys.modules hides it
        return False


def renderer() -> str:
    """The first of :data:`RENDERERS` available here (``"text"`` always is)."""
    if dot_available():
        return "graphviz"
    if _browser_graphviz is not None:
        return "wasm"
    if matplotlib_available():
        return "matplotlib"
    return "text"


def svg_available() -> bool:
    """Can drawings be SVG here (Graphviz as a program or as WebAssembly)?"""
    return renderer() in ("graphviz", "wasm")


@functools.cache
def notice_missing_graphviz() -> None:
    """Print the one-line notice for the renderer used instead of Graphviz, once."""
    print(MISSING_NOTICE if matplotlib_available() else NOTHING_NOTICE, file=sys.stderr)


def too_slow_message(dot: str, seconds: float) -> str:
    """What to say when Graphviz did not finish: how big the graph was and how to draw
    less of it."""
    nodes = len(re.findall(r'^\s*("[^"]*"|\w+) \[', dot, re.M))
    return (f"Graphviz took more than {seconds:g} s to lay out this drawing ({nodes} "
            "nodes) and was stopped; draw less of it: function=, around= "
            "or a smaller budget= (ssa-course show --function F --around N --budget K)")


def graphviz_render(dot: str, fmt: str, timeout: float | None = None) -> bytes:
    """Run ``dot -T<fmt>`` on ``dot`` for at most ``timeout`` seconds (default
    :data:`RENDER_TIMEOUT`); raises :class:`RenderError` when that is impossible."""
    timeout = RENDER_TIMEOUT if timeout is None else timeout
    exe = shutil.which("dot")
    if exe is None:
        raise RenderError("Graphviz 'dot' is not installed (e.g. apt-get install graphviz)")
    try:
        done = subprocess.run([exe, f"-T{fmt}"], input=dot.encode("utf-8"),
                              capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise RenderError(too_slow_message(dot, timeout)) from None
    except OSError as e:
        raise RenderError(f"Graphviz could not be started: {e}") from None
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", errors="replace").strip()[:300]
        raise RenderError(f"Graphviz failed: {detail}")
    return done.stdout


# viz.js measures text with built-in metrics; it knows Courier but not "monospace" (text
# would overflow its boxes), so the browser draws with Courier, which is monospace too
_MONOSPACE = re.compile(r'fontname\s*=\s*"?monospace"?')


def browser_render(dot: str) -> str:
    """SVG text from the registered WebAssembly Graphviz; :class:`RenderError` when there
    is none or it fails."""
    if _browser_graphviz is None:
        raise RenderError("the WebAssembly Graphviz is not loaded "
                          "(in JupyterLite: await ssa_course.viz.browser.load())")
    try:
        return _browser_graphviz(_MONOSPACE.sub('fontname="Courier"', dot))
    except Exception as e:  # a JavaScript error crosses as any exception type
        detail = str(e).strip().splitlines()[0][:300] if str(e).strip() else type(e).__name__
        raise RenderError(f"Graphviz (WebAssembly) failed: {detail}") from None


def dot_text_html(dot: str) -> str:
    """The last resort: the DOT text itself, as HTML."""
    return f"<pre>{html.escape(dot)}</pre>"


class Drawing:
    """A graph to show: DOT text plus ways to render it (see the module docstring)."""

    __slots__ = ("dot", "timeout", "_svg", "_failure")

    def __init__(self, dot: str, timeout: float | None = None):
        self.dot = dot
        self.timeout = timeout  # seconds Graphviz may take (None: RENDER_TIMEOUT)
        self._svg: str | None = None
        self._failure: str | None = None  # why Graphviz could not draw this graph

    def __repr__(self) -> str:
        return f"Drawing({len(self.dot)} characters of DOT)"

    def svg(self) -> str:
        """SVG text by Graphviz (program or WebAssembly); raises :class:`RenderError` when
        neither can draw it."""
        if self._svg is None:
            if dot_available() or _browser_graphviz is None:
                self._svg = graphviz_render(self.dot, "svg", self.timeout).decode("utf-8")
            else:
                self._svg = browser_render(self.dot)
        return self._svg

    def png(self) -> bytes:
        """PNG bytes: by Graphviz when it works, else the matplotlib fallback; raises
        :class:`RenderError` when neither is available."""
        if dot_available():
            try:
                return graphviz_render(self.dot, "png", self.timeout)
            except RenderError as e:
                self._report(str(e))
        else:
            notice_missing_graphviz()
        if not matplotlib_available():
            raise RenderError("a PNG needs Graphviz or matplotlib, and neither is installed")
        return fallback_png(self.dot)

    def save(self, path: str | Path) -> None:
        """Write ``.dot``/``.gv`` (the text), ``.svg`` (Graphviz) or ``.png`` by extension."""
        suffix = Path(path).suffix.lower()
        if suffix in (".dot", ".gv"):
            Path(path).write_text(self.dot, encoding="utf-8")
        elif suffix == ".svg":
            Path(path).write_text(self.svg(), encoding="utf-8")
        elif suffix == ".png":
            Path(path).write_bytes(self.png())
        else:
            raise ValueError(f"cannot save a drawing as '{suffix or path}': "
                             "use .dot, .gv, .svg or .png")

    # -- Jupyter's rich display: SVG when Graphviz works, else the fallback PNG, else text --

    def _try_svg(self) -> str | None:
        if self._svg is not None:
            return self._svg
        if self._failure is not None:
            return None
        if not svg_available():
            notice_missing_graphviz()
            return None
        try:
            return self.svg()
        except RenderError as e:
            self._report(str(e))
            return None

    def _report(self, reason: str) -> None:
        if self._failure is None:
            self._failure = reason
            instead = "a simpler matplotlib drawing" if matplotlib_available() else "DOT text"
            print(f"note: {reason.splitlines()[0]}; showing {instead}", file=sys.stderr)

    def _repr_svg_(self) -> str | None:
        return self._try_svg()

    def _repr_png_(self) -> bytes | None:
        if self._try_svg() is not None or not matplotlib_available():
            return None  # the SVG is shown instead, or the DOT text (_repr_html_)
        return fallback_png(self.dot)

    def _repr_html_(self) -> str | None:
        if self._try_svg() is not None or matplotlib_available():
            return None
        return dot_text_html(self.dot)
