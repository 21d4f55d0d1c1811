"""What the tools read (issue 19, item 10): only regular files or ``-`` (standard input),
line endings of every platform counted alike, Bril's ``@main`` parameters checked up front."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ssa_course
from ssa_course.codegen import toolchain

ASSEMBLER = toolchain.assembler_missing()


def cli(*args: str, stdin: str | None = None, cwd: Path | None = None
        ) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ssa_course", *args], capture_output=True,
                          text=True, input=stdin, cwd=cwd, timeout=120)


@pytest.mark.parametrize("command", ["run", "check", "show", "opt"])
def test_a_fifo_without_a_writer_is_refused_not_waited_on(tmp_path, command):
    fifo = tmp_path / "prog.tiny"
    os.mkfifo(fifo)
    r = cli(command, str(fifo))  # used to hang forever
    assert r.returncode == 1 and r.stderr.count("\n") == 1
    assert "not a regular file (a FIFO)" in r.stderr


def test_devices_and_sockets_are_refused(tmp_path):
    assert "a character device" in cli("run", "/dev/null").stderr
    path = tmp_path / "s.tiny"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(path))
        r = cli("check", str(path))
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "socket" in r.stderr


def test_a_dash_reads_standard_input():
    r = cli("run", "-", "4", stdin="fn main(n: int) { print(n * n); }\n")
    assert (r.returncode, r.stdout, r.stderr) == (0, "16\n", "")
    r = cli("run", "-", stdin="@main {\n  x: int = const 3;\n  print x;\n}\n")
    assert (r.returncode, r.stdout) == (0, "3\n")
    r = cli("check", "-", stdin="fn main() { print(y); }\n")
    assert r.returncode == 1 and r.stderr.startswith("<stdin>:1:19: error: undefined")


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_errors_are_located_whatever_the_line_endings(tmp_path, newline):
    lines = ["fn main() {", "  var x = 1;", "  print(y);", "}", ""]
    (tmp_path / "p.tiny").write_bytes(newline.join(lines).encode())
    r = cli("check", str(tmp_path / "p.tiny"))
    assert r.returncode == 1
    assert r.stderr.splitlines() == [f"{tmp_path / 'p.tiny'}:3:9: error: undefined variable "
                                     "'y'", "  print(y);", "        ^"]
    bril = ["@main {", "  x: int = const 1;", "  y: int = add x q;", "  print y;", "}", ""]
    (tmp_path / "p.bril").write_bytes(newline.join(bril).encode())
    r = cli("check", str(tmp_path / "p.bril"))
    assert r.returncode == 1 and f"{tmp_path / 'p.bril'}:3:" in r.stderr


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=6, max_size=6),
       st.integers(1, 5))
def test_property_the_line_of_an_error_does_not_depend_on_line_endings(ends, bad_line):
    lines = [f"  var v{k} = {k};" for k in range(6)]
    lines[bad_line] = "  print(nope);"
    source = "fn main() {" + ends[0] + "".join(f"{line}{end}" for line, end
                                            in zip(lines[1:], ends[1:], strict=True)) + "}"
    with pytest.raises(ssa_course.SourceError) as e:
        ssa_course.compile(source).check()
    assert e.value.pos.line == bad_line + 1 and e.value.pos.col == 9


@pytest.mark.parametrize("param", ["a: [int]", "a: [bool]", "n: int, a: [[int]]"])
def test_bril_main_takes_only_ints_and_bools(tmp_path, param):
    path = tmp_path / "m.bril"
    path.write_text(f"@main({param}) {{\n  nop;\n}}\n")
    commands = [["check", str(path)], ["run", str(path)]]
    if ASSEMBLER is None:
        commands.append(["compile", str(path), "-o", str(tmp_path / "m")])
    for cmd in commands:
        r = cli(*cmd)
        assert r.returncode == 1 and "of @main must be int, bool, float or char" in r.stderr, \
            (cmd, r.stderr)
        assert "Traceback" not in r.stderr
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("option", ["--radius", "--budget"])
@pytest.mark.parametrize("text", [" 5", "\uff15", "-1", "9" * 5000, "5x", "1" + "0" * 23])
def test_count_options_read_digits_like_limits(tmp_path, option, text):
    """Digits as for --steps, and the same range message: a number too big is 'at most
    2^63-1' (issue 39), not 'expected a whole number'."""
    (tmp_path / "p.tiny").write_text("fn main() { print(1); }\n")
    r = cli("show", str(tmp_path / "p.tiny"), "--as", "cfg", "--format", "dot", option, text)
    assert r.returncode == 1 and r.stderr.count("\n") == 1, r.stderr
    if text.isascii() and text.isdigit():
        assert r.stderr.startswith(f"error: {option} must be at most 9223372036854775807 "
                                   "(2^63-1), not "), r.stderr
    else:
        assert r.stderr.startswith(f"error: {option} expects a whole number from 0 to "
                                   "9223372036854775807, not "), r.stderr
    assert len(r.stderr) < 300
