"""Escape analysis (lesson 10): the glyph of every allocation in the example programs,
their full listings, the rules that Tiny programs cannot reach, summaries and the
fixed-point verifier."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from ssa_course import registry
from ssa_course.analysis.escape import analyze_program
from ssa_course.analysis.escape_summary import RETURN
from ssa_course.analysis.escape_verify import verify_escapes
from ssa_course.compilation import compile_source, load_file
from ssa_course.errors import VerifyError
from ssa_course.lessons.l04_julia import ircode_of
from ssa_course.ssa.ircode import Argument, Expr, SSAValue
from ssa_course.tiny.types import StructType

HERE = Path(__file__).parent
EXAMPLES = sorted((HERE / "escape_golden").glob("*.tiny"))
ALLOC = re.compile(r"^(\S+)\s.*= new(?:struct|arr)\(.*# at (\d+):(\d+)$")


def expected_glyphs(path: Path) -> list[str]:
    line = next(x for x in path.read_text().splitlines() if x.startswith("// expect:"))
    return line.split(":", 1)[1].split()


def listed_glyphs(text: str) -> list[str]:
    """Allocation glyphs as a reader finds them: lines of ``new...`` statements, ordered
    by the source position they end with."""
    found = [(int(m.group(2)), int(m.group(3)), m.group(1))
             for line in text.splitlines() if (m := ALLOC.match(line))]
    return [g for _, _, g in sorted(found)]


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_allocation_has_the_expected_glyph(path):
    """Through the CLI, as the lesson's reader runs it."""
    out = subprocess.run([sys.executable, "-m", "ssa_course", "show", str(path), "--as",
                          "escapes"], capture_output=True, text=True, check=True).stdout
    assert listed_glyphs(out) == expected_glyphs(path)


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_listing_golden(path, monkeypatch):
    monkeypatch.chdir(HERE.parent)
    comp = load_file(str(path.relative_to(HERE.parent)))
    text = registry.representation("escapes").text(registry.build(comp, "escapes"))
    assert text.rstrip("\n") == path.with_suffix(".escapes").read_text().rstrip("\n")


def analysed(source: str, edit=None):
    program = ircode_of(compile_source(source).quads)
    if edit is not None:
        edit(program)
    return program, analyze_program(program)


BOX = "struct B { n: int; }\n"


def test_print_of_a_reference_escapes_everywhere():
    """Tiny's checker refuses ``print(b)``; the rule is for IRCode that does it."""
    def edit(program):
        ir = program["main"]
        pc = next(i for i, s in enumerate(ir.stmts, 1) if isinstance(s, Expr)
                  and s.head == "print")
        ir.stmts[pc - 1] = Expr("print", [SSAValue(1)])

    _, res = analysed(BOX + "fn main() { var b = new B { n: 1 }; print(b.n); }", edit)
    assert res["main"][SSAValue(1)].glyph() == "X′"


def test_an_unknown_operation_and_an_unknown_callee_escape_everywhere():
    def edit(program):
        ir = program["main"]
        ir.stmts[1] = Expr("mystery", [SSAValue(1)])

    _, res = analysed(BOX + "fn main() { var b = new B { n: 1 }; var c = new B { n: 2 }; "
                      "print(b.n, c.n); }", edit)
    assert res["main"][SSAValue(1)].has_all_escape()

    def call_nowhere(program):
        program["main"].stmts[1] = Expr("call", [SSAValue(1)], func="elsewhere")

    _, res = analysed(BOX + "fn main() { var b = new B { n: 1 }; var c = new B { n: 2 }; "
                      "print(b.n, c.n); }", call_nowhere)
    assert res["main"][SSAValue(1)].has_all_escape()


def test_a_thrown_reference_flows_into_the_caught_exception():
    """Tiny throws ints; with a reference thrown (``throw b``) and the caught value
    printed, the thrown object gets ThrownEscape and, through the catch, AllEscape."""
    src = BOX + ("fn main(n: int) { var b = new B { n: 1 }; try { if (n > 0) { throw n; } } "
                 "catch (e) { print(e); } print(b.n); }")

    def edit(program):
        ir = program["main"]
        for i, s in enumerate(ir.stmts, 1):
            if isinstance(s, Expr) and s.head == "throw":
                s.args = [SSAValue(1)]
            if isinstance(s, Expr) and s.head == "the_exception":
                ir.types[i - 1] = StructType("B")

    _, res = analysed(src, edit)
    info = res["main"][SSAValue(1)]
    assert info.has_thrown_escape() and info.has_all_escape()


def test_summaries():
    src = (BOX + "struct H { b: B; }\n"
           "fn keep(h: H, b: B) { h.b = b; }\n"
           "fn peek(b: B) -> int { return b.n; }\n"
           "fn same(b: B) -> B { return b; }\n"
           "fn main() { var b = new B { n: 1 }; var h = new H { b: b }; keep(h, b); "
           "print(peek(b), same(b).n); }")
    _, res = analysed(src)
    keep = res["keep"].summary  # h -b-> the node b enters; h written
    assert keep.ports == ((1, 0), (2, 1)) and keep.edges == ((0, "b", 1),)
    assert keep.written == frozenset({0})
    assert keep.describe(["h", "b"]) == "aliases: b = h.b; written: h"
    assert res["keep"][Argument(2, "b")].args == frozenset({1})
    assert res["peek"].summary.describe(["b"]) == "no escape"
    assert res["same"].summary.ports == ((RETURN, 0), (1, 0))
    assert res["main"][SSAValue(1)].has_no_escape()


def test_recursion_needs_more_than_one_round():
    _, res = analysed(BOX + "struct H { b: B; }\n"
                      "fn chain(n: int, acc: B, out: H) { if (n == 0) { out.b = acc; return; }"
                      " chain(n - 1, new B { n: n }, out); }\n"
                      "fn main() { var h = new H { b: new B { n: 0 } }; chain(2, h.b, h); "
                      "print(h.b.n); }")
    assert res.rounds >= 2
    fe = res["chain"]
    [(pc, info)] = fe.allocations()
    assert info.has_arg_escape() and not info.has_all_escape()


def test_verify_names_a_state_that_is_not_a_fixed_point():
    program, res = analysed(BOX + "fn main() { var b = new B { n: 1 }; print(b.n); }")
    verify_escapes(res)
    program["main"].stmts[1] = Expr("mystery", [SSAValue(1)])  # the IR changed under it
    with pytest.raises(VerifyError, match="escape state is a fixed point: main"):
        verify_escapes(res)


def test_verify_names_contents_that_escape_less_than_their_container():
    _, res = analysed(BOX + "struct H { b: B; }\n"
                      "fn main() { var h = new H { b: new B { n: 1 } }; print(h.b.n); }")
    solver = res["main"].solver
    cls = solver.classes
    root = cls.root(solver.n(SSAValue(2)))
    root.info = root.info.join(res["main"][SSAValue(2)].escape_only().join(
        type(root.info)(True, everywhere=True)))
    with pytest.raises(VerifyError, match="contents escape like their container"):
        verify_escapes(res)


def test_the_representation_runs_and_draws():
    comp = compile_source(EXAMPLES[0].read_text())
    res = registry.build(comp, "escapes")
    dot = registry.representation("escapes").dot(res, "t", None)
    assert "fillcolor" in dot and "↑′" in dot


def test_a_write_inside_a_nested_callee_reaches_the_caller():
    """swap moves h.a into h.b; outer only calls swap. f returns h.b after outer(h), so
    x (stored in h.a) escapes by that return -- only if outer's summary says that h.a and
    h.b may now be one object."""
    src = (BOX + "struct H { a: B; b: B; }\n"
           "fn swap(h: H) { var t = h.a; h.a = h.b; h.b = t; }\n"
           "fn outer(h: H) { swap(h); }\n"
           "fn f(x: B) -> B { var h = new H { a: x, b: new B { n: 0 } }; outer(h); "
           "return h.b; }\n"
           "fn main() { print(f(new B { n: 3 }).n); }")
    _, res = analysed(src)
    assert res["outer"].summary.describe(["h"]) == "aliases: h.a = h.b; written: h"
    assert res["f"][Argument(1, "x")].has_return_escape()


def test_code_escapes_for_notebooks():
    import ssa_course

    view = ssa_course.code_escapes((HERE / "escape_golden" / "ref_returned.tiny").read_text())
    text = str(view)
    assert text.startswith("wrap(↑ s::Box) => Ref\n") and "# summary" in text
    assert view["wrap"][Argument(1, "s")].has_return_escape()
    assert [info.glyph() for _, info in view["wrap"].allocations()] == ["↑′"]
    assert "<pre>" in view._repr_html_()
    assert "digraph" in view.draw().dot


def test_a_struct_the_program_does_not_declare_escapes_everywhere():
    from ssa_course.analysis.escape import analyze_function

    program = ircode_of(compile_source(BOX + "fn main() { var b = new B { n: 1 }; "
                                       "print(b.n); }").quads)
    fe = analyze_function(program["main"])  # no struct declarations given
    assert fe[SSAValue(1)].has_all_escape()
