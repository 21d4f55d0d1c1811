"""A load after an ``&&`` reuses the load its test made (codegen/join_loads.py): which
loads go, which stay, and that machine code prints and traps as the interpreter does."""

from __future__ import annotations

from pathlib import Path

import pytest
from machine_agree import STAGES, agrees_with_the_interpreter

from ssa_course.codegen.join_loads import reuse_join_loads
from ssa_course.codegen.quadcfg import function_blocks, variable_types
from ssa_course.compilation import compile_source
from ssa_course.registry import build

KERNEL = Path(__file__).resolve().parent.parent / "benchmarks/native/kernels/insertion_sort.tiny"

SORT = """fn main(n: int, seed: int) {
    var a = new int[n];
    for (var i = 0; i < n; i = i + 1) { a[i] = (i * seed + 7) % 11; }
    for (var i = 1; i < n; i = i + 1) {
        var v = a[i];
        var j = i - 1;
        while (j >= 0 && a[j] > v) { a[j + 1] = a[j]; j = j - 1; }
        a[j + 1] = v;
    }
    for (var i = 0; i < n; i = i + 1) { print(a[i]); }
}
"""


def _loads(source: str) -> tuple[int, int, int]:
    """(loads before, loads removed, loads after) in main."""
    ssa = build(compile_source(source, "t.tiny"), "scheduled").ssa  # type: ignore[attr-defined]
    f = ssa.functions["main"]
    blocks = function_blocks(f)
    before = sum(i.op == "aload" for b in blocks for i in b.body)
    removed = reuse_join_loads(blocks, [n for n, _ in f.params], variable_types(f))
    after = sum(i.op == "aload" for b in blocks for i in b.body)
    return before, removed, after


def test_insertion_sort_reads_a_j_once_an_iteration():
    before, removed, after = _loads(KERNEL.read_text())
    assert removed == 1 and after == before - 1


def test_the_compiled_program_is_left_as_it_was():
    comp = compile_source(SORT, "t.tiny")
    ssa = build(comp, "scheduled").ssa  # type: ignore[attr-defined]
    f = ssa.functions["main"]
    text = [(i.op, list(i.args)) for i in f.body if hasattr(i, "op")]
    blocks = function_blocks(f)
    assert reuse_join_loads(blocks, [n for n, _ in f.params], variable_types(f)) == 1
    assert [(i.op, list(i.args)) for i in f.body if hasattr(i, "op")] == text


@pytest.mark.parametrize("source", [
    # a store between the test's load and the body's (a[j + 1] first)
    SORT.replace("{ a[j + 1] = a[j]; j = j - 1; }",
                 "{ a[j + 1] = 0; a[j + 1] = a[j]; j = j - 1; }"),
    # the body reads another element
    SORT.replace("{ a[j + 1] = a[j]; j = j - 1; }", "{ a[j + 1] = a[j + 1] + 1; j = j - 1; }"),
    # || : the body is reached on the edge that did not load
    SORT.replace("j >= 0 && a[j] > v", "j < 0 || a[j] > v").replace(
        "{ a[j + 1] = a[j]; j = j - 1; }", "{ if (j >= 0) { print(a[j]); } j = j - 1; }"),
])
def test_loads_that_may_differ_stay(source):
    assert _loads(source)[1] == 0


PROGRAMS = {
    "sort": SORT,
    # the test's load traps (a is one short): the trap and the output before it stay
    "short": SORT.replace("var v = a[i];", "var v = a[i]; if (i == n - 1) { a = new int[1]; }"),
    "bools": """fn main(n: int) { var f = new bool[n]; var c = 0; var k = 0;
        for (var i = 0; i < n; i = i + 2) { f[i] = true; }
        while (k < n && f[k]) { if (f[k]) { c = c + 1; } k = k + 2; }
        print(c, k); }""",
}
ARGS = {"sort": [["0", "1"], ["1", "3"], ["7", "5"], ["12", "2"]],
        "short": [["1", "1"], ["2", "3"], ["6", "5"]],
        "bools": [["0"], ["1"], ["5"], ["8"]]}


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_machine_code_prints_and_traps_as_the_interpreter(name, stage):
    agrees_with_the_interpreter(PROGRAMS[name], name, stage, ARGS[name])


def _hand_made(after_load: list) -> tuple[int, list]:
    """P1 loads a[j] (then ``after_load``), P2 does not; J tests the && phi; T loads
    a[j] again."""
    from ssa_course.codegen.quadcfg import QBlock
    from ssa_course.quads.ir import Instr
    from ssa_course.tiny.types import BOOL, INT, ArrayType

    arr = ArrayType(INT)
    types = {"a": arr, "j": INT, "v": INT, "x1": INT, "c1": BOOL, "f": BOOL, "c": BOOL,
             "x2": INT, "z": INT}
    blocks = [
        QBlock("E", body=[Instr("const", "f", BOOL, value=False),
                          Instr("br", args=["v"], labels=["P1", "P2"])], succs=["P1", "P2"]),
        QBlock("P1", body=[Instr("aload", "x1", INT, ["a", "j"]), *after_load,
                           Instr("gt", "c1", BOOL, ["x1", "v"]), Instr("jmp", labels=["J"])],
               succs=["J"], preds=["E"]),
        QBlock("P2", body=[Instr("jmp", labels=["J"])], succs=["J"], preds=["E"]),
        QBlock("J", phis=[Instr("phi", "c", BOOL, ["c1", "f"], labels=["P1", "P2"])],
               body=[Instr("br", args=["c"], labels=["T", "F"])], succs=["T", "F"],
               preds=["P1", "P2"]),
        QBlock("T", body=[Instr("aload", "x2", INT, ["a", "j"]), Instr("print", args=["x2"]),
                          Instr("ret")], preds=["J"]),
        QBlock("F", body=[Instr("ret")], preds=["J"]),
    ]
    removed = reuse_join_loads(blocks, ["a", "j", "v"], types)
    return removed, blocks


def test_a_store_or_a_call_after_the_tests_load_keeps_the_second_load():
    from ssa_course.quads.ir import Instr
    from ssa_course.tiny.types import INT

    removed, blocks = _hand_made([])
    assert removed == 1
    (t,) = [b for b in blocks if b.label == "T"]
    assert [i.op for i in t.body] == ["print", "ret"] and t.body[0].args != ["x2"]
    store = Instr("astore", args=["a", "j", "v"])
    call = Instr("call", "z", INT, ["v"], funcs=["g"])
    for extra in ([store], [call]):
        assert _hand_made(extra)[0] == 0
