"""The linked page's speed (``make bench``): writing it, and highlighting a line in it.

1. Writing ``show --as quads,son-opt,asm --format html`` for generated programs of 30,
   100 and 300 lines, in process (beyond start-up): ``build`` -- compiling the three
   representations (the compiler's own time: quads, SCCP, GCM, register allocation,
   assembling); ``page`` -- the page given them (text faces, lines faces, the son-opt
   drawing by Graphviz, HTML, written); ``total`` against the budget of 1 s; and the
   whole command next to ``ssa-course check`` on the same file (start-up included).
   Then the build of the largest program stage by stage (each stage given the ones it
   starts from: ``son-ranges`` starts from a copy of ``son-opt``'s graph, ``scheduled``
   from ``son-ranges``, ``asm`` from ``scheduled``), each against the budget.
2. Highlighting: the page of the 300-line program in headless Chromium; for every source
   line, a click and the style recalculation it causes (``offsetHeight`` forces it), timed
   with ``performance.now()``; median and worst against the budget of 50 ms. Skipped (with
   the reason) without Chromium or Playwright.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "tests"))

from draw import straight  # noqa: E402

from ssa_course import registry  # noqa: E402
from ssa_course.compilation import compile_source  # noqa: E402
from ssa_course.linked_page import linked_page  # noqa: E402

VIEWS = ["quads", "son-opt", "asm"]
# the stages building VIEWS makes, in the order they are made
STAGES = ["quads", "son-opt", "son-ranges", "scheduled", "asm"]
WRITE_BUDGET = 1.0
CLICK_BUDGET_MS = 50.0


def _command(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "ssa_course", *args], check=True,
                   cwd=HERE.parent, capture_output=True)
    return time.perf_counter() - start


def write_table(sizes: tuple[int, ...] = (30, 100, 300)) -> str:
    print("Linked page: show --as quads,son-opt,asm --format html (best of 3)")
    print(f"{'lines':>6} {'build':>7} {'page':>7} {'total':>7} {'budget':>7} {'ratio':>6} "
          f"{'command':>8} {'check':>7} {'KB':>6}")
    page = ""
    for lines in sizes:
        src = straight(lines)
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "p.tiny"
            path.write_text(src)

            out = Path(tmp) / "in.html"
            builds, pages = [], []
            for _ in range(3):
                comp = compile_source(src, str(path))
                start = time.perf_counter()
                for view in VIEWS:
                    registry.build(comp, view)
                middle = time.perf_counter()
                out.write_text(linked_page(comp, VIEWS))
                builds.append(middle - start)
                pages.append(time.perf_counter() - middle)
            build, secs = min(builds), min(pages)
            command = min(_command(["show", str(path), "--as", ",".join(VIEWS), "--format",
                                    "html", "-o", str(Path(tmp) / "p.html")])
                          for _ in range(2))
            check = min(_command(["check", str(path)]) for _ in range(2))
            page = (Path(tmp) / "p.html").read_text()
        total = build + secs
        print(f"{src.count(chr(10)):>6} {build:>6.2f}s {secs:>6.2f}s {total:>6.2f}s "
              f"{WRITE_BUDGET:>6.1f}s {total / WRITE_BUDGET:>6.2f} {command:>7.2f}s "
              f"{check:>6.2f}s {len(page) // 1024:>6}")
    print()
    return page


_CLICKS = """() => {
  const lines = Array.from(document.querySelectorAll('[data-pane="source"] [data-line]'));
  const times = [];
  void document.body.offsetHeight;  // the page laid out once before timing
  for (const el of lines) {
    const t0 = performance.now();
    el.click();
    void document.body.offsetHeight;  // the restyle the new classes cause, now
    times.push(performance.now() - t0);
  }
  const items = document.querySelectorAll('[data-line]').length;
  return [times, items];
}"""


def click_table(page: str) -> None:
    print("Linked page: highlighting a line in headless Chromium (every source line)")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("skipped: playwright is not installed (make browser-test installs it)\n")
        return
    if chromium is None:
        print("skipped: no chromium on PATH\n")
        return
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        path = Path(tmp) / "page.html"
        path.write_text(page)
        browser = p.chromium.launch(executable_path=chromium, headless=True,
                                    args=["--no-sandbox", "--disable-gpu"])
        tab = browser.new_page(viewport={"width": 1600, "height": 1000})
        tab.goto(path.as_uri())
        times, items = tab.evaluate(_CLICKS)
        browser.close()
    times.sort()
    median, p95, worst = times[len(times) // 2], times[len(times) * 95 // 100], times[-1]
    print(f"{'lines':>6} {'items':>6} {'median':>8} {'p95':>8} {'worst':>8} {'budget':>7} "
          f"{'ratio':>6}")
    print(f"{len(times):>6} {items:>6} {median:>6.2f}ms {p95:>6.2f}ms {worst:>6.2f}ms "
          f"{CLICK_BUDGET_MS:>5.0f}ms {worst / CLICK_BUDGET_MS:>6.2f}")
    print()


def stage_table(lines: int = 300) -> None:
    """Wall-clock seconds, and the process's CPU seconds beside them: on a machine other
    work shares, the wall clock also counts the waits for a core."""
    src = straight(lines)
    wall: dict[str, float] = {}
    cpu: dict[str, float] = {}
    for _ in range(3):
        comp = compile_source(src, "p.tiny")
        for stage in STAGES:
            start, start_cpu = time.perf_counter(), time.process_time()
            registry.build(comp, stage)
            secs, secs_cpu = time.perf_counter() - start, time.process_time() - start_cpu
            wall[stage] = min(wall.get(stage, secs), secs)
            cpu[stage] = min(cpu.get(stage, secs_cpu), secs_cpu)
    total, total_cpu = sum(wall.values()), sum(cpu.values())
    print(f"Building the representations of the {src.count(chr(10))}-line program, stage "
          f"by stage (best of 3)")
    print(f"{'stage':>11} {'wall':>7} {'cpu':>7} {'share':>6} {'ratio':>6}")
    for stage in STAGES:
        print(f"{stage:>11} {wall[stage]:>6.3f}s {cpu[stage]:>6.3f}s "
              f"{wall[stage] / total:>6.0%} {wall[stage] / WRITE_BUDGET:>6.2f}")
    print(f"{'all':>11} {total:>6.3f}s {total_cpu:>6.3f}s {1:>6.0%} "
          f"{total / WRITE_BUDGET:>6.2f}")
    print()


def main() -> None:
    page = write_table()
    stage_table()
    click_table(page)


if __name__ == "__main__":
    main()
