"""Lesson 11 from the command line and the registry: ``ssa-course compile``, ``run --via
native/emulated``, the machine-code views, and how a machine without the tools is told."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ssa_course import registry
from ssa_course.codegen import toolchain

NATIVE = toolchain.native_missing()
needs_native = pytest.mark.skipif(NATIVE is not None, reason=NATIVE or "")

SUM = """fn main(n: int, loud: bool) {
    var s = 0;
    for (var i = 0; i < n; i = i + 1) { s = s + i; }
    if (loud) { print(s); }
    print(100 / (n - 3));
}
"""
SPIN = "fn main() { print(7); while (true) { } }\n"


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ssa_course", *args], capture_output=True,
                          text=True, timeout=300)


@pytest.fixture
def prog(tmp_path: Path) -> Path:
    p = tmp_path / "sum.tiny"
    p.write_text(SUM)
    (tmp_path / "spin.tiny").write_text(SPIN)
    return p


def test_machine_views_share_one_executor():
    execs = {r.name for r in registry.executors()}
    assert {"native", "emulated"} <= execs
    for name in ("asm", "interference", "disasm"):
        rep = registry.representation(name)
        assert rep.runs_as == "native" and name not in execs


def test_unavailable_names_what_to_install(monkeypatch):
    import platform

    monkeypatch.setattr(toolchain, "gnu_tools", lambda: None)
    monkeypatch.setattr(toolchain, "_module", lambda name: False)
    # no GNU as, no keystone: our own assembler still makes the bytes
    assert registry.representation("native").unavailable() == NATIVE
    assert toolchain.choose_assembler(toolchain.TARGET, "auto") == "own"
    assert "unicorn" in registry.representation("emulated").unavailable()
    assert "capstone" in registry.representation("disasm").unavailable()
    monkeypatch.setattr(platform, "machine", lambda: "arm64")
    reason = registry.representation("native").unavailable()
    assert reason is not None and "\n" not in reason and "x86-64" in reason


@needs_native
def test_compile_writes_a_standalone_executable(prog, tmp_path):
    exe = tmp_path / "sum"
    r = cli("compile", str(prog), "-o", str(exe))
    assert r.returncode == 0, r.stderr
    done = subprocess.run([str(exe), "5", "true"], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "10\n50\n", "")
    trap = subprocess.run([str(exe), "3", "false"], capture_output=True, text=True, timeout=60)
    assert (trap.returncode, trap.stdout, trap.stderr) == \
        (2, "", "error: division by zero at 5:15\n")
    bad = subprocess.run([str(exe), "5"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1 and "argument" in bad.stderr


@needs_native
def test_compiled_step_limit_only_when_asked(prog, tmp_path):
    limited = tmp_path / "spin_limited"
    r = cli("compile", str(prog.parent / "spin.tiny"), "-o", str(limited), "--step-limit",
            "100000")
    assert r.returncode == 0, r.stderr
    done = subprocess.run([str(limited)], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == \
        (2, "7\n", "error: step limit exceeded\n")
    free = tmp_path / "spin_free"
    assert cli("compile", str(prog.parent / "spin.tiny"), "-o", str(free)).returncode == 0
    with pytest.raises(subprocess.TimeoutExpired):  # no step limit: it really spins
        subprocess.run([str(free)], capture_output=True, timeout=1)


@needs_native
@pytest.mark.parametrize("via", ["native", "emulated"])
def test_run_via_machine_code(prog, via):
    r = cli("run", "--via", via, str(prog), "5", "true")
    assert (r.returncode, r.stdout, r.stderr) == (0, "10\n50\n", "")
    r = cli("run", "--via", via, "--steps", "1000", str(prog.parent / "spin.tiny"))
    assert (r.returncode, r.stdout, r.stderr) == (2, "7\n", "error: step limit exceeded\n")


@needs_native
@pytest.mark.parametrize("view,needle", [("asm", "# line 3:"), ("interference", "main"),
                                         ("disasm", "tiny_main")])
def test_machine_views_print(prog, view, needle):
    r = cli("show", str(prog), "--as", view)
    assert r.returncode == 0 and needle in r.stdout, r.stderr
    d = cli("show", str(prog), "--as", view, "--format", "dot")
    assert d.returncode == 0 and "graph" in d.stdout.split("{")[0], d.stderr


def test_compile_to_an_unwritable_place_is_one_line(prog):
    if NATIVE is not None:
        pytest.skip(NATIVE)
    r = cli("compile", str(prog), "-o", "/nonexistent-dir/x")
    assert r.returncode == 1 and r.stderr.startswith("error:") and r.stderr.count("\n") == 1


def test_emulated_runs_free_their_engine(prog):
    """Hundreds of emulated runs in one process (make fuzz) must not pile up engines: each
    run frees its unicorn engine before it returns, with the cyclic collector paused."""
    reason = toolchain.emulator_missing()
    if reason is not None:
        pytest.skip(reason)
    import gc

    from ssa_course.codegen.x86_64 import emulate
    from ssa_course.compilation import load_file
    from ssa_course.lessons.l11_codegen import compile_machine, image_of

    image = image_of(compile_machine(load_file(str(prog))))
    machines = []
    real = emulate._Machine

    class Spy(real):  # type: ignore[misc, valid-type]
        def __init__(self, *a: object) -> None:
            super().__init__(*a)
            machines.append((self, self.uc))

    gc.disable()
    try:
        emulate._Machine = Spy
        for _ in range(3):
            assert emulate.run_emulated(image, ["5", "true"]).stdout == "10\n50\n"
    finally:
        emulate._Machine = real
        gc.enable()
    assert len(machines) == 3 and all(m.uc is None and not m.hooks for m, _ in machines)
    # the native engine is closed (its memory freed), not left for the cyclic collector
    assert not any(uc._Uc__finalizer.alive for _, uc in machines)


def test_interference_drawing_lays_out_with_graphviz(prog):
    """Graphviz 2.43's neato crashed (double free) on ``splines=true`` with
    ``overlap=false``: the drawing must lay out, not fall back."""
    import shutil

    if shutil.which("neato") is None:
        pytest.skip("Graphviz is not installed")
    if NATIVE is not None:
        pytest.skip(NATIVE)
    dot = cli("show", str(prog), "--as", "interference", "--format", "dot").stdout
    done = subprocess.run(["neato", "-Tsvg"], input=dot, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and "<svg" in done.stdout, done.stderr


BAD_ARGS = [  # (main's args as bytes, the one error line every stage gives)
    ([b"\xff", b"true"], "error: argument 'n' must be an int, not '\\xff'\n"),
    ([b"1\xc3\xa9\\ x\x01", b"true"],
     "error: argument 'n' must be an int, not '1\\xc3\\xa9\\ x\\x01'\n"),
    ([b"5", b"tr\nue"], "error: argument 'loud' must be true or false, not 'tr\\x0aue'\n"),
    ([b"5", b"\x7f"], "error: argument 'loud' must be true or false, not '\\x7f'\n"),
]


@pytest.mark.parametrize("args, message", BAD_ARGS)
def test_a_bad_argument_byte_is_quoted_alike_by_every_stage(prog, tmp_path, args, message):
    """A non-UTF-8 or control byte in an argument (issue 39): the interpreters, the
    machine-code stages and compiled executables (x86-64 and AArch64, each assembler)
    print the same one line, ``\\xNN`` for each byte that is not printable ASCII, exit 1."""
    from ssa_course.codegen.aarch64 import toolchain as a64

    base = [sys.executable, "-m", "ssa_course"]
    runs = [[*base, "run", "--via", via, str(prog).encode(), *args]
            for via in ("quads", "ast", "emulated", "emulated-aarch64")]
    if NATIVE is None:
        runs.append([*base, "run", "--via", "native", str(prog).encode(), *args])
    targets = [("x86-64", asm, ()) for asm in ("gnu", "own")] if NATIVE is None else []
    if a64.qemu_missing() is None:
        runs.append([*base, "run", "--via", "qemu-aarch64", str(prog).encode(), *args])
        targets += [("aarch64", asm, (a64.qemu_path() or "",)) for asm in ("gnu", "own")]
    for target, asm, launcher in targets:
        exe = tmp_path / f"sum-{target}-{asm}"
        made = cli("compile", str(prog), "--target", target, "--assembler", asm,
                   "-o", str(exe))
        if made.returncode == 0:  # (an assembler not installed for that target: skip it)
            runs.append([*launcher, str(exe), *args])
    for argv in runs:
        done = subprocess.run(argv, capture_output=True, timeout=120)
        assert (done.returncode, done.stderr.decode()) == (1, message), argv
