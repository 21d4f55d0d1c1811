"""One self-contained HTML page: the source beside representations, linked by line.

``ssa-course show FILE --as V1,V2 --format html`` and ``%%tiny --show V1,V2 --linked`` both
use :func:`linked_html` (one implementation). The page needs no server and no network:
the script, the style and the drawings (SVG from Graphviz) are inline.

Contract (tests and the browser check rely on it): each pane's root element carries
``data-pane="source"`` or ``data-pane="<representation>"``; every item -- a source line, a
line of a text face, a node of a drawing -- carries ``data-line="N"``; clicking an item
gives exactly the items with its line the class ``linked``. Text lines with no source
line are kept (class ``noline``, no ``data-line``) and counted in the pane's heading;
statement lines with no item in a pane (a copy, a shared constant, a ``try``, code an
optimization removed) are listed under the pane's text, each an item of its line saying
why (:func:`ssa_course.tiny.statements.why_no_item`): no line is silently empty.
"""

from __future__ import annotations

import html
import os
import re
import shutil

from ssa_course import registry
from ssa_course.compilation import Compilation
from ssa_course.srclines import split_lines
from ssa_course.viz.options import DrawOptions

_STYLE = """
.ssa-linked{font-family:sans-serif;display:flex;gap:12px;align-items:flex-start}
.ssa-linked section{flex:1 1 0;min-width:0;overflow:auto;max-height:90vh;
 border:1px solid #ccc;padding:4px}
.ssa-linked h3{margin:2px 0;font-size:13px}
.ssa-linked .lines{font-family:monospace;font-size:12px;white-space:pre;margin:0}
.ssa-linked .lines>div{cursor:pointer;min-height:1.2em}
.ssa-linked .noline{color:#888;cursor:default}
.ssa-linked .num{color:#999;display:inline-block;width:3em}
.ssa-linked .linked{outline:2px solid #d00;outline-offset:-2px}
.ssa-linked g.linked polygon,.ssa-linked g.linked ellipse,.ssa-linked g.linked path
 {stroke:#d00;stroke-width:3px}
.ssa-linked .why{color:#a60;font-size:12px}
.ssa-linked .gone{font-family:sans-serif;font-size:12px;margin-top:6px;white-space:normal}
.ssa-linked .gone>div{cursor:pointer;font-style:italic;color:#444}
"""

# One index from line to items, built once; a click touches only the old and new items.
_SCRIPT = """
(function(root){
  var index={}, lit=[];
  root.querySelectorAll('[data-line]').forEach(function(el){
    var n=el.getAttribute('data-line'); (index[n]=index[n]||[]).push(el);});
  function show(n){
    for(var i=0;i<lit.length;i++){lit[i].classList.remove('linked');}
    lit=index[n]||[];
    for(var j=0;j<lit.length;j++){lit[j].classList.add('linked');}
  }
  root.addEventListener('click',function(ev){
    var el=ev.target.closest?ev.target.closest('[data-line]'):null;
    if(el&&root.contains(el)){show(el.getAttribute('data-line'));}
  });
  root.querySelectorAll('[data-pane="source"] [data-line]').forEach(function(el){
    el.addEventListener('mouseenter',function(){show(el.getAttribute('data-line'));});
  });
  root.ssaShow=show;
})(document.currentScript.previousElementSibling);
"""


def band(line: int) -> str:
    """The colour band of a source line (a light hue per line, as Compiler Explorer)."""
    return f"hsl({line * 47 % 360},70%,90%)"


def _item(text: str, line: int | None, number: int | None = None) -> str:
    num = f'<span class="num">{number}</span>' if number is not None else ""
    body = html.escape(text) or " "
    if line is None:
        return f'<div class="noline">{num}{body}</div>'
    return (f'<div class="item" data-line="{line}" style="background:{band(line)}">'
            f"{num}{body}</div>")


_TITLE = re.compile(r'<g id="[^"]*" class="node">\s*<title>([^<]*)</title>')


def _svg(dot: str, node_line, function: str | None = None) -> str:
    """The drawing as inline SVG, each node ``<g>`` with its ``data-line`` (``node_line``:
    DOT name -> line; ``function``: the one function drawn, whose names are unprefixed)."""
    from ssa_course.viz.dot import Drawing

    svg = Drawing(dot).svg()
    svg = svg[svg.find("<svg"):]

    def mark(m: re.Match) -> str:
        name = html.unescape(m.group(1))
        line = node_line(f"{function}/{name}" if function and "/" not in name else name)
        if line is None:
            return m.group(0)
        return m.group(0).replace('class="node"', f'class="node" data-line="{line}"', 1)

    return _TITLE.sub(mark, svg)


def graphviz_missing() -> str | None:
    """Why the page has no drawings (one line), or None."""
    return None if shutil.which("dot") else "no drawing: Graphviz ('dot') is not installed"


def _item_word(rep: registry.Representation) -> str:
    if rep.form == "graph" or rep.face == "draw":
        return "node"
    return "instruction" if rep.runs_as is not None or not rep.counts else "item"


def _statements(comp: Compilation) -> dict:
    """Statement line -> its statements (Tiny source; Bril's items are its lines)."""
    if comp.kind != "tiny":
        return {}
    from ssa_course.tiny.statements import statements_by_line

    return statements_by_line(comp.ast)


def _gone(rep: registry.Representation, statements: dict, covered: set[int]) -> str:
    """The statement lines with no item in this pane, each an item saying why."""
    from ssa_course.tiny.statements import why_no_item

    word = _item_word(rep)
    rows = "".join(
        f'<div class="item gone" data-line="{n}" style="background:{band(n)}">'
        f"line {n}: {html.escape(why_no_item(stmts, word))}</div>"
        for n, stmts in statements.items() if n not in covered)
    return f'<div class="gone">{rows}</div>' if rows else ""


def pane(comp: Compilation, name: str, options: DrawOptions | None = None,
         draw: bool | str = "auto", statements: dict | None = None) -> str:
    """One representation's pane: its text face, item by item, and (``draw``: True,
    or ``"auto"`` for the representations ``show`` draws by default) its drawing; then
    the statement lines it has no item for (``statements``: line -> statements, by
    default the program's), each saying why."""
    from ssa_course.viz.render import RenderError

    rep = registry.representation(name)
    if draw == "auto":
        draw = rep.face == "draw"
    artifact = registry.build(comp, rep.name)
    text = rep.text(artifact)
    lines = rep.source_lines(artifact)
    rows = split_lines(text)
    items = "".join(_item(t, lines.text[i] if i < len(lines.text) else None)
                    for i, t in enumerate(rows))
    missing = len(lines.no_line(text))
    head = f"{html.escape(rep.name)}" + (f" <small>({missing} with no source line)</small>"
                                         if missing else "")
    drawing = ""
    why = graphviz_missing()
    if draw and why is None:
        dot = rep.dot(artifact, os.path.basename(comp.filename), options)
        function = getattr(options, "function", None)
        try:
            drawing = f'<div class="drawing">{_svg(dot, lines.node, function)}</div>'
        except RenderError as e:  # too big for Graphviz in time: the text face only
            drawing = f'<div class="why">no drawing: {html.escape(e.render())}</div>'
    elif draw and why is not None:
        drawing = f'<div class="why">{html.escape(why)}</div>'
    if statements is None:
        statements = _statements(comp)
    gone = _gone(rep, statements, lines.covered())
    return (f'<section data-pane="{html.escape(rep.name)}"><h3>{head}</h3>'
            f'<div class="lines">{items}</div>{gone}{drawing}</section>')


def linked_html(comp: Compilation, names: list[str], options: DrawOptions | None = None,
                draw: bool | str = "auto") -> str:
    """The source pane and one pane per representation, linked by line (a fragment:
    a ``<div>`` followed by its script). ``draw``: see :func:`pane`."""
    for name in names:
        registry.representation(name)  # an unknown name: one line, before any work
    source = split_lines(comp.source)
    src = "".join(_item(t, i, i) for i, t in enumerate(source, start=1))
    statements = _statements(comp)
    panes = "".join(pane(comp, n, options, draw, statements) for n in names)
    return (f'<style>{_STYLE}</style><div class="ssa-linked">'
            f'<section data-pane="source"><h3>{html.escape(os.path.basename(comp.filename))}'
            f'</h3><div class="lines">{src}</div></section>{panes}</div>'
            f"<script>{_SCRIPT}</script>")


def linked_page(comp: Compilation, names: list[str], options: DrawOptions | None = None) -> str:
    """A whole HTML document (``show --format html``)."""
    title = html.escape(f"{os.path.basename(comp.filename)}: {', '.join(names)}")
    return (f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{title}</title>'
            f"</head><body>{linked_html(comp, names, options)}</body></html>\n")
