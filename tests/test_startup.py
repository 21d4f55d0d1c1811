"""Start-up: a plain ``ssa-course run`` imports only what running quads needs.

Behaviour, not time (speed is measured in ``benchmarks/scaling.py``): the run happens in a
fresh interpreter, which then lists the modules it imported.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("networkx", "pydot", "matplotlib", "ipywidgets", "IPython", "ssa_course.son")

_PROBE = """
import sys
from ssa_course.cli import main
status = main(sys.argv[1:])
sys.stdout.flush()
print("MODULES", " ".join(sorted(sys.modules)))
sys.exit(status)
"""


def _modules_after(*argv: str) -> tuple[str, set[str]]:
    done = subprocess.run([sys.executable, "-c", _PROBE, *argv], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    out, _, listing = done.stdout.rpartition("MODULES ")
    return out, set(listing.split())


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


@pytest.mark.parametrize("via", ["quads", "ast", "cfg", "lvn"])
def test_a_plain_run_imports_no_drawing_or_sea_of_nodes_module(via):
    out, modules = _modules_after("run", "--via", via, "examples/sum.tiny", "10")
    assert out.strip() == "159"
    assert _heavy(modules) == []


def test_the_check_command_imports_nothing_heavy():
    _, modules = _modules_after("check", "examples/sum.tiny")
    assert _heavy(modules) == []


def test_a_later_stage_still_loads_its_lesson():
    out, modules = _modules_after("run", "--via", "son", "examples/sum.tiny", "10")
    assert out.strip() == "159" and "ssa_course.son.interp" in modules
