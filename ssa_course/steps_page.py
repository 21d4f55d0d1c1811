"""The optimizer, step by step, as one self-contained HTML page (``ssa-course opt FILE -p
P1,P2 --format html -o steps.html``; :mod:`ssa_course.opt_steps` makes the steps).

The page needs no server and no network: the steps are JSON inside the page, the script
and style inline, so it works offline and in JupyterLite as any static file. What it shows:

* the list of steps -- the program before any pass, then each pass; the passes that
  changed nothing are folded away (listed in one line at the top; "unchanged passes"
  shows them); with "rewrites" on, each SCCP step and peephole rewrite inside a pass on
  the sea of nodes is a step of its own, indented under its pass;
* the chosen step's program, as a diff against the step before (lines it added green,
  lines it removed red and struck through) or as it is ("text"); a rewrite's or SCCP
  step's with the lines around its change only (a grey line counts the ones left out);
* prev / next buttons, a slider, and the arrow keys to move through the steps shown.

Contract (tests and the browser check rely on it): the root is ``.ssa-steps``; each step
of the list is ``li[data-step=i]`` with class ``pass``/``start``/``sccp``/``rewrite`` and
``unchanged`` for a pass that changed nothing; ``.current`` marks the one shown; the
view's lines are ``div.add``, ``div.del`` or ``div.same``; the buttons are
``button.prev`` and ``button.next``.
"""

from __future__ import annotations

import html
import json
import os

from ssa_course.compilation import Compilation
from ssa_course.opt_steps import Step, as_data, pipeline_steps

_STYLE = """
.ssa-steps{font-family:sans-serif;display:flex;flex-direction:column;height:90vh;
 border:1px solid #ccc;padding:4px;box-sizing:border-box}
.ssa-steps .bar{display:flex;gap:8px;align-items:center;flex-wrap:wrap;font-size:13px;
 flex:none;padding-bottom:4px;border-bottom:1px solid #ddd}
.ssa-steps .bar input[type=range]{flex:1 1 200px}
.ssa-steps .folded{font-size:12px;color:#666;flex:none;margin:2px 0}
.ssa-steps .main{display:flex;gap:8px;flex:1 1 0;min-height:0}
.ssa-steps .steplist{flex:0 0 30%;overflow:auto;margin:0;padding:0;list-style:none;
 font-size:12px;border-right:1px solid #ddd}
.ssa-steps .steplist li{cursor:pointer;padding:1px 4px;white-space:nowrap}
.ssa-steps .steplist li.sccp,.ssa-steps .steplist li.rewrite{padding-left:18px;color:#335}
.ssa-steps .steplist li.unchanged{color:#999}
.ssa-steps .steplist li.current{background:#ffe066;outline:1px solid #d00}
.ssa-steps .steplist .count{color:#080}
.ssa-steps .steplist .count b{color:#b00;font-weight:normal}
.ssa-steps .right{flex:1 1 0;min-width:0;display:flex;flex-direction:column}
.ssa-steps .title{font-weight:bold;font-size:13px;flex:none}
.ssa-steps .note{font-size:12px;color:#a60;flex:none}
.ssa-steps .view{flex:1 1 0;overflow:auto;font-family:monospace;font-size:12px;
 white-space:pre;border-top:1px solid #ddd;margin-top:4px}
.ssa-steps .view>div{min-height:1.2em;display:block;min-width:max-content}
.ssa-steps .view .add{background:#d8f5d0}
.ssa-steps .view .del{background:#fbd9d9;text-decoration:line-through;color:#822}
.ssa-steps .view .cut{color:#888;font-style:italic;background:#f4f4f4}
.ssa-steps .view .tag{color:#888;display:inline-block;width:1.5em}
"""

_SCRIPT = """
(function(root){
  var data=JSON.parse(root.querySelector('script.steps-data').textContent);
  var list=root.querySelector('.steplist'), view=root.querySelector('.view');
  var slider=root.querySelector('input[type=range]'), same=root.querySelector('input.show-same');
  var fine=root.querySelector('input.show-fine'), asText=root.querySelector('input.astext');
  var cur=0, items=[];
  data.forEach(function(s,i){
    var li=document.createElement('li');
    li.setAttribute('data-step',i);
    li.className=s.kind+(s.changed?'':' unchanged');
    var count=s.kind==='start'?'':' <span class="count">+'+s.added+' <b>-'+s.removed+'</b></span>';
    li.innerHTML=esc(s.title)+count;
    li.addEventListener('click',function(){go(i);});
    list.appendChild(li); items.push(li);
  });
  function esc(t){return t.replace(/&/g,'&amp;').replace(/</g,'&lt;').replace(/>/g,'&gt;');}
  function shown(i){
    var s=data[i];
    if(s.kind==='start'){return true;}
    if(s.kind!=='pass'){return fine.checked&&(s.changed||same.checked)&&shown(s.parent);}
    return s.changed||same.checked;
  }
  function order(){var o=[]; for(var i=0;i<data.length;i++){if(shown(i)){o.push(i);}} return o;}
  function refresh(){
    var o=order();
    items.forEach(function(li,i){li.style.display=shown(i)?'':'none';});
    slider.max=o.length-1;
    if(!shown(cur)){var k=0; while(k<o.length-1&&o[k+1]<=cur){k++;} cur=o[k];}
    go(cur);
  }
  function go(i){
    cur=i; var s=data[i], o=order();
    items.forEach(function(li){li.classList.remove('current');});
    items[i].classList.add('current');
    var li=items[i], lb=list.getBoundingClientRect(), r=li.getBoundingClientRect();
    if(r.top<lb.top||r.bottom>lb.bottom){list.scrollTop+=r.top-lb.top-list.clientHeight/3;}
    slider.value=Math.max(0,o.indexOf(i));
    root.querySelector('.title').textContent=(o.indexOf(i)+1)+'/'+o.length+'  '+s.title
      +(s.kind==='start'?'':'  (+'+s.added+' -'+s.removed+')')+'  as '+s.shown_as;
    root.querySelector('.note').textContent=s.note||(s.changed?'':'this step changed nothing');
    var html=[], first=-1;
    s.diff.forEach(function(d,k){
      if(asText.checked&&d[0]==='-'){return;}
      if(d[0]==='='){html.push('<div class="cut">\u22ef '+esc(d[1])+'</div>'); return;}
      var cls=asText.checked||d[0]===' '?'same':(d[0]==='+'?'add':'del');
      if(first<0&&cls!=='same'){first=html.length;}
      html.push('<div class="'+cls+'"><span class="tag">'+(cls==='same'?' ':d[0])+'</span>'
                +esc(d[1])+'</div>');
    });
    view.innerHTML=html.join('');
    if(first>=0){var el=view.children[first];
      view.scrollTop=Math.max(0,el.offsetTop-view.offsetTop-view.clientHeight/3);}
    else{view.scrollTop=0;}
  }
  function step(d){
    var o=order(), k=o.indexOf(cur);
    if(k<0){k=0;}
    k=Math.min(o.length-1,Math.max(0,k+d)); go(o[k]);
  }
  root.querySelector('button.prev').addEventListener('click',function(){step(-1);});
  root.querySelector('button.next').addEventListener('click',function(){step(1);});
  slider.addEventListener('input',function(){go(order()[+slider.value]);});
  [same,fine].forEach(function(c){c.addEventListener('change',refresh);});
  asText.addEventListener('change',function(){go(cur);});
  root.addEventListener('keydown',function(ev){
    if(ev.key==='ArrowRight'||ev.key==='ArrowDown'){step(1); ev.preventDefault();}
    if(ev.key==='ArrowLeft'||ev.key==='ArrowUp'){step(-1); ev.preventDefault();}
  });
  root.ssaGo=go; root.ssaStep=step;
  refresh();
})(document.currentScript.previousElementSibling);
"""


def steps_html(steps: list[Step], title: str, pipeline: list[str] | tuple[str, ...]) -> str:
    """The step-through viewer of ``steps`` (a fragment: a ``<div>`` and its script)."""
    folded = [s.title for s in steps if s.kind == "pass" and not s.changed]
    data = json.dumps(as_data(steps), separators=(",", ":")).replace("</", "<\\/")
    fine = sum(1 for s in steps if s.kind in ("sccp", "rewrite"))
    note = (f"{len(folded)} pass{'es' if len(folded) != 1 else ''} changed nothing "
            f"(folded away): {', '.join(folded)}" if folded else "every pass changed something")
    return (
        f"<style>{_STYLE}</style>"
        f'<div class="ssa-steps" tabindex="0">'
        f'<div class="bar"><b>{html.escape(title)}</b>'
        f'<span>{html.escape(" → ".join(pipeline))}</span>'
        '<button class="prev" title="previous step (left arrow)">&#9664; prev</button>'
        '<input type="range" min="0" max="0" value="0">'
        '<button class="next" title="next step (right arrow)">next &#9654;</button>'
        '<label><input type="checkbox" class="show-same"> unchanged passes</label>'
        f'<label><input type="checkbox" class="show-fine"> rewrites ({fine})</label>'
        '<label><input type="checkbox" class="astext"> text (no diff)</label></div>'
        f'<div class="folded">{html.escape(note)}</div>'
        '<div class="main"><ul class="steplist"></ul>'
        '<div class="right"><div class="title"></div><div class="note"></div>'
        '<div class="view"></div></div></div>'
        f'<script type="application/json" class="steps-data">{data}</script></div>'
        f"<script>{_SCRIPT}</script>")


def steps_page(comp: Compilation, names: list[str] | tuple[str, ...],
               emit: str | None = None, rewrites: bool = True) -> str:
    """A whole HTML document: the program after each pass of ``names`` (``opt --format
    html``)."""
    steps = pipeline_steps(comp, names, emit, rewrites)
    name = os.path.basename(comp.filename)
    title = html.escape(f"{name}: opt -p {','.join(names)}")
    return (f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{title}</title>'
            f"</head><body>{steps_html(steps, name, names)}</body></html>\n")
