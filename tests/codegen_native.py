"""Compile a program through the back end and run the executable (tests of the back end).

Uses the project's own runtime and assembler (:mod:`ssa_course.codegen.assemble`); the
executable runs as a child process with the program's arguments. ``skip_reason()`` says
in one line why native runs are impossible on this machine (the toolchain's own words).
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass

from ssa_course.codegen.toolchain import native_missing
from ssa_course.codegen.x86_64.assemble import assemble
from ssa_course.codegen.x86_64.compile import compile_program
from ssa_course.compilation import compile_source
from ssa_course.registry import build


def skip_reason() -> str | None:
    return native_missing()


@dataclass
class NativeRun:
    stdout: str
    stderr: str
    status: int
    asm: str


def run_native(source: str, args: list[str], *, filename: str = "prog.tiny",
               allocator: str = "color", steps: int | None = 10_000_000,
               backend: str = "auto", timeout: float = 60,
               emulated: bool = False) -> NativeRun:
    """Compile ``source`` through the scheduled SSA quads and run it natively (or under
    the unicorn emulator)."""
    comp = compile_source(source, filename)
    ssa = build(comp, "scheduled").ssa  # type: ignore[attr-defined]
    _, text = compile_program(ssa, None, source.splitlines(), step_limit=steps,
                              allocator=allocator)
    image = assemble(text, backend)
    if emulated:
        from ssa_course.codegen.x86_64.emulate import run_emulated

        e = run_emulated(image, args, timeout)
        return NativeRun(e.stdout, e.stderr, e.status, text)
    r = subprocess.run([image.path, *args], capture_output=True, text=True, timeout=timeout)
    return NativeRun(r.stdout, r.stderr, r.returncode, text)
