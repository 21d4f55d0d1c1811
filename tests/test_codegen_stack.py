"""The machine code's stack is sized for the program and guarded (issue 39, item 5).

Deep recursion with big frames (1,394 stack arguments, ~22 KB a call) used to overflow
the fixed 1 GiB stack of the machine-code stages into the memory mapped below it and
crash, where the interpreters printed the answer. ``_start`` now asks for the depth
limit times the program's largest call level (``runtime_abi.stack_bytes``) and makes the
mapping's lowest bytes a PROT_NONE guard; every function checks the stack left on entry,
so a stack that could not be mapped that big still ends in ``stack overflow``. The
in-process tests shrink the minimum stack
to 16 MiB so that a recursion of a few thousand calls needs more than the minimum: each
stage must run it, and stop with the interpreters' ``stack overflow`` at the same depth.
"""

from __future__ import annotations

import pytest

import ssa_course
from ssa_course.codegen import runtime_abi, toolchain
from ssa_course.codegen.aarch64 import toolchain as a64_toolchain
from ssa_course.codegen.runtime_abi import (
    MAX_STACK_BYTES,
    STACK_BYTES,
    RuntimeConfig,
    guard_bytes,
    level_bytes,
    stack_bytes,
)
from ssa_course.compilation import compile_source

N_PARAMS = 300  # ~2.4 KB of stack arguments a call, and as much again in the frame


def deep_program(n: int = N_PARAMS) -> str:
    params = ", ".join(f"p{i}: int" for i in range(n))
    args = ", ".join(f"p{i}" for i in range(n))
    ones = ", ".join("1" for _ in range(n))
    return (f"fn f(n: int, {params}) -> int {{\n"
            f"  if (n == 0) {{ return p0 + p{n - 1}; }}\n"
            f"  return f(n - 1, {args}) + 1;\n}}\n"
            f"fn main(d: int) {{\n  print(f(d, {ones}));\n}}\n")


STAGES = ["quads"] + \
    (["native"] if toolchain.native_missing() is None else []) + \
    (["emulated"] if toolchain.emulator_missing() is None else []) + \
    (["qemu-aarch64"] if a64_toolchain.qemu_missing() is None else []) + \
    (["emulated-aarch64"] if a64_toolchain.emulator_missing() is None else [])


def test_the_stack_is_sized_for_the_depth_limit_and_the_largest_frame():
    from ssa_course.lessons.l11_codegen import compile_machine

    compiled = compile_machine(compile_source(deep_program(), "deep.tiny"))
    level = level_bytes(compiled.mprog)
    f = compiled.mprog.functions["f"]
    assert level >= 8 * (len(f.params) - 6) + 8 * f.slots + 16  # arguments, slots, ret/rbp
    config = RuntimeConfig(depth_limit=100_000, frame_bytes=level)
    size = stack_bytes(config)
    assert size >= 100_002 * level + guard_bytes(config)
    assert size % 4096 == 0 and guard_bytes(config) >= 2 * level
    # a small program keeps the old 1 GiB (and a guard); a huge limit is capped
    assert stack_bytes(RuntimeConfig()) == STACK_BYTES + guard_bytes(RuntimeConfig())
    huge = RuntimeConfig(depth_limit=2 ** 63 - 1, frame_bytes=level)
    assert stack_bytes(huge) == MAX_STACK_BYTES + guard_bytes(huge)
    # and _start asks for exactly that, then protects the guard (both targets)
    source = compiled.source(None, 100_000)
    assert f"mov r13, {size}" in source and "mov eax, 10\n    syscall" in source


@pytest.fixture
def small_minimum_stack(monkeypatch):
    """The minimum stack 16 MiB (was 1 GiB): a few thousand big calls need more."""
    monkeypatch.setattr(runtime_abi, "STACK_BYTES", 1 << 24)


@pytest.mark.parametrize("via", STAGES)
def test_deep_recursion_with_big_frames_runs_in_every_stage(small_minimum_stack, via):
    """3,000 calls of ~5 KB (15 MB) past a 16 MiB minimum... and 6,000 (30 MB) beyond it:
    the stack grows with the depth limit, so every stage prints the answer."""
    prog = deep_program()
    for depth in (3_000, 6_000):
        r = ssa_course.run(prog, depth, via=via, depth=10_000)
        assert (r.status, r.stdout, r.error) == (0, f"{depth + 2}\n", ""), (via, depth)


@pytest.mark.parametrize("via", STAGES)
def test_past_the_depth_limit_every_stage_says_stack_overflow(small_minimum_stack, via):
    prog = deep_program()
    ok = ssa_course.run(prog, 4_998, via=via, depth=5_000)
    assert (ok.status, ok.stdout) == (0, "5000\n"), (via, ok.error)
    over = ssa_course.run(prog, 4_999, via=via, depth=5_000)
    assert (over.status, over.stdout, over.error) == (2, "", "error: stack overflow"), via


@pytest.mark.parametrize("via", [v for v in STAGES if v != "quads"])
def test_a_stack_mapped_too_small_says_stack_overflow(monkeypatch, via):
    """When the stack cannot be as big as asked (here: forced to 16 MiB, as ulimit -v
    would), each function's entry check against the stack limit stops the run with the
    interpreters' message -- earlier than they would, never a crash or a write into the
    mapping below the stack."""
    monkeypatch.setattr(runtime_abi, "STACK_BYTES", 1 << 24)
    monkeypatch.setattr(runtime_abi, "MAX_STACK_BYTES", 1 << 24)
    r = ssa_course.run(deep_program(), 6_000, via=via, depth=10_000)
    assert (r.status, r.stdout, r.error) == (2, "", "error: stack overflow"), via


def test_every_function_checks_the_stack_left_and_start_guards_it():
    from ssa_course.lessons.l11_aarch64 import compile_machine_a64
    from ssa_course.lessons.l11_codegen import compile_machine

    comp = compile_source(deep_program(3), "small.tiny")
    x86 = compile_machine(comp).source(None, 100)
    assert x86.count("cmp rsp, qword ptr [rip + rt_stack_limit]") == 2  # f and main
    assert "mov qword ptr [rip + rt_stack_limit], rcx" in x86
    a64 = compile_machine_a64(comp).source(None, 100)
    assert a64.count("cmp x16, x18") == 2 and "add x18, x18, x0" in a64
    assert "movz x8, #0xe2\n    svc #0" in a64  # mprotect (226): the guard


@pytest.mark.skipif(toolchain.native_missing() is not None, reason="needs x86-64 Linux")
def test_the_issues_program_runs_as_a_compiled_executable(tmp_path):
    """The issue's case at full size: 1,394 stack arguments a call, 60,000 calls deep
    (~1.3 GB of stack; a compiled executable used to exit 139 from 53,267 on)."""
    import subprocess
    import sys

    src = tmp_path / "deep.tiny"
    src.write_text(deep_program(1400))
    exe = tmp_path / "deep"
    made = subprocess.run([sys.executable, "-m", "ssa_course", "compile", str(src), "-o",
                           str(exe)], capture_output=True, text=True, timeout=600)
    assert made.returncode == 0, made.stderr
    done = subprocess.run([str(exe), "60000"], capture_output=True, text=True, timeout=600)
    assert (done.returncode, done.stdout, done.stderr) == (0, "60002\n", "")
