"""A student's ARM laptop, imitated (issue #21): ``platform.machine()`` says arm64,
keystone-engine is not installed (it has no arm64 wheel), and neither GNU ``as``/``ld`` nor
a cross ``*-as``/``*-ld`` is on the PATH (there, ``as`` would assemble ARM anyway).

Python imports ``sitecustomize`` at start-up from the first directory on ``sys.path`` that
has one, so putting this directory first on ``PYTHONPATH`` turns every process started
with that environment into the laptop: the CLI, pytest, and notebook kernels.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import os
import platform
import shutil
import sys

HIDDEN_MODULES = ("keystone",)


def _hidden_module(name: str) -> bool:
    return any(name == m or name.startswith(m + ".") for m in HIDDEN_MODULES)


def _hidden_tool(cmd: str) -> bool:
    base = os.path.basename(cmd)
    return base in ("as", "ld") or base.endswith(("-as", "-ld"))


platform.machine = lambda: "arm64"
_find_spec = importlib.util.find_spec
_which = shutil.which


def find_spec(name, package=None):
    return None if _hidden_module(name) else _find_spec(name, package)


def which(cmd, mode=os.F_OK | os.X_OK, path=None):
    return None if _hidden_tool(str(cmd)) else _which(cmd, mode, path)


class _NotInstalled(importlib.abc.MetaPathFinder):
    """``import keystone`` fails as it does where the package is not installed."""

    def find_spec(self, name, path=None, target=None):
        if _hidden_module(name):
            raise ModuleNotFoundError(f"No module named '{name}'", name=name)
        return None


importlib.util.find_spec = find_spec
shutil.which = which
sys.meta_path.insert(0, _NotInstalled())
for _name in [m for m in sys.modules if _hidden_module(m)]:
    del sys.modules[_name]
