"""The lines face of every representation (ssa_course.srclines, docs/lines.md), over the
registry and the corpus: aligned with the text face, only real source lines, every
statement line kept where the representation keeps it, effects never lost."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from corpus import load_bril_corpus, load_corpus

from ssa_course import registry
from ssa_course.compilation import Compilation, load_file
from ssa_course.errors import SsaCourseError
from ssa_course.srclines import annotated_lines, listing_lines, valid
from ssa_course.tiny import ast as A
from ssa_course.tiny.statements import statements_by_line

# Representations that keep every statement of the program (nothing optimized away).
KEEPS_ALL = {"ast", "quads", "cfg", "bril", "bril-json", "ssa-minimal", "ssa-pruned",
             "ssa-braun", "out-of-ssa"}
# Statements with an effect: their line survives every optimization that keeps them live.
EFFECTS = {"Print"}  # (a throw caught nearby becomes a jump; a return may merge)
# What no line at all is explained by (docs/lines.md): the allocator's report is about
# values and registers, not statements.
NO_LINES = {"interference", "interference-aarch64"}
# One machine code per target is enough (the runners share the listing; asm and disasm
# are checked here, the others share their lines helper).
SKIP = {"native", "emulated", "native-aarch64", "emulated-aarch64", "qemu-aarch64"}

TINY = [c for c in load_corpus() if c.exit == 0][::6]  # every sixth: a spread, quickly
BRIL = [c for c in load_bril_corpus() if c.path.suffix == ".bril"][::8]


def statement_lines(program: A.Program) -> dict[int, set[str]]:
    """Each source line holding a statement -> the kinds of statement on it."""
    return {line: {type(s).__name__ for s in stmts}
            for line, stmts in statements_by_line(program).items()}


def _faces(comp: Compilation):
    for rep in registry.representations():
        if rep.name in SKIP or rep.unavailable():
            continue
        if rep.tiny_only and comp.kind != "tiny":
            continue
        try:
            artifact = registry.build(comp, rep.name)
        except SsaCourseError:
            continue  # a representation this program is outside of (says so elsewhere)
        text = rep.text(artifact)
        yield rep, text, rep.source_lines(artifact)


@pytest.mark.parametrize("case", TINY, ids=lambda c: c.name)
def test_every_representation_maps_its_items_to_real_lines(case) -> None:
    comp = load_file(str(case.path))
    n = len(comp.source.splitlines())
    statements = statement_lines(comp.ast)
    assert statements
    for rep, text, lines in _faces(comp):
        assert valid(lines, text, n) == [], rep.name
        covered = lines.covered()
        if rep.name in NO_LINES:
            assert lines.no_line(text), rep.name  # listed, not dropped
            continue
        assert covered, f"{rep.name}: no item has a line"
        missing = {line: kinds for line, kinds in statements.items() if line not in covered}
        live = _reachable(comp)  # dead code (after a throw, a return) may go anywhere
        if rep.name in KEEPS_ALL:
            lost = sorted(set(missing) & live)
            assert not lost, f"{rep.name} lost statement lines {lost}"
        # an effect is lost when SCCP (son-opt) kept it live but this representation has
        # no item for it; code SCCP proves dead (``while (false) { print }``) may go, and
        # so may a print of a call's result: an inlining pipeline (``optimized``) can
        # prove the call always throws (sroa_calls.tiny, line 37), which SCCP cannot
        proved_live = _son_opt_lines(comp) & live
        calling = _prints_of_calls(comp.ast)
        lost_effects = {line for line, kinds in missing.items() if kinds & EFFECTS
                        and line in proved_live and line not in calling}
        assert not lost_effects, f"{rep.name} lost the effect on lines {sorted(lost_effects)}"
        # every item without a line is still listed
        assert len(lines.no_line(text)) == sum(
            1 for t, m in zip(text.splitlines(), lines.text, strict=True) if m is None
            and t.strip())


def _prints_of_calls(program: A.Program) -> set[int]:
    """The lines of the prints whose arguments call a function."""
    out = set()
    for line, stmts in statements_by_line(program).items():
        for s in stmts:
            if isinstance(s, A.Print):
                work: list[object] = list(s.args)
                while work:
                    e = work.pop()
                    if isinstance(e, A.Call):
                        out.add(line)
                        break
                    if isinstance(e, list | tuple):
                        work.extend(e)
                    elif isinstance(e, A.Expr):
                        work.extend(getattr(e, f.name) for f in dataclasses.fields(e))
    return out


def _reachable(comp: Compilation) -> set[int]:
    """The lines of the statements still in the quads once unreachable blocks go (the
    runnable program of ``cfg``)."""
    from ssa_course.lessons.lines_faces import quads_lines

    return quads_lines(registry.build(comp, "cfg").program).covered()  # type: ignore


def _son_opt_lines(comp: Compilation) -> set[int]:
    rep = registry.representation("son-opt")
    return rep.source_lines(registry.build(comp, "son-opt")).covered()


@pytest.mark.parametrize("case", BRIL, ids=lambda c: c.name)
def test_bril_input_maps_to_its_own_lines(case) -> None:
    comp = load_file(str(case.path))
    source = comp.source.splitlines()
    rep = registry.representation("quads")
    program = registry.build(comp, "quads")
    text = rep.text(program)
    lines = rep.source_lines(program)
    assert valid(lines, text, len(source)) == []
    for row, line in zip(text.splitlines(), lines.text, strict=True):
        if line is None:
            continue
        # the listed instruction is the one written on that line of the Bril file
        op = row.split("=")[-1].strip().split(" ")[0].rstrip(";").lstrip(".").rstrip(":")
        assert op and op in source[line - 1], (row, line, source[line - 1])


def test_a_phi_has_the_line_of_the_statement_that_made_its_merge() -> None:
    comp = Compilation_from("fn main(n: int) {\n  var x = 0;\n  if (n > 1) {\n"
                            "    x = 1;\n  }\n  print(x);\n}\n")
    program = registry.build(comp, "ssa-pruned")
    lines = registry.representation("ssa-pruned").source_lines(program)
    text = registry.representation("ssa-pruned").text(program).splitlines()
    phis = [n for t, n in zip(text, lines.text, strict=True) if "phi" in t]
    assert phis == [3]  # the if on line 3 made the merge


def test_son_nodes_and_drawing_share_lines() -> None:
    comp = Compilation_from("fn main(n: int) {\n  var s = 0;\n  while (s < n) {\n"
                            "    s = s + 2;\n  }\n  print(s);\n}\n")
    rep = registry.representation("son")
    graphs = registry.build(comp, "son")
    lines = rep.source_lines(graphs)
    fg = graphs.functions["main"]  # type: ignore[attr-defined]
    loops = [n for n in fg.nodes() if type(n).__name__ == "Loop"]
    assert loops and lines.node(str(loops[0].id)) == 3
    assert lines.node("no such node") is None


def test_drawing_of_several_functions_has_the_nodes_lines() -> None:
    """Several functions are drawn with prefixed names ("fib.6", a constant's copy
    "fib.3>fib.6.1"): each name still finds its node's line."""
    import re

    comp = load_file(str(Path(__file__).parent / "programs" / "linked_calls.tiny"))
    rep = registry.representation("son-opt")
    program = registry.build(comp, "son-opt")
    lines = rep.source_lines(program)
    dot = rep.dot(program, "t", None)
    names = re.findall(r'^\s*"([^"]+)" \[', dot, re.M)
    expected = {f"{fn}.{i}": line for fn, fg in program.functions.items()  # type: ignore
                for i, line in fg.graph.lines.items()}
    drawn = [n for n in names if n in expected]
    assert {n.split(".", 1)[0] for n in drawn} == {"fib", "twice", "main"}
    assert all(lines.node(n) == expected[n] for n in drawn)
    copies = [n for n in names if ">" in n]
    assert copies and all(lines.node(n) == expected.get(n.split(">")[1].rsplit(".", 1)[0])
                          for n in copies)


def Compilation_from(source: str) -> Compilation:
    from ssa_course.compilation import compile_source

    return compile_source(source)


def test_listing_lines_any_target() -> None:
    text = ("f:\n    push rbp\n    # line 4: x = 1\n    mov x0, 1\n.L1:\n"
            "    // line 5: y\n    add x0, x0, 1\ng:\n    ret\n")
    assert listing_lines(text).text == [None, None, 4, 4, None, 5, 5, None, None]
    assert annotated_lines("For  @4:5\n  x\n").text == [4, None]


# A form feed, \x1c, U+0085, U+2028 and U+2029 in a comment: str.splitlines() breaks
# there, the lexer does not (issue 39). Every face must number lines as the lexer does.
ODD_BREAKS = ("fn main() {\n  // a\x0cb\x1cc\x85d\u2028e\u2029f\n  var y = 1;\n"
              "  print(2);\n}\n")


def test_split_lines_is_the_lexers_rule() -> None:
    from ssa_course.srclines import split_lines

    assert split_lines("a\x0cb\u2028c\nd\r\ne\rf\n") == ["a\x0cb\u2028c", "d", "e", "f"]
    assert split_lines("") == [] and split_lines("\n") == [""]
    assert split_lines("a\n\n") == ["a", ""] == "a\n\n".splitlines()


@pytest.mark.parametrize("asm", ["asm", "asm-aarch64"])
def test_odd_line_breaks_give_the_lexers_lines_everywhere(asm, tmp_path) -> None:
    """``print(2);`` is line 4 in the quads, the linked page and the asm listing."""
    from test_linked import parse

    from ssa_course.cli import main

    path = tmp_path / "odd.tiny"
    path.write_text(ODD_BREAKS, encoding="utf-8")
    comp = load_file(str(path))
    quads = registry.build(comp, "quads")
    prints = [i.line for fn in quads.functions.values() for i in fn.instrs()
              if getattr(i, "op", None) == "print"]
    assert prints == [4]
    listing = registry.representation(asm).text(registry.build(comp, asm))
    assert "line 4: print(2);" in listing
    assert "line 3: var y = 1;" not in listing  # no code for the dead store, no drift
    out = tmp_path / "page.html"
    assert main(["show", str(path), "--as", f"quads,{asm}", "--format", "html",
                 "-o", str(out)]) == 0
    page = parse(out.read_text(encoding="utf-8"))
    assert sorted(page.panes["source"]) == [1, 2, 3, 4, 5]
    assert 4 in page.panes["quads"] and 4 in page.panes[asm]
    assert max(page.panes["quads"] + page.panes[asm]) <= 5


@pytest.mark.parametrize("via", ["emulated", "emulated-aarch64"])
def test_a_listing_echoing_odd_breaks_assembles_with_our_assembler(via, tmp_path,
                                                                   capsys) -> None:
    """The listing echoes ``print(2); // x<U+2028>y`` in a ``line 2`` comment: the own
    assembler reads that comment as one line, not as a comment and an instruction ``y``."""
    from ssa_course.cli import main

    path = tmp_path / "odd.tiny"
    path.write_text("fn main() {\n  print(2); // x\u2028y\x0cz\n}\n", encoding="utf-8")
    assert main(["run", "--via", via, "--assembler", "own", str(path)]) == 0
    assert capsys.readouterr().out == "2\n"
