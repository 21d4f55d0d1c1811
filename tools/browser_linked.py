"""The linked page in a real browser (headless Chromium): a click on a source line marks
exactly that line's items ``linked`` in every pane (text and SVG), a click on a drawn node
lights its source line, and nothing is requested from the network -- for
``examples/sum.tiny`` and the ``tests/programs/linked_*.tiny`` programs (loops, calls,
try/catch, structs, arrays).

``make browser-test`` runs it after the explorer check (tools/browser_check.py); alone:

    python tools/browser_linked.py      # exit status 0 when the check passes
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "out" / "browser"
VIEWS = "quads,son-opt,asm"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]

# For each pane: the items with line N that are not linked, and the linked ones that are
# not of line N (both must be empty).
_MISMATCH = """(n) => {
  const out = {};
  document.querySelectorAll('[data-pane]').forEach(pane => {
    const name = pane.getAttribute('data-pane');
    const items = Array.from(pane.querySelectorAll('[data-line]'));
    const unlit = items.filter(e => e.getAttribute('data-line') === String(n)
                                    && !e.classList.contains('linked')).length;
    const stray = Array.from(pane.querySelectorAll('.linked'))
                      .filter(e => e.getAttribute('data-line') !== String(n)).length;
    const lit = items.filter(e => e.classList.contains('linked')).length;
    out[name] = [unlit, stray, lit];
  });
  return out;
}"""


def make_page(source: Path, target: Path) -> None:
    cmd = [sys.executable, "-m", "ssa_course", "show", str(source), "--as", VIEWS,
           "--format", "html", "-o", str(target)]
    subprocess.run(cmd, check=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT),
                                                   "PATH": "/usr/bin:/bin"})


def check_page(page_file: Path, shots: Path) -> list[str]:
    from playwright.sync_api import sync_playwright

    problems: list[str] = []
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise RuntimeError("no chromium on PATH (apt-get install chromium)")
    outside: list[str] = []
    with sync_playwright() as p, tempfile.TemporaryDirectory() as profile:
        browser = p.chromium.launch_persistent_context(
            profile, executable_path=chromium, headless=True, args=CHROMIUM_ARGS,
            viewport={"width": 1600, "height": 1000})
        page = browser.new_page()

        def guard(route) -> None:
            url = route.request.url
            if url.startswith(("file://", "http://127.0.0.1", "data:")):
                route.continue_()
            else:
                outside.append(url)
                route.abort()

        page.route("**/*", guard)
        page.goto(page_file.as_uri())
        lines = page.eval_on_selector_all(
            '[data-pane="source"] [data-line]', "els => els.map(e => e.dataset.line)")
        panes = page.eval_on_selector_all("[data-pane]", "els => els.map(e => e.dataset.pane)")
        if panes != ["source", *VIEWS.split(",")]:
            problems.append(f"panes {panes}")
        for n in lines:
            page.click(f'[data-pane="source"] [data-line="{n}"]')
            for pane, (unlit, stray, lit) in page.evaluate(_MISMATCH, int(n)).items():
                if unlit or stray:
                    problems.append(f"line {n}, pane {pane}: {unlit} of its items not "
                                    f"linked, {stray} other items linked")
                if pane == "source" and lit != 1:
                    problems.append(f"line {n}: the source line itself is not linked")
        page.click('[data-pane="source"] [data-line="6"]')
        page.screenshot(path=str(shots / "linked-line6.png"), full_page=True)
        node = page.locator('[data-pane="son-opt"] g.node[data-line]').first
        if node.count():
            line = node.get_attribute("data-line")
            page.click('[data-pane="source"] [data-line="1"]')  # something else first
            node.click()
            lit = page.eval_on_selector_all('[data-pane="source"] .linked',
                                            "els => els.map(e => e.dataset.line)")
            if lit != [line]:
                problems.append(f"clicking a node of line {line} lit source lines {lit}")
            page.screenshot(path=str(shots / "linked-node.png"), full_page=True)
        else:
            problems.append("the son-opt drawing has no node with a line (Graphviz?)")
        asm = page.locator('[data-pane="asm"] .item').nth(3)
        line = asm.get_attribute("data-line")
        asm.click()
        lit = page.eval_on_selector_all('[data-pane="source"] .linked',
                                        "els => els.map(e => e.dataset.line)")
        if lit != [line]:
            problems.append(f"clicking an asm line of line {line} lit source lines {lit}")
        browser.close()
    if outside:
        problems.append(f"requests left the machine: {outside[:3]}")
    return problems


# The judge's programs' kind (docs/lines.md): loops, calls, try/catch, structs, arrays.
PROGRAMS = ["examples/sum.tiny", *(f"tests/programs/linked_{n}.tiny"
                                   for n in ("loops", "calls", "try", "structs", "arrays"))]


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    problems: list[str] = []
    for source in PROGRAMS:
        stem = Path(source).stem
        target = OUT / f"linked-{stem}.html"
        make_page(ROOT / source, target)
        shots = OUT / stem if stem != "sum" else OUT
        shots.mkdir(parents=True, exist_ok=True)
        problems += [f"{stem}: {p}" for p in check_page(target, shots)]
    for p in problems:
        print(f"browser check (linked page): {p}")
    if not problems:
        print(f"browser check (linked page): ok, {len(PROGRAMS)} programs "
              f"(screenshots in {OUT.relative_to(ROOT)})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
