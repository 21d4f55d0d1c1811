"""Summaries that keep the structure of a callee's effect (#22): Julia's interprocedural
EscapeAnalysis tests translated to Tiny, with the states reasoned out by hand, and the laws
of the summary join.

Julia's tests (``test/compiler/EscapeAnalysis/EscapeAnalysis.jl``, "inter-procedural" and
"aliasing between arguments") call ``setxy!(x, y) = x[] = y``, ``getx(obj) = obj[]``, a
function returning its argument and one returning something else. Tiny has no globals, so
the cases that store into a global are left out.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ssa_course.analysis.escape import analyze_program
from ssa_course.analysis.escape_lattice import ALIAS_UNKNOWN, FIELDS
from ssa_course.analysis.escape_summary import DEPTH, EMPTY, RETURN, Summary, join_summaries
from ssa_course.analysis.escape_verify import verify_escapes
from ssa_course.compilation import compile_source
from ssa_course.lessons.l04_julia import ircode_of
from ssa_course.ssa.ircode import Argument, SSAValue

sys.path.insert(0, str(Path(__file__).parent))

TYPES = "struct S { v: int; }\nstruct Box { f: S; }\n"
SETXY = "fn setxy(x: Box, y: S) { x.f = y; }\n"


def solved(source: str):
    res = analyze_program(ircode_of(compile_source(TYPES + source).quads))
    verify_escapes(res)  # every result below is a fixed point
    return res


def allocs(res, fn: str) -> list[str]:
    return [info.glyph() for _, info in res[fn].allocations()]


def test_a_local_object_a_callee_stores_an_argument_into_stays_noescape():
    """The issue's program: ``setxy`` stores ``y`` into the caller's fresh box. The box
    and the S made for it never leave ``f`` (NoEscape), and ``y`` is only read after the
    call through the box, so ``f`` neither lets ``y`` escape nor writes it: its summary
    is empty (it used to relate ``y`` to the box, make both ``*′`` and say ``written: y``)."""
    res = solved(SETXY + "fn f(y: S) -> int { var x = new Box { f: new S { v: 0 } }; "
                 "setxy(x, y); return x.f.v; }\n"
                 "fn main() { print(f(new S { v: 7 })); }")
    setxy = res["setxy"]
    assert setxy.summary.describe(["x", "y"]) == "aliases: y = x.f; written: x"
    assert setxy[Argument(1, "x")].has_no_escape()
    assert setxy[Argument(2, "y")].args == frozenset({1})  # stored into argument 1
    f = res["f"]
    assert allocs(res, "f") == ["✓′", "✓′"]
    assert f[Argument(1, "y")].has_no_escape()
    assert f.summary == EMPTY and f.summary.describe(["y"]) == "no escape"
    # the box was written by setxy: its field list names no longer all it may hold
    assert f[SSAValue(2)].alias == ALIAS_UNKNOWN
    assert f[SSAValue(1)].alias.kind == FIELDS  # the S inside: its own fields still known
    assert allocs(res, "main") == ["✓′"]


def test_julia_setxy_then_return_the_box():
    """``x = SafeRef(..); setxy!(x, y); return x``: x is returned, and so is y (inside x);
    the S made for x's field too. ``f``'s summary: y is what the returned box holds."""
    res = solved(SETXY + "fn f(y: S) -> Box { var x = new Box { f: new S { v: 0 } }; "
                 "setxy(x, y); return x; }\n"
                 "fn main() { print(f(new S { v: 7 }).f.v); }")
    f = res["f"]
    inner, box = (info for _, info in f.allocations())
    assert box.has_return_escape() and not box.has_arg_escape()
    assert inner.has_return_escape()
    y = f[Argument(1, "y")]
    assert y.has_return_escape() and not y.has_all_escape()
    assert f.summary.describe(["y"]) == "aliases: y = return.f"


def test_julia_setxy_with_a_field_of_a_second_box():
    """``x1 = SafeRef(..); x2 = SafeRef(y); setxy!(x1, x2[]); return x1``: x1 and y are
    returned, x2 is not (only its content moved into x1)."""
    res = solved(SETXY + "fn f(y: S) -> Box { var x1 = new Box { f: new S { v: 0 } }; "
                 "var x2 = new Box { f: y }; setxy(x1, x2.f); return x1; }\n"
                 "fn main() { print(f(new S { v: 7 }).f.v); }")
    f = res["f"]
    _, x1, x2 = (info for _, info in f.allocations())  # new S (x1's field), x1, x2
    assert x1.has_return_escape()
    assert x2.has_no_escape()
    assert f[Argument(1, "y")].has_return_escape()


def test_julia_getx_returns_the_field_not_the_object():
    """``obj = SafeRef(a); return getx(obj)``: a is returned; obj is not (Julia marks the
    same case ``@test_broken``: its summary only says "argument and return alias")."""
    res = solved("fn getx(o: Box) -> S { return o.f; }\n"
                 "fn f(a: S) -> S { var obj = new Box { f: a }; return getx(obj); }\n"
                 "fn main() { print(f(new S { v: 1 }).v); }")
    assert res["getx"].summary.describe(["o"]) == "aliases: return = o.f"
    f = res["f"]
    assert f[Argument(1, "a")].has_return_escape()
    assert allocs(res, "f") == ["✓′"]
    assert f.summary.describe(["a"]) == "aliases: return = a"


def test_julia_returned_argument_and_unrelated_return():
    """``returnescape_argument(a) = a``: the object passed is returned. A callee returning
    something else, or not using its argument: the object stays NoEscape."""
    res = solved("fn same(a: Box) -> Box { return a; }\n"
                 "fn other(a: Box) -> Box { return new Box { f: new S { v: 1 } }; }\n"
                 "fn unused(a: Box) { print(1); }\n"
                 "fn g1() -> Box { var obj = new Box { f: new S { v: 0 } }; return same(obj); }\n"
                 "fn g2() -> Box { var obj = new Box { f: new S { v: 0 } }; return other(obj); }\n"
                 "fn g3() -> Box { var obj = new Box { f: new S { v: 0 } }; unused(obj); "
                 "return obj; }\n"
                 "fn g4() { var obj = new Box { f: new S { v: 0 } }; unused(obj); }\n"
                 "fn main() { print(g1().f.v + g2().f.v + g3().f.v); g4(); }")
    assert [i.has_return_escape() for i in (info for _, info in res["g1"].allocations())] \
        == [True, True]
    assert allocs(res, "g2") == ["✓′", "✓′"]
    assert all(i.has_return_escape() for _, i in res["g3"].allocations())
    assert allocs(res, "g4") == ["✓′", "✓′"]
    assert res["other"].summary == EMPTY and res["unused"].summary == EMPTY


def test_what_a_callee_lets_escape_is_the_field_not_the_container():
    """A callee that stores ``h.a`` into its argument's ``b`` field relates two fields;
    a callee that only returns an argument's field returns that field's object."""
    src = ("struct H { a: S; b: S; }\n"
           "fn move(h: H) { h.b = h.a; }\n"
           "fn f(s: S, t: S) -> S { var h = new H { a: s, b: t }; move(h); return h.b; }\n"
           "fn main() { print(f(new S { v: 1 }, new S { v: 2 }).v); }")
    res = solved(src)
    assert res["move"].summary.describe(["h"]) == "aliases: h.a = h.b; written: h"
    f = res["f"]
    assert f[Argument(1, "s")].has_return_escape()  # s reaches h.b through move
    assert f[Argument(2, "t")].has_return_escape()
    assert allocs(res, "f") == ["✓′"]


def test_recursion_that_stores_ever_deeper_ends_with_a_folded_node():
    """Each round would add one level (``a.kids[].s``, ``a.kids[].kids[].s``, ...): below
    DEPTH fields the summary folds the rest into an ancestor (a cycle), so the rounds end.
    ``v`` is stored inside argument ``a`` (ArgEscape), nothing escapes everywhere."""
    res = solved("struct L { kids: [L]; s: S; }\n"
                 "fn deep(n: int, a: L, v: S) { if (n > 0) { a.kids[0].s = v; "
                 "deep(n - 1, a.kids[0], v); } }\n"
                 "fn main() { var l = new L { kids: new L[1], s: new S { v: 0 } }; "
                 "deep(3, l, new S { v: 1 }); print(l.s.v); }")
    summary = res["deep"].summary
    # a.kids[].kids[].kids (5 fields down) folds into a.kids[].kids, the nearest array
    assert summary.describe(["n", "a", "v"]) == (
        "aliases: v = a.kids[].s = a.kids[].kids[].s, a.kids[].kids = a.kids[].kids[].kids; "
        "written: a.kids[], a.kids[].kids[]")
    v = res["deep"][Argument(3, "v")]
    assert v.args == frozenset({2}) and not v.has_all_escape()
    assert 2 <= res.rounds <= DEPTH + 2


def summaries_of(seed: int) -> list[Summary]:
    from fuzzgen import generate

    program = ircode_of(compile_source(generate(seed)).quads)
    res = analyze_program(program)
    verify_escapes(res)
    return [fe.summary for fe in res.functions.values()]


SAMPLES = [s for seed in range(1000, 1040) for s in summaries_of(seed)]
SAMPLES += [Summary(((1, 0), (2, 1)), ((0, "f", 1),), written=frozenset({0})),
            Summary(((RETURN, 0), (1, 0))), Summary(((1, 0),), everywhere=frozenset({0})),
            Summary(((1, 0), (2, 1)), ((0, "[]", 1), (1, "[]", 1)), thrown=frozenset({1}))]


@pytest.mark.parametrize("k", range(0, len(SAMPLES), 7))
def test_the_join_is_idempotent_commutative_and_an_upper_bound(k):
    """Over the generated programs' summaries (and a few written out): join(a, a) = a;
    join(a, b) = join(b, a); join(a, join(a, b)) = join(a, b) (a below the join)."""
    a = SAMPLES[k]
    assert join_summaries(a, a) == a
    for b in SAMPLES[k::5][:6]:
        ab = join_summaries(a, b)
        assert ab == join_summaries(b, a)
        assert join_summaries(a, ab) == ab == join_summaries(ab, b)


def test_the_written_out_samples_read_back_as_written():
    assert SAMPLES[-4].describe(["x", "y"]) == "aliases: y = x.f; written: x"
    assert SAMPLES[-3].describe(["p"]) == "aliases: return = p"
    assert SAMPLES[-2].describe(["p"]) == "escapes: p"
    assert SAMPLES[-1].describe(["a", "b"]) == "aliases: b = a[] = b[]; thrown: b"


def _chain(keys: list[str], flagged_last: bool = True) -> Summary:
    """Port 1 entering node 0, then one edge per key, the last node written."""
    edges = tuple((i, k, i + 1) for i, k in enumerate(keys))
    return Summary(((1, 0),), edges, written=frozenset({len(keys)}) if flagged_last else
                   frozenset())


def test_a_path_longer_than_depth_folds_into_an_ancestor_of_its_kind():
    """``a.next.next.next.next.next`` written: the node below DEPTH fields becomes
    ``a.next.next.next.next`` itself (``x.next = x`` from there on)."""
    s = join_summaries(_chain(["next"] * (DEPTH + 1)))
    assert s.describe(["a"]) == (
        "aliases: a.next.next.next.next = a.next.next.next.next.next; "
        "written: a.next.next.next.next")
    assert not s.collapsed
    assert join_summaries(s, _chain(["next"] * (DEPTH + 3))) == s  # longer: already said


def test_with_no_ancestor_of_its_kind_the_parent_collapses():
    """Arrays of arrays, then a struct whose field is written: the struct lying deeper
    than DEPTH has no struct ancestor to fold into, so its parent (an array) collapses
    (its elements are itself) and takes the write."""
    s = join_summaries(_chain(["[]"] * (DEPTH - 1) + ["f"]))  # the struct at DEPTH - 1
    deeper = join_summaries(_chain(["[]"] * (DEPTH + 1) + ["f"]))  # ... at DEPTH + 1
    assert s.describe(["a"]) == "written: a[][][].f" and not s.collapsed
    assert deeper.describe(["a"]) == "written: a[][][][]; unknown shape: a[][][][]"
