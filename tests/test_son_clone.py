"""``son.clone``: a copy of a sea of nodes is the graph again, node for node, and shares
no node with the original (``son-ranges`` starts from a copy of ``son-opt``'s graph)."""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ssa_course import registry
from ssa_course.compilation import compile_source
from ssa_course.lessons.faces import fresh_graphs
from ssa_course.son.bce import decide_branches, eliminate_bounds_checks
from ssa_course.son.clone import _slots, clone_program
from ssa_course.son.graph import Node
from ssa_course.son.printer import format_graphs
from ssa_course.son.sccp import apply_to_program

sys.path.insert(0, str(Path(__file__).parent))
from fuzzgen import generate

PROGRAMS = Path(__file__).parent / "programs"
SAMPLES = ["bce_nested.tiny", "structs.tiny", "try_in_loop_break.tiny",
           "mutual_recursion.tiny", "array_of_arrays.tiny", "nested_loops_break_continue.tiny",
           "recursive_struct_tree.tiny"]


def _shape(program: object) -> list:
    """Everything a copy must repeat: per function, per node (in table order) its class,
    id, type, label, input and output ids; and the graph's bookkeeping."""
    out = []
    for name, fg in program.functions.items():  # type: ignore[attr-defined]
        g = fg.graph
        out.append((name, g.next_id, g.edits, g.settled, sorted(g.lines.items()),
                    sorted(g.in_bounds), fg.start.id, fg.stop.id,
                    {i: sorted(d) for i, d in g.deps.items()}))
        for i, n in g.nodes.items():
            out.append((i, type(n).__name__, n.id, n.type, n.label,
                        [None if x is None else x.id for x in n.inputs],
                        [x.id for x in n.outputs]))
    return out


def _old_nodes(program: object) -> set[int]:
    return {id(n) for fg in program.functions.values()  # type: ignore[attr-defined]
            for n in fg.graph.nodes.values()}


def _references(n: Node) -> list[object]:
    found: list[object] = []
    for name in _slots(type(n)):
        if hasattr(n, name):
            v = getattr(n, name)
            found.extend(v if isinstance(v, (list, tuple)) else [v])
    return found


def _check_copy(src: str, name: str) -> None:
    comp = compile_source(src, name)
    original = fresh_graphs(comp, True)
    apply_to_program(original)
    before_text, before_shape = format_graphs(original), _shape(original)
    copy = clone_program(original)
    assert _shape(copy) == before_shape
    assert format_graphs(copy) == before_text
    old = _old_nodes(original)
    for fg in copy.functions.values():
        for n in fg.graph.nodes.values():
            assert n.graph is fg.graph
            assert not any(id(r) in old for r in _references(n)), (n, "shares a node")
    # changing the copy leaves the original alone, and the copy changes as a rebuilt
    # graph would (what son-ranges relies on)
    rebuilt = fresh_graphs(comp, True)
    apply_to_program(rebuilt)
    for program in (copy, rebuilt):
        for fg in program.functions.values():
            decide_branches(fg)
            eliminate_bounds_checks(fg)
    assert format_graphs(original) == before_text and _shape(original) == before_shape
    assert _shape(copy) == _shape(rebuilt)
    assert format_graphs(copy) == format_graphs(rebuilt)


def test_copies_of_the_corpus_are_the_graph_again() -> None:
    for name in SAMPLES:
        _check_copy((PROGRAMS / name).read_text(), name)


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 10_000))
def test_copies_of_generated_programs_are_the_graph_again(seed: int) -> None:
    _check_copy(generate(seed, 14), f"seed{seed}.tiny")


def test_son_ranges_starts_from_a_copy_of_son_opt() -> None:
    """Building son-ranges leaves the cached son-opt graph as it was."""
    comp = compile_source((PROGRAMS / "bce_nested.tiny").read_text(), "bce_nested.tiny")
    opt = registry.build(comp, "son-opt")
    text, shape = format_graphs(opt), _shape(opt)
    registry.build(comp, "son-ranges")
    registry.build(comp, "scheduled")
    assert format_graphs(opt) == text and _shape(opt) == shape
