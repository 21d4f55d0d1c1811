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

    def open(self, path: str):
        """A new page with notebook ``path`` open and its kernel started. The page restores
        the notebooks an earlier page left open (the workspace is kept in the browser),
        each with a kernel: they are closed and their kernels shut down first."""
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
