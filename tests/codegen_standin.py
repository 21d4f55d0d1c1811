"""Run instruction selection's output natively against a C stand-in runtime (tests only).

``tests/codegen/test_runtime.c`` implements docs/codegen.md's runtime entry points with
libc; gcc builds it once per session. This lets the isel tests run machine code before and
independently of the project's own generated runtime. ``skip_reason()`` says in one line
why native runs are impossible here (not x86-64 Linux, no ``as``/``gcc``).
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ssa_course.codegen.compile import compile_program
from ssa_course.compilation import compile_source
from ssa_course.registry import build

HERE = Path(__file__).resolve().parent
RUNTIME_C = HERE / "codegen" / "test_runtime.c"
_BUILD = Path(tempfile.mkdtemp(prefix="isel-standin-"))


def skip_reason() -> str | None:
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        return f"native x86-64 runs need x86-64 Linux (this is {platform.machine()})"
    for tool in ("as", "gcc"):
        if shutil.which(tool) is None:
            return f"'{tool}' is not installed (binutils / gcc)"
    return None


def _runtime_object() -> Path:
    obj = _BUILD / "rt.o"
    if not obj.exists():
        subprocess.run(["gcc", "-c", "-O1", str(RUNTIME_C), "-o", str(obj)], check=True)
    return obj


@dataclass
class NativeRun:
    stdout: str
    stderr: str
    status: int
    asm: str


def run_native(source: str, args: list[str], *, filename: str = "prog.tiny",
               allocator: str = "color", steps: int = 10_000_000) -> NativeRun:
    """Compile ``source`` through the scheduled SSA quads and run it natively."""
    comp = compile_source(source, filename)
    ssa = build(comp, "scheduled").ssa  # type: ignore[attr-defined]
    mprog, text = compile_program(ssa, None, source.splitlines(), step_limit=steps,
                                  allocator=allocator)
    sites = [x for site in (mprog.trap_sites or [(0, 0)]) for x in site]
    text += "\n.data\n.globl rt_sites\nrt_sites: .quad " + ", ".join(map(str, sites)) + "\n"
    work = Path(tempfile.mkdtemp(dir=_BUILD))
    (work / "p.s").write_text(text)
    subprocess.run(["as", str(work / "p.s"), "-o", str(work / "p.o")], check=True)
    subprocess.run(["gcc", "-no-pie", str(work / "p.o"), str(_runtime_object()), "-o",
                    str(work / "p"), "-lpthread"], check=True, capture_output=True)
    r = subprocess.run([str(work / "p"), *args], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "TINY_STEPS": str(steps)})
    return NativeRun(r.stdout, r.stderr, r.returncode, text)
