"""Drive the tour's explorer in a real browser (headless Chromium) and check it reacts.

Starts JupyterLab on a copy of the lessons (autosave never touches the stored notebooks),
opens ``notebooks/00-tour.ipynb``, runs every cell,
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
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "out" / "browser"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]


class Failure(Exception):
    """A step that did not happen in time: one line saying which (``main`` prints it)."""


# Bounded waits, generous for a loaded machine (JupyterLab, a kernel and Chromium share
# two cores with whatever else runs): each step has its own, and the whole check has
# WATCHDOG seconds before it stops with one line instead of hanging.
LOAD, RUN_START, RUN_ALL, REACT = 120, 60, 420, 60
WATCHDOG = 900


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def lab_settings(settings_dir: Path) -> None:
    """This run's JupyterLab settings (its own directory, the environment's untouched):
    no "news" pop-up covering the page, every cell of the notebook kept in the page (no
    windowing: the check looks for the explorer wherever it is), and the notebook's own
    kernel started without asking (a slow start otherwise brings up "Select Kernel")."""
    settings_dir.mkdir(parents=True, exist_ok=True)
    (settings_dir / "overrides.json").write_text(json.dumps({
        "@jupyterlab/apputils-extension:notification": {"fetchNews": "false",
                                                        "checkForUpdates": False},
        "@jupyterlab/notebook-extension:tracker": {"windowingMode": "none",
                                                   "autoStartDefaultKernel": True},
    }, indent=2))


def lab_page_config(config_dir: Path) -> None:
    """Leave out the JupyterLite extensions a ``make lite`` install puts beside
    JupyterLab (the Pyodide kernel's front end): in a server's JupyterLab it fails to load
    and its error dialog covers the page."""
    found = Path(sys.prefix) / "share" / "jupyter" / "labextensions" / "@jupyterlite"
    names = sorted(f"@jupyterlite/{d.name}" for d in found.iterdir()) if found.is_dir() else []
    (config_dir / "labconfig").mkdir(parents=True, exist_ok=True)
    (config_dir / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": dict.fromkeys(names, True)}, indent=2))


def start_lab(port: int, tmp: Path) -> subprocess.Popen:
    lab_page_config(tmp / "cfg")
    lab_settings(tmp / "settings")
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(tmp / "cfg"), IPYTHONDIR=str(tmp / "ipy"),
               MPLCONFIGDIR=str(tmp / "mpl"), JUPYTER_RUNTIME_DIR=str(tmp / "run"))
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    # the kernel imports this checkout's ssa_course, whatever the environment has installed
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    # JupyterLab saves the notebooks it runs (autosave): it gets a copy, and the course's
    # notebooks stay as stored (without outputs); a saved run would also be opened with
    # its old prompts and outputs by the next check
    course = tmp / "course"
    shutil.copytree(ROOT / "notebooks", course / "notebooks",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root",
           f"--port={port}", "--ip=127.0.0.1", "--IdentityProvider.token=",
           f"--ServerApp.root_dir={course}", "--LabApp.expose_app_in_browser=True",
           f"--LabApp.app_settings_dir={tmp / 'settings'}",
           f"--LabApp.user_settings_dir={tmp / 'user-settings'}"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + LOAD
    while time.time() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status", timeout=2)
            return proc
        except OSError:
            time.sleep(0.5)
    proc.terminate()
    raise Failure(f"JupyterLab did not start within {LOAD} s")



# the code cells' prompts: "[ ]:" not run, "[*]:" running or queued, "[3]:" done
_PROMPTS = ("Array.from(document.querySelectorAll('.jp-Notebook .jp-InputArea-prompt'))"
            ".map(e => e.textContent.trim()).filter(t => t.length > 0)")


def _wait(page, js: str, what: str, seconds: int, arg: object = None) -> None:
    """Wait until ``js`` (a function of ``arg``) is true in the page, or fail with one
    line: ``what`` did not happen within ``seconds``."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(js, arg=arg, timeout=seconds * 1000, polling=250)
    except PlaywrightTimeout:
        raise Failure(f"{what} within {seconds} s") from None


# the first error a cell printed (a traceback's last line), or what is known
_FIRST_ERROR = """() => {
  const err = document.querySelector('.jp-OutputArea-output[data-mime-type='
      + '"application/vnd.jupyter.stderr"]');
  if (!err) { return 'no error output'; }
  const lines = err.innerText.trim().split('\\n').filter(l => l.trim());
  return lines.length ? lines[lines.length - 1].slice(0, 300) : 'an empty error';
}"""


def _run_all(page) -> None:
    """Run every cell of the open notebook and wait until all have run. The command is
    fired, not awaited (its promise settles only when the last cell has run, and an
    ``evaluate`` has no timeout); when no cell has started after RUN_START seconds (the
    notebook was not the current widget yet, or the kernel not connected), it is fired
    once more."""
    run = ("() => { const app = window.jupyterapp; app.shell.activateById("
           "app.shell.currentWidget ? app.shell.currentWidget.id : '');"
           " app.commands.execute('notebook:run-all-cells'); return true; }")
    started = f"() => {_PROMPTS}.some(t => t !== '[ ]:' && t !== '[]:')"
    for attempt in (1, 2):
        page.evaluate(run)
        try:
            _wait(page, started, "no cell of the tour started running", RUN_START)
            break
        except Failure:
            if attempt == 2:
                raise
    # done: no cell running or queued and the kernel idle (run-all stops at a cell that
    # raises: the cells after it keep "[ ]:")
    _wait(page, f"() => {{ const p = {_PROMPTS}; return p.length > 0 && "
                "!p.includes('[*]:') && document.querySelector("
                "\".jp-Notebook-ExecutionIndicator[data-status='idle']\") !== null; }",
          "the tour's cells did not finish running", RUN_ALL)
    left = page.evaluate(f"() => {_PROMPTS}.filter(t => t === '[ ]:').length")
    if left:
        error = page.evaluate(_FIRST_ERROR)
        raise Failure(f"the tour stopped with {left} cells not run: {error}")


def close_dialogs(page) -> None:
    """Close any JupyterLab dialog over the page (saying what it said, one line each):
    a dialog intercepts every click. Its default button is taken ("Select" the
    notebook's kernel); a dialog about the course's own notebook (a kernel error) still
    fails the check through the cells' output."""
    dialogs = page.locator(".jp-Dialog")
    for _ in range(5):
        if dialogs.count() == 0:
            return
        said = " ".join(dialogs.first.inner_text().split())[:200]
        print(f"browser check: note: closed a JupyterLab dialog: {said}", flush=True)
        for selector in (".jp-Dialog-button.jp-mod-accept", ".jp-Dialog-close-button"):
            button = dialogs.first.locator(selector)
            if button.count():
                button.first.click()
                break
        else:
            page.keyboard.press("Escape")
        try:
            _wait(page, "() => document.querySelectorAll('.jp-Dialog').length === 0",
                  "a dialog did not close", 15)
        except Failure:
            continue
    raise Failure("JupyterLab dialogs keep covering the page")


def _redrawn(page, panel, stats, previous: str, what: str, shot: str) -> tuple[bytes, str]:
    """Wait until the explorer's stats line differs from ``previous`` after ``what``, then
    the panel's screenshot (saved as ``shot``) and the new stats line."""
    _wait(page, "([el, old]) => el.innerText !== old",
          f"the stats line did not change after {what}", REACT, [stats, previous])
    page.wait_for_timeout(500)  # the drawing's image decoded
    return panel.screenshot(path=str(OUT / shot)), _stats(panel)


def _stats(panel) -> str:
    return panel.locator(".widget-html").first.inner_text()


def check(port: int) -> list[str]:
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright

    problems: list[str] = []
    OUT.mkdir(parents=True, exist_ok=True)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise Failure("no chromium on PATH (apt-get install chromium)")
    with sync_playwright() as p, tempfile.TemporaryDirectory(
            ignore_cleanup_errors=True) as profile:
        browser = p.chromium.launch_persistent_context(
            profile, executable_path=chromium, headless=True, args=CHROMIUM_ARGS,
            viewport={"width": 1400, "height": 1000})
        page = browser.new_page()
        page.set_default_timeout(REACT * 1000)
        try:
            problems += _steps(port, page)
        except (Failure, PlaywrightError) as e:
            page.screenshot(path=str(OUT / "failure.png"), full_page=True)
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise Failure(f"{first} (page: out/browser/failure.png)") from None
        finally:
            browser.close()
    return problems


def _steps(port: int, page) -> list[str]:
    """The check's steps in an open page (a step that does not happen: Failure)."""
    problems: list[str] = []
    page.goto(f"http://127.0.0.1:{port}/lab/tree/notebooks/00-tour.ipynb",
              timeout=LOAD * 1000)
    _wait(page, "() => document.querySelector('.jp-Notebook') !== null",
          "JupyterLab did not show the tour notebook", LOAD)
    _wait(page, "() => window.jupyterapp !== undefined",
          "JupyterLab's application object did not appear", LOAD)
    _wait(page, "() => document.querySelector("
                "\".jp-Notebook-ExecutionIndicator[data-status='idle']\") !== null",
          "the tour's kernel did not become idle", LOAD)
    close_dialogs(page)
    _run_all(page)
    _wait(page, "() => document.querySelector('.widget-dropdown select') !== null",
          "the explore() panel did not appear", REACT)
    close_dialogs(page)
    select = page.locator(".widget-dropdown select").first
    panel = page.locator(".widget-vbox").first
    panel.scroll_into_view_if_needed()
    page.wait_for_timeout(500)  # the drawing's image decoded
    before = panel.screenshot(path=str(OUT / "explore-before.png"))
    stats_before = _stats(panel)
    # the pessimistic/optimistic switch: son-opt (after SCCP) against son, changes marked
    panel.locator("button", has_text="optimistic").first.click()
    stats = panel.locator(".widget-html").first.element_handle()
    optimistic, stats_optimistic = _redrawn(page, panel, stats, stats_before,
                                            "'optimistic'", "explore-optimistic.png")
    if optimistic == before:
        problems.append("switching to optimistic did not change the picture")
    if "son: optimistic" not in stats_optimistic or "SCCP" not in stats_optimistic:
        problems.append(f"the stats line did not follow the mode: {stats_optimistic!r}")
    select.select_option("cfg")
    after, stats_after = _redrawn(page, panel, stats, stats_optimistic, "choosing 'cfg'",
                                  "explore-after.png")
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
    page.evaluate("() => { window.jupyterapp.commands.execute('kernelmenu:shutdown');"
                  " return true; }")
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


def _watchdog(proc_box: list[subprocess.Popen]) -> threading.Timer:
    """After WATCHDOG seconds: one line, JupyterLab stopped, exit status 1 (a step that
    hangs where no timeout reaches -- never seen, but the check must not hang)."""
    def fire() -> None:
        print(f"browser check: FAILED: not done within {WATCHDOG} s (see out/browser/)",
              flush=True)
        for proc in proc_box:
            proc.kill()
        os._exit(1)

    timer = threading.Timer(WATCHDOG, fire)
    timer.daemon = True
    timer.start()
    return timer


def main() -> int:
    started = time.monotonic()
    procs: list[subprocess.Popen] = []
    timer = _watchdog(procs)
    with tempfile.TemporaryDirectory(prefix="ssa-course-browser-") as tmp_name:
        port = free_port()
        try:
            procs.append(start_lab(port, Path(tmp_name)))
            problems = check(port)
        except Failure as e:
            problems = [f"FAILED: {e}"]
        finally:
            timer.cancel()
            for proc in procs:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
    if problems:
        for p in problems:
            print(f"browser check: {p}")
        return 1
    print(f"browser check: ok in {time.monotonic() - started:.0f} s "
          f"(screenshots in {OUT.relative_to(ROOT)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
