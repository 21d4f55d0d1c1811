"""The one naming service (``quads/names.py``): a fresh name is never taken and is
reserved at once, in every spelling the passes use."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ssa_course.quads.cfg import build_cfg
from ssa_course.quads.ir import Function, Instr, Label
from ssa_course.quads.names import Names, all_names, label_names, variable_names

names = st.text("abx.c0123_", min_size=1, max_size=5)


@settings(max_examples=200, deadline=None)
@given(st.sets(names, max_size=30),
       st.lists(st.tuples(names, st.booleans(), st.sampled_from([".", "", ".c", "_", ".x"]),
                          st.integers(0, 2)), max_size=30))
def test_a_fresh_name_is_never_taken_and_never_handed_out_twice(taken, requests):
    service = Names(taken)
    seen: set[str] = set()
    for base, bare, sep, start in requests:
        free = base not in taken | seen
        name = service.fresh(base, bare=bare, sep=sep, start=start)
        assert name not in taken and name not in seen
        assert name in service  # reserved at once
        if bare and free:
            assert name == base
        else:
            assert name.startswith(base + sep) and name[len(base + sep):].isdigit()
        seen.add(name)


def test_the_spellings_of_the_passes():
    n = Names({"x", "x.1", "b0", "loop.u", "t"})
    assert n.fresh("x", bare=False) == "x.2"  # SSA versions
    assert n.fresh("x", bare=False) == "x.3"
    assert n.fresh("x", bare=False, sep=".c", start=0) == "x.c0"  # out-of-SSA copies
    assert n.fresh("b3", bare=False, sep=".x") == "b3.x1"  # a split block
    assert n.fresh("b", bare=False, sep="", start=0) == "b1"  # an unlabelled block
    assert n.fresh("loop.u", sep="") == "loop.u1"  # an unrolled copy
    assert n.fresh("t") == "t.1" and n.fresh("s") == "s"  # inlining, constants
    assert n.fresh("p.x", start=2) == "p.x" and n.fresh("p.x", start=2) == "p.x.2"  # SROA


def test_names_of_a_function_keep_variables_and_labels_apart():
    fn = Function("main", [("n", None)], None, [
        Label("top"), Instr("id", "x", None, ["n"]), Instr("jmp", labels=["top"])])
    assert variable_names(fn).taken == {"n", "x"}
    assert label_names(fn).taken == {"top"}
    assert all_names(fn).taken == {"n", "x", "top"}


def test_unlabelled_blocks_get_names_no_label_has():
    """``build_cfg`` names blocks without a label b0, b1, ... skipping labels in use (the
    old generator did not reserve what it returned: every name now goes through one)."""
    fn = Function("main", [], None, [
        Instr("jmp", labels=["b0"]),  # then an unlabelled, unreachable block
        Instr("nop"), Instr("jmp", labels=["b0"]),
        Label("b0"), Instr("ret"), Instr("nop")])
    cfg = build_cfg(fn)
    assert list(cfg.blocks) == ["b1", "b2", "b0", "b3"]
