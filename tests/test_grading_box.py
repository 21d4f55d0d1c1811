"""The sandbox itself (grading/box.py): what a boxed process sees, and the settings that
replace it where bubblewrap cannot run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ssa_course.grading import box

needs_bwrap = pytest.mark.skipif(box.check() is not None, reason=f"no sandbox: {box.check()}")
ROOT = Path(__file__).resolve().parent.parent


def _run(code: str, tmp_path: Path, **kw) -> subprocess.CompletedProcess:
    home = tmp_path / "home"
    box.prepare_home(home, kw.pop("source", None), "bwrap")
    argv = [sys.executable, "-I", "-S", "-c", code]
    return subprocess.run(box.command(argv, box.Box(home=home, **kw)), capture_output=True,
                          text=True, timeout=60, check=False)


@needs_bwrap
def test_a_boxed_process_sees_no_course_no_network_no_other_process(tmp_path):
    secret = tmp_path / "course" / "gradebook.db"
    secret.parent.mkdir()
    secret.write_text("grades")
    code = ("import os, socket, sys\n"
            f"print(os.path.exists({str(secret)!r}), os.path.exists({str(ROOT / 'solutions')!r}))\n"
            "print(sorted(p for p in os.listdir('/proc') if p.isdigit()))\n"
            "print(os.getcwd(), 'SSA_TEST_BOX' in os.environ)\n"
            "try:\n    socket.create_connection(('127.0.0.1', 22), 1)\n"
            "except OSError as e:\n    print('no network', e.errno)\n"
            "try:\n    open(sys.executable, 'ab')\n"
            "except OSError as e:\n    print('read-only', e.errno)\n")
    os.environ["SSA_TEST_BOX"] = "1"
    try:
        done = _run(code, tmp_path, hide=[secret.parent])
    finally:
        del os.environ["SSA_TEST_BOX"]
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stderr
    assert lines[0] == "False False"
    assert len(eval(lines[1])) <= 3  # bwrap's init, bwrap, this process
    assert lines[2] == f"{box.HOME} False"
    assert lines[3].startswith("no network")
    assert lines[4].startswith("read-only")


@needs_bwrap
def test_limits_are_set_before_the_sandbox_and_cannot_be_raised(tmp_path):
    code = ("import resource\n"
            "print(resource.getrlimit(resource.RLIMIT_AS)[1])\n"
            "try:\n    resource.setrlimit(resource.RLIMIT_AS, (-1, -1))\n"
            "except (ValueError, OSError):\n    print('refused')\n")
    done = _run(code, tmp_path, limits=box.Limits(memory_bytes=3 << 30))
    assert done.stdout.split() == [str(3 << 30), "refused"], done.stderr


@needs_bwrap
def test_the_private_home_is_a_copy_with_links_kept_as_links(tmp_path):
    source = tmp_path / "submitted"
    source.mkdir()
    (source / "a.txt").write_text("mine")
    (source / "link").symlink_to("/etc/passwd")
    done = _run("import os; print(open('a.txt').read(), os.path.islink('link'), "
                "os.path.exists('link'))", tmp_path, source=source)
    assert done.stdout.split() == ["mine", "True", "False"], done.stderr


def test_without_bubblewrap_autograde_refuses_in_one_line(monkeypatch):
    monkeypatch.setattr(box.shutil, "which", lambda name: None)
    box.check.cache_clear()
    try:
        with pytest.raises(box.BoxUnavailable) as e:
            box.mode()
        assert "bubblewrap" in str(e.value) and "\n" not in str(e.value)
        monkeypatch.setenv(box.UNSANDBOXED_ENV, "1")
        assert box.mode() == "none"
    finally:
        box.check.cache_clear()


def test_an_account_that_can_read_the_course_is_refused(tmp_path, monkeypatch):
    course = tmp_path / "course"
    course.mkdir()
    course.chmod(0o755)
    monkeypatch.setenv(box.ACCOUNT_ENV, "nobody")
    if os.geteuid() != 0:
        with pytest.raises(box.BoxUnavailable, match="needs the grader to run as root"):
            box.command(["true"], box.Box(home=tmp_path, hide=[course]))
        return
    with pytest.raises(box.BoxUnavailable, match="can read"):
        box.command(["true"], box.Box(home=tmp_path, hide=[course]))
    course.chmod(0o700)
    argv = box.command(["true"], box.Box(home=tmp_path, hide=[course]))
    assert "bwrap" not in argv


def test_a_checkout_is_never_bound_an_installed_package_is_hidden(monkeypatch):
    installed = "/opt/env/lib/python3.11/site-packages/ssa_course"
    monkeypatch.setattr(box, "_real_package", lambda: installed)
    assert not box._package_root("/opt/env")  # the class's virtual environment: bound
    assert installed in box._hidden_dirs(box.Box(home=Path("/")))  # ... the package hidden
    monkeypatch.setattr(box, "_real_package", lambda: "/work/main/ssa_course")
    assert box._package_root("/work/main") and box._package_root("/work")
    assert not box._package_root("/work/main/.venv")
