"""The helpers lesson 10's notebook shows: the lattice picture, instruction counts with and
without scalar replacement, native timings with arrays in the heap or the frame."""

from __future__ import annotations

import re

from ssa_course.lessons.l10_escape import dynamic_counts, lattice_dot, native_seconds

# q is one of two fresh structs: the sea of nodes' memory folds cannot read its fields (the
# two were made with different values), scalar replacement removes both allocations (a
# struct whose fields are only read from fresh objects would be folded without sroa)
POINTS = """struct P { x: int; y: int; }
fn main(n: int) {
    var acc = 0;
    for (var i = 0; i < n; i = i + 1) {
        var p = new P { x: i, y: i * i };
        var q = new P { x: 1, y: 2 };
        if (i % 3 == 0) { q = p; }
        acc = acc + q.y - q.x;
    }
    print(acc);
}"""


def test_the_lattice_picture_has_every_glyph_and_covering_edges():
    dot = lattice_dot()
    assert len(re.findall(r'^\s+"n[^"]*" \[label=', dot, re.M)) == 10  # ◌, ✓, 7 subsets, X
    assert len(re.findall(r"->", dot)) == 1 + 12 + 1  # ◌→✓, the cube's edges, → X
    for glyph in ("◌", "✓", "↑", "*", "X"):
        assert f'label="{glyph}' in dot


def test_scalar_replacement_executes_fewer_instructions_with_the_same_output():
    counts = dynamic_counts(POINTS, 50)
    (before, out1), (after, out2) = counts["without sroa"], counts["with sroa"]
    assert out1 == out2 == str(sum(i * i - i if i % 3 == 0 else 1 for i in range(50)))
    assert after < before


def test_native_timings_print_the_same_in_heap_and_frame():
    timed = native_seconds("fn main(n: int) { var t = 0; for (var i = 0; i < n; i = i + 1) {"
                           " var b = new int[2]; b[0] = i; b[1] = b[0] * 2; t = t + b[1]; }"
                           " print(t); }", 1000, repeat=1)
    if isinstance(timed, str):  # no native runs here: the toolchain's one-line reason
        from ssa_course.codegen import toolchain

        assert timed == toolchain.native_missing()
        assert timed and "\n" not in timed
        return
    assert timed["heap"][1] == timed["frame"][1] == str(sum(2 * i for i in range(1000)))
    assert timed["heap"][0] > 0 and timed["frame"][0] > 0


def test_the_backend_keeps_arrays_in_the_heap_when_asked():
    from ssa_course.compilation import compile_source
    from ssa_course.lessons.l11_codegen import compile_machine

    source = ("fn main(n: int) { var a = new int[4]; a[1] = n; print(a[1]); }")
    framed = compile_machine(compile_source(source)).program_asm
    heaped = compile_machine(compile_source(source), frame_arrays=False).program_asm
    assert "rt_charge_array" in framed and "rt_charge_array" not in heaped


def test_native_timings_say_why_when_native_code_cannot_run(monkeypatch):
    from ssa_course.codegen import toolchain

    reason = "native runs need x86-64 Linux (this is plan9 on mips): use --via emulated"
    monkeypatch.setattr(toolchain, "native_missing", lambda: reason)
    assert native_seconds("fn main() { print(1); }", repeat=1) == reason
