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
import http.server
import json
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
# what a lesson must not print: a drawing that fell back, an explorer that failed
BAD_TEXT = ("note: Graphviz", "neither Graphviz nor matplotlib", "internal error",
            "Traceback")

# JavaScript run in the page (window.jupyterapp: exposeAppInBrowser in jupyter-lite.json)
NOTEBOOK = "window.jupyterapp.shell.currentWidget"
STATE_JS = """() => {
  const panel = PANEL;
  if (!panel || !panel.content || !panel.content.model) return null;
  const cells = [];
  for (const cell of panel.content.model.cells) {
    if (cell.type !== 'code') continue;
    const outs = [];
    for (let i = 0; i < cell.outputs.length; i++) {
      const o = cell.outputs.get(i).toJSON();
      outs.push({type: o.output_type, mimes: Object.keys(o.data || {}),
                 text: o.output_type === 'stream' ? String(o.text) :
                       o.output_type === 'error' ? o.ename + ': ' + o.evalue : ''});
    }
    cells.push({count: cell.executionCount, outs: outs});
  }
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  return {cells: cells, status: kernel ? kernel.status : 'none'};
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
        host = urlparse(request.url).hostname
        if request.url.startswith(("data:", "blob:")) or host == "127.0.0.1":
            return
        self.offsite.append(request.url)

    def open(self, path: str):
        page = self.context.new_page()
        started = time.monotonic()
        page.goto(f"{self.base}lab/index.html?path={path}")
        page.wait_for_function(f"window.jupyterapp && {NOTEBOOK} && {NOTEBOOK}.content && "
                               f"{NOTEBOOK}.sessionContext.isReady", timeout=120_000)
        # the kernel has started when it reports idle (Pyodide and IPython loaded)
        page.wait_for_function(f"{NOTEBOOK}.sessionContext.session && "
                               f"{NOTEBOOK}.sessionContext.session.kernel && "
                               f"{NOTEBOOK}.sessionContext.session.kernel.status === 'idle'",
                               timeout=KERNEL_SECONDS * 1000)
        self.kernel_ready = time.monotonic() - started  # page opened -> kernel idle
        return page

    def run_all(self, page, name: str) -> tuple[dict, float, float]:
        """Run every cell; (final state, seconds to the first lesson output, seconds)."""
        started = time.monotonic()
        page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
        first = None
        deadline = started + LESSON_SECONDS
        while True:
            state = page.evaluate(STATE_JS)
            cells = state["cells"]
            if first is None and any(c["outs"] for c in cells[1:]):
                first = time.monotonic() - started
            if cells and all(c["count"] is not None for c in cells) and \
                    state["status"] == "idle":
                break
            if any(o["type"] == "error" for c in cells for o in c["outs"]):
                time.sleep(1.0)
                state = page.evaluate(STATE_JS)
                break
            if time.monotonic() > deadline:
                self.problems.append(f"{name}: not done after {LESSON_SECONDS} s")
                break
            time.sleep(0.5)
        return state, first or 0.0, time.monotonic() - started

    def lesson(self, path: str) -> None:
        name = Path(path).stem
        page = self.open(path)
        state, first, took = self.run_all(page, name)
        outs = [o for c in state["cells"] for o in c["outs"]]
        errors = [o["text"] for o in outs if o["type"] == "error"]
        bad = [o["text"].strip() for o in outs for t in BAD_TEXT if t in o["text"]]
        svgs = sum("image/svg+xml" in o["mimes"] for o in outs)
        pngs = sum("image/png" in o["mimes"] for o in outs)
        for text in errors[:3]:
            self.problems.append(f"{name}: error output: {text[:300]}")
        for text in bad[:3]:
            self.problems.append(f"{name}: printed {text[:300]!r}")
        if pngs:
            self.problems.append(f"{name}: {pngs} drawings are PNG (not the SVG of Graphviz)")
        self.timings.append((name, self.kernel_ready, first, took, svgs))
        print(f"lite check: {name}: {len(errors)} errors, {svgs} SVG drawings, kernel "
              f"ready {self.kernel_ready:.1f} s, first output {first:.1f} s, all cells "
              f"{took:.1f} s", flush=True)
        page.screenshot(path=str(SHOTS / f"{name}.png"))
        if name == "00-tour":
            self.explorer(page)
        page.close()

    def explorer(self, page) -> None:
        """The tour's explore() panel: flipping pessimistic/optimistic redraws."""
        panel = page.locator(".widget-vbox").first
        panel.scroll_into_view_if_needed()
        html_of = "(el) => el.innerHTML"
        picture = panel.locator(".widget-html svg").first
        picture.wait_for(timeout=30_000)
        before = picture.evaluate(html_of)
        panel.screenshot(path=str(SHOTS / "explore-pessimistic.png"))
        panel.locator("button", has_text="optimistic").first.click()
        page.wait_for_function(
            "(b) => { const s = document.querySelector('.widget-vbox .widget-html svg');"
            " return s && s.innerHTML !== b; }", arg=before, timeout=30_000)
        panel.screenshot(path=str(SHOTS / "explore-optimistic.png"))
        stats = panel.locator(".widget-html").first.inner_text()
        if "optimistic" not in stats:
            self.problems.append(f"explorer: the stats line did not follow: {stats!r}")
        print("lite check: explorer redrew on the pessimistic/optimistic switch", flush=True)

    def exercise(self, name: str = "01-quads") -> None:
        """Answer exercise ``name`` with the solutions' code and run its checks."""
        solution = json.loads((ROOT / "solutions" / f"{name}.ipynb").read_text())
        answers = {c["metadata"]["nbgrader"]["grade_id"]: "".join(c["source"])
                   for c in solution["cells"]
                   if c["metadata"].get("nbgrader", {}).get("solution")}
        page = self.open(f"exercises/{name}.ipynb")
        sources = page.evaluate("() => Array.from(PANEL.content.model.cells)"
                                ".map(c => c.sharedModel.getSource())".replace("PANEL", NOTEBOOK))
        if not any("practice, not grading" in text for text in sources[:3]):
            self.problems.append(f"exercise {name}: no 'practice, not grading' note")
        typed = page.evaluate("""(answers) => {
          let n = 0;
          for (const cell of PANEL.content.model.cells) {
            const id = ((cell.getMetadata('nbgrader') || {}).grade_id);
            if (id in answers) { cell.sharedModel.setSource(answers[id]); n++; }
          }
          return n; }""".replace("PANEL", NOTEBOOK), answers)
        state, _, took = self.run_all(page, f"exercise {name}")
        outs = [o for c in state["cells"] for o in c["outs"]]
        errors = [o["text"] for o in outs if o["type"] == "error"]
        if typed != len(answers) or not answers:
            self.problems.append(f"exercise {name}: typed {typed} of {len(answers)} answers")
        for text in errors[:3]:
            self.problems.append(f"exercise {name}: a check failed: {text[:300]}")
        page.screenshot(path=str(SHOTS / f"exercise-{name}.png"))
        print(f"lite check: exercise {name}: {typed} answers typed, {len(errors)} failed "
              f"checks, {took:.1f} s", flush=True)
        page.close()


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
    SHOTS.mkdir(parents=True, exist_ok=True)
    server, port = serve(args.site)
    try:
        with sync_playwright() as p, \
                tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as profile:
            context = p.chromium.launch_persistent_context(
                profile, executable_path=chromium, headless=True, args=CHROMIUM_ARGS,
                viewport={"width": 1400, "height": 1000})
            check = Check(context, f"http://127.0.0.1:{port}/")
            for path in lessons:
                check.lesson(path)
            check.exercise()
            context.close()
    finally:
        server.shutdown()
    table = ["| notebook | kernel ready (s) | first output (s) | all cells (s) | SVG drawings |",
             "|---|---:|---:|---:|---:|"]
    table += [f"| {n} | {k:.1f} | {f:.1f} | {t:.1f} | {s} |"
              for n, k, f, t, s in check.timings]
    (SHOTS / "timings.md").write_text("\n".join(table) + "\n")
    (SHOTS / "offsite-requests.txt").write_text("".join(u + "\n" for u in check.offsite))
    if check.offsite:
        check.problems.append(f"{len(check.offsite)} requests left 127.0.0.1, first "
                              f"{check.offsite[0]} (all in out/lite-shots/)")
    for problem in check.problems:
        print(f"lite check: {problem}")
    if check.problems:
        return 1
    print(f"lite check: ok, offline ({len(lessons)} lessons and an exercise; screenshots "
          f"and timings in {SHOTS.relative_to(ROOT)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
