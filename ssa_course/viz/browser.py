"""Graphviz in the browser: load the WebAssembly build (viz.js) shipped with the JupyterLite
site and register it as the ``"wasm"`` renderer of :mod:`ssa_course.viz.render`.

The first cell of every notebook on the site (``tools/build_lite.py``) runs
``await browser.load()``. The module is imported from the site itself (``static/viz/viz.js``,
nothing leaves the site); its ``renderString`` is synchronous, so ``_repr_svg_`` and the
explorer use it like the ``dot`` program. Outside the browser :func:`load` does nothing.
"""

from __future__ import annotations

import json
import sys

from ssa_course.viz.render import renderer, set_browser_graphviz

VIZ_PATH = "static/viz/viz.js"  # where tools/build_lite.py puts @viz-js/viz's module


def site_root(href: str) -> str:
    """The site's base URL from the kernel's own address (a worker script under
    ``<site>/extensions/``, or a page such as ``<site>/lab/index.html``)."""
    for marker in ("/extensions/", "/build/", "/lab/", "/notebooks/", "/tree/"):
        if marker in href:
            return href[: href.index(marker) + 1]
    return href.rsplit("/", 1)[0] + "/"


def in_browser() -> bool:
    """Running in Pyodide (the JupyterLite kernel)?"""
    return sys.platform == "emscripten"


async def load(url: str | None = None) -> str:
    """Register the WebAssembly Graphviz (in the browser only); returns the renderer
    drawings now use (see :func:`ssa_course.viz.render.renderer`)."""
    if not in_browser():
        return renderer()
    import js  # Pyodide's bridge to JavaScript
    from pyodide.code import run_js
    from pyodide.ffi import to_js

    url = url or site_root(str(js.location.href)) + VIZ_PATH
    module = await run_js(f"import({json.dumps(url)})")
    viz = await module.instance()
    options = to_js({"format": "svg"}, dict_converter=js.Object.fromEntries)

    def render_svg(dot: str) -> str:
        return str(viz.renderString(dot, options))

    set_browser_graphviz(render_svg)
    return renderer()
