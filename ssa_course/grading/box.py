"""The operating-system boundary around a student's code at grading time.

Every process that runs a submission's cells while autograding -- nbgrader's kernel
(:mod:`ssa_course.grading.nbgrader_box`) and the regrade's learner's processes
(:mod:`ssa_course.grading.regrade`) -- is started through :func:`command`, which wraps it
in **bubblewrap** (``bwrap``): new user, mount, PID, IPC, UTS and network namespaces, no
capabilities, no further user namespaces, ``--die-with-parent``. Inside, the process sees

* a read-only Python and its packages (the interpreter's prefix, the virtual
  environment, ``/usr``), with the real ``ssa_course`` package and the checkout's
  ``solutions/`` hidden under empty directories;
* a **grading copy** of ``ssa_course`` for the assignment
  (:mod:`ssa_course.grading.gradingcopy`: the functions the exercise asks for are absent),
  first on ``PYTHONPATH``;
* a private writable home (a copy of the submission's directory) and ``/tmp`` inside it;
* its own ``/proc`` (only its own processes), a minimal ``/dev``, no network, a cleared
  environment;

and it runs under resource limits set before ``bwrap`` starts (address space, CPU time,
file size, open files), which nothing inside can raise. Nothing of the course directory,
the gradebook, other submissions or other processes is there to read or write.

Where bubblewrap cannot run, :func:`check` says why in one line and grading refuses
(:class:`BoxUnavailable`). Two explicit settings change that (docs/grading.md):
``SSA_COURSE_GRADER_ACCOUNT=<user>`` (as root) runs the same processes as that
unprivileged account instead -- it must not be able to read the course -- and
``SSA_COURSE_UNSANDBOXED=1`` runs them with the grader's own rights, for a single-user
demo only.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

UNSANDBOXED_ENV = "SSA_COURSE_UNSANDBOXED"
ACCOUNT_ENV = "SSA_COURSE_GRADER_ACCOUNT"
INSIDE_ENV = "SSA_COURSE_GRADING_BOX"  # set inside: "bwrap", "account" or "none"
HOME = "/home/learner"  # the private directory, as the sandbox sees it


class BoxUnavailable(RuntimeError):
    """Grading cannot put a student's code behind the boundary here; the message says
    what is missing and how to get it, in one line."""


@dataclass(frozen=True)
class Limits:
    """Resource limits of a sandboxed process (``setrlimit`` before ``bwrap`` starts).
    ``processes`` binds only a grader that is not root (Linux exempts root from it); the
    kernel's and the learner's processes also install a seccomp filter that refuses new
    processes before any student code runs."""

    memory_bytes: int = 4 << 30
    cpu_seconds: int = 1800
    file_bytes: int = 64 << 20
    open_files: int = 512
    processes: int = 256


@dataclass
class Box:
    """One sandboxed process's view: its private directory (``home``, created by the
    caller), the grading copy's directory (put first on ``PYTHONPATH``), extra
    directories bound read-write at the same path (``shared``: the kernel's socket
    directory), environment variables and limits."""

    home: Path
    package: Path | None = None
    shared: list[Path] = field(default_factory=list)
    hide: list[Path] = field(default_factory=list)  # the course root, if it lies in a bound path
    env: dict[str, str] = field(default_factory=dict)
    limits: Limits = field(default_factory=Limits)


def mode() -> str:
    """How student code is run here: ``bwrap``, ``account`` or ``none`` (refused
    otherwise with :class:`BoxUnavailable`)."""
    if os.environ.get(ACCOUNT_ENV):
        return "account"
    if os.environ.get(UNSANDBOXED_ENV) == "1":
        return "none"
    problem = check()
    if problem:
        raise BoxUnavailable(problem)
    return "bwrap"


@functools.lru_cache(maxsize=1)
def check() -> str | None:
    """None when a bubblewrap sandbox starts here, else one line saying why not."""
    if not sys.platform.startswith("linux"):
        return (f"grading runs students' code in a Linux sandbox (bubblewrap); this is "
                f"{sys.platform}: grade on a Linux machine, or set {UNSANDBOXED_ENV}=1 for "
                "a single-user demo (a student's code then runs with your rights)")
    if shutil.which("bwrap") is None:
        return ("grading needs bubblewrap (the 'bwrap' program) to keep students' code away "
                "from the course: install it ('apt-get install bubblewrap', or run 'make "
                f"course' as root), or see docs/grading.md for {ACCOUNT_ENV} and "
                f"{UNSANDBOXED_ENV}")
    try:
        done = subprocess.run(_bwrap_args(Box(home=Path("/"))) + ["--", sys.executable,
                                                                  "-I", "-S", "-c", "0"],
                              capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"bubblewrap did not start ({e}); see docs/grading.md"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        return (f"bubblewrap cannot make a sandbox here ({last}): unprivileged user "
                "namespaces may be switched off (sysctl kernel.unprivileged_userns_clone); "
                f"see docs/grading.md for {ACCOUNT_ENV}")
    return None


def command(argv: Sequence[str], box: Box) -> list[str]:
    """``argv`` as it runs behind the boundary: the limits launcher, then ``bwrap`` with
    the sandbox's mounts (or the grader account / nothing, see :func:`mode`)."""
    how = mode()
    env = _environment(box, how)
    account = _account(how)
    if account is not None:
        _account_cannot_read(box, account)
    settings = {"limits": asdict(box.limits), "account": account,
                "env": env if how != "bwrap" else None,
                "cwd": str(box.home) if how != "bwrap" else None}
    launcher = [sys.executable, "-I", "-S", "-c", LAUNCHER, json.dumps(settings), "--"]
    if how != "bwrap":
        return launcher + list(argv)
    args = _bwrap_args(box)
    for key, value in env.items():
        args += ["--setenv", key, value]
    return launcher + args + ["--", *argv]


def _account(how: str) -> list[int] | None:
    if how != "account":
        return None
    import pwd  # here: Pyodide (the browser) has no pwd, and the checks import this module

    name = os.environ[ACCOUNT_ENV]
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        raise BoxUnavailable(f"{ACCOUNT_ENV}={name}: there is no such user") from None
    if os.geteuid() != 0:
        raise BoxUnavailable(f"{ACCOUNT_ENV} needs the grader to run as root (to start "
                             f"processes as {name})")
    return [entry.pw_uid, entry.pw_gid]


def _account_cannot_read(box: Box, account: list[int]) -> None:
    """Refuse an account that could read what the sandbox would hide (the course)."""
    uid, gid = account
    for path in box.hide:
        try:
            st = os.stat(path)
        except OSError:
            continue
        readable = (st.st_mode & 0o005 or (st.st_gid == gid and st.st_mode & 0o050)
                    or st.st_uid == uid)
        if readable:
            raise BoxUnavailable(
                f"{ACCOUNT_ENV}: the account can read {path} (mode "
                f"{oct(st.st_mode & 0o777)}): make the course directory unreadable to it "
                f"('chmod o-rwx {path}')")


def inside_path(box: Box, how: str) -> str:
    """The private directory as the boxed process sees it."""
    return HOME if how == "bwrap" else str(box.home)


def _environment(box: Box, how: str) -> dict[str, str]:
    home = inside_path(box, how)
    venv_bin = os.path.dirname(sys.executable)
    env = {"HOME": home, "TMPDIR": f"{home}/.tmp", "PATH": f"{venv_bin}:/usr/bin:/bin",
           "LANG": "C.UTF-8", "USER": "learner", "LOGNAME": "learner",
           "MPLBACKEND": "Agg", "MPLCONFIGDIR": f"{home}/.tmp/mpl",
           "IPYTHONDIR": f"{home}/.tmp/ipython", "PYTHONDONTWRITEBYTECODE": "1",
           INSIDE_ENV: how}
    if box.package is not None:
        env["PYTHONPATH"] = str(box.package)
    env.update(box.env)
    return env


def _bwrap_args(box: Box) -> list[str]:
    args = ["bwrap", "--unshare-all", "--unshare-user", "--disable-userns",
            "--cap-drop", "ALL", "--die-with-parent", "--new-session", "--clearenv",
            "--proc", "/proc", "--dev", "/dev"]
    bound: list[str] = []
    for top in ("usr", "lib", "lib64", "lib32", "bin", "sbin"):
        path = f"/{top}"
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
            bound.append(path)
    for path in ("/etc/alternatives", "/etc/fonts", "/etc/localtime", "/etc/ld.so.cache",
                 "/etc/mime.types"):
        if os.path.exists(path):
            args += ["--ro-bind", path, path]
    for path in _python_dirs():
        if not any(_within(path, b) for b in bound):
            args += ["--ro-bind", path, path]
            bound.append(path)
    for secret in _hidden_dirs(box):  # the real package (and solutions) under a bound path
        if any(_within(secret, b) for b in bound) and os.path.isdir(secret):
            args += ["--tmpfs", secret, "--remount-ro", secret]
    if box.package is not None:
        args += ["--ro-bind", str(box.package), str(box.package)]
    for shared in box.shared:
        args += ["--bind", str(shared), str(shared)]
    args += ["--bind", str(box.home), HOME, "--chdir", HOME]
    return args


def _python_dirs() -> list[str]:
    """The interpreter and its packages: the base prefix, the virtual environment (the
    executable's, also under ``-S``) and every ``site-packages`` directory of ``sys.path``
    outside them (``pip install --user``). Other ``sys.path`` entries (a checkout, a
    test folder, the working directory) are never shown."""
    found: list[str] = []
    venv = os.path.dirname(os.path.dirname(os.path.abspath(sys.executable)))
    prefixes = [sys.base_prefix, sys.prefix, venv]
    packages = [p for p in sys.path if p and os.path.basename(p.rstrip("/")) in
                ("site-packages", "dist-packages")]
    for path in [*prefixes, *packages]:
        path = os.path.realpath(path) if path else ""
        if not path or not os.path.isdir(path) or path == "/" or _package_root(path):
            continue
        if path.endswith(".zip") or any(_within(path, f) for f in found):
            continue
        found = [f for f in found if not _within(f, path)] + [path]
    return found


def _package_root(path: str) -> bool:
    """Is ``path`` the checkout holding the real ``ssa_course`` (an editable install or a
    test run puts it on ``sys.path``), or above it? Such a directory is never bound. An
    installed package lies in a ``site-packages`` directory, which is bound (with the
    virtual environment around it) and the package hidden (:func:`_hidden_dirs`)."""
    holder = os.path.dirname(_real_package())
    if os.path.basename(holder) in ("site-packages", "dist-packages"):
        return False
    return _within(holder, path)


def _real_package() -> str:
    import ssa_course

    return os.path.dirname(os.path.realpath(ssa_course.__file__))


def _hidden_dirs(box: Box) -> list[str]:
    package = _real_package()
    return [package, os.path.join(os.path.dirname(package), "solutions"),
            *(os.path.realpath(p) for p in box.hide)]


def _within(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


def prepare_home(home: Path, source: Path | None, how: str) -> None:
    """Fill a new private directory with a copy of ``source`` (the submission's
    directory; symlinks stay links, never followed) and its ``.tmp``; under
    ``account``, hand it to that account."""
    if source is not None and source.is_dir():
        shutil.copytree(source, home, symlinks=True, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    (home / ".tmp").mkdir(parents=True, exist_ok=True)
    if how == "account":
        uid, gid = _account(how) or [0, 0]
        for root, dirs, files in os.walk(home):
            for name in [*dirs, *files]:
                os.lchown(os.path.join(root, name), uid, gid)
        os.lchown(home, uid, gid)


# ------------------------------------------------------------------ the launcher

# ``python -I -S -c LAUNCHER SETTINGS -- PROGRAM ...``: set the limits (and, for an
# account, drop to it), then become PROGRAM. It imports nothing of the course: it runs
# before the sandbox exists, with the interpreter's standard library only.
LAUNCHER = """\
import json, os, resource, sys
s = json.loads(sys.argv[1]); program = sys.argv[3:]; lim = s["limits"]
for which, value in ((resource.RLIMIT_AS, lim["memory_bytes"]),
                     (resource.RLIMIT_CPU, lim["cpu_seconds"]),
                     (resource.RLIMIT_FSIZE, lim["file_bytes"]),
                     (resource.RLIMIT_NOFILE, lim["open_files"]),
                     (resource.RLIMIT_CORE, 0),
                     (resource.RLIMIT_NPROC, lim["processes"])):
    resource.setrlimit(which, (value, value))
if s["cwd"]:
    os.chdir(s["cwd"])
if s["account"] is not None:
    os.setgroups([]); os.setgid(s["account"][1]); os.setuid(s["account"][0])
if s["env"] is not None:
    os.execvpe(program[0], program, s["env"])
os.execvp(program[0], program)
"""
