"""Front-end and interpreter speed, printed as tables with ratios (run with ``make bench``).

1. parse + check + lower for generated programs of 1k, 10k and 100k statements: the time
   per statement should stay flat as programs grow (the ratio column compares with 1k).
2. Interpreter speed in executed quads per second (and the AST interpreter alongside).
3. SSA construction and IRCode compaction per statement.
4. Parsing straight into the sea of nodes with peepholes on: nodes per second at 1k, 10k
   and 100k statements, and the graph interpreter against the quads interpreter.
5. Bril programs: dynamic instruction counts before and after ``ssa-course opt``, next to
   Bril's example LVN + DCE pipeline.
6. Drawing: DOT text and Graphviz SVG per view at 30, 100 and 300 lines (``draw.py``).
7. Scaling (``scaling.py``): every stage, view and ``opt`` on large single-function
   programs of five shapes at 1k, 10k and 100k statements, and the start-up time
   (``SCALING_MAX=10000 make bench`` for a quick run).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import scaling
from gen import CALL_PROGRAM, LOOP_PROGRAM, straight_line_program
from timing import best_of

from ssa_course.quads.interp import run_quads
from ssa_course.quads.lower import lower_program
from ssa_course.runtime import Limits, Output
from ssa_course.tiny import compile_tiny
from ssa_course.tiny.interp import run_ast


def front_end_table() -> None:
    print("Front end: parse + check + lower (best of 3)")
    print(f"{'statements':>10} {'lines':>8} {'parse+check':>12} {'lower':>9} "
          f"{'us/stmt':>8} {'ratio':>6}")
    base = None
    for size in (1_000, 10_000, 100_000):
        src = straight_line_program(size)
        t_check = best_of(lambda src=src: compile_tiny(src), 1 if size > 10_000 else 3)
        prog = compile_tiny(src)
        t_lower = best_of(lambda prog=prog: lower_program(prog), 1 if size > 10_000 else 3)
        per = (t_check + t_lower) / size * 1e6
        base = base or per
        print(f"{size:>10,} {src.count(chr(10)):>8,} {t_check:>11.3f}s {t_lower:>8.3f}s "
              f"{per:>8.1f} {per / base:>6.2f}")
    print()


def executor_rows(label: str, arg: int, executors: list[tuple[str, object, object]],
                  with_rate: bool) -> None:
    """Time each ``(name, runner, program)`` on ``arg``; print one row each, with the time
    relative to the first executor."""
    first = None
    for name, runner, program in executors:
        steps = 0

        def go(runner=runner, program=program) -> None:
            nonlocal steps
            steps = runner(program, [arg], Output(), Limits(steps=10**9))

        secs = best_of(go)
        first = first or secs
        rate = f" {steps / secs:>12,.0f}" if with_rate else ""
        print(f"{label:>14} {name:>9} {steps:>12,} {secs:>8.3f}{rate} {secs / first:>8.2f}")


def interpreter_table() -> None:
    print("Interpreters: executed operations per second (best of 3)")
    print(f"{'program':>14} {'executor':>9} {'ops':>12} {'seconds':>8} {'ops/s':>12} "
          f"{'vs quads':>8}")
    for label, src, arg in (("loop n=200000", LOOP_PROGRAM, 200_000),
                            ("fib(22)", CALL_PROGRAM, 22)):
        prog = compile_tiny(src)
        executor_rows(label, arg, [("quads", run_quads, lower_program(prog)),
                                   ("ast", run_ast, prog)], with_rate=True)
    print()


def ssa_table() -> None:
    """SSA construction and IRCode compaction: time per statement should stay flat."""
    from ssa_course.runtime import paused_gc
    from ssa_course.ssa.construct import to_ssa
    from ssa_course.ssa.ircode import Expr, compact
    from ssa_course.ssa.julia import build_ircode
    from ssa_course.tiny.types import INT

    print("SSA: pruned construction, IRCode build, and compact after 10% insertions "
          "(best of 3)")
    print(f"{'statements':>10} {'quads':>8} {'ssa':>8} {'ircode':>8} {'compact':>8} "
          f"{'us/quad':>8} {'ratio':>6}")
    base = None
    for size in (1_000, 10_000, 100_000):
        fn = lower_program(compile_tiny(straight_line_program(size))).functions["main"]
        n = len(fn.instrs())
        repeat = 1 if size > 10_000 else 3
        with paused_gc():
            t_ssa = best_of(lambda fn=fn: to_ssa(fn), repeat)
            t_ir = best_of(lambda fn=fn: build_ircode(fn), repeat)
            ir = build_ircode(fn)

            def insert_and_compact(ir=ir) -> None:
                for pos in range(1, len(ir.stmts) + 1, 10):
                    ir.insert_node(pos, Expr("add", [1, 2]), INT)
                compact(ir)
                ir.new_nodes.clear()

            t_compact = best_of(insert_and_compact, repeat)
        per = (t_ssa + t_ir + t_compact) / n * 1e6
        base = base or per
        print(f"{size:>10,} {n:>8,} {t_ssa:>7.3f}s {t_ir:>7.3f}s {t_compact:>7.3f}s "
              f"{per:>8.2f} {per / base:>6.2f}")
    print()


def son_table() -> None:
    """Parsing straight into the sea of nodes, peepholes on: nodes per second should stay
    flat as programs grow (the builder is one pass; each node is optimized as it is made)."""
    from gen import blocks_program

    from ssa_course.son.build import build_graphs

    print("Sea of nodes: parse into the graph with pessimistic peepholes (best of 3; the "
          "front end's parse+check is not included)")
    print(f"{'statements':>10} {'raw nodes':>10} {'nodes':>8} {'build':>8} {'nodes/s':>10} "
          f"{'us/stmt':>8} {'ratio':>6}")
    base = None
    for size in (1_000, 10_000, 100_000):
        program = compile_tiny(blocks_program(size))
        repeat = 1 if size > 10_000 else 3
        secs = best_of(lambda program=program: build_graphs(program, True), repeat)
        graph = build_graphs(program, True)
        raw = build_graphs(program, False)
        per = secs / size * 1e6
        base = base or per
        made = raw.node_count()
        print(f"{size:>10,} {made:>10,} {graph.node_count():>8,} {secs:>7.3f}s "
              f"{made / secs:>10,.0f} {per:>8.1f} {per / base:>6.2f}")
    print("(nodes/s counts the nodes the parser makes: the raw graph's size)")
    print()


def son_interpreter_table() -> None:
    print("Sea-of-nodes interpreter against the quads interpreter (best of 3)")
    print(f"{'program':>14} {'executor':>9} {'steps':>12} {'seconds':>8} {'vs quads':>8}")
    from ssa_course.son.build import build_graphs
    from ssa_course.son.interp import run_graphs

    for label, src, arg in (("loop n=50000", LOOP_PROGRAM, 50_000),
                            ("fib(18)", CALL_PROGRAM, 18)):
        prog = compile_tiny(src)
        executor_rows(label, arg, [("quads", run_quads, lower_program(prog)),
                                   ("son-raw", run_graphs, build_graphs(prog, False)),
                                   ("son", run_graphs, build_graphs(prog, True))],
                      with_rate=False)
    print()


def bril_table() -> None:
    """Dynamic instruction counts (Bril's ``total_dyn_inst``): the original program, Bril's
    example pipeline (local value numbering + dead code), and ``ssa-course opt``'s default
    pipeline (parse into the graph, SCCP, GCM, out of SSA, coalescing, DCE, layout)."""
    from ssa_course.compilation import load_file
    from ssa_course.stages import run

    root = Path(__file__).resolve().parent.parent
    paths = sorted((root / "benchmarks" / "bril").glob("*.bril"))
    paths += sorted((root / "tests" / "bril").glob("*.bril"))
    print("Bril dynamic instructions: original, LVN+DCE, ssa-course opt (fewer is better)")
    print(f"{'program':>28} {'original':>9} {'lvn+dce':>8} {'opt':>8} {'opt/lvn':>8}")
    fewer = same = more = 0
    for path in paths:
        counts = {}
        outputs = set()
        for via in ("quads", "lvn-dce", "optimized"):
            r = run(load_file(str(path)), via=via)
            counts[via] = r.steps
            outputs.add((r.stdout, r.status))
        if len(outputs) != 1:
            print(f"{path.name:>28}  OUTPUTS DIFFER")
            continue
        if next(iter(outputs))[1] != 0:
            continue  # a program that stops with an error: nothing to count
        base, opt = counts["lvn-dce"], counts["optimized"]
        fewer += opt < base
        same += opt == base
        more += opt > base
        where = "benchmarks/" if "benchmarks" in str(path) else "tests/"
        print(f"{where + path.stem:>28} {counts['quads']:>9,} {base:>8,} {opt:>8,} "
              f"{opt / base:>8.2f}")
    total = fewer + same + more
    print(f"fewer than LVN+DCE on {fewer}/{total} programs, the same on {same}, "
          f"more on {more}")
    print()


def main() -> None:
    front_end_table()
    interpreter_table()
    ssa_table()
    son_table()
    son_interpreter_table()
    bril_table()
    from draw import draw_table  # per view, at 30, 100 and 300 lines (benchmarks/draw.py)

    draw_table()
    scaling.main()  # every stage on the big shapes, then the start-up time


if __name__ == "__main__":
    main()
