"""AArch64 over the corpus: three assemblers give the same bytes; limits, executables.

The generic differential test (``test_differential.py``) already runs every corpus
program through ``emulated-aarch64`` and ``qemu-aarch64``; here: GNU ``as``, keystone and
our own encoder agree byte for byte on every corpus program and a slice of generated
programs (each pair skipped where one is missing), the limits give the interpreters'
errors, and ``compile --target aarch64`` writes an executable that runs under qemu.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from corpus import load_bril_corpus, load_bril_float_corpus, load_corpus, load_float_corpus
from fuzzgen import generate
from hypothesis import given, settings
from hypothesis import strategies as st

from ssa_course import stages
from ssa_course.cli import main
from ssa_course.codegen.aarch64 import toolchain
from ssa_course.codegen.aarch64.assemble import ASSEMBLERS, assemble, assembler_missing
from ssa_course.compilation import compile_source
from ssa_course.errors import SsaCourseError
from ssa_course.lessons.l11_aarch64 import compile_machine_a64
from ssa_course.runtime import Limits

CASES = [*load_corpus(), *load_bril_corpus(), *load_float_corpus(), *load_bril_float_corpus()]
ROOT = Path(__file__).resolve().parent.parent
OTHERS = [a for a in ASSEMBLERS if a != "own"]


def _source(text: str, name: str) -> str | None:
    try:
        comp = compile_source(text, name)
        comp.check()
    except SsaCourseError:
        return None
    return compile_machine_a64(comp).source()  # type: ignore[attr-defined]


def _same_bytes(source: str, other: str) -> None:
    mine, theirs = assemble(source, "own"), assemble(source, other)
    assert mine.text == theirs.text, "text differs"
    assert mine.data == theirs.data and mine.bss_size == theirs.bss_size
    assert mine.symbols == theirs.symbols and mine.entry == theirs.entry


@pytest.mark.parametrize("other", OTHERS)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_assemblers_give_the_same_bytes_on_the_corpus(case, other):
    if assembler_missing(other):
        pytest.skip(assembler_missing(other) or "")
    source = _source(case.source, case.path.name)
    if source is None:
        pytest.skip("a compile error: nothing to assemble")
    _same_bytes(source, other)


@pytest.mark.parametrize("other", OTHERS)
@pytest.mark.parametrize("seed", range(25))
def test_assemblers_give_the_same_bytes_on_generated_programs(seed, other):
    """Every fifth with floats (fuzzgen's NaN, infinities, -0.0: the FP forms)."""
    if assembler_missing(other):
        pytest.skip(assembler_missing(other) or "")
    source = _source(generate(7000 + seed, floats=seed % 5 == 0), f"gen{seed}.tiny")
    assert source is not None
    _same_bytes(source, other)


LOOP = "fn main(n: int) {\n    var i = 0;\n    while (i >= 0) { i = i + n; }\n}\n"
DEEP = "fn f(n: int) -> int {\n    return f(n + 1);\n}\nfn main() {\n    print(f(0));\n}\n"
BIG = ("fn fill(n: int) -> int[] {\n    var a = new int[n];\n    return a;\n}\n"
       "fn main(n: int) {\n    var a = fill(n);\n    var b = fill(n + 10);\n"
       "    print(len(a) + len(b));\n}\n")


MANY = ("fn f(a: int, b: int, c: int, d: int, e: int, g: int, h: int, i: int, j: int,"
        " k: int) -> int {\n    return a - b + c - d + e - g + h - i + j * k;\n}\n"
        "fn big(n: int) -> int {\n    var s = 0;\n"
        + "".join(f"    var a{k} = new int[16];\n    a{k}[n % 16] = {k};\n"
                  f"    s = s + a{k}[n % 16] + a{k}[(n + 1) % 16];\n" for k in range(8))
        + "    return s + f(n, 2, 3, 4, 5, 6, 7, 8, 9, n);\n}\n"
        "fn main(n: int) {\n    print(big(n), f(1, 2, 3, 4, 5, 6, 7, 8, 9, 10));\n}\n")


@pytest.mark.skipif(toolchain.emulator_missing() is not None,
                    reason=toolchain.emulator_missing() or "")
@pytest.mark.parametrize("program,args,limits", [
    (MANY, ["5"], Limits()), (MANY, ["-7"], Limits()),
    (LOOP, ["0"], Limits(steps=5000)), (DEEP, [], Limits(depth=500)),
    (BIG, ["50"], Limits(cells=100)), (BIG, ["-1"], Limits()),
    (LOOP, [], Limits()), (LOOP, ["x"], Limits()),
])
def test_limits_and_arguments_match_the_interpreter(program, args, limits):
    comp = compile_source(program, "t.tiny")
    want = stages.run(comp, args, via="quads", limits=limits)
    got = stages.run(comp, args, via="emulated-aarch64", limits=limits)
    assert (got.stdout, got.status, got.error) == (want.stdout, want.status, want.error)
    assert got.status in (1, 2) or program is MANY


@pytest.mark.skipif(toolchain.qemu_missing() is not None,
                    reason=toolchain.qemu_missing() or "")
def test_compiled_executable_runs_under_qemu(tmp_path):
    exe = tmp_path / "sum"
    assert main(["compile", "--target", "aarch64", "-o", str(exe),
                 str(ROOT / "examples" / "sum.tiny")]) == 0
    assert exe.read_bytes()[18:20] == (183).to_bytes(2, "little")  # EM_AARCH64
    qemu = toolchain.qemu_path()
    done = subprocess.run([qemu, str(exe), "10"], capture_output=True, text=True, timeout=60)
    assert (done.stdout, done.returncode) == ("159\n", 0)
    done = subprocess.run([qemu, str(exe)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "main takes 1 argument" in done.stderr


@pytest.mark.skipif(toolchain.emulator_missing() is not None,
                    reason=toolchain.emulator_missing() or "")
@pytest.mark.parametrize("case", [c for c in load_corpus() if c.name != "step_limit"],
                         ids=[c.name for c in load_corpus() if c.name != "step_limit"])
def test_builds_without_fuel_checks_run_the_corpus(case):
    """``compile`` without --step-limit: no fuel checks, x27 allocatable (a throw gives it
    back from the handler record); same output, status and message."""
    from ssa_course.codegen.aarch64.emulate import run_emulated

    try:
        comp = compile_source(case.source, case.path.name)
        comp.check()
    except SsaCourseError as e:
        assert case.exit == e.exit_status
        return
    compiled = compile_machine_a64(comp, fuel=False)
    got = run_emulated(assemble(compiled.source(None)), case.args)  # type: ignore[attr-defined]
    assert (got.stdout, got.status, got.stderr) == (case.stdout, case.exit, case.stderr)


EDGES = [0, 1, -1, 2, 3, 7, -7, 8, -16, 255, 641, 1000, -1000, 4095, 4096, 4097, -4095,
         -4096, 65535, 65536, 0x12345678, -(1 << 31), 1 << 32, (1 << 62) + 1,
         (1 << 63) - 1, -(1 << 63), 0x00FF00FF00FF00FF, -0x0F0F0F0F0F0F0F10]


def _literal(c: int) -> str:
    return f"({c + 1} - 1)" if c == -(1 << 63) else f"({c})"


def _constant_program(constants: list[int]) -> str:
    lines = []
    for c in constants:
        k = _literal(c)
        lines.append(f"    print(n + {k}, n - {k}, {k} - n, n * {k}, n < {k}, n >= {k}, "
                     f"n == {k}, {k} < n);")
        if c != 0:
            lines.append(f"    print(n / {k}, n % {k});")
        lines.append(f"    if (n != 0) {{ print({k} / n, {k} % n); }}")
        lines.append(f"    if (n > {k}) {{ print(1); }} else {{ print(0); }}")
    return "fn main(n: int) {\n" + "\n".join(lines) + "\n}\n"


def _agree(program: str, inputs: list[int]) -> None:
    comp = compile_source(program, "edges.tiny")
    for n in inputs:
        want = stages.run(comp, [str(n)], via="quads")
        got = stages.run(comp, [str(n)], via="emulated-aarch64")
        assert (got.stdout, got.status, got.error) == (want.stdout, want.status,
                                                        want.error), n


@pytest.mark.skipif(toolchain.emulator_missing() is not None,
                    reason=toolchain.emulator_missing() or "")
def test_immediates_and_divisions_by_edge_constants():
    """Every constant kind: imm12 (and shifted), negative (flipped op, cmn), bitmask and
    non-bitmask, wide (movz/movn/movk), INT_MIN; division by each (power of two, magic,
    sdiv with Tiny's INT_MIN rules) -- against the interpreter."""
    _agree(_constant_program(EDGES), [0, 1, -1, 7, -123456789, (1 << 63) - 1, -(1 << 63)])


@pytest.mark.skipif(toolchain.emulator_missing() is not None,
                    reason=toolchain.emulator_missing() or "")
@settings(max_examples=8, deadline=None)
@given(st.lists(st.integers(-(1 << 63), (1 << 63) - 1), min_size=1, max_size=4),
       st.integers(-(1 << 63), (1 << 63) - 1))
def test_random_constants_agree_with_the_interpreter(constants, n):
    _agree(_constant_program(constants), [n])
