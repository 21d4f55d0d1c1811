"""``-o`` never destroys an input, never leaves half a file, never chmods what it did not
create (issue 19, items 1 and 2): :mod:`ssa_course.output` and the commands that use it."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ssa_course import output
from ssa_course.codegen import toolchain
from ssa_course.errors import UsageError

PROG = "fn main(n: int) {\n    print(n * 2);\n}\n"
NATIVE = toolchain.assembler_missing()


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ssa_course", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


def _commands(out: str) -> list[list[str]]:
    cmds = [["opt", "p.tiny", "-o", out], ["show", "p.tiny", "-o", out],
            ["show", "p.tiny", "--as", "cfg", "--format", "dot", "-o", out]]
    if NATIVE is None:
        cmds.append(["compile", "p.tiny", "-o", out])
    return cmds


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "p.tiny").write_text(PROG)
    return tmp_path


@pytest.mark.parametrize("make_alias", ["same", "dot-slash", "symlink", "hard-link",
                                        "symlink-chain", "absolute"])
def test_an_output_that_is_the_input_is_refused(work, make_alias):
    alias = {"same": "p.tiny", "dot-slash": "./p.tiny", "symlink": "link.tiny",
             "hard-link": "hard.tiny", "symlink-chain": "link2.tiny",
             "absolute": str(work / "p.tiny")}[make_alias]
    if make_alias in ("symlink", "symlink-chain"):
        (work / "link.tiny").symlink_to("p.tiny")
        (work / "link2.tiny").symlink_to("link.tiny")
    if make_alias == "hard-link":
        os.link(work / "p.tiny", work / "hard.tiny")
    for cmd in _commands(alias):
        r = cli(*cmd, cwd=work)
        assert r.returncode == 1, (cmd, r.stderr)
        assert r.stderr.count("\n") == 1 and "is the input file" in r.stderr, r.stderr
        assert (work / "p.tiny").read_text() == PROG  # untouched
    assert sorted(p.name for p in work.iterdir() if p.name.startswith(".")) == []


def test_outputs_replace_regular_files_whole_and_keep_links(work):
    (work / "out.txt").write_text("old\n")
    (work / "out.txt").chmod(0o600)
    (work / "via-link").symlink_to("out.txt")
    r = cli("opt", "p.tiny", "-o", "via-link", cwd=work)
    assert r.returncode == 0, r.stderr
    assert (work / "via-link").is_symlink()  # the link still points at the new file
    assert "@main" in (work / "out.txt").read_text()
    assert stat.S_IMODE((work / "out.txt").stat().st_mode) == 0o600  # its mode kept
    r = cli("show", "p.tiny", "-o", "new.txt", cwd=work)
    assert r.returncode == 0 and (work / "new.txt").read_text().strip()
    assert stat.S_IMODE((work / "new.txt").stat().st_mode) == 0o666 & ~output._umask()


@pytest.mark.skipif(NATIVE is not None, reason=NATIVE or "")
def test_compile_makes_a_new_executable_with_the_umask(work):
    r = cli("compile", "p.tiny", "-o", "exe", cwd=work)
    assert r.returncode == 0, r.stderr
    assert stat.S_IMODE((work / "exe").stat().st_mode) == 0o777 & ~output._umask()
    done = subprocess.run([str(work / "exe"), "21"], capture_output=True, text=True,
                          timeout=60)
    assert done.stdout == "42\n"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="making a device node needs root (CI and containers run as root)")
def test_a_device_is_written_in_place_and_never_chmodded(work):
    node = work / "null-copy"
    os.mknod(node, 0o620 | stat.S_IFCHR, os.makedev(1, 3))  # a private /dev/null
    node.chmod(0o620)
    before = node.stat()
    for cmd in _commands("null-copy"):
        r = cli(*cmd, cwd=work)
        assert r.returncode == 0, (cmd, r.stderr)
        after = node.stat()
        assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev
        assert stat.S_IMODE(after.st_mode) == 0o620, cmd  # compile used to make it 0755
        assert after.st_ino == before.st_ino  # not renamed over


def test_a_fifo_is_written_when_read_and_refused_when_not(work):
    fifo = work / "pipe"
    os.mkfifo(fifo)
    r = cli("show", "p.tiny", "-o", "pipe", cwd=work)
    assert r.returncode == 1 and "no process is reading it" in r.stderr
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    r = cli("show", "p.tiny", "-o", "pipe", cwd=work)
    reader.join(60)
    assert r.returncode == 0, r.stderr
    assert got and b"main" in got[0]
    assert stat.S_ISFIFO(fifo.stat().st_mode)


@pytest.mark.parametrize("target, needle", [
    (".", "it is a directory"), ("no-dir/x", "no such directory"), ("", "empty"),
])
def test_bad_targets_are_one_line(work, target, needle):
    for cmd in _commands(target):
        r = cli(*cmd, cwd=work)
        assert r.returncode == 1 and r.stderr.count("\n") == 1 and needle in r.stderr, \
            (cmd, r.stderr)


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "out.txt"
    target.write_text("old\n")

    def broken(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(UsageError, match="No space left on device"):
        output.write_output(str(target), "new\n")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]

    def interrupted(src: str, dst: str) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        output.write_output(str(target), "new\n")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def _stdin_commands(out: str) -> list[list[str]]:
    cmds = [["opt", "-", "-o", out], ["show", "-", "-o", out],
            ["show", "-", "--as", "quads,cfg", "--format", "html", "-o", out],
            ["show", "-", "--as", "cfg", "--format", "png", "-o", out]]
    if NATIVE is None:
        cmds.append(["compile", "-", "-o", out])
    return cmds


@pytest.mark.parametrize("alias", ["p.tiny", "link.tiny", "hard.tiny"])
def test_an_output_that_is_standard_input_is_refused(work, alias):
    """``opt - -o in.tiny < in.tiny`` (issue 39): standard input is that file; the output
    names it (itself, a symlink to it, a hard link) -> one line, exit 1, file untouched."""
    (work / "link.tiny").symlink_to("p.tiny")
    os.link(work / "p.tiny", work / "hard.tiny")
    for cmd in _stdin_commands(alias):
        with open(work / "p.tiny", "rb") as stdin:
            r = subprocess.run([sys.executable, "-m", "ssa_course", *cmd], stdin=stdin,
                               capture_output=True, text=True, cwd=work, timeout=300)
        assert r.returncode == 1, (cmd, r.stderr)
        assert r.stderr.count("\n") == 1 and "(standard input)" in r.stderr, r.stderr
        assert (work / "p.tiny").read_text() == PROG  # untouched


def test_standard_input_may_be_written_to_another_file(work):
    with open(work / "p.tiny", "rb") as stdin:
        r = subprocess.run([sys.executable, "-m", "ssa_course", "opt", "-", "-o", "o.bril"],
                           stdin=stdin, capture_output=True, text=True, cwd=work,
                           timeout=300)
    assert r.returncode == 0, r.stderr
    assert "@main" in (work / "o.bril").read_text()
    r = subprocess.run([sys.executable, "-m", "ssa_course", "opt", "-", "-o", "p.tiny"],
                       input=PROG, capture_output=True, text=True, cwd=work, timeout=300)
    assert r.returncode == 0, r.stderr  # a pipe is not the file: cat p.tiny | ... is fine


def test_a_file_open_could_not_write_is_not_renamed_over(tmp_path, monkeypatch):
    """A read-only file (another user's, in a directory we may write) is refused as
    ``open(path, "w")`` would refuse it, not replaced by a rename (issue 39). Root may
    write anything, so the permission check is stubbed when the tests run as root."""
    target = tmp_path / "ro.txt"
    target.write_text("old\n")
    target.chmod(0o444)
    if os.geteuid() == 0:
        real = os.access

        def access(path, mode, *args, **kwargs):
            if os.fspath(path) == str(target) and mode & os.W_OK:
                return False
            return real(path, mode, *args, **kwargs)

        monkeypatch.setattr(os, "access", access)
    with pytest.raises(UsageError, match="permission denied") as e:
        output.write_output(str(target), "new\n")
    assert "\n" not in str(e.value)
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["ro.txt"]
    target.chmod(0o644)
    monkeypatch.undo()
    output.write_output(str(target), "new\n")  # writable again: written
    assert target.read_text() == "new\n"


# -- the property: whatever the relation between output and inputs, no input changes ----

_RELATIONS = ("new", "other", "same", "symlink", "hardlink", "dir-symlink", "dangling")


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(relation=st.sampled_from(_RELATIONS), data=st.binary(max_size=64),
       executable=st.booleans(), n_inputs=st.integers(1, 3))
def test_property_no_input_is_ever_changed(tmp_path_factory, relation, data, executable,
                                           n_inputs):
    d = tmp_path_factory.mktemp("prop")
    inputs = []
    for k in range(n_inputs):
        p = d / f"in{k}.tiny"
        p.write_bytes(b"input %d\n" % k)
        inputs.append(str(p))
    victim = d / "in0.tiny"
    (d / "other.txt").write_bytes(b"other\n")
    (d / "sub").symlink_to(d)
    out = {"new": d / "fresh.bin", "other": d / "other.txt", "same": victim,
           "symlink": d / "ln", "hardlink": d / "hl", "dir-symlink": d / "sub" / "in0.tiny",
           "dangling": d / "dangle"}[relation]
    if relation == "symlink":
        out.symlink_to(victim)
    if relation == "hardlink":
        os.link(victim, out)
    if relation == "dangling":
        out.symlink_to(d / "nowhere" / "x")
    aliases_input = relation in ("same", "symlink", "hardlink", "dir-symlink")
    try:
        output.write_output(str(out), data, inputs, executable=executable)
        written = True
    except UsageError as e:
        written = False
        assert "\n" not in str(e)
        assert ("is the input file" in str(e)) == aliases_input, str(e)
    assert written == (not aliases_input and relation != "dangling")  # no dir to write in
    for k, p in enumerate(inputs):
        assert Path(p).read_bytes() == b"input %d\n" % k
    if written:
        assert Path(os.path.realpath(out)).read_bytes() == data
        mode = stat.S_IMODE(Path(os.path.realpath(out)).stat().st_mode)
        assert bool(mode & 0o100) == executable
    assert not [p for p in d.iterdir() if p.name.endswith(".tmp")]
