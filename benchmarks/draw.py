"""How long every drawing takes: DOT text and Graphviz SVG per view, at 30, 100 and 300 lines.

Two shapes of generated program: ``straight`` (one long ``main`` from ``gen.py``: ifs and
loops over a rolling window of variables) and ``fuzz`` (``tests/fuzzgen.py``: several
functions, arrays, structs, try/catch). For each view with a drawing it times, best of N:

* ``build+dot`` -- a fresh compilation up to that representation, and its DOT text;
* ``dot`` -- the DOT text again (the representation cached, as the explorer has it);
* ``svg`` -- Graphviz laying it out (``dot -Tsvg``), with the default drawing options;

and the explorer's pessimistic/optimistic switch on the sea of nodes (both modes drawn,
then each switch: the first one builds ``son-opt`` and its comparison with ``son``, later
ones read them cached; SVG from Graphviz). Run it alone with
``python benchmarks/draw.py [sizes...]``; ``make bench`` runs it through ``run_all.py``.

``python benchmarks/draw.py --cli [lines]`` times what a user waits for instead: every
``ssa-course show FILE --as X --format svg`` on one generated ``straight`` program (300
lines by default), a fresh process each, minus the start-up (``ssa-course run`` of
``examples/sum.tiny``); ``--root DIR`` runs another checkout's code (before/after tables).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "tests"))

from fuzzgen import generate  # noqa: E402
from gen import straight_line_program  # noqa: E402
from timing import best_of  # noqa: E402

from ssa_course import registry  # noqa: E402
from ssa_course.compilation import compile_source  # noqa: E402
from ssa_course.views import render  # noqa: E402
from ssa_course.viz.render import RenderError, dot_available, graphviz_render  # noqa: E402

SIZES = (30, 100, 300)


def lines_of(text: str) -> int:
    return text.count("\n")


def straight(lines: int) -> str:
    """``straight_line_program`` grown until it has at least ``lines`` lines."""
    statements = lines
    while lines_of(src := straight_line_program(statements)) < lines:
        statements += max(1, statements // 10)
    return src


def fuzz(lines: int, seed: int = 7) -> str:
    """A fuzz program of about ``lines`` lines (the smallest size parameter that reaches
    it)."""
    size = 2
    while lines_of(src := generate(seed, size)) < lines and size < 400:
        size += 2
    return src




def svg_time(dot: str, repeat: int) -> str:
    if not dot_available():
        return "no dot"
    try:
        return f"{best_of(lambda: graphviz_render(dot, 'svg'), repeat):.3f}"
    except RenderError:
        return "timeout"


NODE_LINE = re.compile(r'^\s*("[^"]*"|\w+) \[', re.M)


def node_count(dot: str) -> int:
    """Nodes Graphviz lays out (constants' small copies included; not the defaults)."""
    return sum(1 for m in NODE_LINE.finditer(dot) if m[1] not in ("node", "edge", "graph"))


def view_rows(shape: str, src: str, repeat: int) -> list[tuple]:
    rows = []
    for view in registry.representations():
        if view.dot is None:
            continue
        build = best_of(lambda v=view.name: render(compile_source(src, kind="tiny"), v, "dot"),
                        repeat)
        comp = compile_source(src, kind="tiny")
        dot = render(comp, view.name, "dot")
        again = best_of(lambda v=view.name, c=comp: render(c, v, "dot"), repeat)
        rows.append((shape, lines_of(src), view.name, node_count(dot), build, again,
                     svg_time(dot, repeat)))
    return rows


def first_switch(src: str, repeat: int) -> float:
    """Seconds from the pessimistic picture to the optimistic one the first time (son-opt
    built, compared with son, drawn), best of ``repeat`` fresh compilations."""
    from ssa_course.lessons.l07_optimistic import compare_modes

    best = float("inf")
    for _ in range(repeat):
        comp = compile_source(src, kind="tiny")
        compare_modes(comp, "pessimistic", "dot")  # the first picture builds SCCP's table
        t0 = time.perf_counter()
        compare_modes(comp, "optimistic", "dot")
        best = min(best, time.perf_counter() - t0)
    return best


def switch_row(shape: str, src: str, repeat: int) -> tuple:
    from ssa_course.lessons.l07_optimistic import compare_modes

    comp = compile_source(src, kind="tiny")
    compare_modes(comp, "pessimistic", "dot")
    compare_modes(comp, "optimistic", "dot")
    t_dot = best_of(lambda: compare_modes(comp, "optimistic", "dot"), repeat)  # cached
    dot = compare_modes(comp, "optimistic", "dot")[0]
    # build+dot: the first switch (son-opt built); dot: the switch again (cached)
    return (shape, lines_of(src), "switch p/o", node_count(dot), first_switch(src, repeat),
            t_dot, svg_time(dot, repeat))


def draw_table(sizes: tuple[int, ...] = SIZES, repeat: int = 2) -> None:
    print(f"Drawing: DOT text and Graphviz SVG per view, default options (best of {repeat})")
    print(f"{'shape':>8} {'lines':>5} {'view':>15} {'nodes':>5} {'build+dot':>9} "
          f"{'dot':>7} {'svg':>7}")
    worst = (0.0, "")
    for lines in sizes:
        for shape, src in (("straight", straight(lines)), ("fuzz", fuzz(lines))):
            for row in view_rows(shape, src, repeat) + [switch_row(shape, src, repeat)]:
                sh, n, name, nodes, build, again, svg = row
                b = "" if build != build else f"{build:.3f}"
                print(f"{sh:>8} {n:>5} {name:>15} {nodes:>5} {b:>9} {again:>7.3f} {svg:>7}")
                try:
                    total = again + float(svg)
                except ValueError:
                    continue
                if total > worst[0]:
                    worst = (total, f"{name} at {n} lines ({sh})")
    print(f"slowest cached dot + svg: {worst[0]:.3f} s, {worst[1]}")
    print()


def _wall(cmd: list[str], root: Path, repeat: int) -> float:
    env = dict(os.environ, PYTHONPATH=str(root))
    return best_of(lambda: subprocess.run(cmd, cwd=root, env=env, capture_output=True,
                                          check=False, timeout=120), repeat)


def cli_table(lines: int = 300, root: Path = HERE.parent, repeat: int = 2) -> list[tuple]:
    """Every view with a drawing, as ``show --as X --format svg`` (a fresh process) on a
    ``straight`` program of ``lines`` lines: seconds beyond start-up, best of ``repeat``."""
    python = [sys.executable, "-m", "ssa_course"]
    start = _wall(python + ["run", "examples/sum.tiny", "10"], root, repeat)
    print(f"show --as X --format svg, {lines}-line straight program, seconds beyond "
          f"start-up ({start:.2f} s), best of {repeat}; code from {root}")
    print(f"{'view':>20} {'nodes':>5} {'seconds':>7}  (nodes: drawn in the SVG)")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "p.tiny"
        path.write_text(straight(lines), encoding="utf-8")
        svg = Path(tmp) / "out.svg"
        for view in registry.representations():
            if view.dot is None:
                continue
            svg.unlink(missing_ok=True)
            took = _wall(python + ["show", str(path), "--as", view.name, "--format", "svg",
                                   "-o", str(svg)], root, repeat) - start
            nodes = svg.read_text().count('class="node"') if svg.exists() else 0
            rows.append((view.name, nodes, took))
            print(f"{view.name:>20} {nodes:>5} {took:>7.2f}", flush=True)
    return rows


if __name__ == "__main__":
    args = sys.argv[1:]
    if args and args[0] == "--cli":
        root = HERE.parent
        if "--root" in args:
            at = args.index("--root")
            root = Path(args[at + 1]).resolve()
            del args[at:at + 2]
        cli_table(int(args[1]) if len(args) > 1 else 300, root)
    else:
        draw_table(tuple(int(a) for a in args) or SIZES)
