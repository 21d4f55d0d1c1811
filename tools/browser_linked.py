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
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]


def keep_offline(page, outside: list[str],
                 allowed: tuple[str, ...] = ("file://", "http://127.0.0.1", "data:")) -> None:
    """Abort every request of ``page`` that leaves this machine, noting it in ``outside``
    (the pages must work offline)."""
    def guard(route) -> None:
        url = route.request.url
        if url.startswith(allowed):
            route.continue_()
        else:
            outside.append(url)
            route.abort()

    page.route("**/*", guard)

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


def program(lines: int) -> str:
    """A Tiny program of exactly ``lines`` lines (at least 6): helper functions of loops,
    branches and arithmetic (long lines among them), then ``main`` calling them."""
    if lines <= 8:
        body = ["fn main(n: int) {", "    var acc = 0;",
                "    for (var i = 0; i < n; i = i + 1) { acc = acc + i * i; }",
                "    print(acc);", "}"]
        return "\n".join(["// a small program", *body][:max(lines, 6)] +
                         ["// end"] * (lines - 6)) + "\n"
    out: list[str] = []
    k = 0
    while len(out) + 12 + 4 <= lines:  # a helper is 12 lines; main needs 4 and a call each
        out += [f"fn f{k}(x: int) -> int {{",
                "    var a = x * 3 + 1;",
                "    var b = a % 7;",
                "    var s = 0;",
                "    for (var i = 0; i < 4; i = i + 1) {",
                "        if (i % 2 == 0) { s = s + a * i; } else { s = s - b + i; }",
                "    }",
                "    while (b > 0) { b = b - 2; s = s + 1; }",
                f"    var long_name_for_a_value_{k} = s * 100003 + a * 10007 + b * 1009 "
                "+ x * 101 + 17;",
                f"    print(long_name_for_a_value_{k});",
                f"    return s + {k};",
                "}"]
        k += 1
        if len(out) + k + 3 + 12 > lines:
            break
    main = ["fn main(n: int) {", "    var t = n;"]
    main += [f"    t = t + f{i}(t % 10);" for i in range(k)]
    while len(out) + len(main) + 2 < lines:
        main.append("    t = t * 3 % 1000 + 1;")
    main += ["    print(t);", "}"]
    return "\n".join(out + main) + "\n"


# For each pane's scrolled boxes (its text, its drawing), except the one clicked in: the
# first item of line N must be on screen (vertically inside the box, overlapping it
# horizontally; a drawing's node inside the drawing).
_REVEALED = """([n, clicked]) => {
  const bad = [], checked = [];
  document.querySelectorAll('[data-pane]').forEach(pane => {
    pane.querySelectorAll('.body, .drawing').forEach(box => {
      if (clicked && box.contains(document.querySelector(clicked))) return;
      const first = box.querySelector(`[data-line="${n}"]`);
      if (!first) return;
      const b = box.getBoundingClientRect(), r = first.getBoundingClientRect();
      checked.push(pane.dataset.pane + ' ' + box.className);
      const inside = r.top >= b.top - 1 && r.bottom <= b.bottom + 1
                     && r.right > b.left && r.left < b.right;
      if (!inside) bad.push(`${pane.dataset.pane} ${box.className}: item at `
                            + `${Math.round(r.top)}..${Math.round(r.bottom)}, box `
                            + `${Math.round(b.top)}..${Math.round(b.bottom)}`);
    });
  });
  return [bad, checked];
}"""

# The colours of the lines on screen: line -> colour must be one to one (linked items
# aside: they all wear the one highlight).
_COLOURS = """() => {
  const bad = [];
  document.querySelectorAll('[data-pane] .body').forEach(box => {
    const b = box.getBoundingClientRect(), seen = {};
    box.querySelectorAll('.lines > .item:not(.linked)').forEach(el => {
      const r = el.getBoundingClientRect();
      if (r.bottom <= b.top || r.top >= b.bottom) return;
      const c = getComputedStyle(el).backgroundColor, n = el.dataset.line;
      if (seen[c] !== undefined && seen[c] !== n)
        bad.push(`${box.parentNode.dataset.pane}: lines ${seen[c]} and ${n} are both ${c}`);
      seen[c] = n;
    });
  });
  return bad;
}"""

# Drawings fit their pane: the svg inside its box, the whole graph inside the svg.
_FITS = """() => {
  const bad = [];
  document.querySelectorAll('[data-pane] .drawing').forEach(box => {
    const svg = box.querySelector('svg');
    if (!svg) return;
    const b = box.getBoundingClientRect(), s = svg.getBoundingClientRect();
    const g = svg.querySelector('g.graph').getBoundingClientRect();
    const within = (r, o) => r.left >= o.left - 1 && r.right <= o.right + 1
                              && r.top >= o.top - 1 && r.bottom <= o.bottom + 1;
    if (!within(s, b)) bad.push('the svg is larger than its pane');
    if (!within(g, s)) bad.push(`the graph (${Math.round(g.width)}x${Math.round(g.height)}) `
                                + `is not inside the svg (${Math.round(s.width)}x`
                                + `${Math.round(s.height)})`);
  });
  return bad;
}"""

# Nothing is cut at the right: an element wider inside than outside scrolls.
_CLIPPED = """() => {
  const bad = [];
  document.querySelectorAll('.ssa-linked, .ssa-linked *').forEach(el => {
    if (!(el instanceof HTMLElement) || el.clientWidth === 0) return;
    if (el.scrollWidth > el.clientWidth + 1) {
      const o = getComputedStyle(el).overflowX;
      if (o !== 'auto' && o !== 'scroll')
        bad.push(`${el.tagName}.${el.className} (${el.closest('[data-pane]')?.dataset.pane}):`
                 + ` ${el.scrollWidth} wide in ${el.clientWidth}, overflow-x ${o}`);
    }
  });
  return bad;
}"""

_VIEWBOX = """() => Array.from(document.querySelectorAll('.drawing svg'))
  .map(s => s.getAttribute('viewBox'))"""


def check_sizes(shots: Path) -> list[str]:
    """Programs of 6, 45 and 300 lines: every pane reveals the clicked line's first item,
    on-screen colours are distinct, drawings fit (and pan and zoom), nothing is clipped."""
    from playwright.sync_api import sync_playwright

    problems: list[str] = []
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    with sync_playwright() as p, tempfile.TemporaryDirectory() as tmp:
        browser = p.chromium.launch(executable_path=chromium, headless=True,
                                    args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        for size in (6, 45, 300):
            source = Path(tmp) / f"p{size}.tiny"
            source.write_text(program(size))
            assert len(source.read_text().splitlines()) == size, size
            target = OUT / f"linked-{size}-lines.html"
            make_page(source, target)
            page.goto(target.as_uri())
            bad = [f"{size} lines, on load: {b}" for b in
                   page.evaluate(_FITS) + page.evaluate(_CLIPPED) + page.evaluate(_COLOURS)]
            problems += bad
            lines = page.eval_on_selector_all(
                '[data-pane="source"] [data-line]', "els => els.map(e => e.dataset.line)")
            boxes: set[str] = set()
            step = max(1, len(lines) // 25)
            picked = lines[::step] + lines[-1:]
            for n in picked:
                sel = f'[data-pane="source"] [data-line="{n}"]'
                page.click(sel)
                bad, checked = page.evaluate(_REVEALED, [int(n), sel])
                boxes.update(checked)
                for b in bad + page.evaluate(_COLOURS) + page.evaluate(_CLIPPED):
                    problems.append(f"{size} lines, line {n}: {b}")
            page.screenshot(path=str(shots / f"linked-{size}-lines.png"))
            # the other way: a line of the last pane's text reveals the source
            item = page.locator('[data-pane="asm"] .lines > .item').nth(
                max(0, page.locator('[data-pane="asm"] .lines > .item').count() // 2))
            n = item.get_attribute("data-line")
            item.click()
            bad, checked = page.evaluate(_REVEALED, [int(n or 0), None])
            boxes.update(checked)
            problems += [f"{size} lines, asm line of line {n}: {b}" for b in bad
                         if not b.startswith("asm ")]
            want = {"source body", "quads body", "son-opt body", "asm body"}
            if size > 6:
                want.add("son-opt drawing")
            if want - boxes:
                problems.append(f"{size} lines: never checked {sorted(want - boxes)}")
            drawn = page.locator('[data-pane="son-opt"] .drawing')
            if drawn.count() and not drawn.locator(".zoom button").count():
                problems.append(f"{size} lines: the drawing has no zoom buttons")
            elif drawn.count():
                before = page.evaluate(_VIEWBOX)
                drawn.locator('button[data-zoom="1.25"]').click()
                zoomed = page.evaluate(_VIEWBOX)
                if zoomed == before:
                    problems.append(f"{size} lines: '+' did not zoom")
                box = drawn.bounding_box()
                assert box is not None
                lit = page.eval_on_selector_all(".linked", "els => els.length")
                page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
                page.mouse.down()
                page.mouse.move(box["x"] + box["width"] / 2 + 60, box["y"] + box["height"] / 2
                                + 40, steps=5)
                page.mouse.up()
                if page.evaluate(_VIEWBOX) == zoomed:
                    problems.append(f"{size} lines: dragging did not pan")
                if page.eval_on_selector_all(".linked", "els => els.length") != lit:
                    problems.append(f"{size} lines: a drag changed the selection")
                page.mouse.move(box["x"] + 20, box["y"] + 40)
                page.mouse.wheel(0, -300)
                page.wait_for_timeout(100)
                drawn.locator('button[data-zoom="fit"]').click()
                problems += [f"{size} lines, after 'fit': {b}" for b in page.evaluate(_FITS)]
            elif size > 6:
                problems.append(f"{size} lines: no son-opt drawing (Graphviz?)")
        browser.close()
    return problems


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
        keep_offline(page, outside)
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
            # pan the drawing to the node (as a user would), then click it
            node.evaluate("el => el.closest('.drawing').ssaReveal(el)")
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
    problems += check_sizes(OUT)
    for p in problems:
        print(f"browser check (linked page): {p}")
    if not problems:
        print(f"browser check (linked page): ok, {len(PROGRAMS)} programs and 6, 45, 300 "
              "lines (reveal, colours, fit, pan and zoom, no clipping) "
              f"(screenshots in {OUT.relative_to(ROOT)})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
