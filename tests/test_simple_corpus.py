"""Simple's chapter tests, translated to Tiny (``tests/simple``, issue 22).

Every program runs through every stage and must print its ``.out`` (written from the
program's meaning, as ``tests/programs``); and ``son-opt``'s printed result must cost no
more operations, phis or loads than the result Simple's test states (``// SIMPLE:``),
except for the programs listed in ``WEAKER`` -- each with what is missing, and checked
to be still weaker, so that a fix has to take it off the list.
"""

from __future__ import annotations

import pytest
from corpus import load_simple_corpus, simple_expected
from simple_shape import Shape, our_shape, simple_shape

from ssa_course import registry, stages, views
from ssa_course.compilation import compile_source

CASES = load_simple_corpus()
STAGES = [s.name for s in registry.executors()]

# What Simple folds and son-opt does not yet, per program.
WEAKER: dict[str, str] = {}  # empty since son-opt inlines small leaf calls (#22)


def test_the_corpus_is_there():
    assert len(CASES) >= 110
    assert all(simple_expected(c).startswith("return ") for c in CASES)


_COMP: dict[str, object] = {}


def _compilation(case):
    if case.name not in _COMP:
        _COMP.clear()
        _COMP[case.name] = compile_source(case.source, case.path.name)
    return _COMP[case.name]


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_program_through_stage(case, stage):
    reason = registry.representation(stage).unavailable()
    if reason is not None:
        pytest.skip(f"{stage}: {reason}")
    result = stages.run(_compilation(case), case.args, via=stage)
    assert (result.stdout, result.status) == (case.stdout, case.exit), stage


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_son_opt_is_as_simple_as_simple(case):
    ours = our_shape(views.render(compile_source(case.source, case.path.name), "son-opt"))
    theirs = simple_shape(simple_expected(case))
    if case.name in WEAKER:
        assert not ours.not_worse_than(theirs), f"{case.name} folds now: take it off WEAKER"
    else:
        assert ours.not_worse_than(theirs), f"{case.name}: ours {ours}, Simple's {theirs}"


@pytest.mark.parametrize("text, shape", [
    ("return arg;", Shape(0, 0, 0)),
    ("return ((arg*2)+6);", Shape(2, 0, 0)),
    ("return (arg--2);", Shape(1, 0, 0)),
    ("return Phi(Loop8,0,Phi(Loop21,Phi_sum,(Phi(Loop,0,(Phi_j+1))+Phi_sum)));",
     Shape(2, 3, 0)),
    ("return (.x+a[0]);", Shape(1, 0, 2)),
])
def test_simple_shape_counts_a_printed_result(text, shape):
    assert simple_shape(text) == shape


def test_our_shape_counts_what_main_prints_once_per_node():
    text = views.render(compile_source(
        "fn main(n: int) { var x = n * 3; var y = 0; if (n < 2) { y = x; } else { y = 5; }"
        " print(x + y, x); }"), "son-opt")
    # x = n * 3 is shared: the multiply, the sum and the phi
    assert our_shape(text) == Shape(2, 1, 0)


def test_our_shape_counts_calls_not_allocations_nor_memory_phis():
    text = views.render(compile_source(
        "struct S { f: int; } fn g(x: int) -> int { return x + 1; }"
        " fn main(n: int) { var s = new S { f: n }; var i = 0;"
        " while (i < n) { s.f = s.f + i; i = i + 1; } print(s.f, g(n)); }"), "son-opt")
    # g(n): one operation (a call); s.f round the loop: Phi(n, Phi + i), the counter's
    # phi and + 1; the allocation and the loop's memory phi cost nothing
    assert our_shape(text) == Shape(3, 2, 0)
