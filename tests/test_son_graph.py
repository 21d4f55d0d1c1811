"""The sea of nodes built from Tiny (and Bril): structure, peepholes, verifier, interpreter."""

from __future__ import annotations

import pytest

from ssa_course.compilation import compile_source
from ssa_course.errors import VerifyError
from ssa_course.lessons.l05_control import son_program
from ssa_course.runtime import Limits
from ssa_course.son.control import If, Loop, Phi, Region, Trap
from ssa_course.son.data import Add, Constant, Div, Mul
from ssa_course.son.memory import Load, Print, Store
from ssa_course.son.verify import verify_graphs
from ssa_course.stages import run


def graphs(source: str, optimize: bool = True, kind: str = "tiny"):
    return son_program(compile_source(source, kind=kind), optimize)


def kinds(fg) -> list[str]:
    return [type(n).__name__ for n in fg.nodes()]


def main_of(source: str, optimize: bool = True):
    return graphs(source, optimize).functions["main"]


def test_constants_fold_while_parsing():
    fg = main_of("fn main() { var x = 2 * 3; var y = x + 4; print(y - x); }")
    assert [n for n in fg.nodes() if isinstance(n, (Add, Mul))] == []
    printed = next(n for n in fg.nodes() if isinstance(n, Print))
    assert printed.inputs[2].type.is_constant() and printed.inputs[2].type.lo == 4
    assert fg.stats.constants_found >= 3


def test_raw_graph_keeps_every_operation():
    raw = main_of("fn main() { var x = 2 * 3; var y = x + 4; print(y - x); }", False)
    assert {"Mul", "Add", "Sub"} <= set(kinds(raw))
    assert raw.stats.constants_found == 0


def test_raw_has_more_nodes_than_pessimistic():
    src = "fn main(n: int) { var a = n + 0; var b = 1 * a; if (true) { print(a + b); } }"
    assert len(main_of(src, False).nodes()) > len(main_of(src).nodes())


def test_reassociation_and_gvn():
    fg = main_of("fn main(n: int) { print((n + 1) + 2, n * 5, 5 * n); }")
    adds = [n for n in fg.nodes() if isinstance(n, Add)]
    muls = [n for n in fg.nodes() if isinstance(n, Mul)]
    assert any(a.inputs[2].type.is_constant() and a.inputs[2].type.lo == 3 for a in adds)
    assert len(muls) == 1  # n*5 and 5*n are one node (commutative GVN key)


def test_constant_if_builds_one_side_only():
    fg = main_of("fn main(n: int) { if (1 < 2) { print(n); } else { print(0 - n); } }")
    assert not any(isinstance(n, (If, Region, Phi)) for n in fg.nodes())
    assert fg.stats.dead_branches == 1


def test_dead_region_and_its_phis_disappear():
    fg = main_of("fn main(n: int) { var x = 1; if (false) { x = n; } print(x); }")
    assert not any(isinstance(n, (Region, Phi)) for n in fg.nodes())


def test_loop_phis_for_unchanged_variables_are_removed():
    fg = main_of("fn main(n: int) { var i = 0; var k = 7; while (i < n) { i = i + k; }"
                 " print(i); }")
    loop = next(n for n in fg.nodes() if isinstance(n, Loop))
    assert [p.var_name for p in loop.phis()] == ["i"]  # not n, k or memory


def test_raw_loop_keeps_a_phi_for_every_variable():
    fg = main_of("fn main(n: int) { var i = 0; var k = 7; while (i < n) { i = i + k; }"
                 " print(i); }", False)
    loop = next(n for n in fg.nodes() if isinstance(n, Loop))
    assert sorted(p.var_name for p in loop.phis()) == ["$mem", "i", "k", "n"]


def test_division_by_a_known_constant_floats_and_needs_no_check():
    fg = main_of("fn main(n: int) { print(n / 4); }")
    div = next(n for n in fg.nodes() if isinstance(n, Div))
    assert div.inputs[0] is None and not any(isinstance(n, Trap) for n in fg.nodes())


def test_division_by_a_variable_is_guarded_and_pinned():
    fg = main_of("fn main(n: int) { print(10 / n); }")
    div = next(n for n in fg.nodes() if isinstance(n, Div))
    assert div.inputs[0] is not None and div.inputs[0].label == "True"
    trap = next(n for n in fg.nodes() if isinstance(n, Trap))
    assert trap.message == "division by zero" and trap.pos.line == 1


def test_array_accesses_carry_control_and_memory():
    fg = main_of("fn main(i: int) { var a = new int[3]; a[1] = 5; print(a[1], a[2], a[i]); }")
    stores = [n for n in fg.nodes() if isinstance(n, Store)]
    loads = [n for n in fg.nodes() if isinstance(n, Load)]
    # a[1] after a[1] = 5 reads the 5, a[2] the fresh array's 0; a[i] may read the store
    assert len(stores) == 1 and len(loads) == 1
    assert loads[0].inputs[1] is stores[0]
    printed = next(n for n in fg.nodes() if isinstance(n, Print))
    assert [str(v.type) for v in printed.inputs[2:4]] == ["5", "0"]
    # the array's length is known (3), so the constant indices' checks folded away
    assert sum(isinstance(n, Trap) for n in fg.nodes()) == 1


def test_verifier_names_broken_invariants():
    program = graphs("fn main(n: int) { var i = 0; while (i < n) { i = i + 1; } print(i); }")
    fg = program.functions["main"]
    phi = next(n for n in fg.nodes() if isinstance(n, Phi))
    phi.inputs.append(None)  # a phi with one value too many
    with pytest.raises(VerifyError, match="phi arity"):
        verify_graphs(program)
    phi.inputs.pop()
    add = next(n for n in fg.nodes() if isinstance(n, Add))
    add.inputs[1].outputs.remove(add)  # a one-sided edge
    with pytest.raises(VerifyError, match="edges mirror"):
        verify_graphs(program)
    add.inputs[1].outputs.append(add)
    verify_graphs(program)
    printer = next(n for n in fg.nodes() if isinstance(n, Print))
    printer.set_input(0, add)  # control from a data node
    with pytest.raises(VerifyError, match="control inputs"):
        verify_graphs(program)


def test_types_only_move_down():
    fg = main_of("fn main(n: int) { print(n + 1); }")
    from ssa_course.son.peephole import Peephole
    from ssa_course.son.types import int_const

    add = next(n for n in fg.nodes() if isinstance(n, Add))
    assert not add.type.is_constant()
    peep = Peephole(fg.start)
    add.set_input(1, peep(Constant(fg.graph, fg.start, int_const(5))))
    with pytest.raises(VerifyError, match="types only move down"):
        Peephole(fg.start)(add)


@pytest.mark.parametrize("via", ["son-raw", "son"])
def test_step_limit_and_stack_overflow(via):
    loop = compile_source("fn main() { var i = 0; while (true) { i = i + 1; } }")
    r = run(loop, via=via, limits=Limits(steps=5000))
    assert r.status == 2 and "step limit exceeded" in r.error
    deep = compile_source("fn f(n: int) -> int { return f(n + 1); }\n"
                          "fn main() { print(f(0)); }")
    r = run(deep, via=via, limits=Limits(depth=500))
    assert r.status == 2 and "stack overflow" in r.error


@pytest.mark.parametrize("via", ["son-raw", "son"])
def test_recursion_fifty_thousand_deep(via):
    comp = compile_source("fn f(n: int) -> int { if (n == 0) { return 0; }"
                          " return 1 + f(n - 1); }\nfn main() { print(f(50000)); }")
    r = run(comp, via=via)
    assert (r.stdout, r.status) == ("50000\n", 0)


def test_uncaught_exception_across_calls():
    comp = compile_source("fn f(n: int) { throw n * 2; }\n"
                          "fn main() { print(1); f(21); print(2); }")
    r = run(comp, via="son")
    assert (r.stdout, r.status, r.error) == ("1\n", 2, "error: uncaught exception 42")


def test_print_before_a_certain_trap_is_kept():
    comp = compile_source("fn main() { print(1); var z = 0; print(5 / z); }")
    fg = son_program(comp).functions["main"]
    assert any(isinstance(n, Print) for n in fg.nodes())
    r = run(comp, via="son")
    assert (r.stdout, r.status) == ("1\n", 2) and "division by zero at 1:42" in r.error


def test_endless_loop_keeps_its_effects():
    comp = compile_source("fn main() { var i = 0; while (true) { print(i); i = i + 1; } }")
    r = run(comp, via="son", limits=Limits(steps=200))
    assert r.stdout.startswith("0\n1\n2\n") and "step limit" in r.error


def test_bril_undefined_variable_through_a_phi():
    src = ("@main {\n  c: bool = const false;\n  br c .def .use;\n.def:\n"
           "  x: int = const 1;\n.use:\n  print x;\n}\n")
    comp = compile_source(src, "u.bril", kind="bril")
    for via in ("son-raw", "son"):
        r = run(comp, via=via)
        assert r.status == 2 and "undefined variable 'x'" in r.error


def test_bril_constant_branch_folds():
    src = ("@main {\n  a: int = const 4;\n  b: int = const 5;\n  c: bool = lt a b;\n"
           "  br c .yes .no;\n.yes:\n  print a;\n  ret;\n.no:\n  print b;\n}\n")
    program = graphs(src, kind="bril")
    fg = program.functions["main"]
    assert not any(isinstance(n, If) for n in fg.nodes())
    assert [n.type.lo for n in fg.nodes() if isinstance(n, Constant)] == [4]


def test_node_ids_and_text_are_deterministic():
    from ssa_course.son.printer import format_graphs, graphs_to_dot

    src = "fn main(n: int) { var s = 0; for (var i = 0; i < n; i = i + 1) { s = s + i; } " \
          "print(s); }"
    a, b = graphs(src), graphs(src)
    assert format_graphs(a) == format_graphs(b)
    assert graphs_to_dot(a) == graphs_to_dot(b)


# ---------------------------------------------------------------- SCCP (lesson 07)

from ssa_course.lessons.l07_optimistic import optimistic_program  # noqa: E402
from ssa_course.son.sccp import apply_to_program, sccp  # noqa: E402

LOOP_EXAMPLES = {
    "x_stays_one": "fn main(n: int) { var x = 1; var i = 0; while (i < n) { x = 2 - x; "
                   "i = i + 1; } print(x); }",
    "dead_if_in_loop": "fn main(n: int) { var x = 1; var i = 0; while (i < n) { "
                       "if (x != 1) { print(99); x = 3; } i = i + 1; } print(x, i); }",
    "nested_constant": "fn main(n: int) { var a = 7; var s = 0; for (var i = 0; i < n; "
                       "i = i + 1) { var j = 0; while (j < 2) { a = a * 2 - a; j = j + 1; } "
                       "s = s + a; } print(a, s); }",
}


@pytest.mark.parametrize("name", sorted(LOOP_EXAMPLES))
def test_optimistic_finds_strictly_more_on_the_loop_examples(name):
    comp = compile_source(LOOP_EXAMPLES[name])
    pess, opt = son_program(comp), optimistic_program(comp)
    assert opt.constants_found() > pess.constants_found()
    for args in ([0], [3]):
        assert run(comp, [str(a) for a in args], via="son-opt").stdout == \
            run(comp, [str(a) for a in args], via="ast").stdout


def test_sccp_keeps_x_at_one_and_removes_the_dead_branch():
    program = graphs(LOOP_EXAMPLES["dead_if_in_loop"])
    apply_to_program(program)
    program.verify()
    fg = program.functions["main"]
    assert [n for n in fg.nodes() if isinstance(n, Print) and len(n.inputs) == 3
            and n.inputs[2].type.is_constant() and n.inputs[2].type.lo == 99] == []
    assert sum(isinstance(n, If) for n in fg.nodes()) == 1  # only the loop test is left
    assert program.sccp_counts["dead branches"] == 1


def test_optimistic_types_are_never_below_pessimistic_ones():
    from corpus import load_corpus

    for case in load_corpus():
        comp = compile_source(case.source, case.name)
        pess = son_program(comp)
        for fg in pess.functions.values():
            types = sccp(fg).types
            for node in fg.nodes():
                assert node.type.isa(types[node.id]), (case.name, node, node.type,
                                                       types[node.id])


def test_sccp_trace_replays_falling_types():
    fg = graphs(LOOP_EXAMPLES["x_stays_one"]).functions["main"]
    result = sccp(fg, trace=True)
    assert result.trace[0].label == "Start" and result.trace[0].old == "TOP"
    phi_steps = [s for s in result.trace if s.label == "Phi"]
    assert phi_steps and all(s.old != s.new for s in result.trace)
    assert len(result.trace) <= result.steps


def test_every_corpus_program_optimistic_at_least_pessimistic():
    from corpus import load_corpus

    for case in load_corpus():
        comp = compile_source(case.source, case.name)
        assert optimistic_program(comp).constants_found() >= \
            son_program(comp).constants_found(), case.name


@pytest.mark.parametrize("via", ["son-raw", "son", "son-opt", "scheduled", "optimized"])
def test_tiny_programs_as_bril_through_the_graph(via):
    """The Bril builder (from SSA) on every corpus program's quads: try/catch, arrays,
    structs, endless loops and all."""
    from corpus import load_corpus

    from ssa_course.quads.bril import to_bril_text

    for case in load_corpus():
        if "step limit" in case.stderr:
            continue  # ten million steps: the differential test runs it already
        comp = compile_source(case.source, case.name)
        want = run(comp, case.args, via="ast")
        bril = compile_source(to_bril_text(comp.quads), "x.bril", kind="bril")
        got = run(bril, case.args, via=via)
        assert (got.stdout, got.status, got.error) == (want.stdout, want.status, want.error), \
            (case.name, got.error)


def test_idealize_returning_an_older_node_does_not_retype_it():
    """``0 + a`` after a loop is ``a``, the loop's Phi: the driver uses it as it is
    (re-typing it now would move its type *up* from the bottom it had while the loop was
    being parsed)."""
    src = ("fn main() { var a = 0; for (var i = 0; i < 0; i = i + 1) { a = 1; }"
           " a = (0 + a); print(a); }")
    comp = compile_source(src)
    for via in ("son-raw", "son", "son-opt", "scheduled"):
        assert run(comp, via=via).stdout == "0\n"
