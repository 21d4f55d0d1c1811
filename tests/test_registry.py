"""The one registry of representations: every name works everywhere, with four faces.

``run --via``, ``show --as`` and ``opt --emit`` accept one list (the registry's names, in
the lessons' order); every representation runs, verifies, prints and draws; the pipeline
verifies after every pass and names the pass that broke an invariant.
"""

from __future__ import annotations

import pydot
import pytest

import ssa_course
from ssa_course import passes, registry, views
from ssa_course.compilation import compile_source, from_quads
from ssa_course.errors import UsageError, VerifyError
from ssa_course.lessons import LESSONS
from ssa_course.quads import ir
from ssa_course.runtime import Limits, Output
from ssa_course.tiny.types import INT

PROGRAM = """
struct P { x: int; y: int; }
fn f(a: [int], i: int) -> int { return a[i] * 2; }
fn main(n: int) {
    var a = new int[3];
    var p = new P { x: n, y: 2 };
    var s = 0;
    for (var i = 0; i < 3; i = i + 1) { a[i] = i + p.x; s = s + f(a, i); }
    try { if (s > 100) { throw s; } print(s); } catch (e) { print(0 - e); }
}
"""

NAMES = registry.names()


def test_names_come_from_the_lessons_in_order():
    lessons = [r.lesson for r in registry.representations()]
    assert lessons == sorted(lessons)
    assert set(lessons) <= {lesson.number for lesson in LESSONS}
    assert NAMES[:2] == ["ast", "quads"] and len(NAMES) == len(set(NAMES))
    assert ssa_course.stage_names() == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_every_representation_has_four_faces(name):
    comp = compile_source(PROGRAM)
    rep = registry.representation(name)
    if rep.unavailable() is not None:  # e.g. native-aarch64 on an x86-64 machine
        pytest.skip(f"{name}: {rep.unavailable()}")
    artifact = registry.build(comp, name)
    rep.verify(artifact)  # verified when built; verifying again is harmless
    out = Output()
    rep.run(artifact, [5], out, Limits())
    assert out.text() == "36\n"
    text = rep.text(artifact)
    assert text.strip()
    dot = rep.dot(artifact, "prog.tiny", None)
    assert pydot.graph_from_dot_data(dot), name
    # the drivers read the same registry
    assert views.render(comp, name, "text") == text
    assert ssa_course.run(comp, "5", via=name).stdout == "36\n"


@pytest.mark.parametrize("name", [n for n in NAMES if n != "ast"])
def test_opt_emits_every_representation(name):
    state = passes.run_pipeline(compile_source(PROGRAM))
    assert passes.emit(state, name, "text").strip()
    assert passes.emit(state, name, "dot").lstrip().startswith(("digraph", "graph"))


def test_opt_emits_a_graph_as_it_stands():
    state = passes.run_pipeline(compile_source(PROGRAM), ["parse", "sccp"])
    assert passes.emit(state, "son-opt").startswith("// sea of nodes")
    with pytest.raises(UsageError, match="shows Tiny source"):
        passes.emit(state, "ast")


def test_every_graph_representation_emits_the_pipelines_graph_as_it_stands():
    """Every representation whose artifact is a graph shows the pipeline's graph itself:
    after ``parse`` (no SCCP) ``son-opt`` still prints the unfolded ``1 + 2``."""
    graphs = registry.in_form("graph")
    assert {"son-raw", "son-select", "son", "son-opt", "son-ranges"} <= \
        {r.name for r in graphs}
    state = passes.run_pipeline(compile_source("fn main() { var x = 1; print(x + 2); }"),
                                ["parse"])
    for rep in graphs:
        assert passes.emit(state, rep.name) == rep.text(state.graph), rep.name


def test_a_new_graph_representation_is_never_rebuilt_from_quads(monkeypatch):
    """A graph representation added by a lesson (here a made-up one whose build fails) is
    shown from the pipeline's graph without anything else to update: rebuilding it from
    quads would call its build."""
    from ssa_course.lessons.faces import add_graphs, graphs_text

    def build(comp: object) -> object:
        raise AssertionError("rebuilt from quads")

    monkeypatch.setattr(registry, "_REPRESENTATIONS", dict(registry._REPRESENTATIONS))
    add_graphs("son-new", "a graph a new lesson adds", build)
    state = passes.run_pipeline(compile_source(PROGRAM), ["parse", "sccp"])
    assert passes.emit(state, "son-new") == graphs_text(state.graph)
    assert "son-new" in passes.emit(state, "son-new", "dot")


def test_each_form_is_checked_by_exactly_one_representation(monkeypatch):
    assert dict(passes.FORM_REPRESENTATION) == {
        "source": "quads", "graph": "son", "ssa": "ssa-pruned", "phis": "quads",
        "quads": "quads"}
    monkeypatch.setattr(registry, "_REPRESENTATIONS", dict(registry._REPRESENTATIONS))
    faces = registry.representation("son")
    with pytest.raises(ValueError, match="form 'graph' is already checked by 'son'"):
        registry.add_representation("son-2", "x", build=faces.build, run=faces.run,
                                    verify=faces.verify, text=faces.text, dot=faces.dot,
                                    checks=("graph",))
    with pytest.raises(ValueError, match="unknown form 'graf'"):
        registry.add_representation("son-3", "x", build=faces.build, run=faces.run,
                                    verify=faces.verify, text=faces.text, dot=faces.dot,
                                    form="graf")
    del registry._REPRESENTATIONS["son"]
    with pytest.raises(ValueError, match="form 'graph' has 0 checking representations"):
        passes.FORM_REPRESENTATION["graph"]


def test_a_pass_that_breaks_an_invariant_is_named(monkeypatch):
    """A pass leaving a jump to a label that does not exist is caught right after it."""
    def breaks(state) -> None:
        fn = state.quads.functions["main"]
        fn.body.append(ir.Instr("jmp", labels=["nowhere"]))

    monkeypatch.setitem(registry._PASSES, "vandal", registry.Pass(
        "vandal", "breaks the program", "99", ("quads",), "quads", breaks))
    comp = compile_source(PROGRAM)
    with pytest.raises(VerifyError, match=r"quads after pass 'vandal'.*nowhere"):
        passes.run_pipeline(comp, ["parse", "gcm", "out-of-ssa", "vandal"])


@pytest.mark.parametrize("verify_each", [True, False])
def test_a_broken_pass_is_named_whether_or_not_each_pass_is_verified(monkeypatch, verify_each):
    """Verified only at the end (``opt``'s default outside tests), a broken end result is
    retraced pass by pass: the error names the pass, as when every pass is verified."""
    calls = []

    def breaks(state) -> None:
        calls.append(1)
        state.quads.functions["main"].body.append(ir.Instr("jmp", labels=["nowhere"]))

    monkeypatch.setitem(registry._PASSES, "vandal", registry.Pass(
        "vandal", "breaks the program", "99", ("quads",), "quads", breaks))
    with pytest.raises(VerifyError, match=r"quads after pass 'vandal'.*nowhere"):
        passes.run_pipeline(compile_source(PROGRAM), ["parse", "gcm", "out-of-ssa", "vandal",
                                                      "dce"], verify_each=verify_each)
    assert len(calls) == (1 if verify_each else 2)  # the retrace ran it once more


def test_a_pass_that_crashes_a_later_one_is_named_without_verify_each(monkeypatch):
    """A pass leaves a graph with a dangling edge and the next pass crashes. Verified only
    at the end, the crash is retraced and the pass that broke the graph is named; with
    nothing broken before it, the crash itself is what the caller gets."""
    def breaks(state) -> None:
        graph = state.graph.functions["main"].graph
        for n in list(graph.nodes.values()):
            if n.inputs and n.inputs[0] is not None:
                n.inputs[0] = None  # an input gone, its node's users not told
                break

    def crashes(state) -> None:
        raise RuntimeError("a later pass fell over")

    for name, fn in (("vandal", breaks), ("crash", crashes)):
        monkeypatch.setitem(registry._PASSES, name, registry.Pass(
            name, "test", "99", ("graph",), "graph", fn))
    with pytest.raises(VerifyError, match=r"after pass 'vandal': edges mirror"):
        passes.run_pipeline(compile_source(PROGRAM), ["parse", "vandal", "crash"],
                            verify_each=False)
    with pytest.raises(RuntimeError, match="fell over"):
        passes.run_pipeline(compile_source(PROGRAM), ["parse", "crash"], verify_each=False)


def test_verify_each_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv(passes.VERIFY_EACH_ENV, "1")
    assert passes.verify_each_default()
    for off in ("", "0"):
        monkeypatch.setenv(passes.VERIFY_EACH_ENV, off)
        assert not passes.verify_each_default()
    monkeypatch.delenv(passes.VERIFY_EACH_ENV)
    assert not passes.verify_each_default()


def test_the_quads_verifier_names_the_instruction():
    from ssa_course.quads.verify import verify_quads

    fn = ir.Function("main", [], None, [ir.Instr("const", "x", INT, value=1),
                                        ir.Instr("add", "y", INT, ["x"])])
    with pytest.raises(VerifyError) as e:
        verify_quads(ir.Program({"main": fn}, {}))
    assert "@main: y: int = add x" in str(e.value)


def test_the_quads_verifier_allows_a_runtime_error():
    """Reading a variable nothing assigns fails when it runs; it is not a broken rule."""
    from ssa_course.quads.verify import verify_quads

    fn = ir.Function("main", [], None, [ir.Instr("print", args=["x"])])
    verify_quads(ir.Program({"main": fn}, {}))
    comp = from_quads(ir.Program({"main": fn}, {}))
    r = ssa_course.run(comp, via="optimized")
    assert r.status == 2 and "x" in r.error


def test_the_ast_verifier_names_the_node():
    from ssa_course.tiny.verify import verify_ast

    program = compile_source("fn main() { var x = 1; print(x + 2); }").ast
    verify_ast(program)
    stmt = program.functions["main"].body.stmts[1]
    stmt.args[0].ty = None
    with pytest.raises(VerifyError, match=r"every expression typed: Binary in main at 1:32"):
        verify_ast(program)


def test_a_verifier_failure_names_the_representation(monkeypatch):
    comp = compile_source(PROGRAM)
    rep = registry.representation("julia")

    def broken(artifact) -> None:
        raise VerifyError("a rule", "somewhere")

    monkeypatch.setitem(registry._REPRESENTATIONS, "julia",
                        registry.Representation(**{**{f: getattr(rep, f) for f in
                                                      rep.__slots__}, "verify": broken}))
    r = ssa_course.run(comp, "5", via="julia")
    assert r.status == 3 and r.error == "verify: julia: a rule: somewhere"


def test_julia_draws_every_function():
    dot = views.render(compile_source(PROGRAM), "julia", "dot")
    assert "f (IRCode)" in dot and "main (IRCode)" in dot


def test_ircode_carries_its_structs():
    program = registry.build(compile_source(PROGRAM), "julia")
    assert list(program.structs) == ["P"]


def test_importing_one_lesson_first_keeps_the_order():
    """A notebook that imports lesson 07's module before anything else still sees every
    representation in lesson order, each with its lesson's number."""
    import subprocess
    import sys

    code = ("from ssa_course.lessons.l07_optimistic import optimistic_program\n"
            "from ssa_course import registry\n"
            "print(' '.join(r.lesson + ':' + r.name for r in registry.representations()))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out[0] == "00:ast" and "07:son-opt" in out
    assert [x.split(":")[0] for x in out] == sorted(x.split(":")[0] for x in out)
