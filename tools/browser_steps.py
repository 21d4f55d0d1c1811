"""The optimizer's step-through page (``ssa-course opt FILE -p ... --format html``) in a
real browser (headless Chromium): next and prev move through the passes, a pass that
changed nothing is folded away (hidden) until "unchanged passes" is ticked, the diff
marks added and removed lines, "rewrites" adds SCCP's steps and the peepholes' rewrites
under their pass, the arrow keys step too, and nothing is requested from the network.

``make browser-test`` runs it after the linked page's check; alone:

    python tools/browser_steps.py      # exit status 0 when the check passes
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from browser_linked import CHROMIUM_ARGS, keep_offline

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "out" / "browser"
PIPELINE = "parse,sccp,gcm,dom-cse,out-of-ssa,dce,copies,dce"
# SCCP proves x is 1 where the pessimistic parser cannot: the peepholes after it rewrite
PROGRAM = """fn main(n: int) {
    var x = 1;
    var acc = 0;
    while (n > 0) { x = 2 - x; acc = acc + x * 4; n = n - 1; }
    if (x == 1) { print(acc); } else { print(0 - acc); }
}
"""

_STATE = """() => {
  const items = Array.from(document.querySelectorAll('.steplist li'));
  const cur = document.querySelector('.steplist li.current');
  return {
    current: cur ? +cur.dataset.step : -1,
    title: cur ? cur.textContent : '',
    shown: items.filter(li => li.style.display !== 'none').map(li => +li.dataset.step),
    unchangedShown: items.filter(li => li.matches('.pass.unchanged')
                                       && li.style.display !== 'none').length,
    unchanged: items.filter(li => li.matches('.pass.unchanged')).length,
    fine: items.filter(li => (li.classList.contains('sccp') || li.classList.contains('rewrite'))
                             && li.style.display !== 'none').length,
    add: document.querySelectorAll('.view .add').length,
    del: document.querySelectorAll('.view .del').length,
    view: document.querySelector('.view').textContent.length,
  };
}"""


def check(page_file: Path, shots: Path) -> list[str]:
    from playwright.sync_api import sync_playwright

    problems: list[str] = []
    outside: list[str] = []
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True,
                                    args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        keep_offline(page, outside, ("file://", "data:"))
        page.goto(page_file.as_uri())
        s = page.evaluate(_STATE)
        passes = PIPELINE.split(",")
        if s["current"] != 0:
            problems.append(f"the page opens on step {s['current']}, not the start")
        if s["unchanged"] == 0:
            problems.append("no pass is marked unchanged (dce twice: the second changes nothing)")
        if s["unchangedShown"]:
            problems.append(f"{s['unchangedShown']} unchanged passes are not folded away")
        if s["fine"]:
            problems.append("rewrite steps shown before 'rewrites' is ticked")
        visited = [s["title"]]
        for _ in range(len(passes) + 1):
            page.click("button.next")
            visited.append(page.evaluate(_STATE)["title"])
        names = [t.split(" +")[0] for t in visited]
        if any(n == "dom-cse" or names.count(n) > 1 and n != names[-1] for n in names):
            problems.append(f"next visited {names}: an unchanged pass was not skipped")
        if not names[1].startswith("parse"):
            problems.append(f"next from the start went to {names[1]}")
        page.click("button.prev")
        back = page.evaluate(_STATE)
        if back["title"] != visited[-2] and visited[-1] != visited[-2]:
            problems.append(f"prev went to {back['title']}, not {visited[-2]}")
        # out-of-ssa: phis become copies -- lines added and removed
        oos = page.locator(".steplist li", has_text="out-of-ssa").first
        oos.click()
        s = page.evaluate(_STATE)
        if not (s["add"] and s["del"]):
            problems.append(f"out-of-ssa's diff shows {s['add']} added and {s['del']} "
                            "removed lines")
        page.screenshot(path=str(shots / "steps-out-of-ssa.png"))
        page.check("input.show-same")
        s = page.evaluate(_STATE)
        if s["unchangedShown"] != s["unchanged"]:
            problems.append("ticking 'unchanged passes' did not show them")
        page.uncheck("input.show-same")
        page.check("input.show-fine")
        s = page.evaluate(_STATE)
        if s["fine"] == 0:
            problems.append("ticking 'rewrites' showed no SCCP or rewrite step")
        sccp = page.locator(".steplist li.sccp").first
        sccp.click()
        page.keyboard.press("ArrowRight")
        after = page.evaluate(_STATE)
        if after["current"] != int(sccp.get_attribute("data-step") or 0) + 1:
            problems.append(f"the right arrow went from an SCCP step to {after['current']}")
        rewrite = page.locator(".steplist li.rewrite", has_text="constant").first
        if rewrite.count():
            rewrite.click()
            s = page.evaluate(_STATE)
            if not (s["add"] or s["del"]):
                problems.append(f"the rewrite {s['title']} shows no change")
            page.screenshot(path=str(shots / "steps-rewrite.png"))
        else:
            problems.append("no peephole rewrite step ('constant') after SCCP")
        page.check("input.astext")
        if page.evaluate(_STATE)["del"]:
            problems.append("'text' still shows removed lines")
        browser.close()
        problems += [f"script error: {e}" for e in errors]
    if outside:
        problems.append(f"requests left the machine: {outside[:3]}")
    return problems


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "flip.tiny"
        source.write_text(PROGRAM)
        target = OUT / "steps-flip.html"
        subprocess.run([sys.executable, "-m", "ssa_course", "opt", str(source), "-p", PIPELINE,
                        "--format", "html", "-o", str(target)], check=True, cwd=ROOT)
        problems = check(target, OUT)
    for p in problems:
        print(f"browser check (opt steps page): {p}")
    if not problems:
        print(f"browser check (opt steps page): ok (screenshots in {OUT.relative_to(ROOT)})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
