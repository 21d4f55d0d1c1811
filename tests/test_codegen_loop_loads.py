"""Checked loads hoisted out of loops (codegen/loop_loads.py): which loads move, and that
every stage that runs machine code still prints and traps as the interpreter does."""

from __future__ import annotations

import pytest
from machine_agree import STAGES, agrees_with_the_interpreter

from ssa_course.codegen.loop_loads import hoist_loop_loads
from ssa_course.codegen.quadcfg import function_blocks, loop_headers, variable_types
from ssa_course.compilation import compile_source
from ssa_course.registry import build

MATMUL = """
fn main(n: int, i: int) {
    var a = new [int][n];
    for (var r = 0; r < n; r = r + 1) { a[r] = new int[n]; }
    var s = 0;
    for (var k = 0; k < n; k = k + 1) {
        s = s + a[i][k] * k;
    }
    print(s);
}
"""


def _hoisted(source: str, fn: str = "main"):
    ssa = build(compile_source(source, "t.tiny"), "scheduled").ssa  # type: ignore[attr-defined]
    f = ssa.functions[fn]
    blocks = function_blocks(f)
    before = [b.label for b in blocks]
    types = variable_types(f)
    after = hoist_loop_loads(blocks, loop_headers(blocks), [n for n, _ in f.params], types)
    return before, after


def _loads_in(blocks, labels):
    return [i for b in blocks if b.label in labels for i in b.body if i.op == "aload"]


def test_an_invariant_row_is_loaded_before_the_loop_behind_the_loops_test():
    before, after = _hoisted(MATMUL)
    new = [b for b in after if b.label not in before]
    assert [b.label.rstrip("0123456789")[-4:] for b in new] == ["uard", "load", "join"]
    guard, load, join = new
    # G repeats the header's test on the entry values and skips the load when it fails
    assert guard.body[-1].op == "br" and set(guard.succs) == {load.label, join.label}
    # L loads a[i] (a row, with its checks); J names it for the loop
    (row,) = [i for i in load.body if i.op == "aload"]
    assert row.args[1] == "i"
    (phi,) = join.phis
    assert phi.args[1] == row.dest and phi.labels == [guard.label, load.label]
    # the row's elements a[i][k] are still read in the loop, from the phi's name
    inner = [i for i in _loads_in(after, set(before)) if phi.dest in i.args]
    assert len(inner) == 1 and inner[0].args[0] == phi.dest
    # the header's phis now come from the join, not the old preheader
    header = next(b for b in after if b.label in before and join.label in b.preds)
    assert all(join.label in p.labels for p in header.phis)


@pytest.mark.parametrize("source", [
    # something the loop prints before the load: the trap must come after it
    """fn main(n: int, i: int) { var a = new int[3]; var s = 0;
       for (var k = 0; k < n; k = k + 1) { print(k); s = s + a[i]; } print(s); }""",
    # a division (may trap) before the load
    """fn main(n: int, i: int) { var a = new int[3]; var s = 0;
       for (var k = 0; k < n; k = k + 1) { s = s + 100 / (k - 1) + a[i]; } print(s); }""",
    # the index changes in the loop
    """fn main(n: int, i: int) { var a = new int[3]; var s = 0;
       for (var k = 0; k < n; k = k + 1) { s = s + a[k]; } print(s); }""",
    # the load is on one arm of a test only
    """fn main(n: int, i: int) { var a = new int[3]; var s = 0;
       for (var k = 0; k < n; k = k + 1) { if (k > 2) { s = s + a[i]; } } print(s); }""",
    # the loop stores into an array of the same type (a[k] may be a[i])
    """fn main(n: int, i: int) { var a = new int[n]; var k = 0;
       while (k < n) { a[k] = a[i] + k; k = k + 1; } print(a[0]); }""",
    # the loop calls a function (it may store into a)
    """fn f(a: [int]) -> int { a[0] = 5; return 1; }
       fn main(n: int, i: int) { var a = new int[3]; var s = 0;
       for (var k = 0; k < n; k = k + 1) { s = s + a[i] + f(a); } print(s); }""",
])
def test_loads_that_are_not_first_or_not_invariant_stay(source):
    before, after = _hoisted(source)
    assert [b.label for b in after] == before


PROGRAMS = {
    "matmul": MATMUL,
    "zero trips, bad index": """fn main(n: int, i: int) { var a = new int[3]; var s = 0;
        for (var k = 0; k < n; k = k + 1) { s = s + a[i]; } print(s); }""",
    "print first": """fn main(n: int, i: int) { var a = new int[3]; var s = 0;
        for (var k = 0; k < n; k = k + 1) { print(k); s = s + a[i]; } print(s); }""",
    "unset row": """fn main(n: int, i: int) { var a = new [int][4]; a[0] = new int[n];
        var s = 0; for (var k = 0; k < n; k = k + 1) { s = s + a[i][k]; } print(s); }""",
    "two levels": """fn main(n: int, i: int) { var a = new [[int]][2];
        a[0] = new [int][2]; a[0][0] = new int[n]; a[0][1] = new int[n]; var s = 0;
        for (var k = 0; k < n; k = k + 1) { s = s + a[0][i][k] + k; } print(s); }""",
    "while with an index from the loop": """fn main(n: int, i: int) { var a = new int[n];
        var k = 0; while (k < n) { a[k] = a[i] + k; k = k + 1; } print(a[n - 1]); }""",
}
ARGS = [["0", "0"], ["0", "9"], ["3", "0"], ["3", "1"], ["3", "7"], ["2", "-1"]]


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_machine_code_prints_and_traps_as_the_interpreter(name, stage):
    agrees_with_the_interpreter(PROGRAMS[name], name, stage, ARGS)
