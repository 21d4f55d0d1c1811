"""The ``ssa-course`` command as a user meets it: exit statuses and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SUM = """// Sum of squares below n.
fn main(n: int) {
    var acc = 0;
    var i = 0;
    while (i < n) {
        acc = acc + i * i;
        i = i + 1;
    }
    print(acc);
}
"""

BRIL = """# ARGS: 5
@main(n: int) {
  one: int = const 1;
  r: int = call @fact n;
  print r;
}
@fact(n: int): int {
  one: int = const 1;
  small: bool = le n one;
  br small .base .rec;
.base:
  ret one;
.rec:
  m: int = sub n one;
  r: int = call @fact m;
  p: int = mul n r;
  ret p;
}
"""


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ssa_course", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=120)


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "sum.tiny").write_text(SUM)
    (tmp_path / "fact.bril").write_text(BRIL)
    (tmp_path / "neg.tiny").write_text("fn main(a: int, b: bool) { print(a, b); }\n")
    (tmp_path / "bad.tiny").write_text("fn main() {\n    print(acc2);\n}\n")
    (tmp_path / "div.tiny").write_text("fn main() {\n  print(1);\n  print(1 / 0);\n}\n")
    (tmp_path / "loop.tiny").write_text("fn main() { while (true) { } }\n")
    return tmp_path


def test_run_tiny(files):
    r = cli("run", str(files / "sum.tiny"), "10")
    assert (r.returncode, r.stdout, r.stderr) == (0, "285\n", "")


@pytest.mark.parametrize("stage", ["ast", "quads", "cfg", "bril", "bril-json"])
def test_run_via_each_stage(files, stage):
    r = cli("run", "--via", stage, str(files / "sum.tiny"), "4")
    assert (r.returncode, r.stdout) == (0, "14\n")


def test_negative_argument_belongs_to_program(files):
    r = cli("run", str(files / "neg.tiny"), "-5", "true")
    assert (r.returncode, r.stdout) == (0, "-5 true\n")


def test_bril_with_profile(files):
    r = cli("run", "--profile", str(files / "fact.bril"), "5")
    assert r.returncode == 0 and r.stdout == "120\n"
    assert r.stderr.startswith("total_dyn_inst: ")
    assert int(r.stderr.split(":")[1]) > 10


def test_bril_json_file(files):
    out = files / "fact.json"
    r = cli("show", str(files / "fact.bril"), "--as", "bril-json", "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert "functions" in json.loads(out.read_text())
    r = cli("run", str(out), "4")
    assert (r.returncode, r.stdout) == (0, "24\n")


def test_compile_error_is_located(files):
    r = cli("run", str(files / "bad.tiny"))
    assert r.returncode == 1 and r.stdout == ""
    lines = r.stderr.splitlines()
    assert lines[0].endswith("bad.tiny:2:11: error: undefined variable 'acc2'")
    assert lines[1] == "    print(acc2);"
    assert lines[2] == "          ^~~~"


def test_runtime_error_keeps_output(files):
    r = cli("run", str(files / "div.tiny"))
    assert (r.returncode, r.stdout, r.stderr) == (2, "1\n", "error: division by zero at 3:11\n")


def test_step_limit(files):
    r = cli("run", "--steps", "1000", str(files / "loop.tiny"))
    assert (r.returncode, r.stderr) == (2, "error: step limit exceeded\n")


@pytest.mark.parametrize(
    "args, needle",
    [
        (["run", "nope.tiny"], "no such file"),
        (["run", "--via", "warp", "sum.tiny"], "unknown stage 'warp'"),
        (["run", "sum.tiny"], "argument"),
        (["run", "sum.tiny", "1", "2"], "argument"),
        (["run", "sum.tiny", "ten"], "ten"),
        (["run", "sum.tiny", "99999999999999999999"], "99999999999999999999"),
        (["run", "--steps", "-3", "sum.tiny"], "positive"),
        (["show", "sum.tiny", "--as", "nothing"], "unknown representation"),
        (["show", "sum.tiny", "--format", "gif"], "invalid choice"),
        (["frobnicate"], "invalid choice"),
        (["show", "sum.tiny", "--format", "png"], "-o"),
    ],
)
def test_user_mistakes_get_one_clear_line(files, args, needle):
    r = cli(*args, cwd=files)
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert needle in r.stderr


def test_stages_lists_reference_and_quads():
    r = cli("stages")
    assert r.returncode == 0
    names = [line.split()[0] for line in r.stdout.splitlines()]
    assert names[:2] == ["ast", "quads"]


def test_help_mentions_every_command():
    r = cli("--help")
    assert r.returncode == 0
    for word in ("run", "show", "stages", "check"):
        assert word in r.stdout


@pytest.mark.parametrize("view", ["ast", "quads", "cfg", "bril", "bril-json", "window", "lvn",
                                  "lvn-dce", "ssa", "ssa-minimal", "ssa-braun", "out-of-ssa",
                                  "julia"])
def test_show_text(files, view):
    r = cli("show", str(files / "sum.tiny"), "--as", view)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip()


def test_show_dot_is_deterministic(files):
    a = cli("show", str(files / "sum.tiny"), "--as", "cfg", "--format", "dot")
    b = cli("show", str(files / "sum.tiny"), "--as", "cfg", "--format", "dot")
    assert a.returncode == 0 and a.stdout == b.stdout
    assert a.stdout.lstrip().startswith(("digraph", "strict digraph"))


def test_show_svg_and_png(files):
    svg, png = files / "cfg.svg", files / "cfg.png"
    assert cli("show", str(files / "sum.tiny"), "--as", "cfg", "--format", "svg",
               "-o", str(svg)).returncode == 0
    assert cli("show", str(files / "sum.tiny"), "--as", "cfg", "--format", "png",
               "-o", str(png)).returncode == 0
    assert "<svg" in svg.read_text()
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_check(files):
    assert cli("check", str(files / "sum.tiny")).returncode == 0
    r = cli("check", str(files / "bad.tiny"))
    assert r.returncode == 1 and "undefined variable" in r.stderr


@pytest.mark.parametrize("view", ["ssa", "julia"])
def test_show_new_views_draw(files, view):
    r = cli("show", str(files / "sum.tiny"), "--as", view, "--format", "dot")
    assert r.returncode == 0 and "digraph" in r.stdout


def test_julia_view_prints_block_rails(files):
    r = cli("show", str(files / "sum.tiny"), "--as", "julia")
    assert r.returncode == 0
    assert "φ (" in r.stdout and "└──" in r.stdout and "goto #" in r.stdout


@pytest.mark.parametrize("stage", ["window", "lvn", "lvn-dce", "ssa-minimal", "ssa-pruned",
                                   "ssa-braun", "out-of-ssa", "julia"])
def test_run_via_ssa_stages(files, stage):
    r = cli("run", "--via", stage, str(files / "sum.tiny"), "4")
    assert (r.returncode, r.stdout) == (0, "14\n")
    r = cli("run", "--via", stage, str(files / "div.tiny"))
    assert (r.returncode, r.stdout, r.stderr) == (2, "1\n", "error: division by zero at 3:11\n")
