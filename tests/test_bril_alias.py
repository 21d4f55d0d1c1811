"""Alias classes for Bril's pointers in the sea of nodes (issue #36, son/bril_alias.py).

One class per ``alloc`` site, "unknown" for the rest: a store or ``free`` of one class is
walked past by a load of another; a load is replaced by what a store (or load) through the
same pointer node gave, only where it cannot fail. The programs are in ``tests/bril_mem``
(``alias_*``; outputs and counts checked with brili), whose every stage
``tests/test_bril_mem.py`` runs; here: what ``opt`` makes of them, and that ``opt`` never
executes more instructions than its input on the mem and float programs kept in tests.
"""

from __future__ import annotations

import pytest
from corpus import HERE, _case

from ssa_course import passes
from ssa_course.compilation import compile_source
from ssa_course.son.bril_alias import origin
from ssa_course.son.from_ssa import graphs_from_quads
from ssa_course.stages import run

MEM_AND_FLOAT = [_case(p) for p in sorted((HERE / "bril_mem").glob("*.bril"))] + \
    [_case(p) for p in sorted((HERE / "bril" / "float").glob("*.bril"))]


def optimized(source: str) -> str:
    return passes.emit(passes.run_pipeline(compile_source(source, "t.bril")), "bril")


def loads(text: str) -> int:
    return sum(1 for line in text.splitlines() if " = load " in line)


@pytest.mark.parametrize("case", MEM_AND_FLOAT, ids=[c.name for c in MEM_AND_FLOAT])
def test_opt_keeps_output_errors_and_never_runs_more(case):
    """The optimized program (Bril text, read back) prints the same, stops with the same
    error, and executes no more instructions than its input."""
    text = optimized(case.source)
    want = run(compile_source(case.source, case.path.name), case.args, via="quads")
    got = run(compile_source(text, "opt.bril"), case.args, via="quads")
    assert (got.stdout, got.status, got.error) == (want.stdout, want.status, want.error), text
    if want.status == 0:
        assert got.steps <= want.steps, (want.steps, got.steps, text)


def source(name: str) -> str:
    return (HERE / "bril_mem" / f"{name}.bril").read_text()


def test_a_store_to_one_allocation_does_not_kill_a_load_from_another():
    # every load of a reads a value a store (or load) through a itself gave: none is left,
    # not even the one in the loop (a phi of the stored values) nor the one past free b
    text = optimized(source("alias_two_sites"))
    assert loads(text) == 0, text
    assert text.count("free ") == 2 and text.count("alloc ") == 2
    comp = compile_source(text, "opt.bril")
    assert run(comp, []).stdout == "11 11 11 11\n"


def test_two_offsets_that_never_meet_are_two_slots():
    # a and a + 1, a + i and a + (i + 1): the loads read what the store before them wrote;
    # only the load of a after the store to a + (n - 4) stays (n - 4 may be 0: it is)
    case = _case(HERE / "bril_mem" / "alias_offsets.bril")
    text = optimized(case.source)
    assert loads(text) == 1, text
    got = run(compile_source(text, "o.bril"), case.args)
    assert (got.stdout, got.status, got.error) == (case.stdout, 2, case.stderr.rstrip("\n"))


def test_a_pointer_of_unknown_origin_aliases_every_class():
    text = passes.emit(passes.run_pipeline(compile_source(source("alias_unknown"),
                                                          "t.bril"), ["parse", "gcm"]), "bril")
    write = text.split("@main")[0]
    # in @write, p and q are parameters: the store through q may overwrite p's slot
    assert loads(write) == 1, write
    # in main, c and a are one allocation (one class): the load of c stays
    assert run(compile_source(optimized(source("alias_unknown")), "o.bril"), []).stdout \
        == "2 1 2\n"


def test_origins():
    g = graphs_from_quads(compile_source(source("alias_unknown"), "t.bril").quads,
                          optimize=False)
    nodes = g.functions["write"].graph.live_nodes()
    stores = [n for n in nodes if getattr(n, "op", None) == "store"]
    assert stores and all(origin(s.operand(2), s) is None for s in stores)
    main = g.functions["main"].graph.live_nodes()
    allocs = [n for n in main if getattr(n, "op", None) == "alloc"]
    adds = [n for n in main if getattr(n, "op", None) == "ptradd"]
    assert len(allocs) == 2 and adds
    assert all(origin(p, p) is allocs[0] for p in adds)


@pytest.mark.parametrize("name", ["alias_lost_error", "alias_same_class"])
def test_errors_survive_opt(name):
    """A load after a free of its class, a store out of bounds through another pointer of
    the class: both still stop the optimized program where they stop the input."""
    case = _case(HERE / "bril_mem" / f"{name}.bril")
    text = optimized(case.source)
    got = run(compile_source(text, "opt.bril"), [])
    assert (got.stdout, got.status, got.error) == (case.stdout, 2,
                                                  case.stderr.rstrip("\n")), text


@pytest.mark.parametrize("seed", range(40))
def test_random_pointer_programs_keep_output_and_errors(seed):
    """Generated programs (tests/bril_pointer_gen.py): the optimized program and the
    graph interpreter print what the quads interpreter prints and stop with its error."""
    from bril_pointer_gen import pointer_program

    text = pointer_program(seed)
    opt = optimized(text)
    for args in (["1"], ["4"]):
        want = run(compile_source(text, "r.bril"), args, via="quads")
        for got in (run(compile_source(opt, "o.bril"), args, via="quads"),
                    run(compile_source(text, "r.bril"), args, via="son-opt")):
            assert (got.stdout, got.status, got.error) == \
                (want.stdout, want.status, want.error), (args, text, opt)
        if want.status == 0:
            assert run(compile_source(opt, "o.bril"), args).steps <= want.steps
