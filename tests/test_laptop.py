"""Lesson 11 on a student's ARM laptop, imitated (issue #21): ``platform.machine()`` says
arm64, keystone-engine is not installed, no GNU ``as``/``ld`` (nor a cross pair) is on the
PATH -- ``tests/laptop/sitecustomize.py`` does it for every process started with that
directory first on ``PYTHONPATH``. There our own assembler makes the bytes without a word,
so the corpus runs through ``ssa-course run --via emulated`` with the reference output,
status and error message, and every cell of lesson 11 that makes machine code makes it and
runs it (emulated; natively is for x86-64 Linux only).

Parametrized by target: a second target joins by adding its name to ``TARGETS`` (the
corpus script passes ``--target`` for each; "host" passes none)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_notebooks import _execute, venv_kernel  # noqa: F401 - the kernelspec fixture

ROOT = Path(__file__).resolve().parent.parent
LAPTOP = ROOT / "tests" / "laptop"
TARGETS = ("x86-64", "aarch64", "host")  # host: no --target, the laptop's default
LESSON = ROOT / "notebooks" / "11-codegen.ipynb"


def laptop_path() -> str:
    """``PYTHONPATH`` for a process on the laptop: the imitation first, then the project."""
    rest = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return os.pathsep.join([str(LAPTOP), str(ROOT), *rest])


def on_laptop(*args: str, timeout: float = 1200) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": laptop_path()}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env,
                          timeout=timeout, cwd=ROOT)


LOOK = """
import importlib.util, json, platform, shutil
import ssa_course
from ssa_course.codegen import toolchain
try:
    import keystone
    imported = True
except ModuleNotFoundError:
    imported = False
print(json.dumps({
    "machine": platform.machine(), "spec": importlib.util.find_spec("keystone") is None,
    "imported": imported,
    "tools": [shutil.which(t) for t in ("as", "ld", "x86_64-linux-gnu-as",
                                        "x86_64-linux-gnu-ld", "aarch64-linux-gnu-as")],
    "gnu": toolchain.gnu_missing(), "keystone": toolchain.keystone_missing(),
    "chosen": toolchain.choose_assembler(toolchain.TARGET, "auto"),
    "native": toolchain.native_missing(), "emulated": toolchain.emulator_missing(),
    "disasm": toolchain.disassembler_missing(),
    "library": [[r.stdout, r.status, r.error] for r in (
        ssa_course.run("fn main() { print(1); }", via="emulated", assembler=a)
        for a in ("own", "keystone"))]}))
"""


def test_the_laptop_is_imitated():
    done = on_laptop("-c", LOOK)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["machine"] == "arm64" and seen["spec"] and not seen["imported"]
    assert seen["tools"] == [None] * 5
    assert "no GNU assembler for x86-64 on this arm64 machine" in seen["gnu"]
    assert seen["keystone"].startswith("no keystone-engine")
    assert seen["chosen"] == "own"
    assert "native runs need x86-64 Linux" in seen["native"]
    assert seen["emulated"] is None and seen["disasm"] is None
    assert seen["library"] == [["1\n", 0, ""], ["", 1, f"error: {seen['keystone']}"]]


@pytest.mark.parametrize("flag,reason", [
    ("gnu", "error: no GNU assembler for x86-64 on this arm64 machine: install "
            "binutils-x86-64-linux-gnu (or x86_64-elf-binutils)\n"),
    ("keystone", "error: no keystone-engine: pip install keystone-engine (its wheels are "
                 "for x86-64 machines only)\n")])
def test_a_missing_assembler_asked_for_is_one_line(flag, reason):
    # an ARM laptop's default target is aarch64: ask for x86-64's assemblers by name
    done = on_laptop("-m", "ssa_course", "run", "--via", "emulated", "--target", "x86-64",
                     "--assembler", flag, str(ROOT / "examples" / "sum.tiny"), "10")
    assert (done.returncode, done.stdout, done.stderr) == (1, "", reason)


@pytest.mark.parametrize("target", TARGETS)
def test_the_corpus_runs_emulated_on_the_laptop(target):
    done = on_laptop(str(LAPTOP / "run_corpus.py"), target)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout)
    assert (seen["machine"], seen["as"], seen["cross_as"]) == ("arm64", None, None)
    assert seen["keystone"] is not None and seen["assembler"] == "own"
    assert seen["cases"] > 100
    assert seen["wrong"] == [], json.dumps(seen["wrong"][:5], indent=1)


def test_lesson_11_makes_and_runs_machine_code_on_the_laptop(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", laptop_path())  # the kernel starts on the laptop
    nb = _execute(LESSON)
    out = {c.get("id"): "".join(o.get("text", "") for o in c.get("outputs", []))
           for c in nb.cells if c.cell_type == "code"}
    everything = "\n".join(out.values())
    assert "native runs need x86-64 Linux (this is linux on arm64)" in everything
    assert "<tiny_fib>:" in out["7d230d5d"]  # disasm: the bytes were made and read back
    assert "emulated: 6765" in out["7f396a93"]  # and run
    assert "own: 49 8d 7c 24 ff" in out["asm-three-run"]
    assert "assembled here by: own" in out["asm-three-run"]
    # the two missing assemblers are named once, in that one line, and nowhere else
    for reason in ("no GNU assembler", "no keystone-engine"):
        assert everything.count(reason) == 1 and reason in out["asm-three-run"]


def test_one_assembler_choice_serves_both_targets():
    # --assembler names aarch64's assemblers when the target is aarch64 (one choice,
    # toolchain.choose_assembler); on the laptop GNU's aarch64 tools are hidden too
    sum_tiny = str(ROOT / "examples" / "sum.tiny")
    done = on_laptop("-m", "ssa_course", "run", "--via", "emulated", "--target", "aarch64",
                     "--assembler", "gnu", sum_tiny, "10")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith("error: no GNU assembler for aarch64")
    assert done.stderr.count("\n") == 1
    done = on_laptop("-m", "ssa_course", "run", "--via", "emulated", "--target", "aarch64",
                     "--assembler", "own", sum_tiny, "10")
    assert (done.returncode, done.stdout, done.stderr) == (0, "159\n", "")
