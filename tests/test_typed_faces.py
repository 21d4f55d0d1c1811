"""What the type checker is told about the sea of nodes and the registry holds at run time.

mypy checks son/ and lessons/ strictly (``make lint``); the guarantees it is told about are
checked here: an input a node's shape promises (``Node.operand``), the one rule of where
control goes (``control.goes_to``), a constant's integer (``types.int_value``), a
representation's artifact asked for by class (``registry.build_as``), a pass's program
(``PassState.quads_program`` / ``graph_program``) and the interference faces of a function
whose allocation has no graph.
"""

from __future__ import annotations

import re

import pytest

from ssa_course import registry
from ssa_course.compilation import compile_source
from ssa_course.errors import UsageError
from ssa_course.lessons.l05_control import son_program
from ssa_course.lessons.l08_scheduling import Scheduled, scheduled
from ssa_course.passes import PassState, run_pipeline
from ssa_course.quads.ir import Program
from ssa_course.son.control import If, Proj, Region, Start, goes_to
from ssa_course.son.data import Add
from ssa_course.son.graph import Graph
from ssa_course.son.program import SeaOfNodes
from ssa_course.son.types import FALSE, INT_BOTTOM, TRUE, int_const, int_value

BRANCHY = """
fn main(n: int) {
    var s = 0;
    if (n > 2) { s = n + 1; } else { s = n - 1; }
    print(s);
}
"""


def test_operand_is_the_input_and_a_missing_one_names_the_node():
    fg = son_program(compile_source(BRANCHY)).functions["main"]
    add = next(n for n in fg.nodes() if isinstance(n, Add))
    assert add.operand(1) is add.inputs[1] and add.operand(2) is add.inputs[2]
    assert add.inputs[0] is None  # a floating node's control
    with pytest.raises(AssertionError, match=re.escape(f"{add!r} has no input 0")):
        add.operand(0)


def test_goes_to_follows_control_inputs_and_every_path_of_a_merge():
    g = Graph()
    start = Start(g, [])
    ctrl = Proj(g, start, 0, "ctrl", control=True)
    iff = If(g, ctrl, None)
    t, f = Proj(g, iff, 0, "True", control=True), Proj(g, iff, 1, "False", control=True)
    merge = Region(g, None, t, f)
    assert goes_to(ctrl, iff) and goes_to(iff, t) and goes_to(iff, f)
    assert goes_to(t, merge) and goes_to(f, merge)  # a Region: every input is a path in
    assert not goes_to(start, iff)  # not a user of Start
    data = Add(g, None, t, f)  # a data node reading control nodes is no successor
    assert not goes_to(t, data)


@pytest.mark.parametrize("t, value", [(int_const(7), 7), (int_const(-1), -1), (INT_BOTTOM, None),
                                      (TRUE, None), (FALSE, None)])
def test_int_value_is_the_integer_of_a_constant_integer_type_only(t, value):
    assert int_value(t) == value


def test_build_as_gives_the_artifact_and_names_both_classes_when_it_is_another():
    comp = compile_source(BRANCHY)
    assert registry.build_as(comp, "son", SeaOfNodes) is registry.build(comp, "son")
    assert isinstance(scheduled(comp), Scheduled)
    with pytest.raises(TypeError, match=r"'son' builds a SeaOfNodes, not a Program"):
        registry.build_as(comp, "son", Program)


def test_a_pass_reads_the_program_of_its_form():
    state = run_pipeline(compile_source(BRANCHY), ("parse", "sccp"))
    assert state.graph_program() is state.graph
    with pytest.raises(AssertionError, match="form 'graph' has no quads program"):
        state.quads_program()
    state = run_pipeline(compile_source(BRANCHY), ("parse", "gcm"))
    assert state.quads_program() is state.quads
    with pytest.raises(AssertionError, match="form 'ssa' has no graph"):
        state.graph_program()
    assert PassState(compile_source(BRANCHY)).form == "source"


def test_interference_faces_of_a_function_with_every_value_in_a_slot():
    from ssa_course.lessons.l11_codegen import (
        _interference_dot,
        _interference_text,
        compile_machine,
    )

    compiled = compile_machine(compile_source(BRANCHY), allocator="spill-all")
    assert _interference_text(compiled) == "main: every value in a slot\n"
    with pytest.raises(UsageError, match="function 'main' has no interference graph"):
        _interference_dot(compiled, "t")
    coloured = compile_machine(compile_source(BRANCHY))
    assert _interference_dot(coloured, "t").startswith("graph ")
