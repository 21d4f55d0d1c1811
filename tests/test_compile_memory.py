"""``ssa-course compile`` of a long straight-line main stays small and fast (issue #39
item 5): 2,000 statements under a 1.5 GB address-space limit. The issue's own program
(``return x * 2 + 1;``) stopped with 'rewrites keep making new work' (each ``+ 1`` climbed
the whole chain of sums alone) and, once past that, took 2 GB with GCM's old in-block
order (every ``n + k`` live to the end)."""

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


@pytest.mark.parametrize("shape", ["square", "issue"])
def test_a_2000_statement_main_compiles_under_a_memory_cap(tmp_path, shape):
    src = tmp_path / "long.tiny"
    src.write_text(program(2000, BODIES[shape]))
    exe = tmp_path / "long"
    done = subprocess.run(
        [sys.executable, "-m", "ssa_course", "compile", str(src), "-o", str(exe)],
        capture_output=True, text=True, cwd=ROOT, timeout=300, preexec_fn=_capped)
    assert done.returncode == 0, done.stderr
    ran = subprocess.run([str(exe), "3"], capture_output=True, text=True, timeout=60)
    f1 = (lambda x: x * x) if shape == "square" else (lambda x: x * 2 + 1)
    expected = sum(f1(3 + k) for k in range(1, 2001))
    assert ran.stdout.strip() == str(expected)
