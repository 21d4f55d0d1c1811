"""The fuzzer's parts: the seeded generator, the shrinker, the runner, and a fixed slice.

The slice (``test_fixed_slice_agrees_in_every_stage``) is what CI runs of ``make fuzz``: a
fixed range of seeds through every stage and the Bril-text variants, two worker processes.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

import pytest
from fuzzgen import generate
from fuzzrun import WALL_FACTOR, Outcome, category, compare, guarded, reference, still_fails
from fuzzshrink import shrink, units

from ssa_course import registry
from ssa_course.compilation import compile_source
from ssa_course.runtime import RunResult

TOOLS = Path(__file__).resolve().parent.parent / "tools"
SLICE_SEEDS = range(7000, 7150)


def _ast(source: str) -> Outcome:
    ref, bad = reference(compile_source(source, "t.tiny"), 30)
    assert bad is None, ref.error
    return ref


def test_generator_is_deterministic_per_seed():
    assert generate(12345) == generate(12345)
    assert len({generate(seed) for seed in range(20)}) == 20


def test_generated_programs_compile_and_terminate():
    for seed in range(60):
        ref = _ast(generate(seed, size=20))
        assert ref.status in (0, 2), f"seed {seed}: {ref.error}"
        assert "limit" not in ref.error, f"seed {seed}: {ref.error}"


SHAPES = {
    "swap through a temporary": r"var (t\d+) = (\w+);\n\s*\2 = (\w+);\n\s*\3 = \1;",
    "rotation of three": r"var (t\d+) = (\w+);\n\s*\2 = (\w+);\n\s*\3 = (\w+);\n\s*\4 = \1;",
    "value read in catch": r"\} catch \((e\d+)\) \{\n\s*print\(\w+, \1\);",
    "nested try": r"try \{\n(?:[^\n]*\n){0,12}?[ \t]*try \{",
    "break carrying a value": r"= [^\n]*;\n\s*break;",
    "continue": r"continue;",
    "call in a loop condition": r"(while|for) \([^\n]*&& \(f\d+\(|(while|for) \(\(f\d+\(",
    "dead trap": r"if \(false\) \{ var z\d+ = .* / 0; \}",
    "unused trap": r"var (dead\d+) = new int\[3\];",
    "else-if chain": r"\} else if \(",
    "recursion": r"fn (f\d+)\(n: int[^\n]*\n(?:[^\n]*\n)*?[ \t]*var r\d+ = \1\(n - 1",
    "struct literal": r"new P \{ v: ",
    "array of structs": r"ps\[\w+\]\.v",
    "throw from a helper": r"fn f\d+\([^\n]*\n\s*if \([^\n]*\n\s*throw ",
    "throwing call assigning in a loop in try":
        r"try \{\n[^\n]*\n(?:[^\n]*\n){0,3}?[ \t]*(while|for) \([^\n]*< 4[^\n]*\n"
        r"(?:[^\n]*\n)?[ \t]*(\w+) = f\d+\([iw]\d+\);",
    "zero-trip loop": r"(while \(w\d+|; i\d+) < 0",
    "trap behind its guard": r"if \(\w+ != 0\) \{ print\(",
}


def test_generator_emits_every_shape_often():
    programs = [generate(seed) for seed in range(150)]
    for shape, pattern in SHAPES.items():
        hits = sum(1 for p in programs if re.search(pattern, p))
        assert hits >= 5, f"{shape}: only {hits} of 150 programs"


def test_units_are_statements_and_blocks():
    lines = ["fn main() {", "    var a = 1;", "    if (a == 1) {", "        print(a);",
             "    } else {", "        print(2);", "    }", "}"]
    assert (2, 6, [2, 4]) in units(lines)
    assert (1, 1, []) in units(lines)
    assert (0, 7, [0]) in units(lines)


def test_shrinker_keeps_a_synthetic_bug_and_drops_the_rest():
    """A fake bug: "the program prints a line that is exactly 42". Everything else goes."""
    source = generate(3).replace(
        "fn main(n: int, flag: bool) {",
        "fn main(n: int, flag: bool) {\n    var z = 40;\n"
        "    for (var k = 0; k < 3; k = k + 1) {\n        if (k == 2) {\n"
        "            print(z + k);\n        }\n    }")

    def prints_42(text: str) -> bool:
        try:
            ref, bad = reference(compile_source(text, "s.tiny"), 10, steps=100_000)
        except Exception:
            return False
        return bad is None and ref.status != 1 and "42" in ref.stdout.splitlines()

    assert prints_42(source)
    small = shrink(source, prints_42, seconds=120)
    assert prints_42(small)
    assert len(small) < len(source) // 4
    assert len(small.splitlines()) <= 7, small  # ARGS, main, var, loop, print, braces


def test_shrinker_respects_its_time_budget():
    source = generate(5)
    start = time.monotonic()
    result = shrink(source, lambda s: "fn main" in s, seconds=1.0)
    assert time.monotonic() - start < 5
    assert "fn main" in result


def test_guarded_reports_hangs_and_crashes():
    def hang() -> RunResult:
        while True:
            pass

    def waits() -> RunResult:  # no CPU time: the wall-clock backstop ends it
        while True:
            time.sleep(0.01)

    def crash() -> RunResult:
        raise KeyError("boom")

    assert guarded(hang, 0.2)[1] == "hang"
    started = time.monotonic()
    assert guarded(waits, 0.05)[1] == "hang"
    assert time.monotonic() - started < 0.05 * WALL_FACTOR + 2
    out, kind = guarded(crash, 5)
    assert kind == "crash" and "KeyError" in out.error
    assert guarded(lambda: RunResult("x\n", 0, ""), 5) == (Outcome("x\n", 0, ""), None)


def test_category_names_the_first_difference():
    ref = Outcome("1\n", 2, "error: division by zero at 3:4")
    assert category(ref, ref) is None
    assert category(ref, Outcome("1\n", 0, "")) == "status"
    assert category(ref, Outcome("2\n", 2, ref.error)) == "stdout"
    assert category(ref, Outcome("1\n", 2, "error: division by zero at 3:5")) == "error"


def test_still_fails_rejects_programs_that_do_not_compile():
    assert not still_fails("fn main() { print(x); }\n", "quads", "stdout", 10)
    assert not still_fails("fn main() { print(1); }\n", "quads", "stdout", 10)


def test_compare_covers_every_stage_and_bril_variant():
    from fuzzrun import stage_names

    names = stage_names()
    every = [s for s in registry.executors() if s.unavailable() is None]
    assert {s.name for s in every} - {"ast"} <= set(names)
    assert {f"bril:{s.name}" for s in every if not s.tiny_only} <= set(names)
    # views that run as another representation are not run twice
    assert not any(registry.representation(n.split(":")[-1]).runs_as for n in names)
    # the Bril side of the generator: every Bril stage but quads, its reference
    assert {f"undef:{s.name}" for s in every if not s.tiny_only and s.name != "quads"} \
        <= set(names) and "undef:quads" not in names
    ref, found = compare("// ARGS: 2 true\nfn main(n: int, flag: bool) { print(n, flag); }\n",
                         names, 30)
    assert ref == Outcome("2 true\n", 0, "") and found == []


def test_fuzz_cli_rejects_bad_arguments(capsys):
    sys.path.insert(0, str(TOOLS))
    import fuzz

    with pytest.raises(SystemExit) as e:
        fuzz.main(["-n", "-3"])
    assert e.value.code == 2
    with pytest.raises(SystemExit) as e:
        fuzz.main(["-n", "1", "--pipelines", "-1"])
    assert e.value.code == 2
    with pytest.raises(SystemExit) as e:
        fuzz.main(["-n", "1", "--pipelines", "two"])
    assert e.value.code == 2
    with pytest.raises(SystemExit) as e:
        fuzz.main(["--stages", "no-such-stage"])
    assert e.value.code == 2
    assert "no-such-stage" in capsys.readouterr().err
    for bad in (["--worklist-seed", "x"], ["--worklist-seed", "1.5"], ["--worklist-seed"]):
        with pytest.raises(SystemExit) as e:
            fuzz.main(bad)
        assert e.value.code == 2
        assert "worklist-seed" in capsys.readouterr().err


def test_fuzz_shuffles_the_peephole_worklist_per_program(tmp_path, capsys):
    """Each program's iterative peepholes run in a random order seeded by its seed, and a
    graph left with progress would be a finding; ``--fifo`` keeps the lessons' order."""
    sys.path.insert(0, str(TOOLS))
    import fuzz

    for extra, says in (([], "random, seeded"), (["--fifo"], "first in, first out")):
        status = fuzz.main(["-n", "4", "--seed", "5", "--jobs", "1", "--size", "10",
                            "--stages", "son-opt,optimized", "--no-bril",
                            "--out", str(tmp_path), "--worklist-seed", "77", *extra])
        report = capsys.readouterr().out
        assert status == 0, report
        assert says in report


def test_fixed_slice_agrees_in_every_stage(tmp_path, capsys):
    """150 fixed programs, every stage plus the Bril variants, two workers; 0 mismatches."""
    sys.path.insert(0, str(TOOLS))
    import fuzz

    status = fuzz.main(["-n", str(len(SLICE_SEEDS)), "--seed", str(SLICE_SEEDS[0]),
                        "--jobs", "2", "--size", "12", "--out", str(tmp_path),
                        "--shrink", "1", "--shrink-seconds", "30"])
    report = capsys.readouterr().out
    findings = "\n".join(p.read_text() for p in sorted(tmp_path.glob("*.tiny")))
    assert status == 0, f"{report}\n{findings}"
    assert f"fuzz: {len(SLICE_SEEDS)} programs" in report


def test_a_located_error_of_several_lines_stays_a_comment_in_the_finding(tmp_path):
    """Fuzz seed 4561's finding file did not compile: the caret lines of its located
    error were written as they were, outside the comment."""
    sys.path.insert(0, str(TOOLS))
    from fuzzreport import write_finding
    from fuzzrun import Mismatch

    small = "// ARGS: 2\nfn main(n: int) {\n    print(n);\n}\n"
    error = "opt.bril:22:13: error: undefined variable 't5'\n  t7: int = sub t6 t5;\n" \
            "            ^~~"
    wrong = Mismatch("opt:inline", "status", Outcome("2\n", 0, ""), Outcome("", 1, error))
    write_finding(tmp_path, 1, 4561, "opt:inline", "status", small, [wrong])
    tiny = (tmp_path / "001-opt-inline.tiny").read_text()
    assert "//     t7: int = sub t6 t5;" in tiny and "//               ^~~" in tiny
    assert _ast(tiny).stdout == "2\n"


def test_finding_files_say_what_was_expected_and_what_happened(tmp_path):
    sys.path.insert(0, str(TOOLS))
    from fuzzreport import write_finding
    from fuzzrun import Mismatch

    small = "// ARGS: 2 true\nfn main(n: int, flag: bool) {\n    print(n);\n}\n"
    wrong = Mismatch("bril:julia", "stdout", Outcome("2\n", 0, ""), Outcome("3\n", 0, ""))
    paths = write_finding(tmp_path, 7, 99, "bril:julia", "stdout", small, [wrong])
    tiny = (tmp_path / "007-bril-julia.tiny").read_text()
    assert "seed 99" in tiny and "expected (ast): status 0" in tiny and "| 3" in tiny
    assert "// ARGS: 2 true" in tiny and _ast(tiny).stdout == "2\n"
    bril = (tmp_path / "007-bril-julia.bril").read_text()
    assert "# ARGS: 2 true" in bril and "@main" in bril
    assert len(paths) == 2
    assert "did not reproduce" in write_finding(tmp_path, 8, 5, "julia", "stdout", small, [])[0]
