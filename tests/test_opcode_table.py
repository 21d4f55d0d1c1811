"""The opcode table (ssa_course/opcodes.py): one place that every stage reads.

Two kinds of test:
* the table itself: every value operator the Bril readers accept is a row, every row's
  ``apply`` agrees with the quads interpreter and the AST interpreter on random operands
  (traps included), and the table refuses rows that would make the front end ambiguous;
* a test-only operator registered at run time (``a /\\ b``, Bril ``tmin``; and a trapping
  ``a %%% b``, Bril ``tfmod``) goes through every stage with no other edit, is folded by
  LVN and SCCP when constant, and leaves no trace once unregistered.
"""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ssa_course
from ssa_course import opcodes, registry
from ssa_course.bitcast import float2bits
from ssa_course.errors import RuntimeTrap, SourceError
from ssa_course.quads.bril import parse_bril_text
from ssa_course.quads.fold import identity
from ssa_course.quads.interp import run_quads
from ssa_course.quads.ir import (
    OTHER_OPS,
    Function,
    Instr,
    Program,
    has_effect,
    is_known_op,
    may_trap,
)
from ssa_course.quads.peephole import local_value_numbering, on_program
from ssa_course.runtime import INT_MAX, INT_MIN, Limits, Output
from ssa_course.son.build import build_graphs
from ssa_course.son.sccp import apply_to_program
from ssa_course.tiny.parser import parse
from ssa_course.tiny.types import BOOL, FLOAT, INT

# Bril's core value operations plus our ``rem`` (docs/quads.md), as Bril spells them.
BRIL_VALUE_OPS = {"add", "sub", "mul", "div", "eq", "lt", "gt", "le", "ge", "not", "and",
                  "or", "rem"}

# Names and symbols no real row should take (the doc's example adds min, <?).
MIN = opcodes.Opcode("tmin", 2, opcodes.INT, opcodes.INT, min, "/\\", opcodes.SUM_LEVEL,
                     commutative=True, right_identity=INT_MAX, left_identity=INT_MAX,
                     zero=INT_MIN, doc="the smaller operand, a lattice's meet (test only)")
FMOD = opcodes.Opcode("tfmod", 2, opcodes.INT, opcodes.INT, lambda a, b: a % b, "%%%",
                      opcodes.TERM_LEVEL, trap="floor modulo by zero", divisor=1,
                      doc="Python's floor modulo (test only)")


@pytest.fixture
def test_ops():
    """MIN and FMOD in the table for one test; the table is as before afterwards."""
    before = (dict(opcodes.TABLE.by_name), opcodes.symbols())
    with opcodes.registered(MIN), opcodes.registered(FMOD):
        yield
    assert (dict(opcodes.TABLE.by_name), opcodes.symbols()) == before


# ---------------------------------------------------------------- the table itself


BRIL_ROWS = sorted(op.name for op in opcodes.all_opcodes() if op.bril)
# Tiny's binary operators on ints (a row added to the table is tested here at once)
INT_SYMBOLS = sorted(op.symbol for op in opcodes.all_opcodes()
                     if op.arity == 2 and op.symbol and op.operands != opcodes.BOOL)


def test_every_bril_value_op_is_a_row_and_every_accepted_op_is_known():
    assert set(BRIL_ROWS) >= BRIL_VALUE_OPS
    for name in BRIL_VALUE_OPS:
        assert is_known_op(name)
    # what the readers accept is exactly the other ops plus the Bril rows
    for name in ("ne", "neg", "tmin", "frobnicate"):
        assert not is_known_op(name)
    assert not set(OTHER_OPS) & {op.name for op in opcodes.all_opcodes()}


@pytest.mark.parametrize("name", BRIL_ROWS)
def test_the_bril_text_reader_accepts_every_row(name):
    row = opcodes.bril_op(name)
    kind = {opcodes.SAME: "int"}.get(row.operands, row.operands)
    value = {"int": "1", "bool": "true", "float": "1.5"}[kind]
    args = " ".join("a" for _ in range(row.arity))
    text = (f"@main {{\n  a: {kind} = const {value};\n"
            f"  r: {row.result} = {name} {args};\n  print r;\n}}\n")
    program = parse_bril_text(text, "t.bril")
    assert program.functions["main"].instrs()[1].op == name


def test_tiny_symbols_and_levels_are_the_grammar():
    assert opcodes.binary_symbols(opcodes.OR_LEVEL) >= {"||"}
    assert opcodes.binary_symbols(opcodes.AND_LEVEL) >= {"&&"}
    assert opcodes.binary_symbols(opcodes.CMP_LEVEL) >= {"==", "!=", "<", "<=", ">", ">="}
    assert opcodes.binary_symbols(opcodes.SUM_LEVEL) >= {"+", "-"}
    assert opcodes.binary_symbols(opcodes.TERM_LEVEL) >= {"*", "/", "%"}
    assert opcodes.prefix_symbols() >= {"-", "!"}


def test_the_table_refuses_ambiguous_rows():
    with pytest.raises(ValueError, match="already"):
        opcodes.register(opcodes.Opcode("plus", 2, opcodes.INT, opcodes.INT, min, "+",
                                        opcodes.SUM_LEVEL))
    with pytest.raises(ValueError, match="already"):
        opcodes.register(opcodes.Opcode("add", 2, opcodes.INT, opcodes.INT, min))
    with pytest.raises(ValueError, match="divisor"):
        opcodes.register(opcodes.Opcode("d2", 2, opcodes.INT, opcodes.INT, min, divisor=1))
    with pytest.raises(ValueError, match="built-in"):
        opcodes.unregister("add")
    assert opcodes.get("plus") is None and opcodes.get("d2") is None


def test_trap_messages_stay_as_the_language_says():
    assert opcodes.get("div").trap == "division by zero"
    assert opcodes.get("rem").trap == "division by zero"
    with pytest.raises(RuntimeTrap, match="division by zero") as e:
        opcodes.get("div").apply((1, 0), (3, 4))
    assert (e.value.pos.line, e.value.pos.col) == (3, 4)
    assert opcodes.get("div").apply((INT_MIN, -1)) == INT_MIN
    assert opcodes.get("rem").apply((INT_MIN, -1)) == 0
    assert opcodes.get("div").apply((-7, 2)) == -3 and opcodes.get("rem").apply((-7, 2)) == -1
    assert opcodes.get("add").apply((INT_MAX, 1)) == INT_MIN
    assert opcodes.get("div").fold((1, 0)) is None  # never folded: it must fail at run time


# -------------------------------------------- rows against the quads interpreter

EDGES = [0, 1, -1, 2, -2, 7, INT_MIN, INT_MAX, INT_MIN + 1]
ints = st.one_of(st.sampled_from(EDGES), st.integers(INT_MIN, INT_MAX))


FLOAT_EDGES = [0.0, -0.0, 1.0, -1.5, math.inf, -math.inf, math.nan, 5e-324,
               1.7976931348623157e308, 9.223372036854775807e18, -9.223372036854775808e18,
               2.0**63, 2.0**-18]
floats = st.one_of(st.sampled_from(FLOAT_EDGES), st.floats(allow_nan=True, allow_infinity=True))


def _operands(row: opcodes.Opcode) -> st.SearchStrategy:
    if row.operands == opcodes.FLOAT:
        return st.tuples(*[floats] * row.arity)
    if row.operands == opcodes.BOOL:
        return st.tuples(*[st.booleans()] * row.arity)
    if row.operands == opcodes.SAME:
        return st.one_of(st.tuples(*[ints] * row.arity), st.tuples(*[st.booleans()] * 2))
    return st.tuples(*[ints] * row.arity)


def _quads_result(row: opcodes.Opcode, values: tuple) -> tuple[str, str]:
    """Run ``r = op c1 c2; print r`` in the quads interpreter: (stdout, error message)."""
    body = []
    names = []
    for k, v in enumerate(values):
        names.append(f"c{k}")
        if isinstance(v, float) and not math.isfinite(v):  # no constant spells it:
            # its exact bits (a NaN's payload too), cast (Bril's bitcast extension)
            body.append(Instr("const", f"z{k}", INT, value=float2bits(v)))
            body.append(Instr("bits2float", f"c{k}", FLOAT, [f"z{k}"]))
            continue
        body.append(Instr("const", f"c{k}", BOOL if isinstance(v, bool) else
                          FLOAT if isinstance(v, float) else INT, value=v))
    ty = {opcodes.INT: INT, opcodes.BOOL: BOOL, opcodes.FLOAT: FLOAT}[row.result]
    body.append(Instr(row.name, "r", ty, names, pos=None))
    body.append(Instr("print", args=["r"]))
    program = Program({"main": Function("main", [], None, body)})
    out = Output()
    try:
        run_quads(program, [], out, Limits())
    except RuntimeTrap as e:
        return out.text(), e.message
    return out.text(), ""


def _table_result(row: opcodes.Opcode, values: tuple) -> tuple[str, str]:
    try:
        value = row.apply(values)
    except RuntimeTrap as e:
        return "", e.message
    return ssa_course.runtime.format_print([value]), ""


@pytest.mark.parametrize("name", BRIL_ROWS)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_rows_agree_with_the_quads_interpreter(name, data):
    row = opcodes.bril_op(name)
    values = data.draw(_operands(row))
    assert _quads_result(row, values) == _table_result(row, values)
    folded = row.fold(values)
    if row.traps(values):
        assert folded is None
    elif folded is None:  # a NaN or an infinity: no constant spells it, the op stays
        assert row.result == opcodes.FLOAT and not math.isfinite(row.apply(values))
    else:
        assert repr(folded) == repr(row.apply(values))


@pytest.mark.parametrize("symbol", INT_SYMBOLS)
@settings(max_examples=30, deadline=None)
@given(a=ints, b=st.one_of(st.sampled_from([0, -1, 1]), ints))
def test_tiny_rows_agree_with_the_ast_interpreter(symbol, a, b):
    row = opcodes.tiny_operator(symbol, 2)
    r = ssa_course.run(_binary_program(symbol), a, b, via="ast")
    want_out, want_err = _table_result(row, (a, b))
    assert r.stdout == want_out
    assert r.error == (f"error: {want_err} at 1:35" if want_err else "")


_PROGRAMS: dict[str, ssa_course.Compilation] = {}


def _binary_program(symbol: str):
    if symbol not in _PROGRAMS:
        _PROGRAMS[symbol] = ssa_course.compile(
            f"fn main(a: int, b: int) {{ print(a {symbol} b); }}", "b.tiny")
    return _PROGRAMS[symbol]


# ---------------------------------------------- a test-only operator, end to end

TINY = """
fn main(a: int, b: int) {
    var x = a /\\ b;
    print(x, 3 /\\ 7, b /\\ a + 1, a * 2 /\\ b %%% 4 + 1);  // /\\ binds like +
    var i = 0;
    var acc = 100;
    while (i < 5) { acc = acc /\\ a * i; i = i + 1; }
    print(acc, -7 %%% 3, a %%% 5);
    print(a %%% b);
}
"""

BRIL = """# ARGS: 4 9
@main(a: int, b: int) {
  x: int = tmin a b;
  three: int = const 3;
  seven: int = const 7;
  m: int = tmin three seven;
  one: int = const 1;
  t: int = tmin b a;
  t2: int = add t one;
  two: int = const 2;
  four: int = const 4;
  p: int = mul a two;
  q: int = tfmod b four;
  u: int = tmin p q;
  u1: int = add u one;
  print x m t2 u1;
  i: int = const 0;
  acc: int = const 100;
  five: int = const 5;
.loop:
  c: bool = lt i five;
  br c .body .done;
.body:
  ai: int = mul a i;
  acc: int = tmin acc ai;
  i: int = add i one;
  jmp .loop;
.done:
  zero: int = const 0;
  seven2: int = const 7;
  m7: int = sub zero seven2;
  three2: int = const 3;
  f1: int = tfmod m7 three2;
  f2: int = tfmod a five;
  print acc f1 f2;
  f3: int = tfmod a b;
  print f3;
}
"""


def _min_expected(a: int, b: int) -> tuple[str, str]:
    lines = [f"{min(a, b)} 3 {min(b, a) + 1} {min(a * 2, b % 4) + 1}",
             f"{min([100] + [a * i for i in range(5)])} {-7 % 3} {a % 5}"]
    if b == 0:
        return "\n".join(lines) + "\n", "floor modulo by zero"
    return "\n".join([*lines, str(a % b)]) + "\n", ""


@pytest.mark.parametrize("args", [(4, 9), (-3, 0), (10, -4)])
def test_a_registered_operator_runs_the_same_through_every_stage(test_ops, args):
    want_out, want_err = _min_expected(*args)
    tiny = ssa_course.compile(TINY, "t.tiny")
    bril = ssa_course.compile(BRIL, "t.bril", kind="bril")
    for stage in ssa_course.stage_names():
        for comp, kind in ((tiny, "tiny"), (bril, "bril")):
            if kind == "bril" and stage == "ast":
                continue  # the AST interpreter runs Tiny only
            r = ssa_course.run(comp, *args, via=stage)
            if registry.representation(stage).lesson == "11":
                # machine code needs an instruction pattern for each operator: without
                # one the stage says so in one line (docs/adding-an-operator.md, "When four
                # files are not enough")
                # (which of the two new operators it meets first is the schedule's order)
                assert r.status == 1 and any(f"no machine pattern for '{op}'" in r.error
                                             for op in ("tmin", "tfmod")), (stage, r.error)
                continue
            assert r.stdout == want_out, (stage, kind)
            assert (r.status == 2) == bool(want_err), (stage, kind, r.error)
            assert want_err in r.error, (stage, kind)


def test_a_registered_operator_prints_back_as_tiny(test_ops):
    from ssa_course.tiny.printer import format_expr

    program = parse("fn main(a: int, b: int) { print((a /\\ b) * 2, a /\\ b * 2); }")
    args = program.functions["main"].body.stmts[0].args
    assert [format_expr(e) for e in args] == ["(a /\\ b) * 2", "a /\\ b * 2"]


def test_lvn_folds_a_registered_operator(test_ops):
    comp = ssa_course.compile("fn main() { var x = 3 /\\ 7; print(x, 8 %%% 3); }", "f.tiny")
    folded = on_program(local_value_numbering, comp.quads)
    ops = [i.op for i in folded.functions["main"].instrs()]
    assert "tmin" not in ops and "tfmod" not in ops
    values = [i.value for i in folded.functions["main"].instrs() if i.op == "const"]
    assert 3 in values and 2 in values


def test_a_registered_trap_is_not_folded_away(test_ops):
    comp = ssa_course.compile("fn main() { print(8 %%% 0); }", "z.tiny")
    folded = on_program(local_value_numbering, comp.quads)
    assert "tfmod" in [i.op for i in folded.functions["main"].instrs()]
    r = ssa_course.run(comp, via="optimized")
    assert r.status == 2 and r.error == "error: floor modulo by zero at 1:21"


def _min_nodes(program) -> list:
    return [n for fg in program.functions.values() for n in fg.nodes()
            if getattr(n, "opcode", None) == "tmin"]


def test_peepholes_and_sccp_fold_a_registered_operator(test_ops):
    # pessimistic peepholes fold constants while parsing
    ast = ssa_course.compile("fn main(n: int) { print(3 /\\ 7, n /\\ n + 0); }", "p.tiny").ast
    assert len(_min_nodes(build_graphs(ast, optimize=True))) == 1  # only n /\\ n is left
    # only the optimistic analysis sees that x stays 4 around the loop
    src = """fn main(n: int) {
        var x = 4;
        var i = 0;
        while (i < n) { x = x /\\ 9; i = i + 1; }
        print(x);
    }"""
    program = build_graphs(ssa_course.compile(src, "s.tiny").ast, optimize=True)
    assert _min_nodes(program)
    apply_to_program(program)
    assert not _min_nodes(program)
    assert ssa_course.run(ssa_course.compile(src, "s.tiny"), 3, via="son-opt").stdout == "4\n"


def test_gvn_merges_twins_of_a_registered_commutative_operator(test_ops):
    ast = ssa_course.compile("fn main(a: int, b: int) { print(a /\\ b, b /\\ a); }", "g.tiny").ast
    assert len(_min_nodes(build_graphs(ast, optimize=True))) == 1


def test_a_registered_operator_is_type_checked(test_ops):
    with pytest.raises(SourceError, match=re.escape("'/\\' needs int operands, not bool and int")):
        ssa_course.compile("fn main() { print(true /\\ 1); }", "e.tiny").check()
    with pytest.raises(SourceError, match="'tmin' needs int operands"):
        ssa_course.compile("@main { t: bool = const true; x: int = tmin t t; print x; }",
                           "e.bril", kind="bril").check()


def test_unregistered_operators_are_unknown_again():
    with opcodes.registered(MIN):
        assert ssa_course.run(ssa_course.compile("fn main() { print(2 /\\ 1); }")).stdout \
            == "1\n"
    assert opcodes.get("tmin") is None
    with pytest.raises(SourceError, match=re.escape("unexpected character '\\'")):
        ssa_course.compile("fn main() { print(2 /\\ 1); }").check()
    with pytest.raises(SourceError, match="unsupported Bril op 'tmin'"):
        ssa_course.compile("@main { a: int = const 1; x: int = tmin a a; print x; }",
                           "u.bril", kind="bril").check()


def test_the_identities_of_a_registered_row_are_applied(test_ops):
    assert identity("tmin", ["a", "b"], [None, INT_MAX]) == ("copy", "a")
    assert identity("tmin", ["a", "b"], [INT_MAX, None]) == ("copy", "b")
    assert identity("tmin", ["a", "b"], [None, INT_MIN]) == ("const", INT_MIN)
    assert identity("tmin", ["a", "a"], [None, None]) is None  # no ``same`` rule given
    src = ("fn main(a: int) { print(a /\\ 9223372036854775807, 9223372036854775807 /\\ a,"
           " a /\\ -9223372036854775808); }")
    comp = ssa_course.compile(src, "i.tiny")
    assert not _min_nodes(build_graphs(comp.ast, optimize=True))
    assert _min_nodes(build_graphs(comp.ast, optimize=False))
    for stage in ssa_course.stage_names():
        if registry.representation(stage).unavailable():
            continue  # e.g. native-aarch64 on an x86-64 machine
        assert ssa_course.run(comp, 5, via=stage).stdout == f"5 5 {INT_MIN}\n", stage


def test_quads_trap_and_effect_facts_read_the_table(test_ops):
    assert may_trap("div") and may_trap("rem") and may_trap("tfmod") and may_trap("aload")
    assert not may_trap("add") and not may_trap("tmin") and not may_trap("print")
    assert has_effect("tfmod") and has_effect("print") and has_effect("astore")
    assert not has_effect("tmin") and not has_effect("eq") and not has_effect("alen")


def test_the_language_pages_grammar_lists_exactly_the_tables_operators():
    """docs/tiny.md's grammar names, level by level, the operators the table has: a row
    added without its line in the grammar (or a symbol left in the grammar after its row
    went) fails here. docs/adding-an-operator.md says which files a new row needs."""
    import re
    from pathlib import Path

    docs = Path(__file__).resolve().parent.parent / "docs"
    text = (docs / "tiny.md").read_text()
    rules = {m.group(1): set(re.findall(r'"([^"A-Za-z(){}\[\],;.:]+)"', m.group(2)))
             for m in re.finditer(r"^(or|and|cmp|sum|term|unary)\s+=(.*)$", text, re.M)}
    assert rules["or"] == opcodes.binary_symbols(opcodes.OR_LEVEL)
    assert rules["and"] == opcodes.binary_symbols(opcodes.AND_LEVEL)
    assert rules["cmp"] == opcodes.binary_symbols(opcodes.CMP_LEVEL)
    assert rules["sum"] == opcodes.binary_symbols(opcodes.SUM_LEVEL)
    assert rules["term"] == opcodes.binary_symbols(opcodes.TERM_LEVEL)
    assert rules["unary"] == opcodes.prefix_symbols()
    guide = (docs / "adding-an-operator.md").read_text()
    for path in re.findall(r"`((?:ssa_course|docs|tests)/[\w/.]+\.(?:py|md|tiny))`", guide):
        assert (docs.parent / path).exists() or path.startswith("tests/programs/min_op"), path


def test_the_fuzz_generators_use_a_registered_operator(test_ops):
    """The generators (``make fuzz``'s and hypothesis's) read the table: the test-only
    operators appear in generated programs, which run the same on the AST and on quads."""
    from fuzzgen import generate
    from hypothesis import HealthCheck
    from tiny_gen import int_expr

    programs = [generate(seed) for seed in range(60)]
    for symbol in ("/\\", "%%%"):
        with_it = [p for p in programs if f" {symbol} " in p]
        assert with_it, symbol
        for text in with_it[:3]:
            ast_run = ssa_course.run(text, via="ast")
            quads_run = ssa_course.run(text, via="quads")
            assert (ast_run.stdout, ast_run.status) == (quads_run.stdout, quads_run.status)
    seen: set[str] = set()

    @settings(max_examples=200, database=None, suppress_health_check=list(HealthCheck))
    @given(int_expr())
    def collect(text: str) -> None:
        seen.update(s for s in ("/\\", "%%%") if f" {s} " in text)

    collect()
    assert seen == {"/\\", "%%%"}


def test_a_commutative_operator_moves_its_constant_right(test_ops):
    """``5 /\\ a`` becomes ``a /\\ 5`` (the generic node's rule, like Add's), and is then
    one node with ``a /\\ 5``; a row that does not commute keeps its order."""
    ast = ssa_course.compile("fn main(a: int) { print(5 /\\ a, a /\\ 5); }", "c.tiny").ast
    (node,) = _min_nodes(build_graphs(ast, optimize=True))
    assert not node.inputs[1].type.is_constant() and node.inputs[2].type.is_constant()
    ast = ssa_course.compile("fn main(a: int) { print(5 %%% (a + 1)); }", "f.tiny").ast
    fmod = [n for fg in build_graphs(ast, optimize=True).functions.values()
            for n in fg.nodes() if getattr(n, "opcode", None) == "tfmod"]
    assert fmod and all(n.inputs[1].type.is_constant() for n in fmod)
    assert ssa_course.run("fn main(a: int) { print(5 /\\ a); }", 3, via="son").stdout == "3\n"
