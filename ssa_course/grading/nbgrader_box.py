"""nbgrader's executing kernel, behind the sandbox's boundary.

The course's ``nbgrader_config.py`` (``tools/make_course.py``) runs autograde's
notebooks with :class:`BoxedExecute` instead of nbgrader's ``Execute``. Its kernel is
started by :class:`BoxedKernelManager` inside bubblewrap (:mod:`ssa_course.grading.box`):
the assignment's grading copy of ``ssa_course``, a private copy of the submission's
directory, no network, no other process, no course files; the kernel talks to nbgrader
over Unix sockets in a directory of its own (``transport = "ipc"``), and is interrupted
by a message (a signal to the sandbox's launcher would not reach it). Before the first
cell it installs a seccomp filter: no new processes.

Its outputs are capped as they arrive, before nbgrader keeps them
(:data:`CELL_OUTPUT_BYTES` per cell, :data:`LINE_CHARS` per line): a notebook printing
60 MB leaves a note, not a 63 MB notebook. The kernel's results never count: the test
cells are graded again by the regrade (:mod:`ssa_course.grading.nbgrader_regrade`).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from jupyter_client.manager import AsyncKernelManager
from nbgrader.preprocessors import Execute
from traitlets import Bool, Enum

from ssa_course.grading import box
from ssa_course.grading.timing import timed

CELL_OUTPUT_BYTES = 1 << 20  # what one cell's outputs may hold
LINE_CHARS = 2_000  # a longer printed line is cut
KERNEL_MEMORY = 6 << 30  # the kernel's address space (its in-kernel checks run in it)
FIRST_LINES = ("import ssa_course.grading.seccomp as _s; _s.install_no_processes(); "
               "del _s")


class BoxedKernelManager(AsyncKernelManager):
    """A kernel manager whose kernel runs in the sandbox (see the module's docstring).
    Set :attr:`box_source` (the submission's directory), :attr:`box_package` (the grading
    copy) and :attr:`box_hide` (the course's root) before starting it."""

    box_source: Path | None = None
    box_package: Path | None = None
    box_hide: tuple[Path, ...] = ()
    _box_dir: tempfile.TemporaryDirectory[str] | None = None

    def _prepare(self) -> box.Box:
        how = box.mode()
        self._box_dir = tempfile.TemporaryDirectory(prefix="ssa-kernel-")
        top = Path(self._box_dir.name)
        home, run = top / "home", top / "run"
        home.mkdir()
        run.mkdir()
        with timed("kernel.home"):
            box.prepare_home(home, self.box_source, how)
        self.transport = "ipc"
        self.connection_file = str(run / "kernel.json")
        self.ip = str(run / "kernel-ipc")
        return box.Box(home=home, package=self.box_package, shared=[run],
                       hide=list(self.box_hide),
                       limits=box.Limits(memory_bytes=KERNEL_MEMORY))

    def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
        argv = super().format_kernel_cmd(extra_arguments)
        return box.command(argv, self._sandbox)

    async def _async_pre_start_kernel(self, **kw: Any) -> Any:
        self._sandbox = self._prepare()
        spec = self.kernel_spec
        if spec is not None:
            spec.interrupt_mode = "message"
        kw.pop("cwd", None)  # the sandbox chooses its own working directory
        kw.setdefault("stdout", subprocess.DEVNULL)  # ipykernel's banner, not nbgrader's log
        return await super()._async_pre_start_kernel(**kw)

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart)
        if self._box_dir is not None and not restart:
            with contextlib.suppress(OSError):
                self._box_dir.cleanup()
            self._box_dir = None


class BoxedExecute(Execute):
    """nbgrader's ``Execute``, with its kernel in the sandbox and its outputs capped. It
    starts the regrade's grading process first (:func:`nbgrader_regrade.start`), so both
    run at once; ``RegradeOutsideKernel``, next in the course's pipeline, collects it. Its
    kernel is stopped at once when the notebook is done (nothing in it is kept)."""

    start_regrade = Bool(True, help="start the regrade with the kernel (only when "
                                    "RegradeOutsideKernel follows)").tag(config=True)
    shutdown_kernel = Enum(["graceful", "immediate"], default_value="immediate").tag(config=True)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["kernel_manager_class"] = BoxedKernelManager
        super().__init__(*args, **kwargs)
        self._used: dict[int, int] = {}
        self._source: Path | None = None
        self._package: Path | None = None
        self._hide: tuple[Path, ...] = ()
        self._missing: set[str] = set()  # names an example could not bind while grading

    def preprocess(self, nb: Any, resources: Any, km: Any = None) -> Any:
        from ssa_course.grading.nbgrader_regrade import exercise_of
        from ssa_course.grading.regrade import grading_copy

        info = resources.get("nbgrader", {})
        path = resources.get("metadata", {}).get("path") or os.getcwd()
        self._source = Path(path)
        self._package = Path(grading_copy(exercise_of(info)))
        db = str(info.get("db_url", "")).removeprefix("sqlite:///")
        self._hide = (Path(os.path.dirname(os.path.realpath(db))),) if db else ()
        self._used, self._missing = {}, set()
        extra: list[str] = list(getattr(self, "extra_arguments", []))
        if not any(FIRST_LINES in a for a in extra):
            self.extra_arguments = [*extra, f"--InteractiveShellApp.exec_lines={FIRST_LINES}"]
        from ssa_course.grading import nbgrader_regrade

        if self.start_regrade:
            nbgrader_regrade.start(nb, resources)  # the regrade runs while the kernel does
        try:
            with timed("kernel"):
                return super().preprocess(nb, resources, km)
        except BaseException:
            pending = resources.pop(nbgrader_regrade.PENDING, None)
            if pending is not None:
                pending[0].close()
            raise

    def start_new_kernel(self, **kwargs: Any) -> None:
        with timed("kernel.start"):
            super().start_new_kernel(**kwargs)

    def start_new_kernel_client(self) -> Any:
        with timed("kernel.start"):
            return super().start_new_kernel_client()

    def _cleanup_kernel(self) -> None:
        with timed("kernel.stop"):
            super()._cleanup_kernel()

    def preprocess_cell(self, cell: Any, resources: Any, index: int) -> Any:
        cell, resources = super().preprocess_cell(cell, resources, index)
        if cell.get("cell_type") == "code":
            _explain_withheld(cell, self._missing)
        return cell, resources

    def create_kernel_manager(self) -> Any:
        km = super().create_kernel_manager()
        km.box_source, km.box_package, km.box_hide = self._source, self._package, self._hide
        return km

    def output(self, outs: list, msg: dict, display_id: str | None,
               cell_index: int) -> Any:
        out = super().output(outs, msg, display_id, cell_index)
        if out is None:
            return out
        used = self._used.get(cell_index, 0)
        left = max(CELL_OUTPUT_BYTES - used, 0)
        size = _cap(out, left)
        self._used[cell_index] = used + size
        if size == 0 and out in outs and left == 0:
            outs.remove(out)
            if used < CELL_OUTPUT_BYTES + 1:  # say it once per cell
                outs.append(_note(f"[output cut: this cell printed more than "
                                  f"{CELL_OUTPUT_BYTES >> 10} KB]\n"))
                self._used[cell_index] = CELL_OUTPUT_BYTES + 1
        return out


WITHHELD_NOTE = ("[this example needs the course's own version of a task, which is not "
                 "available while your notebook is graded]\n")


def _explain_withheld(cell: Any, missing: set[str]) -> None:
    """An example cell that called a withheld function (or used a name such a cell could
    not bind) shows one line saying so, not a traceback: the kernel's outputs are the
    feedback's, and the grading copy is what the sandbox holds on purpose."""
    from ssa_course.grading.regrade import bound_names

    for out in list(cell.get("outputs", [])):
        if out.get("output_type") != "error":
            continue
        name = str(out.get("ename", ""))
        value = str(out.get("evalue", ""))
        needed = name == "NameError" and any(f"'{m}'" in value for m in missing)
        if name == "WithheldError" or needed:
            missing.update(bound_names(str(cell.get("source", ""))))
            cell["outputs"] = [o for o in cell["outputs"] if o is not out]
            cell["outputs"].append(_note(WITHHELD_NOTE))


def _cap(out: Any, left: int) -> int:
    """Cut one output to ``left`` bytes (long lines cut too): the bytes it keeps."""
    if out.get("output_type") == "stream":
        text = cut_lines(str(out.get("text", "")))
        if len(text) > left:
            text = text[:left] + "\n[output cut]\n" if left else ""
        out["text"] = text
        return len(text)
    if out.get("output_type") == "error":
        out["traceback"] = [cut_lines(str(t))[:LINE_CHARS * 4]
                            for t in list(out.get("traceback", []))[:200]]
        out["evalue"] = str(out.get("evalue", ""))[:LINE_CHARS]
        return sum(map(len, out["traceback"])) + len(out["evalue"])
    data = out.get("data", {})
    size = sum(len(str(v)) for v in data.values())
    if size > left:
        out["data"] = {"text/plain": f"[an output of {size} bytes left out: a cell's "
                                     f"outputs are capped at {CELL_OUTPUT_BYTES >> 10} KB]"}
        return 0 if left == 0 else min(left, 200)
    return size


def cut_lines(text: str) -> str:
    """``text`` with every line longer than :data:`LINE_CHARS` cut, saying so."""
    if len(text) <= LINE_CHARS:
        return text
    return "\n".join(line if len(line) <= LINE_CHARS else
                     line[:LINE_CHARS] + f" [line cut: {len(line)} characters]"
                     for line in text.split("\n"))


def _note(text: str) -> Any:
    import nbformat

    return nbformat.v4.new_output("stream", name="stderr", text=text)
