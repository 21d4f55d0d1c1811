"""Drive the tour's explorer in a real browser (headless Chromium) and check it reacts.

Starts JupyterLab on the lessons, opens ``notebooks/00-tour.ipynb``, runs every cell,
finds the ``explore()`` panel, switches its representation, and checks that the picture
changed and that no cell printed a traceback. Screenshots go to ``out/browser/``.

Needs Debian's ``chromium`` (``make browser-test`` installs it when run as root) and the
``playwright`` package (no browser download: it drives the system Chromium).

    python tools/browser_check.py      # exit status 0 when the check passes
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "out" / "browser"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def quiet_lab_settings() -> None:
    """No "news" pop-up covering the page (a setting of this environment's JupyterLab)."""
    settings = Path(sys.prefix) / "share" / "jupyter" / "lab" / "settings"
    settings.mkdir(parents=True, exist_ok=True)
    overrides = settings / "overrides.json"
    data = json.loads(overrides.read_text()) if overrides.exists() else {}
    data["@jupyterlab/apputils-extension:notification"] = {"fetchNews": "false",
                                                           "checkForUpdates": False}
    overrides.write_text(json.dumps(data, indent=2))


def start_lab(port: int, tmp: Path) -> subprocess.Popen:
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(tmp / "cfg"), IPYTHONDIR=str(tmp / "ipy"),
               MPLCONFIGDIR=str(tmp / "mpl"), JUPYTER_RUNTIME_DIR=str(tmp / "run"))
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root",
           f"--port={port}", "--ip=127.0.0.1", "--IdentityProvider.token=",
           f"--ServerApp.root_dir={ROOT}", "--LabApp.expose_app_in_browser=True"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status", timeout=2)
            return proc
        except OSError:
            time.sleep(0.5)
    proc.terminate()
    raise RuntimeError("JupyterLab did not start within 60 s")


def check(port: int) -> list[str]:
    from playwright.sync_api import sync_playwright

    problems: list[str] = []
    OUT.mkdir(parents=True, exist_ok=True)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise RuntimeError("no chromium on PATH (apt-get install chromium)")
    with sync_playwright() as p, tempfile.TemporaryDirectory() as profile:
        browser = p.chromium.launch_persistent_context(
            profile, executable_path=chromium, headless=True, args=CHROMIUM_ARGS,
            viewport={"width": 1400, "height": 1000})
        page = browser.new_page()
        page.goto(f"http://127.0.0.1:{port}/lab/tree/notebooks/00-tour.ipynb")
        page.wait_for_selector(".jp-Notebook", timeout=60_000)
        page.wait_for_function("window.jupyterapp !== undefined", timeout=60_000)
        page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']",
                               timeout=60_000)
        page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
        select = page.wait_for_selector(".widget-dropdown select", timeout=90_000)
        panel = page.locator(".widget-vbox").first
        panel.scroll_into_view_if_needed()
        time.sleep(1.0)
        before = panel.screenshot(path=str(OUT / "explore-before.png"))
        stats_before = panel.locator(".widget-html").first.inner_text()
        # the pessimistic/optimistic switch: SCCP's types, changed nodes highlighted
        panel.locator("button", has_text="optimistic").first.click()
        time.sleep(2.0)
        optimistic = panel.screenshot(path=str(OUT / "explore-optimistic.png"))
        stats_optimistic = panel.locator(".widget-html").first.inner_text()
        if optimistic == before:
            problems.append("switching to optimistic did not change the picture")
        if "son: optimistic" not in stats_optimistic or "SCCP" not in stats_optimistic:
            problems.append(f"the stats line did not follow the mode: {stats_optimistic!r}")
        select.select_option("cfg")
        time.sleep(2.0)
        after = panel.screenshot(path=str(OUT / "explore-after.png"))
        stats_after = panel.locator(".widget-html").first.inner_text()
        if before == after:
            problems.append("switching the representation did not change the picture")
        if "son: pessimistic" not in stats_before or "constants" not in stats_before:
            problems.append(f"the sea-of-nodes stats line is missing: {stats_before!r}")
        if stats_after == stats_before or "cfg:" not in stats_after:
            problems.append(f"the stats line did not follow the switch: {stats_after!r}")
        problems += check_linked_in_notebook(page)
        page.screenshot(path=str(OUT / "tour.png"), full_page=False)
        text = page.inner_text(".jp-Notebook")
        if "Traceback" in text:
            problems.append("a cell printed a traceback")
        page.evaluate("window.jupyterapp.commands.execute('kernelmenu:shutdown')")
        browser.close()
    return problems


def check_linked_in_notebook(page) -> list[str]:
    """The tour's linked view (``ssa_course.linked``, an ipywidgets Output holding the
    page's HTML): a click on a source line marks exactly that line's items in every pane,
    a click on an item lights its source line."""
    from browser_linked import _MISMATCH

    problems: list[str] = []
    try:
        page.wait_for_selector(".ssa-linked [data-pane='source'] [data-line]", timeout=60_000)
    except Exception:
        return ["the tour's linked view did not appear"]
    root = page.locator(".ssa-linked").first
    root.scroll_into_view_if_needed()
    lines = root.locator("[data-pane='source'] [data-line]")
    for k in range(lines.count()):
        n = lines.nth(k).get_attribute("data-line")
        lines.nth(k).click()
        for pane, (unlit, stray, _) in page.evaluate(_MISMATCH, int(n)).items():
            if unlit or stray:
                problems.append(f"notebook, line {n}, pane {pane}: {unlit} items not "
                                f"linked, {stray} others linked")
    item = root.locator("[data-pane='julia'] .item").nth(2)
    line = item.get_attribute("data-line")
    item.click()
    lit = root.locator("[data-pane='source'] .linked")
    if lit.count() != 1 or lit.first.get_attribute("data-line") != line:
        problems.append(f"notebook: clicking a julia item of line {line} did not light it")
    root.screenshot(path=str(OUT / "tour-linked.png"))
    return problems


def main() -> int:
    quiet_lab_settings()
    with tempfile.TemporaryDirectory(prefix="ssa-course-browser-") as tmp_name:
        port = free_port()
        proc = start_lab(port, Path(tmp_name))
        try:
            problems = check(port)
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
    if problems:
        for p in problems:
            print(f"browser check: {p}")
        return 1
    print(f"browser check: ok (screenshots in {OUT.relative_to(ROOT)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
