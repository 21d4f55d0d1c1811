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
import sys

from ssa_course import registry
from ssa_course.compilation import Compilation
from ssa_course.srclines import split_lines
from ssa_course.viz.options import DrawOptions

# The panes fill a box as tall as the window allows (or as the longest pane needs); each
# pane's text scrolls on its own, both ways (``.body``), and a drawing gets the lower
# half of its pane, fitted to it, with pan (drag), zoom (wheel, + and -) and fit.
_STYLE = """
.ssa-linked{font-family:sans-serif;display:flex;gap:8px;align-items:stretch}
.ssa-linked section{flex:1 1 0;min-width:0;display:flex;flex-direction:column;
 border:1px solid #ccc;padding:4px;box-sizing:border-box}
.ssa-linked h3{margin:2px 0;font-size:13px;flex:none}
.ssa-linked .body{flex:1 1 0;min-height:3em;overflow:auto}
.ssa-linked .lines{font-family:monospace;font-size:12px;line-height:1.25em;white-space:pre;
 margin:0;display:inline-block;min-width:100%;box-sizing:border-box}
.ssa-linked .lines>div{cursor:pointer;min-height:1.25em}
.ssa-linked .noline{color:#888;cursor:default}
.ssa-linked .num{color:#999;display:inline-block;width:3em}
.ssa-linked .linked{outline:2px solid #d00;outline-offset:-2px}
.ssa-linked .lines>.linked,.ssa-linked .gone>.linked{background:#ffe066!important}
.ssa-linked g.linked polygon,.ssa-linked g.linked ellipse,.ssa-linked g.linked path
 {stroke:#d00;stroke-width:3px}
.ssa-linked g.linked polygon,.ssa-linked g.linked ellipse{fill:#ffe066}
.ssa-linked .why{color:#a60;font-size:12px}
.ssa-linked .gone{font-family:sans-serif;font-size:12px;margin-top:6px;white-space:normal}
.ssa-linked .gone>div{cursor:pointer;font-style:italic;color:#444}
.ssa-linked .drawing{flex:1 1 0;min-height:8em;position:relative;overflow:hidden;
 border-top:1px solid #ccc;margin-top:4px}
.ssa-linked .drawing>svg{width:100%;height:100%;display:block;cursor:grab;touch-action:none}
.ssa-linked .zoom{position:absolute;top:2px;right:2px;display:flex;gap:2px}
.ssa-linked .zoom button{font-size:11px;padding:0 5px;cursor:pointer}
"""

# One index from line to items, built once; a click touches only the old and new items,
# then scrolls every pane to the first item of the line ("reveal linked code": a text
# pane scrolls when that item is out of sight, a drawing pans to it and zooms in to a
# readable size). Drawings: the viewBox is the camera (fit, drag to pan, wheel or the
# buttons to zoom); a drag is not a click.
_SCRIPT = """
(function(root){
  var index={}, lit=[], READ=0.8;
  root.querySelectorAll('[data-line]').forEach(function(el){
    var n=el.getAttribute('data-line'); (index[n]=index[n]||[]).push(el);});
  function show(n){
    for(var i=0;i<lit.length;i++){lit[i].classList.remove('linked');}
    lit=index[n]||[];
    for(var j=0;j<lit.length;j++){lit[j].classList.add('linked');}
  }
  function camera(box){
    var svg=box.querySelector('svg'); if(!svg||!svg.viewBox.baseVal){return;}
    var b=svg.viewBox.baseVal, full=[b.x,b.y,b.width,b.height], v=full.slice();
    svg.removeAttribute('width'); svg.removeAttribute('height');
    svg.setAttribute('preserveAspectRatio','xMidYMid meet');
    function set(){svg.setAttribute('viewBox',v.join(' '));}
    function scale(){var r=svg.getBoundingClientRect();
      return Math.min(r.width/v[2], r.height/v[3]);}
    function user(x,y){var p=svg.createSVGPoint(); p.x=x; p.y=y;
      return p.matrixTransform(svg.getScreenCTM().inverse());}
    function zoom(f,c){v=[c.x-(c.x-v[0])/f, c.y-(c.y-v[1])/f, v[2]/f, v[3]/f]; set();}
    function middle(){var r=svg.getBoundingClientRect();
      return user(r.left+r.width/2, r.top+r.height/2);}
    box.ssaFit=function(){v=full.slice(); set();};
    box.ssaZoom=function(f){zoom(f, middle());};
    box.ssaScale=scale;
    box.ssaReveal=function(node){
      var r=node.getBoundingClientRect(), s=svg.getBoundingClientRect();
      var inside=r.left>=s.left&&r.right<=s.right&&r.top>=s.top&&r.bottom<=s.bottom;
      if(inside&&scale()>=READ){return;}
      var c=user(r.left+r.width/2, r.top+r.height/2), k=Math.max(scale(), READ);
      var w=s.width/k, h=s.height/k; v=[c.x-w/2, c.y-h/2, w, h]; set();
    };
    svg.addEventListener('wheel',function(ev){ev.preventDefault();
      zoom(ev.deltaY<0?1.25:0.8, user(ev.clientX, ev.clientY));},{passive:false});
    var drag=null, moved=false;
    svg.addEventListener('pointerdown',function(ev){drag=[ev.clientX,ev.clientY]; moved=false;});
    svg.addEventListener('pointermove',function(ev){
      if(!drag){return;}
      var dx=ev.clientX-drag[0], dy=ev.clientY-drag[1];
      if(!moved&&Math.abs(dx)+Math.abs(dy)<4){return;}
      moved=true; var k=scale(); v[0]-=dx/k; v[1]-=dy/k; drag=[ev.clientX,ev.clientY]; set();
    });
    window.addEventListener('pointerup',function(){drag=null;});
    svg.addEventListener('click',function(ev){if(moved){ev.stopPropagation(); moved=false;}},true);
    box.querySelectorAll('.zoom button').forEach(function(btn){
      btn.addEventListener('click',function(ev){ev.stopPropagation();
        var z=btn.getAttribute('data-zoom');
        if(z==='fit'){box.ssaFit();}else{box.ssaZoom(parseFloat(z));}});
    });
  }
  root.querySelectorAll('.drawing').forEach(camera);
  function reveal(n, from){
    root.querySelectorAll('.body,.drawing').forEach(function(box){
      if(from&&box.contains(from)){return;}
      var first=box.querySelector('[data-line="'+n+'"]');
      if(!first){return;}
      if(box.ssaReveal){box.ssaReveal(first); return;}
      var b=box.getBoundingClientRect(), r=first.getBoundingClientRect();
      if(r.top<b.top||r.bottom>b.bottom){
        box.scrollTop+=r.top-b.top-Math.max(0,(box.clientHeight-r.height)/3);}
      if(r.left>b.right||r.right<b.left){box.scrollLeft=0;}
    });
  }
  root.addEventListener('click',function(ev){
    var el=ev.target.closest?ev.target.closest('[data-line]'):null;
    if(el&&root.contains(el)){
      var n=el.getAttribute('data-line'); show(n); reveal(n, el);}
  });
  root.querySelectorAll('[data-pane="source"] [data-line]').forEach(function(el){
    el.addEventListener('mouseenter',function(){show(el.getAttribute('data-line'));});
  });
  root.ssaShow=show; root.ssaReveal=reveal;
})(document.currentScript.previousElementSibling);
"""


_LIGHTNESS = (90, 82, 94, 86)


def band(line: int) -> str:
    """The colour band of a source line (a light hue per line, as Compiler Explorer). Hues
    step by the golden angle and the lightness cycles through four levels, so lines near
    each other never share a colour (a step of 47 degrees came back every 8 lines)."""
    return f"hsl({round(line * 137.508) % 360},70%,{_LIGHTNESS[line % 4]}%)"


def _item(text: str, line: int | None, number: int | None = None) -> str:
    num = f'<span class="num">{number}</span>' if number is not None else ""
    body = html.escape(text) or " "
    if line is None:
        return f'<div class="noline">{num}{body}</div>'
    return (f'<div class="item" data-line="{line}" style="background:{band(line)}">'
            f"{num}{body}</div>")


_ZOOM = ('<div class="zoom"><button data-zoom="fit" title="the whole drawing">fit</button>'
         '<button data-zoom="1.25" title="zoom in (or the mouse wheel)">+</button>'
         '<button data-zoom="0.8" title="zoom out">&minus;</button></div>')

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
    """Why the page has no drawings (one line), or None: drawings are made as every other
    drawing's SVG is (:func:`ssa_course.viz.render.svg_available`: the ``dot`` program, or
    in the browser the WebAssembly Graphviz)."""
    from ssa_course.viz import render

    if render.svg_available():
        return None
    if sys.platform == "emscripten":  # Pyodide: no program to install, viz.js to load
        return ("no drawing: the WebAssembly Graphviz is not loaded "
                "(run: await ssa_course.viz.browser.load())")
    return "no drawing: Graphviz ('dot') is not installed"


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
            drawing = f'<div class="drawing">{_ZOOM}{_svg(dot, lines.node, function)}</div>'
        except RenderError as e:  # too big for Graphviz in time: the text face only
            drawing = f'<div class="why">no drawing: {html.escape(e.render())}</div>'
    elif draw and why is not None:
        drawing = f'<div class="why">{html.escape(why)}</div>'
    if statements is None:
        statements = _statements(comp)
    gone = _gone(rep, statements, lines.covered())
    if drawing.startswith('<div class="why">'):  # a line of text, not a drawing box
        gone, drawing = drawing + gone, ""
    return (f'<section data-pane="{html.escape(rep.name)}"><h3>{head}</h3>'
            f'<div class="body"><div class="lines">{items}</div>{gone}</div>{drawing}'
            "</section>")


def linked_html(comp: Compilation, names: list[str], options: DrawOptions | None = None,
                draw: bool | str = "auto") -> str:
    """The source pane and one pane per representation, linked by line (a fragment:
    a ``<div>`` followed by its script). ``draw``: see :func:`pane`."""
    for name in names:
        registry.representation(name)  # an unknown name: one line, before any work
    source = split_lines(comp.source)
    src = "".join(_item(t, i, i) for i, t in enumerate(source, start=1))
    statements = _statements(comp)
    panes = [pane(comp, n, options, draw, statements) for n in names]
    # as tall as the longest pane needs (rows of 1.25em, two for the heading), at most
    # the window; a pane with a drawing splits its height with its text
    rows = max([len(source)] + [p.count("<div") for p in panes])
    tall = any('class="drawing"' in p for p in panes)
    height = "88vh" if tall else f"min(88vh,{rows * 1.25 + 4:.0f}em)"
    return (f'<style>{_STYLE}</style><div class="ssa-linked" style="height:{height}">'
            f'<section data-pane="source"><h3>{html.escape(os.path.basename(comp.filename))}'
            f'</h3><div class="body"><div class="lines">{src}</div></div></section>'
            f'{"".join(panes)}</div><script>{_SCRIPT}</script>')


def linked_page(comp: Compilation, names: list[str], options: DrawOptions | None = None) -> str:
    """A whole HTML document (``show --format html``)."""
    title = html.escape(f"{os.path.basename(comp.filename)}: {', '.join(names)}")
    return (f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{title}</title>'
            f"</head><body>{linked_html(comp, names, options)}</body></html>\n")
