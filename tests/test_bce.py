"""Lesson 09: bounds-check elimination. The shapes whose checks the facts prove lose them
(``opt --stats`` says so), the adversarial ones keep theirs and still trap where the
reference interpreter does, GCM hoists what became invariant, the machine code of a
proven access has no test, and the ``son-ranges`` view shows the facts.

Every ``tests/programs/bce_*.tiny`` program also runs through every stage in the
differential test (``tests/test_differential.py``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ssa_course import passes, stages, views
from ssa_course.compilation import compile_source, load_file
from ssa_course.registry import build
from ssa_course.son.gcm import schedule
from ssa_course.son.memory import Len

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = ROOT / "tests" / "programs"
GOLDEN = ROOT / "tests" / "golden" / "l09"  # not beside the others: no quads/ast faces


def counts(source: str) -> dict[str, tuple[int, int]]:
    """Bounds checks (before, after) per function through the default pipeline."""
    state = passes.run_pipeline(compile_source(source, "t.tiny"), passes.DEFAULT_PIPELINE)
    return {fn: tuple(c["bounds checks"]) for fn, c in state.counters.items()}


def main_counts(body: str, params: str = "n: int") -> tuple[int, int]:
    return counts(f"fn main({params}) {{ var a = new int[n]; {body} }}")["main"]


REMOVED = {
    "counted up": "var i = 0; while (i < len(a)) { a[i] = i; i = i + 1; }",
    "for up": "for (var i = 0; i < len(a); i = i + 1) { a[i] = a[i] + 1; }",
    "length in a variable": "var m = len(a); for (var i = 0; i < m; i = i + 1) { a[i] = 1; }",
    "for with continue": "for (var i = 0; i < len(a); i = i + 1) { if (i == 2) { continue; }"
                         " a[i] = 1; }",
    "loop with break": "var i = 0; while (i < len(a)) { if (a[i] > 3) { break; }"
                       " i = i + 1; }",
    "counted down": "for (var i = len(a) - 1; i >= 0; i = i - 1) { a[i] = i; }",
    "down, decrement first": "var i = len(a); while (i > 0) { i = i - 1; a[i] = i; }",
    "step 2": "var i = 0; while (i < len(a)) { a[i] = 1; i = i + 2; }",
    "step 3 from 1": "for (var i = 1; i < len(a); i = i + 3) { a[i] = 1; }",
    "i - 1 from 1": "var i = 1; while (i <= len(a)) { a[i - 1] = i; i = i + 1; }",
    "i + 1 below len - 1": "for (var i = 0; i < len(a) - 1; i = i + 1) { a[i + 1] = a[i]; }",
    "pairs": "var i = 0; while (i + 1 < len(a)) { a[i] = a[i + 1]; i = i + 2; }",
    "while with &&": "var i = 0; while (i < len(a) && a[i] != 3) { i = i + 1; }"
                     " if (i < len(a)) { a[i] = 0; }",
    "guard with ||": "var i = n - 5; if (i < 0 || i >= len(a)) { i = 0; } else { a[i] = 1; }",
    "greater-than written backwards": "var i = 0; while (len(a) > i) { a[i] = 1; i = i + 1; }",
}

KEPT = {
    "i <= len(a)": "var i = 0; while (i <= len(a)) { a[i] = 1; i = i + 1; }",
    "start at n - 2 (may be negative)": "var i = n - 2; while (i < len(a)) { a[i] = 1;"
                                        " i = i + 1; }",
    "a[i + 1] under i < len(a)": "for (var i = 0; i < len(a); i = i + 1) { a[i + 1] = 1; }",
    "other array's length": "var b = new int[n + 1]; for (var i = 0; i < len(b); i = i + 1)"
                            " { a[i] = 1; }",
    "stale length": "var m = len(a); a = new int[n - 1]; for (var i = 0; i < m; i = i + 1)"
                    " { a[i] = 1; }",
    "i != len(a), step 2": "var i = 0; while (i != len(a)) { a[i] = 1; i = i + 2; }",
    "counting the wrong way": "var i = 0; while (i < len(a)) { a[i] = 1; i = i - 1; }",
    "index from the argument": "a[n - 1] = 1;",
    "&& on the wrong side": "var i = 0; while (i < len(a) || a[0] != 3) { a[i] = 1;"
                            " i = i + 1; }",
    "huge step wraps": "var i = 0; while (i < len(a)) { a[i] = 1;"
                       " i = i + 4611686018427387904 * 2; }",
}


@pytest.mark.parametrize("name", list(REMOVED))
def test_shape_loses_its_checks(name):
    before, after = main_counts(REMOVED[name])
    assert before >= 1 and after == 0, (name, before, after)


@pytest.mark.parametrize("name", list(KEPT))
def test_adversarial_shape_keeps_its_check(name):
    before, after = main_counts(KEPT[name])
    assert before >= 1 and after == before, (name, before, after)


def test_check_dominated_by_an_identical_one_goes():
    # the first a[x] may fail (n == 0) and stays; past the branch's merge, the same test
    # again is proven by the facts of the first one's edge -- since #22 already by son-opt's
    # facts of dominating tests, before the ranges pass counts (so 1 before, 1 after)
    assert main_counts("var x = n / 2; a[x] = 1; if (n > 3) { a[x] = 2; } print(a[x]);") \
        == (1, 1)


def test_nested_loops_over_rows():
    src = ("fn main() { var a = new [int][4]; for (var i = 0; i < len(a); i = i + 1) {"
           " a[i] = new int[i]; } var t = 0; for (var i = 0; i < len(a); i = i + 1) {"
           " for (var j = 0; j < len(a[i]); j = j + 1) { a[i][j] = j; t = t + a[i][j]; } }"
           " print(t); }")
    assert counts(src)["main"] == (4, 0)


def test_unset_slot_test_stays_when_bounds_go():
    program = build(load_file(str(PROGRAMS / "bce_unset_kept.tiny")), "son-ranges")
    text = views.render(load_file(str(PROGRAMS / "bce_unset_kept.tiny")), "son-ranges")
    assert "unset element" in text and "index out of bounds" not in text
    assert program is not None


def test_every_function_is_counted():
    c = counts("fn f(a: [int]) -> int { var s = 0; for (var i = 0; i < len(a); i = i + 1)"
               " { s = s + a[i]; } return s; } fn main() { var a = new int[3];"
               " print(f(a), a[5 - 3]); }")
    # ``inline`` copies f's loop into main, and its check with it; a[2] of a 3-array is
    # decided while parsing
    assert c == {"f": (1, 0), "main": (1, 0)}


# -- the command line ------------------------------------------------------------------------


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ssa_course", *args], capture_output=True,
                          text=True, cwd=ROOT)


def test_opt_stats_prints_one_line_per_function():
    r = cli("opt", "tests/programs/bce_index_argument.tiny", "--stats")
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    assert lines[0].startswith("get: bounds checks: 1 before, 1 after")
    # ``inline`` copies get into main at its two calls: the checks that may fail stay there
    assert lines[1].startswith("main: bounds checks: 2 before, 2 after")
    assert "@main" in r.stdout  # the program itself is still written


def test_opt_stats_canonical_loop_says_zero_after():
    r = cli("opt", "tests/programs/bce_up_loop.tiny", "--stats", "-o", "/dev/null")
    assert r.stderr.startswith("main: bounds checks: 2 before, 0 after"), r.stderr


def test_opt_stats_without_bce_prints_only_what_ran():
    r = cli("opt", "tests/programs/bce_up_loop.tiny", "-p", "parse,sccp", "--stats")
    assert r.returncode == 0 and r.stderr == ""
    r = cli("opt", "tests/programs/bce_up_loop.tiny", "-p", "parse,sccp,bce", "--stats",
            "--emit", "son")
    assert r.stderr == "main: bounds checks: 2 before, 0 after\n"


def test_ranges_pass_decides_branches_the_facts_settle():
    src = ("fn main(n: int) { var a = new int[n]; for (var i = 0; i < len(a); i = i + 1) {"
           " if (i >= 0) { a[i] = 1; } else { print(i); } if (i < n) { print(2); } } }")
    sccp = passes.run_pipeline(compile_source(src, "t.tiny"), ["parse", "sccp"])
    assert passes.emit(sccp, "son").count("If ") == 4  # i < n: the loop's test (#22's facts)
    state = passes.run_pipeline(compile_source(src, "t.tiny"), ["parse", "sccp", "ranges"])
    assert state.counters["main"]["branches decided"] == [1, None]  # i >= 0
    text = passes.emit(state, "son")
    assert "Print" in text and text.count("If ") == 3  # the loop test, the new, a[i]
    comp = compile_source(src, "t.tiny")
    assert stages.run(comp, ["3"], via="optimized").stdout == "2\n2\n2\n"


def test_counters_are_generic():
    state = passes.PassState(compile_source("fn main() { }", "t.tiny"))
    state.count("f", "inlined calls", 2)
    state.count("f", "bounds checks", 5, 3)
    state.count("f", "bounds checks", 3, 1)  # a later pass: keeps the first before
    state.count("f", "inlined calls", 1)  # totals add up
    assert state.stats_lines() == ["f: bounds checks: 5 before, 1 after; inlined calls: 3"]


# -- what follows from it ----------------------------------------------------------------------


def test_gcm_hoists_the_length_out_of_the_loop():
    comp = compile_source("fn main(n: int) { var a = new int[n]; var b = a; var s = 0;"
                          " for (var i = 0; i < len(b); i = i + 1) { s = s + b[i]; }"
                          " print(s); }", "h.tiny")
    fg = build(comp, "son-ranges").functions["main"]
    sched = schedule(fg)
    lens = [n for n in fg.nodes() if isinstance(n, Len)]
    assert all(sched.blocks[sched.block_of[n.id]].depth == 0 for n in lens)


def test_proven_access_has_no_test_in_machine_code():
    asm = views.render(load_file(str(PROGRAMS / "bce_up_loop.tiny")), "asm")
    assert "jae" not in asm  # both loops' accesses are proven
    kept = views.render(load_file(str(PROGRAMS / "bce_off_by_one.tiny")), "asm")
    assert "jae" in kept or "jbe" in kept


def test_an_access_after_the_same_passed_test_is_not_tested_again():
    from ssa_course.lessons.l09_ranges import machine_tests

    # (a[i % 2] = 5 first: a load from the fresh array alone would read its zero, no access)
    comp = compile_source("fn main(n: int, i: int) { var a = new int[n]; a[i % 2] = 5;"
                          " a[i] = a[i] + 1; print(a[i]); }", "d.tiny")
    # the load tests for the store after it (print reads the stored value, no access)
    assert machine_tests(comp) == (3, 2)
    for args in (["3", "1"], ["3", "3"], ["0", "0"]):
        want = stages.run(comp, args, via="ast")
        got = stages.run(comp, args, via="optimized")
        assert (got.stdout, got.error) == (want.stdout, want.error)


def test_son_ranges_golden_text():
    comp = load_file(str(GOLDEN / "ranges.tiny"))
    text = views.render(comp, "son-ranges")
    expected = (GOLDEN / "ranges.son-ranges").read_text()
    assert text.rstrip("\n") == expected.rstrip("\n")


def test_son_ranges_drawing_shows_ranges_facts_and_greyed_checks():
    dot = views.render(load_file(str(GOLDEN / "ranges.tiny")), "son-ranges", "dot")
    assert "bounds checks: 6 before, 2 after" in dot  # fill, and its copy inlined in main
    assert "int[0..100000000]" in dot  # the loop phi's range
    assert "i#" in dot and " < len#" in dot  # a fact on a branch edge
    assert "removed: index in" in dot and "kept: index in" in dot
    assert '"#dddddd"' in dot  # greyed


# -- differential, on generated loops ----------------------------------------------------------

LOOP = """fn main(n: int) {{
    var a = new int[n];
    var i = {start};
    var steps = 0;
    while ({cond} && steps < 12) {{
        a[{index}] = steps;
        print(i, a[{index}]);
        i = i + {step};
        steps = steps + 1;
    }}
}}
"""


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["0", "1", "-1", "len(a) - 1", "len(a)", "n", "n - 3"]),
       st.sampled_from(["i < len(a)", "i <= len(a)", "i >= 0", "i > 0", "i < len(a) - 1",
                        "i != len(a)", "len(a) > i", "i + 1 < len(a)"]),
       st.sampled_from(["i", "i - 1", "i + 1", "i % 3", "len(a) - 1 - i"]),
       st.sampled_from(["1", "2", "-1", "-2", "3"]),
       st.integers(0, 5))
def test_generated_loops_behave_like_the_reference(start, cond, index, step, n):
    src = LOOP.format(start=start, cond=cond, index=index, step=step)
    comp = compile_source(src, "gen.tiny")
    want = stages.run(comp, [str(n)], via="ast")
    for via in ("son-ranges", "optimized"):
        got = stages.run(comp, [str(n)], via=via)
        assert (got.stdout, got.status, got.error) == (want.stdout, want.status, want.error), \
            (via, src, n)


CARRIED = """fn main(n: int) {{
    var a = new int[n];
    var i = {start};
    var j = -1;
    var steps = 0;
    while ({cond} && steps < 8) {{
        if (j >= 0) {{
            a[j] = 1;
            print(j);
        }}
        a[{index}] = steps;
        if ({keep}) {{ j = {index}; }} else {{ j = -1; }}
        {reassign}
        i = i + {step};
        steps = steps + 1;
    }}
}}
"""


def _machine_stage() -> str | None:
    from ssa_course import registry

    for name in ("native", "emulated"):
        if registry.representation(name).unavailable() is None:
            return name
    return None


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["0", "1", "n - 1", "len(a) - 1"]),
       st.sampled_from(["i < len(a)", "i >= 0", "i + 1 < len(a)", "i <= len(a) - 1"]),
       st.sampled_from(["i", "i - 1", "len(a) - 1 - i"]),
       st.sampled_from(["i < len(a)", "i + 1 < len(a)", "i >= 0"]),
       st.sampled_from(["", "a = new int[2];", "a = new int[n + 1];", "a = new int[i];"]),
       st.sampled_from(["1", "-1", "2"]),
       st.integers(0, 4))
def test_values_carried_round_a_loop_behave_like_the_reference(start, cond, index, keep,
                                                              reassign, step, n):
    """An index set in one iteration and used in the next, an array replaced in between:
    machine code too (it is where a wrongly proven access would go unchecked)."""
    src = CARRIED.format(start=start, cond=cond, index=index, keep=keep, reassign=reassign,
                         step=step)
    comp = compile_source(src, "carried.tiny")
    want = stages.run(comp, [str(n)], via="ast")
    machine = _machine_stage()
    for via in ("son-ranges", "optimized", *([machine] if machine else [])):
        got = stages.run(comp, [str(n)], via=via)
        assert (got.stdout, got.status, got.error) == (want.stdout, want.status, want.error), \
            (via, src, n)


def test_a_function_without_bounds_checks_skips_the_analysis(monkeypatch):
    """No array access: ``bce`` reports 0 before, 0 after without running the range
    analysis (it would decide nothing), and leaves the same graph as when it runs it."""
    import ssa_course.son.bce as bce
    from ssa_course.son.printer import format_graphs

    src = ("fn f(n: int) -> int { if (n > 3) { return n - 3; } return n; }\n"
           "fn main(n: int) { print(f(n) + f(n + 1)); }")
    before = passes.run_pipeline(compile_source(src), ["parse", "sccp"])
    text = format_graphs(before.graph)
    called = []
    monkeypatch.setattr(bce, "eliminate_bounds_checks", lambda fg: called.append(fg))
    state = passes.run_pipeline(compile_source(src), ["parse", "sccp", "bce"])
    assert not called
    assert {fn: tuple(c["bounds checks"]) for fn, c in state.counters.items()} \
        == {"f": (0, 0), "main": (0, 0)}
    assert format_graphs(state.graph) == text


def _graph_text(state) -> str:
    from ssa_course.son.printer import format_graphs

    return format_graphs(state.graph)


SHARED = ("fn main(n: int) { var a = new int[n % 7 + 3]; var s = 0;"
          " for (var i = 0; i < len(a); i = i + 1) { a[i] = i; s = s + a[i]; }"
          " var j = n; if (j >= 0 && j < len(a)) { s = s + a[j]; }"
          " print(s + a[n % 3]); }")


def test_bce_right_after_ranges_takes_its_proofs_without_solving_again(monkeypatch):
    """``ranges`` decides the checks with its own analysis; a ``bce`` right after it
    removes those without a second solve when they are all the checks there are, and
    leaves the graph ``bce`` alone (solving again) leaves."""
    import ssa_course.son.bce as bce

    src = ("fn main(n: int) { var a = new int[n % 7 + 3];"
           " for (var i = 0; i < len(a); i = i + 1) { a[i] = i; }"
           " var s = 0; var k = 0; while (k < len(a)) { s = s + a[k]; k = k + 1; }"
           " print(s); }")
    pipeline = ["parse", "sccp", "ranges", "bce"]
    solves = []
    real = bce.analyse
    monkeypatch.setattr(bce, "analyse", lambda fg: solves.append(fg) or real(fg))
    shared = passes.run_pipeline(compile_source(src), pipeline)
    assert len(solves) == 1  # the one in ranges
    assert shared.counters["main"]["bounds checks"] == [2, 0]
    solves.clear()
    apart = passes.run_pipeline(compile_source(src), ["parse", "sccp", "ranges", "sccp", "bce"])
    assert len(solves) == 2  # not right after ranges: bce solves its own
    assert apart.counters["main"]["bounds checks"] == [2, 0]
    alone = passes.run_pipeline(compile_source(src), pipeline[:-1])
    alone.graph.proven_checks = None  # what bce finds when ranges handed it nothing
    passes.run_pass(alone, passes.get_pass("bce"))
    assert _graph_text(shared) == _graph_text(alone)
    assert shared.graph.functions["main"].graph.in_bounds \
        == alone.graph.functions["main"].graph.in_bounds != set()


def test_a_check_ranges_did_not_prove_makes_bce_solve_and_keep_both_answers(monkeypatch):
    """The loop's accesses and ``a[j]`` under ``0 <= j < len(a)`` are proven, ``a[n]`` is
    not: bce solves again, and only ``a[n]`` keeps its check."""
    import ssa_course.son.bce as bce

    solves = []
    real = bce.analyse
    monkeypatch.setattr(bce, "analyse", lambda fg: solves.append(fg) or real(fg))
    src = SHARED.replace("a[n % 3]", "a[n]")
    shared = passes.run_pipeline(compile_source(src), passes.DEFAULT_PIPELINE)
    assert len(solves) == 2
    before, after = shared.counters["main"]["bounds checks"]
    assert after == 1 and before > after  # only a[n] keeps its check


def test_a_stale_or_foreign_proof_is_not_taken():
    """A proof names the If and its test: a check whose If is not in it, or whose test
    changed, is decided by a fresh analysis (here: kept, since it can fail)."""
    from ssa_course.son.bce import bounds_checks, eliminate_bounds_checks

    src = "fn main(n: int) { var a = new int[3]; print(a[n]); }"
    state = passes.run_pipeline(compile_source(src), ["parse", "sccp"])
    fg = state.graph.functions["main"]
    (check,) = bounds_checks(fg)
    # the right If with another test's id, and another If's id: neither counts
    decisions, before, after = eliminate_bounds_checks(
        fg, {check.id: check.inputs[1].id + 1, check.id + 1: check.inputs[1].id})
    assert (before, after) == (1, 1)
    assert decisions[check.id].proven is None


@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=0, max_value=10_000))
def test_bce_after_ranges_leaves_what_bce_alone_leaves(seed):
    """On generated programs: the default pipeline's graph after ``bce`` is the same
    whether ``bce`` takes the proofs of ``ranges`` or solves on its own."""
    import sys as _sys

    _sys.path.insert(0, str(ROOT / "tests"))
    from fuzzgen import generate

    src = generate(seed)
    pipeline = ["inline", "unroll", "const-params", "sroa", "parse", "sccp", "ranges", "bce"]
    shared = passes.run_pipeline(compile_source(src, "g.tiny"), pipeline)
    state = passes.run_pipeline(compile_source(src, "g.tiny"), pipeline[:-1])
    state.graph.proven_checks = None
    passes.run_pass(state, passes.get_pass("bce"))
    assert _graph_text(shared) == _graph_text(state)
    assert {n: f.graph.in_bounds for n, f in shared.graph.functions.items()} \
        == {n: f.graph.in_bounds for n, f in state.graph.functions.items()}
    assert shared.counters == state.counters
