"""The class's Python environment: one virtualenv that every account can read and run.

Students' and the instructor's servers (``jupyterhub-singleuser``), their kernels and the
autograder run from it. It is built from the system's Python (``/usr/bin/python3``): a
virtualenv made from a Python under ``/root`` (pyenv, the project's own ``.venv``) cannot be
run by other accounts. ``ssa_course`` is installed as a regular package (not editable), as
from the release wheel: the accounts see the package, never the repository's
``solutions/``. A stamp remembers what the environment was built from; a second run only
re-installs the package (seconds) unless ``pyproject.toml`` or the hub's version changed.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

SYSTEM_PYTHON = Path("/usr/bin/python3")


class ClassEnvError(Exception):
    """The environment cannot be built; the message is one line."""


def build(env: Path, repo: Path, hub_version: str, log: Path) -> Path:
    """Create or refresh ``env``; returns its ``bin`` directory."""
    want = hashlib.sha256((repo / "pyproject.toml").read_bytes()
                          + hub_version.encode()).hexdigest()
    stamp = env / ".ssa_course-class-stamp"
    pip = [str(env / "bin" / "python"), "-m", "pip", "--disable-pip-version-check", "-q"]
    if not stamp.exists() or stamp.read_text() != want:
        shutil.rmtree(env, ignore_errors=True)
        _venv(env, log)
        _run([*pip, "install", f"{repo}[class]", f"jupyterhub=={hub_version}"], log,
             "installing the class environment")
        stamp.write_text(want)
    else:
        _run([*pip, "install", "--no-deps", "--force-reinstall", str(repo)], log,
             "re-installing ssa_course into the class environment")
    env.chmod(0o755)
    return env / "bin"


def _venv(env: Path, log: Path) -> None:
    if not SYSTEM_PYTHON.exists():
        raise ClassEnvError(f"{SYSTEM_PYTHON} is missing: install python3 (apt-get install "
                                "python3 python3-venv)")
    env.parent.mkdir(parents=True, exist_ok=True)
    made = subprocess.run([str(SYSTEM_PYTHON), "-m", "venv", str(env)], capture_output=True,
                          text=True)
    if made.returncode != 0 and shutil.which("apt-get"):  # Debian keeps venv apart
        _run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", "python3-venv"],
             log, "installing python3-venv")
        made = subprocess.run([str(SYSTEM_PYTHON), "-m", "venv", str(env)],
                              capture_output=True, text=True)
    if made.returncode != 0:
        raise ClassEnvError(f"{SYSTEM_PYTHON} -m venv {env} failed: "
                                f"{made.stderr.strip().splitlines()[-1:]}")


def _run(argv: list[str], log: Path, what: str) -> None:
    with log.open("a") as out:
        out.write(f"$ {' '.join(argv)}\n")
        out.flush()
        done = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, timeout=1800)
    if done.returncode != 0:
        raise ClassEnvError(f"{what} failed (exit {done.returncode}); see {log}")
