"""Custom ``opt`` pipelines: every pipeline ``opt -p`` accepts gives a verified program
whose output runs like its input, or is refused before it runs (issue #19); programs
without ``main``; the library's bad arguments."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import ssa_course
from ssa_course.errors import ArgumentTypeError, ArgumentValueError

ROOT = Path(__file__).resolve().parent.parent

DEAD_LOOP = ("@main { t: bool = const true; x: int = const 3; br t .a .c; .a: ret;"
             " .c: x: int = add x x; jmp .c; }\n")


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ssa_course", *args], capture_output=True,
                          text=True, cwd=ROOT)


def one_line_error(r: subprocess.CompletedProcess, status: int = 1) -> str:
    assert r.returncode == status, r.stderr
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr
    assert r.stderr.count("\n") == 1, r.stderr
    return r.stderr


@pytest.mark.parametrize("command", [["check"], ["run"], ["opt"], ["compile", "-o", "EXE"]])
def test_bril_without_main_is_refused_alike_by_every_command(command, tmp_path):
    src = tmp_path / "lib.bril"
    src.write_text("@f(a: int): int { ret a; }\n")
    args = [str(tmp_path / a) if a == "EXE" else a for a in command]
    err = one_line_error(cli(*args[:1], str(src), *args[1:]))
    assert "no function '@main'" in err
    assert not (tmp_path / "EXE").exists()


@pytest.mark.parametrize("pipeline", ["parse", "parse,bce", "lvn,sroa,parse,gcm",
                                      "parse,gcm", "parse-raw,gcm", "sroa,parse,gcm"])
def test_a_loop_only_a_folded_branch_entered_is_dropped(pipeline, tmp_path):
    src = tmp_path / "m10.bril"
    src.write_text(DEAD_LOOP)
    out = tmp_path / "out.bril"
    r = cli("opt", str(src), "-p", pipeline, "-o", str(out))
    assert r.returncode == 0, r.stderr
    run = cli("run", str(out))
    assert (run.returncode, run.stdout) == (0, "")


@pytest.mark.parametrize("pipeline", ["sroa,parse,gcm", "sroa,parse", "sroa,parse,bce,gcm"])
def test_dead_inner_loop_through_quads_built_graphs(pipeline, tmp_path):
    src = ROOT / "tests" / "programs" / "sroa_dead_inner_loop.tiny"
    out = tmp_path / "out.bril"
    r = cli("opt", str(src), "-p", pipeline, "-o", str(out))
    assert r.returncode == 0, r.stderr
    want = cli("run", str(src), "--", "-2", "true")
    got = cli("run", str(out), "--", "-2", "true")
    assert (got.returncode, got.stdout, got.stderr) == (want.returncode, want.stdout,
                                                        want.stderr)


def test_code_typed_names_an_unknown_function():
    with pytest.raises(ArgumentValueError, match=r"unknown function 'nope'.*known: main"):
        ssa_course.code_typed("fn main() { print(1); }", "nope")
    with pytest.raises(ArgumentTypeError, match="'fn' must be a str"):
        ssa_course.code_typed("fn main() { print(1); }", 5)  # type: ignore[arg-type]
    assert "print(1)" in repr(ssa_course.code_typed("fn main() { print(1); }"))


def test_sea_of_nodes_checks_its_options():
    with pytest.raises(ArgumentTypeError, match="'options' must be a BuildOptions or None, "
                                                "not int"):
        ssa_course.sea_of_nodes("fn main() { print(1); }", options=5)
    with pytest.raises(ArgumentTypeError, match="'optimize' must be a bool"):
        ssa_course.sea_of_nodes("fn main() { print(1); }", optimize="no")  # type: ignore
    assert ssa_course.sea_of_nodes("fn main() { print(1); }").functions["main"]
