"""The native benchmark's kernels (benchmarks/native/): each Tiny kernel prints exactly what
its C twin prints, so the benchmark compares like with like; and the benchmark's own
bookkeeping (ratios, geometric means, loud mismatches) works.

Speed itself is measured by ``make bench-native``, not here. gcc is a benchmark/test tool
only: without it the comparisons skip.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

NATIVE = Path(__file__).resolve().parent.parent / "benchmarks" / "native"
sys.path.insert(0, str(NATIVE))

from native_kernels import (  # noqa: E402
    KERNEL_DIR,
    KERNELS,
    Run,
    best_run,
    best_runs,
    compile_c,
    gcc,
    interpret,
    kernel,
)

# bench.py under a name of its own ("bench" alone is too likely to collide).
_spec = importlib.util.spec_from_file_location("native_bench", NATIVE / "bench.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

NO_GCC = "gcc not found (needed only to compile the kernels' C twins)"
NAMES = [k.name for k in KERNELS]


@pytest.fixture(scope="module")
def c_outputs(tmp_path_factory) -> dict[str, str]:
    """What each C twin (gcc -O0) prints at the kernel's test size."""
    if gcc() is None:
        pytest.skip(NO_GCC)
    out_dir = tmp_path_factory.mktemp("c-twins")
    outputs = {}
    for k in KERNELS:
        exe = compile_c(k, "O0", out_dir)
        p = subprocess.run([str(exe), *k.test], capture_output=True, text=True, timeout=30)
        assert p.returncode == 0, f"{k.name}: the C twin failed: {p.stderr}"
        outputs[k.name] = p.stdout
    return outputs


def test_every_kernel_file_is_registered_with_a_c_twin():
    on_disk = sorted(p.stem for p in KERNEL_DIR.glob("*.tiny"))
    assert on_disk == sorted(NAMES)
    for k in KERNELS:
        assert k.c.is_file(), f"{k.name} has no C twin"
        assert k.test and k.interp and k.bench


@pytest.mark.parametrize("name", NAMES)
def test_interpreter_prints_what_the_c_twin_prints(name, c_outputs):
    k = kernel(name)
    r = interpret(k, k.test)
    assert (r.status, r.stderr) == (0, "")
    assert r.stdout == c_outputs[name]
    assert r.stdout.strip(), "a kernel must print its result"


@pytest.mark.parametrize("name", NAMES)
def test_native_stage_prints_what_the_c_twin_prints(name, c_outputs):
    """Our native code at the test size, when the code generator is there."""
    from ssa_course import registry
    from ssa_course.compilation import load_file
    from ssa_course.stages import run

    if "native" not in registry.names():
        pytest.skip("no 'native' representation yet (the code generator has not landed)")
    from ssa_course.codegen.toolchain import native_missing

    reason = native_missing()  # the one line saying why native runs cannot happen here
    if reason is not None:
        pytest.skip(reason)
    k = kernel(name)
    r = run(load_file(str(k.tiny)), list(k.test), via="native")
    assert (r.status, r.error, r.stdout) == (0, "", c_outputs[name])


def test_kernel_lookup_names_the_known_ones():
    with pytest.raises(KeyError, match="fib"):
        kernel("no_such_kernel")


def test_geomean_and_ratio():
    assert bench.geomean([]) is None
    assert bench.geomean([2.0, 8.0]) == pytest.approx(4.0)
    fast, slow, failed = Run("1\n", 0, "", 0.5), Run("1\n", 0, "", 2.0), Run("", 2, "x", 0.1)
    assert bench.ratio(fast, slow) == pytest.approx(0.25)
    assert bench.ratio(None, slow) is None
    assert bench.ratio(failed, slow) is None
    assert bench.fmt_ratio(None) == "-" and bench.secs(None) == "-"
    assert bench.secs(failed) == "FAIL"


def test_targets_line():
    assert bench.targets_line([], 1.5) == ("targets: faster than gcc -O0 on every kernel: "
                                           "met; geometric mean ours/O1 <= 1.5: met (1.50)")
    line = bench.targets_line(["fib", "matmul"], 1.51)
    assert "MISSED on fib, matmul;" in line and line.endswith("MISSED (1.51)")


def test_mismatches_are_loud():
    same, other = Run("42\n", 0, "", 1.0), Run("43\n", 0, "", 1.0)
    assert bench.mismatches("k", {"gcc -O0": same, "ours": None, "gcc -O1": same}) == []
    lines = bench.mismatches("k", {"gcc -O0": same, "ours": other})
    assert len(lines) == 1 and "MISMATCH" in lines[0] and "'43'" in lines[0]
    crashed = Run("", -11, "killed by SIGSEGV", 0.1)
    lines = bench.mismatches("k", {"gcc -O0": same, "ours": crashed})
    assert len(lines) == 1 and "FAILED" in lines[0] and "SIGSEGV" in lines[0]


def test_bench_runs_end_to_end_at_the_test_size(capsys):
    if gcc() is None:
        pytest.skip(NO_GCC)
    status = bench.main(["--kernels", "fib,sieve", "--size", "test", "--interp-size", "test",
                         "--repeat", "1", "--shapes", "none"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "MISMATCH" not in out and "FAILED" not in out
    rows = [line.split() for line in out.splitlines()]
    assert sum(1 for row in rows if row and row[0] == "fib") == 2  # both tables
    assert any(row[:1] == ["geometric"] for row in rows)


def test_bench_rejects_an_unknown_kernel(capsys):
    assert bench.main(["--kernels", "nope"]) == 2
    assert "no kernel 'nope'" in capsys.readouterr().err


def test_a_run_that_changes_its_output_is_a_failure(tmp_path):
    """best_run compares every repeated run with the first, not just the fastest."""
    counter = tmp_path / "n"
    counter.write_text("0")
    exe = tmp_path / "flaky"
    exe.write_text(f"#!/bin/sh\nn=$(cat {counter}); echo $((n + 1)) > {counter}; echo $n\n")
    exe.chmod(0o755)
    r = best_run(exe, (), 3)
    assert r.status != 0 and "earlier run" in r.stderr
    assert "FAILED" in bench.mismatches("flaky", {"ours": r})[0]


def fake_compiler(tmp_path: Path, body: str) -> str:
    """A stand-in for ``ssa-course compile SRC -o EXE`` writing a shell script whose body
    is ``body`` (``{src}`` is the Tiny file): lets the benchmark's "ours" columns and the
    compile-time table be tested before and independently of the code generator."""
    script = tmp_path / "fake_compile.py"
    script.write_text(
        "import os, sys\n"
        "if sys.argv[1:] == ['--help']:\n    sys.exit(0)\n"
        "src, exe = sys.argv[1], sys.argv[3]\n"
        f"body = {body!r}.format(src=src, python=sys.executable)\n"
        "open(exe, 'w').write('#!/bin/sh\\n' + body + '\\n')\n"
        "os.chmod(exe, 0o755)\n")
    return f"{sys.executable} {script}"


def test_bench_ours_columns_and_compile_time_with_a_stand_in_compiler(tmp_path, capsys):
    """'Ours' = the quads interpreter behind a shell script: right answers, slow."""
    if gcc() is None:
        pytest.skip(NO_GCC)
    compiler = fake_compiler(tmp_path, 'exec {python} -m ssa_course run {src} "$@"')
    status = bench.main(["--kernels", "fib", "--size", "test", "--interp-size", "test",
                         "--repeat", "1", "--compiler", compiler, "--shapes", "straight",
                         "--compile-sizes", "10,20"])
    out = capsys.readouterr().out
    assert status == 0, out
    fib = [line.split() for line in out.splitlines() if line.split()[:1] == ["fib"]]
    assert len(fib) == 2 and float(fib[0][2]) > 0 and float(fib[0][5]) > 0  # ours, ours/O0
    assert "targets" not in out.replace("the targets are judged at the bench size", "")
    rows = [line.split() for line in out.splitlines() if line.split()[:1] == ["straight"]]
    assert [row[1] for row in rows] == ["10", "20"]


def test_bench_is_loud_when_our_executable_prints_something_else(tmp_path, capsys):
    if gcc() is None:
        pytest.skip(NO_GCC)
    compiler = fake_compiler(tmp_path, "echo 0")
    status = bench.main(["--kernels", "sieve", "--size", "test", "--no-interp",
                         "--repeat", "1", "--compiler", compiler, "--shapes", "none"])
    out = capsys.readouterr().out
    assert status == 1
    assert "!!! MISMATCH sieve: gcc -O0 printed '303 909' but ours printed '0'" in out


def test_bench_without_a_compiler_says_so_in_one_line(capsys):
    status = bench.main(["--kernels", "fib", "--size", "test", "--no-interp", "--repeat",
                         "1", "--compiler", "/nonexistent/ssa-compile", "--shapes", "none"])
    out = capsys.readouterr().out
    assert status == 0
    notes = [line for line in out.splitlines() if "native columns are '-'" in line]
    assert len(notes) == 1 and "/nonexistent/ssa-compile" in notes[0]


def test_bench_rejects_an_unknown_shape(capsys):
    assert bench.main(["--shapes", "nope"]) == 2
    assert "no shape 'nope'" in capsys.readouterr().err


def test_runs_are_taken_in_turns_and_a_failure_is_not_repeated(tmp_path):
    log = tmp_path / "log"
    exes = {}
    for name, status in (("a", 0), ("b", 3), ("c", 0)):
        exe = tmp_path / name
        exe.write_text(f"#!/bin/sh\necho {name} >> {log}\necho {name}\nexit {status}\n")
        exe.chmod(0o755)
        exes[name] = exe
    runs = best_runs(exes, (), 3)
    assert log.read_text().split() == ["a", "b", "c", "a", "c", "a", "c"]
    assert runs["b"].status == 3 and runs["a"].stdout == "a\n" and runs["c"].status == 0


# x86_counts.py, the x86-64 instruction table (valgrind), loaded like bench.py.
_xspec = importlib.util.spec_from_file_location("native_x86_counts", NATIVE / "x86_counts.py")
x86_counts = importlib.util.module_from_spec(_xspec)
_xspec.loader.exec_module(x86_counts)


def test_x86_counts_refuses_bad_options_in_one_line(capsys):
    """An unknown kernel is status 2 and one line naming the known ones (before looking
    for valgrind); a size outside test/interp/bench is argparse's status 2; a missing
    tool is a one-line note, status 0 (the table is skipped, not failed)."""
    assert x86_counts.main(["--kernels", "fib,nosuch"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "nosuch" in err and "prefix_sums" in err
    with pytest.raises(SystemExit) as e:
        x86_counts.main(["--count-size", "huge"])
    assert e.value.code == 2
    reason = x86_counts.missing()
    assert reason is None or "\n" not in reason


def test_x86_counts_counts_what_a_run_executes(tmp_path):
    """The count of a kernel's run is positive and its output is the C twin's."""
    if x86_counts.missing() is not None:
        pytest.skip(x86_counts.missing())
    k = kernel("fib")
    exe = compile_c(k, "O1", tmp_path)
    n, out = x86_counts.count(exe, k.args("test"))
    small, _ = x86_counts.count(exe, ("10",))
    assert out.strip() == "987" and n > small > 0
