"""Loop versioning (codegen/loop_version.py): which loops get a check-free copy, and that
every stage that runs machine code prints and traps as the interpreter does, on inputs
that take the fast copy and inputs that fail its test."""

from __future__ import annotations

import pytest
from machine_agree import STAGES, agrees_with_the_interpreter

from ssa_course.codegen.loop_loads import hoist_loop_loads
from ssa_course.codegen.loop_version import version_loops
from ssa_course.codegen.quadcfg import function_blocks, loop_headers, variable_types
from ssa_course.compilation import compile_source
from ssa_course.registry import build

# mk stays a call (it calls note: no leaf for son-opt to inline), so the length is unknown
MK = ("fn note(n: int) { print(n); }\n"
      "fn mk(n: int) -> [int] { var a = new int[n]; note(n); return a; }\n")

SUM = MK + """
fn main(n: int, m: int) {
    var a = mk(m);
    var s = 0;
    var k = 0;
    for (k = 0; k < n; k = k + 1) {
        s = s + a[k] * k;
        a[k] = k;
    }
    print(s, k, a[0]);
}
"""


def _versioned(source: str, fn: str = "main"):
    ssa = build(compile_source(source, "t.tiny"), "scheduled").ssa  # type: ignore[attr-defined]
    f = ssa.functions[fn]
    blocks = function_blocks(f)
    before = {b.label for b in blocks}
    params = [n for n, _ in f.params]
    types = variable_types(f)
    blocks = hoist_loop_loads(blocks, loop_headers(blocks), params, types, set())
    after = version_loops(blocks, params, types)
    return before, after


def test_a_counting_loop_over_an_array_from_a_call_gets_a_check_free_copy():
    before, after = _versioned(SUM)
    fast = [b for b in after if "fast" in b.label and b.label not in before]
    slow = [b for b in after if b.label in before]
    accesses = [i for b in fast for i in b.body if i.op in ("aload", "astore")]
    assert len(accesses) == 2 and all(i.in_bounds for i in accesses)
    # the loop as it was keeps its check (a[k] = k after the load needs none: lesson 09)
    assert any(not i.in_bounds for b in slow for i in b.body if i.op == "aload")
    tests = [b for b in after if "vers" in b.label]
    ops = [i.op for b in tests for i in b.body]
    assert ops.count("alen") == 1 and ops.count("br") == len(tests) >= 2
    # s and k live on after the loop through phis at its exit
    (exit_,) = [b for b in after if any(p.dest and ".out" in p.dest for p in b.phis)]
    assert len(exit_.phis) == 2 and len(exit_.preds) == 2


@pytest.mark.parametrize("source", [
    # a second exit (break)
    MK + """fn main(n: int) { var a = mk(n); var s = 0;
       for (var k = 0; k < n; k = k + 1) { if (a[k] > 3) { break; } s = s + a[k]; }
       print(s); }""",
    # the index is not affine in the counter
    MK + """fn main(n: int) { var a = mk(n); var s = 0;
       for (var k = 0; k < n; k = k + 1) { s = s + a[k * k]; } print(s); }""",
    # an affine index with a negative constant offset (its guard could never hold)
    MK + """fn main(n: int) { var a = mk(n); var s = 0;
       for (var k = 1; k < n; k = k + 1) { s = s + a[k - 1]; } print(s); }""",
    # a counter that goes down
    MK + """fn main(n: int) { var a = mk(n); var s = 0;
       for (var k = n - 1; k >= 0; k = k - 1) { s = s + a[k]; } print(s); }""",
    # a loop holding a try
    MK + """fn t(x: int) -> int { if (x > 2) { throw x; } return x; }
       fn main(n: int) { var a = mk(n); var s = 0;
       for (var k = 0; k < n; k = k + 1) { try { s = s + t(a[k]); } catch (e) { s = 0; } }
       print(s); }""",
])
def test_loops_that_do_not_qualify_are_left_alone(source):
    before, after = _versioned(source)
    assert not [b for b in after if b.label not in before and "fast" in b.label]


def test_only_the_inner_loop_of_a_nest_is_copied():
    source = MK + """fn main(n: int) { var a = mk(n); var s = 0;
       for (var i = 0; i < n; i = i + 1) { for (var k = 0; k < n; k = k + 1) {
       s = s + a[k] + i; } } print(s); }"""
    before, after = _versioned(source)
    headers = loop_headers(after)
    assert len(headers) == 3  # the outer loop, the inner loop and its copy


FLAT = MK + """
fn main(n: int, m: int) {
    var a = mk(m);
    var s = 0;
    for (var i = 0; i < n; i = i + 1) {
        for (var k = 0; k < n; k = k + 1) {
            s = s + a[i * n + k] * a[k * n + i];
        }
    }
    print(s);
}
"""


def test_affine_indices_of_a_flat_matrix_lose_their_checks_in_the_copy():
    before, after = _versioned(FLAT)
    fast = [b for b in after if "fast" in b.label and b.label not in before]
    loads = [i for b in fast for i in b.body if i.op == "aload"]
    assert len(loads) == 2 and all(i.in_bounds for i in loads)
    # the guards: one length per (array, scale, offset), the bound and the scale at most
    # 2^31 (so k * n cannot wrap), the largest index below the length
    ops = [i.op for b in after if "vers" in b.label for i in b.body]
    assert ops.count("alen") == 2 and ops.count("mul") == 1


PROGRAMS = {
    "sum": SUM,
    "le bound": MK + """fn main(n: int, m: int) { var a = mk(m); var s = 0;
        for (var k = 0; k <= n; k = k + 1) { s = s + a[k]; a[k] = s + 1; } print(s); }""",
    "start from input": MK + """fn main(n: int, m: int) { var a = mk(n); var s = 0;
        for (var k = m; k < n; k = k + 1) { print(k); s = s + a[k]; } print(s); }""",
    "variable step": MK + """fn main(n: int, m: int) { var a = mk(n); var c = 0;
        if (m > -5 && m != 0) { for (var j = m * m; j < n; j = j + m) { a[j] = 1;
        c = c + 1; } } print(c); }""",
    "rows": MK + """fn main(n: int, m: int) { var b = new [int][n]; var s = 0;
        for (var r = 0; r < n; r = r + 1) { b[r] = mk(m); }
        for (var i = 0; i < n; i = i + 1) { for (var k = 0; k < n; k = k + 1) {
        s = s + b[i][k] * k; } } print(s); }""",
    "flat matrix": FLAT,
    "flat, offset from input": MK + """fn main(n: int, m: int) { var a = mk(n); var s = 0;
        for (var k = 0; k < n; k = k + 1) { s = s + a[k + m]; a[m + k] = k; } print(s); }""",
    "flat, scale from input": MK + """fn main(n: int, m: int) { var a = mk(n * 3); var s = 0;
        for (var k = 0; k <= n; k = k + 1) { s = s + a[k * m + 2]; } print(s); }""",
    "flat, huge scale": MK + """fn main(n: int, m: int) { var a = mk(n); var s = 0;
        var big = m * 4611686018427387904;
        for (var k = 0; k < n; k = k + 1) { s = s + a[k * big + 1]; } print(s); }""",
    "prints inside": MK + """fn main(n: int, m: int) { var a = mk(m); var k = 0;
        while (k < n) { print(a[k] + k); k = k + 2; } print(k); }""",
}
ARGS = [["0", "0"], ["3", "3"], ["3", "5"], ["5", "3"], ["4", "-1"], ["6", "2"],
        ["7", "-3"], ["9", "1"]]


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_machine_code_prints_and_traps_as_the_interpreter(name, stage):
    agrees_with_the_interpreter(PROGRAMS[name], name, stage, ARGS)
