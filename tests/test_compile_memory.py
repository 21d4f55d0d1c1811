"""``ssa-course compile`` of a long straight-line main stays small and fast (issue #39
item 5): 2,000 statements under a 1.5 GB address-space limit and a minute."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from compile_memory import BODIES, program

ROOT = Path(__file__).resolve().parent.parent
CAP = 1_500_000_000


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (CAP, CAP))


@pytest.mark.parametrize("shape", ["square"])
def test_a_2000_statement_main_compiles_under_a_memory_cap(tmp_path, shape):
    src = tmp_path / "long.tiny"
    src.write_text(program(2000, BODIES[shape]))
    exe = tmp_path / "long"
    done = subprocess.run(
        [sys.executable, "-m", "ssa_course", "compile", str(src), "-o", str(exe)],
        capture_output=True, text=True, cwd=ROOT, timeout=120, preexec_fn=_capped)
    assert done.returncode == 0, done.stderr
    ran = subprocess.run([str(exe), "3"], capture_output=True, text=True, timeout=60)
    expected = sum((3 + k) * (3 + k) for k in range(1, 2001))
    assert ran.stdout.strip() == str(expected)
