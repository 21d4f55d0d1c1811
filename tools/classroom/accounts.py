"""Unix accounts for the class test: create, run commands as, remove (root only).

Every account the test creates carries ``MARK`` in its comment (GECOS) field, so a later run
removes only accounts it made itself and refuses to touch a real user of the same name.
Home directories are made private (``0700``): Debian's ``useradd`` gives ``0755`` homes,
readable by every other account, unless ``HOME_MODE`` is set in ``/etc/login.defs``.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

MARK = "ssa_course class-test account"
RUNUSER = shutil.which("runuser") or "/usr/sbin/runuser"  # util-linux, in sbin


class AccountError(Exception):
    """An account cannot be made or removed; the message is one line."""


@dataclass(frozen=True, slots=True)
class Account:
    name: str
    password: str
    uid: int
    gid: int
    home: Path


def create(name: str) -> Account:
    """A fresh account ``name`` with a random password and a private home."""
    remove(name)  # a leftover of an interrupted run (ours, or refused)
    _run(["useradd", "--create-home", "--shell", "/bin/bash", "--comment", MARK, name])
    password = secrets.token_urlsafe(12)
    subprocess.run(["chpasswd"], input=f"{name}:{password}\n", text=True, check=True,
                   capture_output=True)
    entry = pwd.getpwnam(name)
    home = Path(entry.pw_dir)
    home.chmod(0o700)
    return Account(name, password, entry.pw_uid, entry.pw_gid, home)


def remove(name: str) -> None:
    """Remove the account ``name`` and its home if the class test made it."""
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        return
    if entry.pw_gecos != MARK:
        raise AccountError(f"a user {name!r} exists and was not made by the class test; "
                           "remove it or pick other names (--prefix)")
    _stop_processes(entry.pw_uid)
    _run(["userdel", "--remove", name])


def run_as(account: Account, argv: list[str], env: dict[str, str] | None = None,
           timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` as ``account`` from its home (like a terminal of its own server)."""
    base = {"HOME": str(account.home), "USER": account.name, "LOGNAME": account.name,
            "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    return subprocess.run([RUNUSER, "-u", account.name, "--", *argv], cwd=account.home,
                          env={**base, **(env or {})}, capture_output=True, text=True,
                          timeout=timeout)


PROBE = """import json, os, sys
out = {}
for path in sys.argv[1:]:
    try:
        os.listdir(path)
        out[path] = "open"
    except PermissionError:
        out[path] = "closed"
print(json.dumps(out))
"""


def listable(account: Account, python: str, paths: list[str]) -> dict[str, str]:
    """path -> "open" or "closed": whether ``account`` may list each folder."""
    done = run_as(account, [python, "-c", PROBE, *paths])
    return json.loads(done.stdout) if done.returncode == 0 else {}


def give(account: Account, path: Path) -> None:
    """Make ``account`` the owner of ``path`` and everything under it."""
    for folder, dirs, files in os.walk(path):
        for name in [folder, *(os.path.join(folder, f) for f in dirs + files)]:
            os.chown(name, account.uid, account.gid)


def _stop_processes(uid: int) -> None:
    """Processes a previous run left under the test's own account (servers, kernels)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        pids = _pids_of(uid)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + 10
        while pids and _pids_of(uid) and time.monotonic() < deadline:
            time.sleep(0.2)


def _pids_of(uid: int) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    pids.append(int(entry.name))
            except FileNotFoundError:
                pass
    return pids


def _run(argv: list[str]) -> None:
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        raise AccountError(f"{' '.join(argv)}: {done.stderr.strip() or done.returncode}")
