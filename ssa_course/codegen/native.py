"""Run an assembled program as a child process, and read its result like any executor's.

:func:`run_native` runs the executable (through :func:`ssa_course.codegen.child.run_child`:
output streamed, a wall-clock limit, no orphan) and returns what it wrote and its exit
status; a death by signal or a timeout becomes one ``error:`` line on its
standard error (never a traceback, never the caller's death). :func:`deliver` maps such a
result onto the executors' interface (:data:`ssa_course.registry.Runner`): output into an
:class:`~ssa_course.runtime.Output`, ``error: M at L:C`` back into the same
:class:`~ssa_course.errors.RuntimeTrap` the interpreters raise, the status returned.
"""

from __future__ import annotations

import errno
import math
import re
import signal
from collections.abc import Callable

from ssa_course.codegen import toolchain
from ssa_course.codegen.assemble import Image
from ssa_course.codegen.child import (
    DEFAULT_TIMEOUT_S,
    TIMEOUT_STATUS,
    ChildResult,
    run_child,
)
from ssa_course.errors import RuntimeTrap, UsageError
from ssa_course.runtime import Output

CRASH_STATUS = 128  # + the signal number, as a shell reports it
# The runtime prints a trap exactly as the interpreters format it ("error: M at L:C"), so
# parsing it back gives the same exception object the interpreters raise.
_ERROR = re.compile(r"error: (.*?)(?: at (\d+):(\d+))?\Z")


def format_args(values: list[object]) -> list[str]:
    """``main``'s argument values as command-line text (``10``, ``-3``, ``true``; a float
    as ``float.hex()``, which the runtime reads back bit for bit, or ``Infinity``)."""
    return [("true" if v else "false") if isinstance(v, bool) else
            _float_text(v) if isinstance(v, float) else str(v) for v in values]


def _float_text(x: float) -> str:
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return x.hex()


def crash_line(signum: int, detail: str = "", who: str = "native") -> str:
    """The one line a death by signal becomes."""
    # A crash is a code generator bug, never the program's fault (every program error is a
    # checked trap): say so in one line, with the signal's name, instead of a core dump.
    try:
        name = signal.Signals(signum).name
    except ValueError:
        name = f"signal {signum}"
    extra = f": {detail}" if detail else ""
    return f"error: {who} code crashed ({name}{extra})\n"


def run_native(image: Image, args: list[str], timeout_s: float = DEFAULT_TIMEOUT_S,
               launcher: tuple[str, ...] = (),
               on_stdout: Callable[[str], object] | None = None) -> ChildResult:
    """Run ``image`` (any target's; x86-64's :func:`ssa_course.codegen.x86_64.run.run_native`
    also takes assembly source) with ``args``; its output streams to ``on_stdout`` when
    given (see :func:`child.run_child`).
    ``launcher`` goes before the executable (``("qemu-aarch64",)`` runs an aarch64 image
    on this machine as a real process); with one, the x86-64 check is the caller's."""
    # Fail early with one line (ToolMissing) on a machine that cannot run x86-64 Linux
    # executables; a launcher (qemu) takes that responsibility itself.
    if not launcher:
        toolchain.require(toolchain.native_missing())
    try:
        done = run_child([*launcher, image.path, *args], timeout_s=timeout_s,
                         on_stdout=on_stdout)
    except PermissionError:
        raise toolchain.ToolMissing(
            f"cannot run programs from {toolchain.work_dir()} (mounted noexec?): set "
            "SSA_COURSE_NATIVE_DIR to a directory that allows it") from None
    except OSError as e:
        if e.errno == errno.ENOEXEC:
            raise toolchain.ToolMissing("this machine cannot run x86-64 Linux executables: "
                                        "use --via emulated") from None
        raise
    # Native code has no step limit unless fuel checks were compiled in, so a wall-clock
    # timeout is the backstop that keeps an endless loop from hanging a lesson or a test.
    if done.timed_out:
        return ChildResult(done.stdout, done.stderr + f"error: native run timed out after "
                           f"{timeout_s:g} s\n", TIMEOUT_STATUS)
    # subprocess reports death by signal as -signum; the shell's 128 + signum is what a
    # user sees elsewhere, so that is the status returned.
    if done.status < 0:
        return ChildResult(done.stdout, done.stderr + crash_line(-done.status),
                           CRASH_STATUS - done.status)
    return done


def deliver(result: ChildResult, out: Output) -> int:
    """Write the child's output into ``out``; raise its error as the interpreters do.

    Status 2 with ``error: M at L:C`` is a :class:`RuntimeTrap` at that position (none for
    an uncaught exception or a limit); status 1 is a :class:`UsageError`; a crash or a
    timeout is a :class:`RuntimeTrap` with its one-line message. Returns 0 otherwise.
    """
    if result.stdout:
        out.write(result.stdout)
    if result.status == 0:
        return 0
    # The last stderr line is the verdict (the runtime's error line, or the one added
    # above for a crash or a timeout).
    lines = result.stderr.strip().splitlines()
    message = lines[-1] if lines else f"error: native code ended with status {result.status}"
    m = _ERROR.match(message)
    text = m.group(1) if m else message
    if result.status == 1:
        raise UsageError(text)
    if m and m.group(2):
        raise RuntimeTrap(text, (int(m.group(2)), int(m.group(3))))
    raise RuntimeTrap(text)


def run_values_native(image: Image, values: list[object], out: Output,
                      timeout_s: float = DEFAULT_TIMEOUT_S,
                      launcher: tuple[str, ...] = ()) -> int:
    """The executor interface over a native run: typed ``main`` arguments in, status out;
    the output streams into ``out`` as the program prints (a reader that hangs up stops
    the run at once, as it stops an interpreter). ``launcher``: see :func:`run_native`
    (the AArch64 runners, under qemu or ``env``, come through here too)."""
    return deliver(run_native(image, format_args(values), timeout_s, launcher=launcher,
                              on_stdout=out.write), out)
