"""Machine IR as plain data (codegen.mir_data) and exercise 11's drawings (grading.codegen).

The exercise's tasks are graded on this data, so it must say exactly what the engine's
liveness and interference see: computed on the data (turned back into an MFunction), both
give the engine's answer on the real function, for every function of the test corpus.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ssa_course.codegen.interference import build_interference
from ssa_course.codegen.liveness import Liveness, format_minstr
from ssa_course.codegen.mir import PReg, VReg
from ssa_course.codegen.mir_data import (
    FunctionData,
    InstrData,
    function_data,
    function_of_data,
    is_virtual,
    named_graph,
    reg_of_name,
)
from ssa_course.codegen.x86_64.registers import ALLOCATABLE
from ssa_course.compilation import compile_source
from ssa_course.errors import SsaCourseError
from ssa_course.grading.codegen import draw_colouring, draw_edges, draw_live_sets
from ssa_course.lessons.l11_codegen import machine_ir

PROGRAMS = Path(__file__).resolve().parent / "programs"
# sq stays a call (it calls mul: no leaf for son-opt to inline)
CALL = ("fn mul(a: int, b: int) -> int { return a * b; }\n"
        "fn sq(x: int) -> int { return mul(x, x); }\n"
        "fn main(n: int) { var s = 0; var i = 0; while (i < n) { s = s + sq(i); i = i + 1; }"
        " print(s); }")


def _functions():
    out = []
    for path in sorted(PROGRAMS.glob("*.tiny"))[::3]:  # a third of the corpus is plenty
        try:
            fns = machine_ir(compile_source(path.read_text(), path.name))
        except SsaCourseError:  # a program that does not compile: not this test's business
            continue
        out += [(path.stem, fn) for fn in fns.values()]
    return out


def _names(regs) -> set[str]:
    return {str(r) for r in regs if isinstance(r, VReg) or r.name in ALLOCATABLE}


def _edges(fn) -> set[frozenset[str]]:
    return {frozenset((str(a), str(b))) for a, b in build_interference(fn).edges()}


def test_the_data_gives_the_engine_s_liveness_and_interference_on_the_corpus():
    functions = _functions()
    assert len(functions) > 30
    for stem, fn in functions:
        data = function_data(fn)
        again = function_of_data(data)
        live, live_again = Liveness(fn), Liveness(again)
        for label in data.blocks:
            assert _names(live.live_in[label]) == _names(live_again.live_in[label]), stem
            assert _names(live.live_out[label]) == _names(live_again.live_out[label]), stem
        assert _edges(fn) == _edges(again), stem


def test_instructions_name_their_registers_and_copies():
    fns = machine_ir(compile_source(CALL, "call.tiny"))
    data = function_data(fns["main"])
    assert data.name == "main" and data.entry == fns["main"].blocks[0].label
    assert list(data.blocks) == [b.label for b in fns["main"].blocks]
    assert data.succs == {b.label: b.succs for b in fns["main"].blocks}
    rows = [i for instrs in data.blocks.values() for i in instrs]
    first = rows[0]
    assert first == InstrData("mov %1.n, rdi", ("%1.n",), ("rdi",), ("%1.n", "rdi"))
    call = next(i for i in rows if i.text == "call tiny_sq")
    assert call.defs == ("rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11")
    assert call.uses == ("rdi",) and call.copy is None
    texts = [format_minstr(i) for b in fns["main"].blocks for i in b.instrs]
    assert [i.text for i in rows] == texts


def test_registers_outside_the_palette_are_left_out():
    fn = machine_ir(compile_source(CALL, "call.tiny"))["main"]
    data = function_data(fn, registers=("rax", "rbx"))
    named = {n for instrs in data.blocks.values() for i in instrs for n in (*i.defs, *i.uses)}
    assert {n for n in named if not is_virtual(n)} == {"rax"}
    call = next(i for instrs in data.blocks.values() for i in instrs if i.text == "call tiny_sq")
    assert call.defs == ("rax",) and call.uses == ()


def test_machine_ir_is_a_fresh_copy_each_time():
    comp = compile_source(CALL, "call.tiny")
    first = machine_ir(comp)
    first["main"].blocks.clear()
    assert machine_ir(comp)["main"].blocks


def test_names_and_registers():
    assert is_virtual("%3.x") and not is_virtual("rdi")
    v = reg_of_name("%12.s.10")
    assert isinstance(v, VReg) and (v.id, v.hint) == (12, "s.10") and str(v) == "%12.s.10"
    assert str(reg_of_name("%4")) == "%4"
    assert reg_of_name("r12") == PReg("r12")


def test_named_graph_keeps_only_edges_the_engine_stores():
    graph, regs = named_graph("f", ["%1.a", "%2.b", "rax", "rdi"],
                              [("%1.a", "%2.b"), ("rax", "rdi"), ("%1.a", "%1.a"),
                               ("%2.b", "rax"), ("%3.c", "%1.a")], [("%2.b", "%1.a")])
    assert {frozenset((str(a), str(b))) for a, b in graph.edges()} == {
        frozenset(("%1.a", "%2.b")), frozenset(("%2.b", "rax")), frozenset(("%3.c", "%1.a"))}
    assert graph.interferes(regs["rax"], regs["rdi"])  # implied, never stored
    assert [(str(m.dst), str(m.src)) for m in graph.moves] == [("%2.b", "%1.a")]


# ---------------------------------------------------------------- drawings


def _small() -> FunctionData:
    return FunctionData("f", "A", {
        "A": [InstrData("mov %1.a, rdi", ("%1.a",), ("rdi",), ("%1.a", "rdi")),
              InstrData("jmp B", (), (), None)],
        "B": [InstrData("mov rax, %1.a", ("rax",), ("%1.a",), ("rax", "%1.a")),
              InstrData("ret", (), ("rax",), None)]}, {"A": ["B"], "B": []})


def test_live_sets_are_drawn_and_a_wrong_block_is_marked():
    expected = ({"A": {"rdi"}, "B": {"%1.a"}}, {"A": {"%1.a"}, "B": set()})
    right = draw_live_sets(_small(), expected, expected).dot
    assert "\\{rdi\\}" in right and "\\{%1.a\\}" in right and "mov rax, %1.a" in right
    assert "#ffc9c9" not in right
    wrong = draw_live_sets(_small(), ({"A": {"rdi"}, "B": set()}, expected[1]), expected).dot
    assert wrong.count("#ffc9c9") == 1


@pytest.mark.parametrize("answer", [None, 42, "x", ({"A": 3}, []), ([], {}), (1, 2, 3),
                                    ValueError("boom")])
def test_a_drawing_never_fails_on_a_strange_answer(answer):
    data = _small()
    adj = {"%1.a": {"rax"}, "rax": {"%1.a"}}
    assert draw_live_sets(data, answer, ({}, {})).dot
    assert draw_edges(data, answer).dot
    assert draw_colouring(data, adj, answer, ("rax", "rdi")).dot


def test_edges_and_colourings_are_drawn_by_the_engine():
    data = _small()
    dot = draw_edges(data, {frozenset(("%1.a", "rax"))}).dot
    assert "%1.a" in dot and "doublecircle" in dot and "style=dashed" in dot and " -- " in dot
    coloured = draw_colouring(data, {"%1.a": {"rax"}, "rax": {"%1.a"}},
                              ({"%1.a": "rdi"}, []), ("rax", "rdi")).dot
    assert "%1.a\\nrdi" in coloured
    spilled = draw_colouring(data, {"%1.a": {"rax"}, "rax": {"%1.a"}}, ({}, ["%1.a"]),
                             ("rax",)).dot
    assert "spill" in spilled
