"""Row facts for loop versioning (codegen/loop_rows.py): one scan before an outer loop
shows the rows ``b[k]`` an inner loop reads set and long enough, and the inner loop's
check-free copy loses their unset and bounds checks; inputs that fail the scan's test
(a short row, an unset row, a negative index) print and trap as the interpreter does."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from machine_agree import STAGES, agrees_with_the_interpreter

from ssa_course import registry, views
from ssa_course.codegen.loop_loads import hoist_loop_loads
from ssa_course.codegen.loop_version import version_loops
from ssa_course.codegen.quadcfg import function_blocks, loop_headers, variable_types
from ssa_course.compilation import compile_source
from ssa_course.registry import build
from ssa_course.stages import run as run_stage

ROOT = Path(__file__).resolve().parent.parent
MATMUL = (ROOT / "benchmarks" / "native" / "kernels" / "matmul.tiny").read_text()

# Rows of width w, row `short` of length `size`, row `unset` never stored; the inner loop
# reads b[k][j] for every row k and a j of the outer loop.
JAGGED = """
fn mk(n: int) -> [int] {
    var a = new int[n];
    for (var t = 0; t < n; t = t + 1) { a[t] = t + 1; }
    return a;
}
fn rows(n: int, w: int, short: int, size: int, unset: int) -> [[int]] {
    var b = new [int][n];
    for (var r = 0; r < n; r = r + 1) {
        if (r != unset) { if (r == short) { b[r] = mk(size); } else { b[r] = mk(w); } }
    }
    return b;
}
fn main(n: int, w: int, short: int, size: int, unset: int) {
    var b = rows(n, w, short, size, unset);
    for (var j = short - 1; j < w; j = j + 1) {
        var s = 0;
        for (var k = 0; k < n; k = k + 1) { s = s + b[k][j] * (k + 1); }
        print(j, s);
    }
}
"""


def _blocks(source: str, fn: str = "main"):
    ssa = build(compile_source(source, "t.tiny"), "scheduled").ssa  # type: ignore[attr-defined]
    f = ssa.functions[fn]
    blocks = function_blocks(f)
    params = [n for n, _ in f.params]
    types = variable_types(f)
    guarded: set[str] = set()
    blocks = hoist_loop_loads(blocks, loop_headers(blocks), params, types, guarded)
    bounded: set[str] = set()
    return version_loops(blocks, params, types, guarded, bounded), bounded


def _fast_accesses(blocks):
    return [i for b in blocks if "fast" in b.label for i in b.body
            if i.op in ("aload", "astore")]


def test_matmul_inner_copy_reads_rows_without_checks():
    blocks, bounded = _blocks(MATMUL)
    fast = _fast_accesses(blocks)
    rows = [i for i in fast if i.set_known]
    assert len(rows) == 1 and rows[0].in_bounds  # b[k]: in bounds and set
    assert all(i.in_bounds for i in fast)  # a_i[k], b[k] and b[k][j]
    # the loop as it was keeps every check
    slow = [i for b in blocks if b.label.startswith("b") and "fast" not in b.label
            and "scan" not in b.label for i in b.body if i.op == "aload"]
    assert any(not i.in_bounds for i in slow) and not any(i.set_known for i in slow)
    # one scan, before the outermost loop of the nest, with no fuel check
    (scan,) = bounded
    labels = [b.label for b in blocks]
    assert scan in labels and labels.index(scan) < labels.index("b21")
    assert scan in loop_headers(blocks)


def _listing(stage: str) -> str:
    if registry.representation(stage).unavailable():
        pytest.skip(registry.representation(stage).unavailable())
    return views.render(compile_source(MATMUL, "matmul.tiny"), stage)


def _block_text(listing: str, label_part: str) -> list[str]:
    """The instruction lines of the blocks whose label contains ``label_part``."""
    out, inside = [], False
    for line in listing.splitlines():
        s = line.strip()
        if s.endswith(":") and not s.startswith(("#", "//")):
            inside = label_part in s
            continue
        if inside and s and not s.startswith(("#", "//")):
            out.append(s)
    return out


@pytest.mark.parametrize("stage", ["asm", "asm-aarch64"])
def test_matmul_fast_inner_loop_has_no_trap_branch(stage):
    listing = _listing(stage)
    fast = _block_text(listing, "fast1")
    assert fast, "no fast copy in the listing"
    assert not [s for s in fast if "trap" in s], fast
    # the checked copy still branches to its traps
    assert [s for s in _block_text(listing, "main.b96") if "trap" in s]


@pytest.mark.parametrize("source", [
    # the nest stores into a [[int]]: a row may change between the scan and the loop
    JAGGED.replace("print(j, s);", "print(j, s); b[0] = b[1];"),
    # the nest calls a function (which could store into b); ``first`` calls mk, so it is
    # no leaf and son-opt does not inline it: the call stays in the nest
    "fn first(n: int) -> int { var r = mk(n); return r[0]; }\n"
    + JAGGED.replace("print(j, s);", "print(j, s, first(1));"),
])
def test_nests_that_may_change_rows_get_no_scan(source):
    blocks, bounded = _blocks(source)
    assert not bounded
    assert not [i for i in _fast_accesses(blocks) if i.set_known]


PROGRAMS = {
    "jagged": JAGGED,
    # rows written through, a <= bound, [bool] rows, a row index from the input
    "store rows": """fn main(n: int, w: int, j0: int) {
        var b = new [int][n];
        for (var r = 0; r < n; r = r + 1) { b[r] = new int[w]; }
        for (var j = j0; j < w; j = j + 1) {
            for (var k = 0; k <= n - 1; k = k + 1) { b[k][j] = b[k][j] + k + j; }
            print(j);
        }
        print(b[n - 1][w - 1]);
    }""",
    "bool rows": """fn main(n: int, w: int, q: int) {
        var b = new [bool][n];
        for (var r = 0; r < n; r = r + 1) { b[r] = new bool[w + r % 2]; }
        var c = 0;
        for (var j = 0; j <= w; j = j + 1) {
            for (var k = 0; k < q; k = k + 1) { if (!b[k][j]) { c = c + 1; } }
            print(c);
        }
    }""",
    "matmul": MATMUL,
}
ARGS = {
    "jagged": [["4", "3", "1", "3", "9"], ["4", "3", "2", "2", "9"], ["4", "3", "1", "3", "2"],
               ["3", "2", "0", "2", "1"], ["1", "0", "0", "0", "5"], ["0", "2", "1", "1", "0"]],
    "store rows": [["3", "4", "0"], ["3", "4", "-1"], ["2", "1", "0"], ["1", "3", "2"]],
    "bool rows": [["3", "2", "3"], ["3", "2", "4"], ["4", "1", "2"], ["1", "0", "1"]],
    "matmul": [["0"], ["1"], ["3"]],
}


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_machine_code_prints_and_traps_as_the_interpreter(name, stage):
    agrees_with_the_interpreter(PROGRAMS[name], name, stage, ARGS[name])


JAGGED_COMP = compile_source(JAGGED, "jagged.tiny")


@pytest.mark.skipif(registry.representation("native").unavailable() is not None,
                    reason="no native stage here")
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(0, 5), w=st.integers(0, 4), short=st.integers(-1, 5),
       length=st.integers(0, 5), unset=st.integers(-1, 5))
def test_any_jagged_shape_agrees_with_the_interpreter(n, w, short, length, unset):
    args = [str(x) for x in (n, w, short, length, unset)]
    want = run_stage(JAGGED_COMP, args, via="quads")
    got = run_stage(JAGGED_COMP, args, via="native")
    assert (got.stdout, got.status, got.error) == (want.stdout, want.status, want.error)


@pytest.mark.parametrize("stage", STAGES)
def test_a_step_limit_still_stops_a_nest_with_a_scan(stage):
    # The scan has no fuel check of its own (it is bounded); the nest's loops keep theirs.
    # Fuel counts blocks, not the interpreter's exact steps: a run far over the limit and
    # one well within it (near the limit the two may differ, as before row facts).
    from ssa_course.runtime import Limits

    if registry.representation(stage).unavailable():
        pytest.skip(registry.representation(stage).unavailable())
    small = Limits(steps=60)
    for args in (["30", "30", "1", "30", "99"], ["1", "1", "1", "1", "9"]):
        want = run_stage(JAGGED_COMP, args, via="quads", limits=small)
        got = run_stage(JAGGED_COMP, args, via=stage, limits=small)
        assert (got.status, got.error) == (want.status, want.error), args
