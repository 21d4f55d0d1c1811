"""What a load reads (``son/alias.py``; the memory nodes' ``idealize``) and GVN across phis
(``Phi(x + y, a + b) -> Phi(x, a) + Phi(y, b)``), issue 22: Simple's chapters 10-18."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ssa_course.compilation import compile_source
from ssa_course.lessons.l07_optimistic import optimistic_program
from ssa_course.son.control import Phi
from ssa_course.son.iterate import progress_left
from ssa_course.son.memory import Load, LoadField
from ssa_course.son.worklist import peephole_order
from ssa_course.stages import run


def _main(source: str):
    return optimistic_program(compile_source(source)).functions["main"]


def _printed(fn, k: int = 0):
    """Value ``k`` of the last print of ``main``."""
    prints = [n for n in fn.nodes() if type(n).__name__ == "Print"]
    return max(prints, key=lambda n: n.id).inputs[2 + k]


def _loads(fn) -> list:
    return [n for n in fn.nodes() if isinstance(n, (Load, LoadField))]


@pytest.mark.parametrize("body, value", [
    ("var a = new int[2]; print(a[1]);", 0),                      # a fresh array's zero
    ("var a = new bool[2]; print(a[0]);", False),
    ("var a = new int[2]; a[0] = 1; a[1] = 2; print(a[0]);", 1),  # past another index
    ("var a = new int[2]; var b = new int[2]; a[0] = 1; b[0] = 2; print(a[0]);", 1),
    ("var a = new int[2]; var b = new int[2]; b[0] = 2; print(a[0]);", 0),  # another object
    ("var s = new S { f: 3, g: 4 }; s.g = 5; print(s.f);", 3),    # a struct's initial value
    ("var s = new S { f: 3, g: 4 }; var t = new S { f: 1, g: 1 }; t.f = 9; print(s.f);", 3),
    ("var s = new S { f: 3, g: 4 }; print(1); s.f = 6; print(s.f);", 6),  # past a print
])
def test_a_load_reads_what_the_stores_before_it_wrote(body, value):
    fn = _main(f"struct S {{ f: int; g: int; }} fn main() {{ {body} }}")
    v = _printed(fn)
    assert v.type.is_constant(), v
    assert (v.type.lo if hasattr(v.type, "lo") else v.type.value) == value
    assert not _loads(fn)


@pytest.mark.parametrize("body", [
    "a[i] = 1; print(a[0]);",             # i may be 0
    "a[0] = 1; print(p[0]);",             # p may be a
    "a[0] = 1; if (i > 7) { p[0] = 5; } print(a[0]);",  # an array load moves up only
                                                        # when every path folds
    "var r = new R { xs: a }; if (i > 9) { r.xs = new int[2]; } r.xs[0] = 1; print(a[0]);",
    # (r.xs is a or another array)
])
def test_a_load_that_may_read_another_store_stays(body):
    fn = _main(f"struct R {{ xs: [int]; }} fn main(i: int) {{ var a = new int[2]; "
               f"var p = a; if (i > 5) {{ p = new int[3]; }} {body} }}")
    assert isinstance(_printed(fn), Load)


def test_a_field_read_round_a_loop_becomes_a_phi():
    fn = _main("struct B { a: int; } fn main(n: int) { var b = new B { a: 0 }; var i = 0;"
               " while (i < n) { b.a = b.a + 2; i = i + 1; } print(b.a); }")
    v = _printed(fn)
    assert isinstance(v, Phi) and v.inputs[1].type.is_constant()
    assert not _loads(fn)


def test_a_load_after_a_merge_is_a_phi_when_one_path_folds():
    fn = _main("struct S { f: int; } fn main(arg: int) { var s = new S { f: 0 };"
               " if (arg == 0) { s.f = 1; } else if (arg == 1) { s.f = 1; } print(s.f); }")
    v = _printed(fn)
    assert isinstance(v, Phi) and not _loads(fn)


def test_an_array_load_is_not_moved_above_its_bounds_test():
    # on the else path a[i] is unknown: the load must stay below its own bounds test
    fn = _main("fn main(i: int) { var a = new int[2]; var b = new int[2];"
               " if (i == 0) { a[1] = 7; } else { b[0] = 1; } print(a[1], a[i]); }")
    assert isinstance(_printed(fn), Phi)  # every path folds: 7 or 0
    assert isinstance(_printed(fn, 1), Load)


def test_an_array_load_at_a_variable_index_asks_no_dominators(monkeypatch):
    """A load ``a[i]`` round a loop cannot be split through the memory phi (its index is
    computed after the merge): the rule says so before walking up for the array's
    allocation (#22: that walk was 64 steps per loop load on a long program); a load at a
    constant index still asks, and still splits."""
    import ssa_course.son.alias as alias

    asked = []
    real = alias.strictly_dominates
    monkeypatch.setattr(alias, "strictly_dominates",
                        lambda *args: asked.append(args) or real(*args))
    loop = ("fn main(n: int) {{ var a = new int[4]; var s = 0; var i = 0;"
            " while (i < 4) {{ a[i] = a[i] + {index}; s = s + a[{index}]; i = i + 1; }}"
            " print(s); }}")
    fn = _main(loop.format(index="i"))
    assert not asked and _loads(fn)
    fn = _main("fn main(n: int) { var a = new int[4]; var i = 0;"
               " if (n > 0) { a[1] = 3; } else { a[1] = 5; } print(a[1]); }")
    assert asked and isinstance(_printed(fn), Phi) and not _loads(fn)


def test_a_load_from_a_phi_of_fresh_structs_reads_their_common_initial_value():
    fn = _main("struct S { f: int; } fn main(arg: int) { var v = new S { f: 0 };"
               " var t = new S { f: 0 }; if (arg != 0) { v = t; } print(v.f); }")
    assert _printed(fn).type.is_constant() and not _loads(fn)


@pytest.mark.parametrize("seed", [None, 1, 2, 5, 6, 7, 8])
def test_a_load_whose_structs_come_to_agree_later_still_folds(seed):
    # The second struct's field is ``flag || d != c``, which folds to the first's ``true``
    # only after the load was looked at: the load waits on the allocations (fuzz seed 52601).
    with peephole_order(seed, check=True):
        fn = _main(SOURCES[2])
    assert _printed(fn).type.is_constant() and not _loads(fn)


def test_sums_with_nothing_in_common_merge_after_the_phi_and_meet_their_twin():
    fn = _main("""fn main(arg: int) {
        var x = arg * 7; var y = arg / 11; var a = arg / 3; var b = arg * 5;
        var p = 0; var g = 0; var h = 0;
        if (arg / 13 == 0) { p = x + y; g = x; h = y; } else { p = a + b; g = a; h = b; }
        print(p - (g + h));
    }""")
    assert _printed(fn).type.is_constant()


def test_sums_with_nothing_in_common_are_not_merged_at_a_loop_head():
    fn = _main("fn main(n: int) { var x = 0; var y = 1; var i = 0;"
               " while (i < n) { var t = x; x = y + i; y = t + n; i = i + 1; } print(x, y); }")
    phis = [n for n in fn.nodes() if isinstance(n, Phi)]
    assert len(phis) == 3  # x, y, i: no phi of operands added round the loop


SOURCES = [
    "struct B { a: int; } fn main(n: int) { var b = new B { a: 0 }; var i = 0;"
    " while (i < n) { b.a = b.a + 2; i = i + 1; } print(b.a); }",
    "fn main(n: int) { var a = new int[5]; var i = 0; while (i < n) { a[i % 5] = i;"
    " i = i + 1; } a[0] = 1; a[1] = 2; print(a[0], a[1], a[2]); }",
    # fuzz seed 52601: one struct's field is made with a value that only later folds to the
    # other's (``flag || d != c`` -> true); the load must be looked at again then
    "struct P { v: int; ok: bool; } fn main(n: int, flag: bool) { var d = 0; var c = -3;"
    " var p = new P { v: 1, ok: true }; var w = 0; while (w < 2) { w = w + 1;"
    " p = new P { v: 0, ok: flag || d != c }; } print(p.ok); }",
]


@pytest.mark.parametrize("seed", [None, 0, 1, 2, 5, 7])
@pytest.mark.parametrize("source", SOURCES)
def test_the_memory_rules_settle_in_any_worklist_order(source, seed):
    with peephole_order(seed, check=True):
        program = optimistic_program(compile_source(source))
    assert progress_left(program.functions["main"].graph) is None


# -- property: generated programs with stores, loads and merges print the same -----------

_INDEX = ["0", "1", "2", "i", "k"]


@st.composite
def _statement(draw) -> str:
    arr = draw(st.sampled_from(["a", "b", "q"]))
    idx = draw(st.sampled_from(_INDEX))
    obj = draw(st.sampled_from(["s", "t", "u"]))
    field = draw(st.sampled_from(["f", "g"]))
    val = draw(st.sampled_from(["k", "i", "1", f"{arr}[{idx}]", f"{obj}.{field}", "k + 1"]))
    return draw(st.sampled_from([
        f"{arr}[{idx}] = {val};", f"{obj}.{field} = {val};",
        f"print({arr}[{idx}], {obj}.{field});",
        f"if (k == {draw(st.integers(0, 2))}) {{ {arr}[{idx}] = {val}; }}"
        f" else {{ {obj}.{field} = 2; }}",
        "u = s;", "q = a;", "if (k > 0) { q = b; t = s; }",
        f"while (i < k) {{ {obj}.{field} = {obj}.{field} + i; i = i + 1; }}",
    ]))


@st.composite
def _memory_programs(draw) -> str:
    body = "\n    ".join(draw(st.lists(_statement(), min_size=2, max_size=8)))
    return f"""struct S {{ f: int; g: int; }}
fn main(k: int) {{
    var a = new int[3];
    var b = new int[3];
    var q = a;
    var s = new S {{ f: 1, g: 2 }};
    var t = new S {{ f: 3, g: 4 }};
    var u = t;
    var i = 0;
    {body}
    print(a[0], a[1], a[2], b[0], b[1], b[2], q[0], s.f, s.g, t.f, t.g, u.f, u.g);
}}"""


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(_memory_programs(), st.integers(-1, 3), st.integers(0, 2**31))
def test_generated_memory_programs_print_the_same_before_and_after(source, k, seed):
    want = run(compile_source(source), [str(k)], via="ast")
    for stage in ("son", "son-opt"):
        with peephole_order(seed, check=True):
            got = run(compile_source(source), [str(k)], via=stage)
        assert (got.stdout, got.status, got.error) == (want.stdout, want.status,
                                                       want.error), (stage, source)
