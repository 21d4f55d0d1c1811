"""SSA construction and destruction: phi counts, the verifier, the lost copy and the swap."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ssa_course
from ssa_course.errors import VerifyError
from ssa_course.quads.bril import parse_bril_text
from ssa_course.quads.interp import run_quads
from ssa_course.runtime import Limits, Output
from ssa_course.ssa.braun import program_braun_ssa
from ssa_course.ssa.construct import SSAStats, program_to_ssa
from ssa_course.ssa.destruct import program_from_ssa, sequentialize
from ssa_course.ssa.verify import verify_ssa, verify_ssa_program

CORPUS = sorted((Path(__file__).parent / "programs").glob("*.tiny"))
BRIL = sorted((Path(__file__).parent / "bril").glob("*.bril"))


def run(program, args=()) -> str:
    out = Output()
    run_quads(program, list(args), out, Limits())
    return out.text()


SWAP = """
@main {
.entry:
  a.0: int = const 1;
  b.0: int = const 2;
  i.0: int = const 0;
  jmp .loop;
.loop:
  a.1: int = phi a.0 b.1 .entry .loop;
  b.1: int = phi b.0 a.1 .entry .loop;
  i.1: int = phi i.0 i.2 .entry .loop;
  one: int = const 1;
  i.2: int = add i.1 one;
  three: int = const 3;
  c: bool = lt i.2 three;
  br c .loop .exit;
.exit:
  print a.1 b.1;
}
"""

LOST_COPY = """
@main {
.entry:
  x.0: int = const 1;
  i.0: int = const 0;
  jmp .loop;
.loop:
  x.1: int = phi x.0 x.2 .entry .loop;
  i.1: int = phi i.0 i.2 .entry .loop;
  one: int = const 1;
  x.2: int = add x.1 one;
  i.2: int = add i.1 one;
  three: int = const 3;
  c: bool = lt i.2 three;
  br c .loop .exit;
.exit:
  print x.1;
}
"""


def test_swap_problem():
    ssa = parse_bril_text(SWAP)
    verify_ssa_program(ssa)
    assert run(ssa) == "1 2\n"  # phis are simultaneous
    back = program_from_ssa(ssa)
    assert not any(i.op == "phi" for i in back.functions["main"].instrs())
    assert run(back) == "1 2\n"


def test_lost_copy_problem():
    ssa = parse_bril_text(LOST_COPY)
    verify_ssa_program(ssa)
    assert run(ssa) == "3\n"
    back = program_from_ssa(ssa)
    assert run(back) == "3\n"
    # the loop's back edge is critical (the loop block also exits): it was split
    labels = [getattr(i, "name", None) for i in back.functions["main"].body]
    assert any(lb and ".to." in lb for lb in labels)


def test_sequentialize_cycles_and_chains():
    fresh_names = iter(f"tmp{k}" for k in range(10))
    seq = sequentialize([("a", "b"), ("b", "a")], lambda _: next(fresh_names))
    env = {"a": 1, "b": 2}
    for d, s in seq:
        env[d] = env[s]
    assert (env["a"], env["b"]) == (2, 1) and len(seq) == 3
    seq = sequentialize([("a", "b"), ("b", "c"), ("c", "a"), ("d", "a"), ("e", "e")],
                        lambda _: next(fresh_names))
    env = {"a": 1, "b": 2, "c": 3, "d": 0, "e": 5}
    for d, s in seq:
        env[d] = env[s]
    assert [env[k] for k in "abcde"] == [2, 3, 1, 1, 5]


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from("abcdef"), st.sampled_from("abcdefg"), max_size=6))
def test_sequentialize_matches_parallel_semantics(copies):
    env = {v: i for i, v in enumerate("abcdefg")}
    expected = dict(env)
    for d, s in copies.items():
        expected[d] = env[s]
    names = iter(f"t{k}" for k in range(100))
    for d, s in sequentialize(list(copies.items()), lambda _: next(names)):
        env[d] = env[s]
    assert {k: env[k] for k in "abcdefg"} == expected


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_phi_counts_minimal_vs_pruned_vs_braun(path):
    quads = ssa_course.compile(path.read_text()).quads
    minimal, pruned, braun = SSAStats(), SSAStats(), SSAStats()
    program_to_ssa(quads, pruned=False, stats=minimal)
    program_to_ssa(quads, pruned=True, stats=pruned)
    program_braun_ssa(quads, braun)
    assert pruned.phis <= minimal.phis
    assert braun.phis <= minimal.phis


@pytest.mark.parametrize("path", BRIL, ids=[p.stem for p in BRIL])
def test_bril_programs_get_no_more_phis_than_pruned_needs(path):
    from ssa_course.quads.bril_ssa import out_of_ssa

    program = out_of_ssa(parse_bril_text(path.read_text()))  # as every stage reads it
    pruned = SSAStats()
    ssa = program_to_ssa(program, pruned=True, stats=pruned)
    verify_ssa_program(ssa)
    # every phi of pruned SSA is used: by an instruction or by another phi
    for fn in ssa.functions.values():
        used = {a for i in fn.instrs() for a in i.args}
        for phi in (i for i in fn.instrs() if i.op == "phi"):
            assert phi.dest in used, f"@{fn.name}: {phi.dest} is a phi nobody reads"


def test_loop_example_phi_counts():
    src = (Path(__file__).parent.parent / "examples" / "sum.tiny").read_text()
    quads = ssa_course.compile(src).quads
    counts = {}
    for label, pruned in (("minimal", False), ("pruned", True)):
        stats = SSAStats()
        program_to_ssa(quads, pruned=pruned, stats=stats)
        counts[label] = stats.phis
    braun = SSAStats()
    program_braun_ssa(quads, braun)
    assert counts == {"minimal": 11, "pruned": 3} and braun.phis == 3


@pytest.mark.parametrize("text, invariant", [
    ("@main {\n  x: int = const 1;\n  x: int = const 2;\n  print x;\n}", "single assignment"),
    ("@main {\n.a:\n  c: bool = const true;\n  br c .b .d;\n.b:\n  y: int = const 1;\n"
     "  jmp .d;\n.d:\n  print y;\n}", "defs dominate uses"),
    ("@main {\n.a:\n  x: int = const 1;\n  jmp .b;\n.c:\n  ret;\n.b:\n"
     "  y: int = phi x x .a .c;\n  print y;\n}", "phi edges"),
    ("@main {\n.a:\n  x: int = const 1;\n  jmp .b;\n.b:\n  print x;\n"
     "  y: int = phi x .a;\n}", "phis first"),
])
def test_verifier_names_the_broken_invariant(text, invariant):
    fn = parse_bril_text(text).functions["main"]
    with pytest.raises(VerifyError) as info:
        verify_ssa(fn)
    assert info.value.invariant == invariant
    assert "@main" in str(info.value)


def test_try_catch_values_reach_the_handler():
    src = (Path(__file__).parent / "programs" / "try_values_seed.tiny").read_text()
    quads = ssa_course.compile(src).quads
    for ssa in (program_to_ssa(quads), program_braun_ssa(quads)):
        verify_ssa_program(ssa)
        assert run(ssa) == "1 3 10\n1 30\n"
        assert run(program_from_ssa(ssa)) == "1 3 10\n1 30\n"
