"""Strength reduction (codegen/strength.py): ``iv * n`` in an innermost loop becomes an
induction variable, and machine code still prints and traps as the interpreter does,
wrapping products included."""

from __future__ import annotations

import pytest
from machine_agree import STAGES, agrees_with_the_interpreter

from ssa_course.codegen.quadcfg import function_blocks, variable_types
from ssa_course.codegen.strength import reduce_strength
from ssa_course.compilation import compile_source
from ssa_course.registry import build

SCALED = """
fn main(n: int, m: int) {
    var s = 0;
    for (var k = 0; k < n; k = k + 1) {
        s = s + k * m;
    }
    print(s);
}
"""


def _reduced(source: str) -> tuple[int, list[str]]:
    ssa = build(compile_source(source, "t.tiny"), "scheduled").ssa  # type: ignore[attr-defined]
    f = ssa.functions["main"]
    blocks = function_blocks(f)
    done = reduce_strength(blocks, [n for n, _ in f.params], variable_types(f))
    return done, [i.op for b in blocks for i in (*b.phis, *b.body)]


def test_a_product_of_the_counter_and_an_invariant_becomes_an_induction_variable():
    done, ops = _reduced(SCALED)
    assert done == 1
    assert ops.count("phi") == 3  # s, k and the new k * m
    # the two products left are before the loop: init * m and step * m
    assert ops.count("mul") == 2 and "id" in ops


@pytest.mark.parametrize("source", [
    # a constant factor: one imul or lea already, not worth a register
    SCALED.replace("k * m", "k * 7"),
    # the product of two counters
    SCALED.replace("k * m", "k * k"),
    # an outer loop (only innermost loops are rewritten)
    """fn main(n: int, m: int) { var s = 0; for (var i = 0; i < n; i = i + 1) {
       s = s + i * m; for (var k = 0; k < n; k = k + 1) { s = s + 1; } } print(s); }""",
])
def test_products_that_do_not_qualify_are_left_alone(source: str) -> None:
    done, _ = _reduced(source)
    assert done == 0


PROGRAMS = {
    "scaled": SCALED,
    "wrapping": SCALED.replace("k * m", "k * (m * 4611686018427387904 + 3)"),
    "step from input": """fn main(n: int, m: int) { var s = 0;
        if (m != 0) { for (var k = -n; k < n; k = k + m * m) { s = s * 3 + k * n; } }
        print(s); }""",
    "flat matrix": """fn main(n: int, m: int) { var a = new int[n * n]; var s = 0;
        for (var i = 0; i < n; i = i + 1) { for (var k = 0; k < n; k = k + 1) {
        a[k * n + i] = i - k; } }
        for (var i = 0; i < n; i = i + 1) { for (var k = 0; k < n; k = k + 1) {
        s = s + a[i * n + k] * a[k * n + i] + a[k * n + m]; } } print(s); }""",
}
ARGS = [["0", "0"], ["3", "2"], ["5", "-3"], ["4", "7"], ["6", "1"]]


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_machine_code_prints_and_traps_as_the_interpreter(name: str, stage: str) -> None:
    agrees_with_the_interpreter(PROGRAMS[name], name, stage, ARGS)
