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
        (["run", "--via", "warp", "sum.tiny"], "unknown representation 'warp'"),
        (["run", "sum.tiny"], "argument"),
        (["run", "sum.tiny", "1", "2"], "argument"),
        (["run", "sum.tiny", "ten"], "ten"),
        (["run", "sum.tiny", "99999999999999999999"], "99999999999999999999"),
        (["run", "--steps", "-3", "sum.tiny"], "whole number from 1 to"),
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
                                  "lvn-dce", "ssa-pruned", "ssa-minimal", "ssa-braun",
                                  "out-of-ssa", "julia"])
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


@pytest.mark.parametrize("view", ["ssa-pruned", "julia"])
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


# ---------------------------------------------------------------- edges of the command line

def test_words_after_the_file_belong_to_the_program(files):
    """``--``, ``-5`` and option-like words after FILE are main's arguments, verbatim."""
    neg = str(files / "neg.tiny")
    r = cli("run", neg, "--", "5")
    assert r.returncode == 1 and "'--'" in r.stderr  # main got '--' as its first argument
    r = cli("run", "--", neg, "-5", "false")
    assert (r.returncode, r.stdout) == (0, "-5 false\n")
    r = cli("run", "--via", "ast", neg, "-7", "--via")
    assert r.returncode == 1 and "'--via'" in r.stderr
    r = cli("run", "--via=ast", "--steps", "1000", neg, "-7", "true")
    assert (r.returncode, r.stdout) == (0, "-7 true\n")
    from ssa_course.cli import split_run_argv

    assert split_run_argv(["run", "--vi", "son", "p.tiny", "--", "-h"]) == \
        (["run", "--vi", "son", "p.tiny"], ["--", "-h"])
    assert split_run_argv(["run", "--", "-odd.tiny", "1"]) == (["run", "--", "-odd.tiny"], ["1"])
    assert split_run_argv(["show", "p.tiny", "--as", "cfg"]) == (["show", "p.tiny", "--as",
                                                                   "cfg"], [])


ONE_LIST = "unknown representation 'warp' (known: ast, quads, cfg,"


@pytest.mark.parametrize("option, value, needle", [
    ("--via", "warp", ONE_LIST),
    ("--as", "warp", ONE_LIST),
    ("--emit", "warp", ONE_LIST),
    ("-p", "sccp,warp", "known passes: lvn, dce"),
])
def test_unknown_names_list_the_valid_ones(files, option, value, needle):
    command = "run" if option == "--via" else "show" if option == "--as" else "opt"
    args = [command, option, value, str(files / "sum.tiny")]
    if command == "run":
        args.append("3")
    r = cli(*args)
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1
    assert needle in r.stderr and "warp" in r.stderr


def test_endless_input_is_refused(tmp_path):
    r = cli("run", "/dev/zero")
    assert r.returncode == 1 and "not a regular file (a character device)" in r.stderr
    big = tmp_path / "big.tiny"
    big.write_text("// " + "x" * (10 * 1024 * 1024) + "\nfn main() { }\n")
    r = cli("check", str(big))
    assert r.returncode == 1 and "larger than 10 MB" in r.stderr


@pytest.mark.parametrize("content, needle", [
    (b"fn main() {\n  print(1); // \xff\n}\n", "2:16: not UTF-8 text (byte 0xff)"),
    (b"\xef\xbb\xbffn main() { print(1); }\n", None),  # a byte-order mark is fine
    (b"fn main() { print(1); }\x00", "unexpected character U+0000"),
])
def test_bytes_that_are_not_a_program(tmp_path, content, needle):
    path = tmp_path / "p.tiny"
    path.write_bytes(content)
    r = cli("run", str(path))
    if needle is None:
        assert (r.returncode, r.stdout) == (0, "1\n")
        return
    assert r.returncode == 1 and needle in r.stderr and "Traceback" not in r.stderr


def test_unreadable_and_odd_paths(files, tmp_path):
    assert "is a directory" in cli("run", str(tmp_path)).stderr
    assert "no such file" in cli("check", str(tmp_path / "none.tiny")).stderr
    r = cli("run", "a" * 5000 + ".tiny")
    assert r.returncode == 1 and "too long" in r.stderr and len(r.stderr) < 200
    locked = tmp_path / "locked.tiny"
    locked.write_text("fn main() { }\n")
    locked.chmod(0)
    try:
        r = cli("check", str(locked))  # root reads it anyway; anyone else is refused cleanly
        assert r.returncode in (0, 1) and "Traceback" not in r.stderr
        assert r.returncode == 0 or "permission denied" in r.stderr
    finally:
        locked.chmod(0o644)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("args", [
    ["show", "{sum}", "--as", "quads"], ["run", "{sum}", "5"], ["stages"],
    ["opt", "{sum}"], ["opt", "{sum}", "-o", "/dev/full"],
    ["show", "{sum}", "--as", "cfg", "--format", "dot", "-o", "/dev/full"],
])
def test_full_device_is_one_line(files, args):
    args = [a.replace("{sum}", str(files / "sum.tiny")) for a in args]
    with open("/dev/full", "w") as full:
        r = subprocess.run([sys.executable, "-m", "ssa_course", *args], stdout=full,
                           stderr=subprocess.PIPE, text=True, timeout=120)
    assert r.returncode == 1, r.stderr
    assert r.stderr.count("\n") == 1 and "No space left on device" in r.stderr
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr


def test_closed_pipe_is_quiet(files):
    many = files / "many.tiny"
    many.write_text("fn main() { var i = 0; while (i < 100000) { print(i); i = i + 1; } }\n")
    for args in (["run", str(many)], ["show", str(many), "--as", "julia"]):
        proc = subprocess.Popen([sys.executable, "-m", "ssa_course", *args],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stdout.readline()  # read one line, then hang up like `| head -1`
        proc.stdout.close()
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=120) == 0, err
        assert err == ""


def test_interrupt_is_one_line(files):
    import signal
    import time

    spin = files / "spin.tiny"
    spin.write_text("fn main() { print(1); while (true) { } }\n")
    proc = subprocess.Popen([sys.executable, "-u", "-m", "ssa_course", "run", "--steps",
                             "1000000000", str(spin)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            # a suite started in the background (``make test &``) ignores
                            # SIGINT, and children inherit that: give the child the default
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert proc.stdout.readline() == "1\n"  # it is running the loop now
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and err == "interrupted\n"


def test_closed_standard_streams(files):
    """``>&-`` and ``2>&-``: Python then has no sys.stdout/sys.stderr; still no crash."""
    r = subprocess.run([sys.executable, "-m", "ssa_course", "run", str(files / "sum.tiny"), "3"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       timeout=120, close_fds=True,
                       preexec_fn=lambda: __import__("os").close(1))
    assert (r.returncode, r.stderr) == (1, "error: cannot write standard output: it is closed\n")
    r = subprocess.run([sys.executable, "-m", "ssa_course", "run", str(files / "sum.tiny"), "x"],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                       timeout=120, preexec_fn=lambda: __import__("os").close(2))
    assert (r.returncode, r.stdout) == (1, "")
