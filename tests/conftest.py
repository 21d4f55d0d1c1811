"""Test-wide setup: the venv's tools on PATH, Jupyter kept away from the user's config,
every ``opt`` pipeline verified after every pass."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import pytest

# Kernels started by nbclient/nbgrader run "python" and nbgrader runs "alembic": both must
# be this environment's, whether or not the venv was activated.
_BIN = str(Path(sys.executable).parent)
if _BIN not in os.environ.get("PATH", "").split(os.pathsep):
    os.environ["PATH"] = _BIN + os.pathsep + os.environ.get("PATH", "")

_TMP = Path(tempfile.mkdtemp(prefix="ssa-course-tests-"))
for _var, _sub in (("JUPYTER_CONFIG_DIR", "jupyter-config"), ("IPYTHONDIR", "ipython"),
                   ("MPLCONFIGDIR", "matplotlib")):
    os.environ.setdefault(_var, str(_TMP / _sub))
os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("JUPYTER_PLATFORM_DIRS", "1")
# ``opt`` outside tests verifies the end result only (and retraces a failure pass by pass);
# tests check the program after every pass, in this process and in the CLI's (#22)
os.environ.setdefault("SSA_COURSE_VERIFY_EACH", "1")


@pytest.fixture(scope="module")
def jupyter_env(tmp_path_factory):
    """A ``python3`` kernel of this interpreter; Jupyter's and IPython's files kept apart."""
    pytest.importorskip("nbgrader")
    root = tmp_path_factory.mktemp("jupyter")
    spec = root / "path" / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (ssa_course tests)", "language": "python"}))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_PATH", str(root / "path"))
        mp.setenv("JUPYTER_DATA_DIR", str(root / "data"))
        mp.setenv("JUPYTER_CONFIG_DIR", str(root / "config"))
        mp.setenv("IPYTHONDIR", str(root / "ipython"))
        # nbgrader runs the ``alembic`` command of its own environment
        mp.setenv("PATH", str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"])
        yield root
