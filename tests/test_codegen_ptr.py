"""Bril pointers and chars in machine code, both CPUs (issue #36; docs/codegen.md, "Bril
pointers and chars"). ``tests/test_bril_mem.py`` runs ``tests/bril_mem`` through every
stage; here are what only machine code has to get right: positions carried into the
runtime's messages, the live-cell budget, a pointer printed, char arguments parsed from
the command line, the char keys' order, the table growing, values of every bit pattern.

``tests/bril_mem/located/*.json`` are ``tests/bril_mem`` programs through Bril's
``bril2json -p`` (positions kept).
"""

from __future__ import annotations

import pytest
from corpus import HERE
from hypothesis import given, settings
from hypothesis import strategies as st

from ssa_course import registry, stages
from ssa_course.codegen.ptr_abi import char_key, key_char
from ssa_course.compilation import compile_source
from ssa_course.quads.memory import char_compare
from ssa_course.runtime import Limits

# one native and one emulated stage per CPU (asm, disasm, interference run as native)
MACHINE = ["native", "emulated", "emulated-aarch64", "qemu-aarch64"]
LOCATED = sorted((HERE / "bril_mem" / "located").glob("*.json"))


def _available(stage: str) -> None:
    reason = registry.representation(stage).unavailable()
    if reason is not None:
        pytest.skip(f"{stage}: {reason}")


def _same_as_quads(source: str, name: str, stage: str, args: list[str] | None = None,
                   limits: Limits | None = None) -> stages.RunResult:
    _available(stage)
    comp = compile_source(source, name)
    want = stages.run(comp, args or [], via="quads", limits=limits)
    got = stages.run(comp, args or [], via=stage, limits=limits)
    assert (got.stdout, got.status, got.error) == (want.stdout, want.status, want.error)
    return got


@pytest.mark.parametrize("stage", MACHINE)
@pytest.mark.parametrize("path", LOCATED, ids=[p.stem for p in LOCATED])
def test_errors_name_the_instruction_position(path, stage):
    result = _same_as_quads(path.read_text(), path.name, stage)
    assert result.status == 2 and " at " in result.error, result.error
    assert result.error.count("\n") == 0


@pytest.mark.parametrize("stage", MACHINE)
def test_the_budget_counts_live_cells(stage):
    source = ("@main {\n  n: int = const 3;\n  p: ptr<int> = alloc n;\n  free p;\n"
              "  q: ptr<int> = alloc n;\n  print n;\n  r: ptr<int> = alloc n;\n"
              "  free q;\n  free r;\n}\n")
    result = _same_as_quads(source, "budget.bril", stage, limits=Limits(cells=5))
    assert (result.stdout, result.error) == ("3\n", "error: out of memory at 7:17")
    fits = _same_as_quads(source, "budget.bril", stage, limits=Limits(cells=6))
    assert fits.status == 0


@pytest.mark.parametrize("stage", MACHINE)
def test_a_pointer_prints_as_the_interpreters_print_it(stage):
    source = ("@main {\n  n: int = const 3;\n  p: ptr<int> = alloc n;\n"
              "  q: ptr<ptr<int>> = alloc n;\n  k: int = const -2;\n"
              "  r: ptr<ptr<int>> = ptradd q k;\n  print p r;\n  free p;\n  free q;\n}\n")
    result = _same_as_quads(source, "print.bril", stage)
    assert result.stdout == "<pointer to block 0 + 0> <pointer to block 1 + -2>\n"


@pytest.mark.parametrize("stage", MACHINE)
@pytest.mark.parametrize("args", [["a", "é", "\ue000", "🐱"], ["\x7f", "߿", "￿", "\U0010ffff"],
                                  ["ab", "b", "c", "d"], ["a", "", "c", "d"],
                                  ["a", "b", "c"]])
def test_char_arguments_read_as_the_cli_reads_them(stage, args):
    source = ("@main(a: char, b: char, c: char, d: char) {\n  i: int = char2int c;\n"
              "  lt: bool = clt c d;\n  print a b c d i lt;\n}\n")
    _same_as_quads(source, "args.bril", stage, args)


# Boundaries of UTF-8's lengths and of the keys (U+E000..U+FFFF above the pairs).
BOUNDARY = ["\x01", "\x7f", "\x80", "߿", "ࠀ", "\ud7ff", "\ue000", "￿", "𐀀", "🐱",
            "\U0010ffff"]


@pytest.mark.parametrize("stage", MACHINE)
def test_char_compares_conversions_and_printing(stage):
    lines = ["@main {"]
    for k, c in enumerate(BOUNDARY):
        lines += [f"  i{k}: int = const {ord(c)};", f"  c{k}: char = int2char i{k};",
                  f"  j{k}: int = char2int c{k};", f"  print c{k} j{k};"]
    for a in range(len(BOUNDARY)):
        for b in range(len(BOUNDARY)):
            lines += [f"  x{a}_{b}: bool = {op} c{a} c{b};" for op in ("clt", "cge")]
            lines.append(f"  print x{a}_{b};")
    lines.append("}")
    _same_as_quads("\n".join(lines) + "\n", "chars.bril", stage)


@given(st.characters(exclude_categories=("Cs",)), st.characters(exclude_categories=("Cs",)))
def test_keys_order_chars_as_brili_does(a, b):
    assert (char_key(a) < char_key(b)) == char_compare("clt", a, b)
    assert key_char(char_key(a)) == a


def _round_trip(values: list[int]) -> str:
    """Stores the values in a fresh block, reads them back from the end, prints each."""
    lines = ["@main {", f"  n: int = const {len(values)};", "  p: ptr<int> = alloc n;",
             "  one: int = const 1;", "  back: int = const -1;", "  q: ptr<int> = id p;"]
    for k, v in enumerate(values):
        lines += [f"  v{k}: int = const {v};", f"  store q v{k};",
                  "  q: ptr<int> = ptradd q one;"]
    lines += ["  last: int = sub n one;", "  r: ptr<int> = ptradd p last;"]
    for k in range(len(values)):
        lines += [f"  w{k}: int = load r;", f"  print w{k};", "  r: ptr<int> = ptradd r back;"]
    lines += ["  free p;", "}"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("stage", ["native", "emulated-aarch64"])
@settings(max_examples=4, deadline=None)
@given(st.lists(st.integers(-(1 << 63), (1 << 63) - 1), min_size=1, max_size=5))
def test_stored_words_come_back(stage, values):
    result = _same_as_quads(_round_trip(values), "words.bril", stage)
    assert result.stdout == "".join(f"{v}\n" for v in reversed(values))
