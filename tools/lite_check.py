"""Prove the JupyterLite site (``out/lite``, from ``make lite``) in a real browser, offline.

Serves the site on 127.0.0.1 and drives headless Chromium (Debian's ``chromium`` through
Playwright, no browser download) with every other host unresolvable; any request that
leaves 127.0.0.1 is logged and fails the check. Then:

* every lesson runs top to bottom with 0 error outputs and no fallback notices, and its
  drawings are SVG (the WebAssembly Graphviz), never the matplotlib PNG;
* the tour's explorer redraws when its pessimistic/optimistic switch is flipped;
* exercise 01 is answered (the solution typed into its cells) and its checks pass in the
  kernel, and the page says that such a check is practice, not grading.

Screenshots and a timing table go to ``out/lite-shots/``.

    python tools/lite_check.py [--site out/lite] [--lessons 00,07]   # exit 0 when all pass
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import html
import http.server
import json
import re
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "out" / "lite-shots"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync",
                 "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]
KERNEL_SECONDS = 180  # Pyodide and IPython loading, on a slow shared machine
LESSON_SECONDS = 300  # one lesson, kernel start included, on a slow shared machine
EXERCISE = "01-quads"  # the exercise answered and checked in the browser
# what a lesson must not print: a drawing that fell back, an explorer that failed
# (in any output: printed, HTML or plain text, or drawn by a widget such as the explorer)
BAD_TEXT = ("note: Graphviz", "neither Graphviz nor matplotlib", "internal error",
            "Traceback", "not installed")
# the linked view driven in the tour's page: the magic's own cell (``%%tiny ... --linked``)
# with a drawn representation beside a listing; its HTML must hold a Graphviz SVG
LINKED_SHOW = "quads,cfg"
# a request the check makes itself, from the page and from a web worker (where the kernel
# runs), to prove that the browser is offline and that the log sees both
PROBE_URL = "https://pypi.org/simple/micropip/"


def leaves_site(url: str) -> bool:
    """Would fetching ``url`` leave the site (anything but 127.0.0.1 and in-page data)?"""
    if url.startswith(("data:", "blob:", "about:")):
        return False
    return urlparse(url).hostname != "127.0.0.1"


def one_line(text: str, width: int = 200) -> str:
    """``text`` as one line of at most ``width`` characters (for a problem report)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 3] + "..."


_TAG = re.compile(r"<[^>]*>")


def excerpt(text: str, bad: str, width: int = 120) -> str:
    """One line of ``text`` (HTML tags dropped) around its first ``bad``."""
    flat = " ".join(html.unescape(_TAG.sub(" ", text)).split())
    at = flat.find(bad)
    if at < 0:
        return one_line(text, width)
    start = max(0, at - (width - len(bad)) // 2)
    return one_line(flat[start:start + width], width)


def judge(name: str, cells: list[dict]) -> tuple[list[str], int]:
    """The problems of a notebook's cells (as :data:`STATE_JS` reports them) and how many
    SVG drawings they show: error outputs, text in :data:`BAD_TEXT`, PNG drawings."""
    outs = [o for c in cells for o in c["outs"]]
    problems = [f"{name}: error output: {one_line(o['text'])}" for o in outs
                if o["type"] == "error"]
    problems += [f"{name}: printed {one_line(o['text'])!r}" for o in outs
                 if o["type"] == "stream" and any(t in o["text"] for t in BAD_TEXT)]
    for c in cells:  # rich outputs (HTML, plain text), then what the page shows of them
        said = [o["text"] for o in c["outs"] if o["type"] not in ("stream", "error")]
        found = [f"{name}: shows {excerpt(t, bad)!r}" for t in said
                 for bad in BAD_TEXT if bad in t]
        shown = c.get("shown", "")
        if not found and not any(bad in o["text"] for o in c["outs"] for bad in BAD_TEXT):
            found = [f"{name}: shows {excerpt(shown, bad)!r}" for bad in BAD_TEXT
                     if bad in shown]
        problems += found
    pngs = sum("image/png" in o["mimes"] for o in outs)
    if pngs:
        problems.append(f"{name}: {pngs} drawings are PNG (not the SVG of Graphviz)")
    if not cells or any(c["count"] is None for c in cells):
        ran = sum(c["count"] is not None for c in cells)
        problems.append(f"{name}: only {ran} of {len(cells)} code cells ran")
    return problems, sum("image/svg+xml" in o["mimes"] for o in outs)


_LAB_PATH = re.compile(r'href="lab/index\.html\?path=([^"#&]+)"')


def start_links(page_html: str) -> list[str]:
    """The notebooks the start page links to (contents paths such as
    ``notebooks/00-tour.ipynb``), in page order."""
    return [html.unescape(p) for p in _LAB_PATH.findall(page_html)]


def judge_start(page_html: str, site: Path) -> list[str]:
    """The start page's problems: no link to the tour (``id="tour"``) or to an exercise, or
    a link to a notebook the site does not have (``files/<path>``)."""
    links = start_links(page_html)
    problems = []
    if not re.search(r'<a [^>]*id="tour"[^>]*\?path=notebooks/00-tour\.ipynb"', page_html) \
            and not re.search(r'<a [^>]*\?path=notebooks/00-tour\.ipynb"[^>]*id="tour"',
                              page_html):
        problems.append("start page: no 'tour' link to notebooks/00-tour.ipynb")
    if not any(p.startswith("exercises/") for p in links):
        problems.append("start page: no link to an exercise")
    problems += [f"start page: links to {p}, which the site does not have"
                 for p in dict.fromkeys(links) if not (site / "files" / p).is_file()]
    return problems


def linked_cells(source: str) -> list[str]:
    """The two cells the check adds to the tour: load the magic, then a linked view of
    ``source`` (Tiny) with a listing and a drawing."""
    return ["%load_ext ssa_course", f"%%tiny --show {LINKED_SHOW} --linked\n{source}"]


def judge_linked(found: dict) -> list[str]:
    """The linked view's problems, from :data:`LINKED_JS`'s report: no linked page, no
    Graphviz SVG in it (a drawing has ``g.node`` groups), or text of :data:`BAD_TEXT`."""
    problems = []
    if not found.get("linked"):
        problems.append("linked view: no linked page in the output "
                        f"({one_line(found.get('text', ''), 120)!r})")
    elif not found.get("nodes"):
        problems.append(f"linked view: {found.get('svgs', 0)} SVGs and no drawn node "
                        "(no Graphviz drawing)")
    problems += [f"linked view: shows {excerpt(found.get('text', ''), bad)!r}"
                 for bad in BAD_TEXT if bad in found.get("text", "")]
    return problems


def report(problems: list[str], notebooks: list[str]) -> list[str]:
    """The closing lines: per notebook with a problem, one line with its first problem
    (and how many more), then any problem that names no notebook."""
    lines = []
    for name in notebooks:
        mine = [p for p in problems if p.startswith(f"{name}: ")]
        if mine:
            more = f" (+{len(mine) - 1} more above)" if len(mine) > 1 else ""
            lines.append(f"FAIL {mine[0]}{more}")
    lines += [f"FAIL {p}" for p in problems
              if not any(p.startswith(f"{n}: ") for n in notebooks)]
    return lines

# JavaScript run in the page (window.jupyterapp: exposeAppInBrowser in jupyter-lite.json)
NOTEBOOK = "window.jupyterapp?.shell.currentWidget"
STATE_JS = """() => {
  const panel = PANEL;
  if (!panel || !panel.content || !panel.content.model) return null;
  const cells = [];
  const text = (v) => v === undefined ? '' : Array.isArray(v) ? v.join('') : String(v);
  const models = panel.content.model.cells;
  for (let j = 0; j < models.length; j++) {
    const cell = models.get(j);
    if (cell.type !== 'code') continue;
    const outs = [];
    for (let i = 0; i < cell.outputs.length; i++) {
      const o = cell.outputs.get(i).toJSON();
      const data = o.data || {};
      outs.push({type: o.output_type, mimes: Object.keys(data),
                 text: o.output_type === 'stream' ? String(o.text) :
                       o.output_type === 'error' ? o.ename + ': ' + o.evalue :
                       text(data['text/html']) + '\\n' + text(data['text/plain'])});
    }
    // what the page shows of the outputs, widgets (the explorer's panel) included
    const view = panel.content.widgets[j];
    const area = view && view.outputArea ? view.outputArea.node : null;
    cells.push({count: cell.executionCount, outs: outs,
                shown: area ? area.innerText || '' : ''});
  }
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  return {cells: cells, status: kernel ? kernel.status : 'none'};
}""".replace("PANEL", NOTEBOOK)


# the explorer's drawing: the largest SVG in the first panel (the legend's swatches are
# small SVGs too, and they stay the same when the drawing changes)
PICTURE_JS = """() => {
  const panel = document.querySelector('.widget-vbox');
  let best = '';
  for (const svg of panel ? panel.querySelectorAll('.widget-html svg') : []) {
    if (svg.innerHTML.length > best.length) best = svg.innerHTML;
  }
  return best;
}"""

# forget the workspace earlier pages left in this browser (JupyterLite keeps it, with the
# contents a page saved, in IndexedDB): a lesson opens as it would for a learner who opens
# only it. Local storage stays: it holds the service worker's version, and without it the
# next page unregisters the service worker, whose kernel then cannot read the site's files
CLEAR_JS = """async () => {
  const dbs = await indexedDB.databases();
  await Promise.all(dbs.map(d => new Promise(done => {
    const q = indexedDB.deleteDatabase(d.name);
    q.onsuccess = q.onerror = q.onblocked = () => done(); })));
  return dbs.length;
}"""

# close every main-area widget but notebook ``path`` and shut down the other kernels
CLOSE_OTHERS_JS = """async (path) => {
  const app = window.jupyterapp;
  for (const w of Array.from(app.shell.widgets('main'))) {
    if (w.context && w.context.path === path) app.shell.activateById(w.id);
    else w.dispose();
  }
  const sessions = app.serviceManager.sessions;
  await sessions.refreshRunning();
  for (const s of Array.from(sessions.running())) {
    if (s.path !== path) await sessions.shutdown(s.id);
  }
}"""


# add cells at the end of the notebook and run them one by one; the last one's index
ADD_AND_RUN_JS = """async (sources) => {
  const panel = PANEL;
  const nb = panel.content;
  const n = nb.model.cells.length;
  sources.forEach((s, i) => nb.model.sharedModel.insertCell(n + i, {cell_type: 'code', source: s}));
  for (let i = 0; i < sources.length; i++) {
    nb.activeCellIndex = n + i;
    await window.jupyterapp.commands.execute('notebook:run-cell');
  }
  return n + sources.length - 1;
}""".replace("PANEL", NOTEBOOK)

# what cell ``index`` shows of a linked view (the page lives in an ipywidgets Output)
LINKED_JS = """(index) => {
  const view = PANEL.content.widgets[index];
  const node = view && view.outputArea ? view.outputArea.node : null;
  const root = node ? node.querySelector('.ssa-linked') : null;
  return {count: view ? view.model.executionCount : null, linked: !!root,
          svgs: root ? root.querySelectorAll('svg').length : 0,
          nodes: root ? root.querySelectorAll('svg g.node').length : 0,
          text: node ? node.innerText || '' : ''};
}""".replace("PANEL", NOTEBOOK)


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".mjs": "text/javascript", ".js": "text/javascript",
                      ".wasm": "application/wasm", ".json": "application/json",
                      ".whl": "application/zip"}

    def log_message(self, *args) -> None:
        pass

    def handle(self) -> None:
        with contextlib.suppress(ConnectionError):  # a page closed mid-download
            super().handle()


def serve(site: Path) -> tuple[http.server.ThreadingHTTPServer, int]:
    handler = functools.partial(QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.server_address[1]


class Check:
    """One browser, one page per notebook; problems and timings are collected."""

    def __init__(self, context, base: str):
        self.context = context
        self.base = base
        self.problems: list[str] = []
        self.offsite: list[str] = []
        self.timings: list[tuple[str, float, float, float, int]] = []
        self.kernel_ready = 0.0
        context.on("request", self._request)

    def _request(self, request) -> None:
        if leaves_site(request.url):
            self.offsite.append(request.url)

    def step(self, name: str, action, *args) -> None:
        """Run one notebook's check; a timeout or a crashed page is that notebook's problem
        (one line), and the others still run."""
        try:
            action(*args)
        except Exception as e:  # any failure is reported, and the others go on
            self.problems.append(f"{name}: {type(e).__name__}: {one_line(str(e))}")

    def offline_probe(self) -> None:
        """Fetch :data:`PROBE_URL` from a page and from a web worker: both must fail, and
        both must be in the request log (else an escape could go unseen)."""
        page = self.context.new_page()
        try:
            page.goto(f"{self.base}lab/index.html")
            results = page.evaluate("""async (url) => {
              const get = async () => { try { await fetch(url); return 'fetched'; }
                                        catch (e) { return 'failed'; } };
              const code = `fetch(${JSON.stringify(url)}).then(() => postMessage('fetched'),
                                                           () => postMessage('failed'))`;
              const worker = new Worker(URL.createObjectURL(new Blob([code])));
              const fromWorker = await new Promise(r => { worker.onmessage = e => r(e.data); });
              worker.terminate();
              return [await get(), fromWorker]; }""", PROBE_URL)
        finally:
            page.close()
        seen = self.offsite.count(PROBE_URL)
        self.offsite = [u for u in self.offsite if u != PROBE_URL]
        if results != ["failed", "failed"]:
            self.problems.append(f"offline: {PROBE_URL} was fetched (page, worker: "
                                 f"{results}): this browser is not offline")
        elif seen < 2:
            self.problems.append(f"offline: the request log saw {seen} of the 2 probes to "
                                 f"{PROBE_URL}: requests could leave unseen")
        else:
            print("lite check: offline: the probe to another host failed from the page and "
                  "from a worker, and both were logged", flush=True)

    def start_page(self, site: Path) -> None:
        """The site's front page: it links to the tour and the exercises, every link names a
        notebook the site has (and serves), and following the tour's opens it in Lab."""
        page = self.context.new_page()
        try:
            page.goto(self.base)
            text = page.content()
            problems = judge_start(text, site)
            for path in dict.fromkeys(start_links(text)):
                status = page.request.get(f"{self.base}files/{path}").status
                if status != 200:
                    problems.append(f"start page: files/{path} answered {status}")
            if not problems:
                page.click("#tour")
                page.wait_for_function(f"{NOTEBOOK}?.context?.path === "
                                       "'notebooks/00-tour.ipynb'", timeout=120_000)
                # and its kernel starts: a JupyterLab page closed sooner can leave the
                # service worker half re-registered, and the next page's kernel then
                # cannot read the site's files (lesson 08's ../Makefile was not found)
                page.wait_for_function(f"{NOTEBOOK}?.sessionContext?.session?.kernel?.status "
                                       "=== 'idle'", timeout=KERNEL_SECONDS * 1000)
            self.problems += problems
            print(f"lite check: start page: {'ok' if not problems else 'FAIL'}, "
                  f"{len(start_links(text))} notebooks linked, the tour link opens the tour "
                  "and its kernel starts",
                  flush=True)
        finally:
            page.close()

    def linked(self, page) -> None:
        """In the tour's page: a ``%%tiny --show quads,cfg --linked`` cell shows the linked
        page, with its drawing in SVG (viz.js) and no notice."""
        source = (ROOT / "examples" / "sum.tiny").read_text()
        index = page.evaluate(ADD_AND_RUN_JS, linked_cells(source))
        page.wait_for_function(f"(i) => {{ const f = ({LINKED_JS})(i); "
                               "return f.count !== null && (f.nodes > 0 || f.text); }",
                               arg=index, timeout=60_000)
        time.sleep(0.5)  # (the widget may still be filling in)
        found = page.evaluate(LINKED_JS, index)
        problems = judge_linked(found)
        self.problems += [f"00-tour: {p}" for p in problems]
        page.screenshot(path=str(SHOTS / "linked.png"))
        print(f"lite check: linked view: {'ok' if not problems else 'FAIL'}, "
              f"{found['svgs']} SVGs, {found['nodes']} drawn nodes", flush=True)

    def forget(self) -> None:
        """Drop what earlier pages stored in the browser (:data:`CLEAR_JS`), from a page of
        the site that is not JupyterLab (so no connection keeps a database open)."""
        page = self.context.new_page()
        try:
            page.goto(f"{self.base}jupyter-lite.json")
            page.evaluate(CLEAR_JS)
        finally:
            page.close()

    def open(self, path: str):
        """A new page with notebook ``path`` open and its kernel started. The workspace
        earlier pages left in the browser is forgotten first (it would reopen their
        notebooks, each starting a kernel of its own, while this one's is timed); any
        notebook the page still restores is closed and its kernel shut down."""
        self.forget()
        page = self.context.new_page()
        started = time.monotonic()
        page.goto(f"{self.base}lab/index.html?path={path}")
        # (optional chaining: a predicate that throws ends the wait at once)
        page.wait_for_function(f"{NOTEBOOK}?.context?.path === {json.dumps(path)} && "
                               f"!!{NOTEBOOK}.content", timeout=120_000)
        page.evaluate(CLOSE_OTHERS_JS, path)
        page.wait_for_function(f"{NOTEBOOK}?.context?.path === {json.dumps(path)} && "
                               f"{NOTEBOOK}.sessionContext?.isReady", timeout=120_000)
        # the kernel has started when it reports idle (Pyodide and IPython loaded)
        page.wait_for_function(f"{NOTEBOOK}?.sessionContext?.session?.kernel?.status "
                               "=== 'idle'", timeout=KERNEL_SECONDS * 1000)
        self.kernel_ready = time.monotonic() - started  # page opened -> kernel idle
        return page

    def run_all(self, page, name: str) -> tuple[dict, float, float]:
        """Run every cell; (final state, seconds to the first lesson output, seconds)."""
        started = time.monotonic()
        page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
        first = None
        deadline = started + LESSON_SECONDS
        while True:
            state = page.evaluate(STATE_JS) or {"cells": [], "status": "none"}
            cells = state["cells"]
            if first is None and any(c["outs"] for c in cells[1:]):
                first = time.monotonic() - started
            if cells and all(c["count"] is not None for c in cells) and \
                    state["status"] == "idle":
                break
            if any(o["type"] == "error" for c in cells for o in c["outs"]):
                time.sleep(1.0)
                state = page.evaluate(STATE_JS) or state
                break
            if time.monotonic() > deadline:
                self.problems.append(f"{name}: not done after {LESSON_SECONDS} s")
                break
            time.sleep(0.5)
        return state, first or 0.0, time.monotonic() - started

    def lesson(self, path: str) -> None:
        name = Path(path).stem
        page = self.open(path)
        try:
            state, first, took = self.run_all(page, name)
            problems, svgs = judge(name, state["cells"])
            self.problems += problems
            self.timings.append((name, self.kernel_ready, first, took, svgs))
            print(f"lite check: {name}: {'ok' if not problems else 'FAIL'}, "
                  f"{len(problems)} problems, {svgs} SVG drawings, kernel ready "
                  f"{self.kernel_ready:.1f} s, first output {first:.1f} s after run-all, "
                  f"all cells {took:.1f} s", flush=True)
            page.screenshot(path=str(SHOTS / f"{name}.png"))
            if name == "00-tour":
                self.step(f"{name}", self.explorer, page)
                self.step(f"{name}", self.linked, page)
        finally:
            page.close()

    def explorer(self, page) -> None:
        """The tour's explore() panel: flipping pessimistic/optimistic redraws."""
        panel = page.locator(".widget-vbox").first
        panel.scroll_into_view_if_needed()
        page.wait_for_function(f"() => ({PICTURE_JS})().length > 0", timeout=30_000)
        before = page.evaluate(PICTURE_JS)
        panel.screenshot(path=str(SHOTS / "explore-pessimistic.png"))
        panel.locator("button", has_text="optimistic").first.click()
        page.wait_for_function(f"(b) => {{ const s = ({PICTURE_JS})(); "
                               "return s.length > 0 && s !== b; }", arg=before,
                               timeout=30_000)
        panel.screenshot(path=str(SHOTS / "explore-optimistic.png"))
        stats = panel.locator(".widget-html").first.inner_text()
        if "optimistic" not in stats:
            self.problems.append(f"explorer: the stats line did not follow: {stats!r}")
        print("lite check: explorer redrew on the pessimistic/optimistic switch", flush=True)

    def exercise(self, name: str = EXERCISE) -> None:
        """Answer exercise ``name`` with the solutions' code and run its checks."""
        label = f"exercise-{name}"
        solution = json.loads((ROOT / "solutions" / f"{name}.ipynb").read_text())
        answers = {c["metadata"]["nbgrader"]["grade_id"]: "".join(c["source"])
                   for c in solution["cells"]
                   if c["metadata"].get("nbgrader", {}).get("solution")}
        page = self.open(f"exercises/{name}.ipynb")
        try:
            sources = page.evaluate("() => Array.from(PANEL.content.model.cells)"
                                    ".map(c => c.sharedModel.getSource())"
                                    .replace("PANEL", NOTEBOOK))
            if not any("practice, not grading" in text for text in sources[:3]):
                self.problems.append(f"{label}: no 'practice, not grading' note")
            typed = page.evaluate("""(answers) => {
              let n = 0;
              for (const cell of PANEL.content.model.cells) {
                const id = ((cell.getMetadata('nbgrader') || {}).grade_id);
                if (id in answers) { cell.sharedModel.setSource(answers[id]); n++; }
              }
              return n; }""".replace("PANEL", NOTEBOOK), answers)
            if typed != len(answers) or not answers:
                self.problems.append(f"{label}: typed {typed} of {len(answers)} answers")
            state, first, took = self.run_all(page, label)
            problems, svgs = judge(label, state["cells"])
            self.problems += problems
            self.timings.append((label, self.kernel_ready, first, took, svgs))
            page.screenshot(path=str(SHOTS / f"{label}.png"))
            failed = any(p.startswith(f"{label}: ") for p in self.problems)
            print(f"lite check: {label}: {'FAIL' if failed else 'ok'}, {typed} answers "
                  f"typed, {len(problems)} problems (failed checks), all cells {took:.1f} s",
                  flush=True)
        finally:
            page.close()


def timing_table(timings: list[tuple[str, float, float, float, int]]) -> str:
    """The Markdown table of ``out/lite-shots/timings.md``."""
    rows = ["| notebook | kernel ready (s) | first output after run-all (s) | "
            "page opened to first output (s) | all cells (s) | SVG drawings |",
            "|---|---:|---:|---:|---:|---:|"]
    rows += [f"| {n} | {k:.1f} | {f:.1f} | {k + f:.1f} | {t:.1f} | {s} |"
             for n, k, f, t, s in timings]
    return "\n".join(rows) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=ROOT / "out" / "lite")
    parser.add_argument("--lessons", default="", help="e.g. 00,07 (default: all)")
    args = parser.parse_args()
    if not (args.site / "jupyter-lite.json").exists():
        print(f"error: no site in {args.site}: run 'make lite' first", file=sys.stderr)
        return 2
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("error: no chromium on PATH (apt-get install chromium)", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    wanted = [p for p in args.lessons.split(",") if p]
    lessons = [f"notebooks/{p.name}" for p in sorted((args.site / "files" / "notebooks")
                                                       .glob("*.ipynb"))
               if not wanted or p.name[:2] in wanted]
    if not lessons:
        print(f"error: no lessons {args.lessons or ''} in {args.site}", file=sys.stderr)
        return 2
    names = [Path(p).stem for p in lessons] + [f"exercise-{EXERCISE}"]
    SHOTS.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    server, port = serve(args.site)
    try:
        with sync_playwright() as p, \
                tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as profile:
            context = p.chromium.launch_persistent_context(
                profile, executable_path=chromium, headless=True, args=CHROMIUM_ARGS,
                viewport={"width": 1400, "height": 1000})
            check = Check(context, f"http://127.0.0.1:{port}/")
            check.step("offline", check.offline_probe)
            check.step("start page", check.start_page, args.site)
            for path in lessons:
                check.step(Path(path).stem, check.lesson, path)
            check.step(names[-1], check.exercise)
            context.close()
    finally:
        server.shutdown()
    (SHOTS / "timings.md").write_text(timing_table(check.timings))
    (SHOTS / "offsite-requests.txt").write_text("".join(u + "\n" for u in check.offsite))
    if check.offsite:
        check.problems.append(f"offline: {len(check.offsite)} requests left 127.0.0.1, "
                              f"first {check.offsite[0]} (all in out/lite-shots/)")
    took = time.monotonic() - started
    if check.problems:
        for problem in check.problems:
            print(f"lite check: {problem}")
        for line in report(check.problems, names):
            print(f"lite check: {line}", file=sys.stderr)
        print(f"lite check: FAILED ({len(check.problems)} problems; {took:.0f} s)",
              file=sys.stderr)
        return 1
    print(f"lite check: ok, offline: {len(lessons)} lessons and exercise {EXERCISE}, 0 "
          f"errors, in {took:.0f} s (screenshots and timings in {SHOTS.relative_to(ROOT)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
