"""Run a program as a child process: output streamed, time bounded, nothing left behind.

:func:`run_child` is the one way machine code runs as a process (``--via native``, the
machine-code views; a ``qemu`` runner can reuse it). It behaves like the interpreters:

* **Output is streamed** to ``on_stdout`` as the child writes it, so when that callback
  fails -- the reader of standard output hung up (``| head -1``) -- the child is killed at
  once and the exception propagates, exactly as it does out of the quads interpreter's
  ``print``; an endless printing loop does not run on to its step limit.
* **Nothing survives the caller.** The child gets its own process group (killed as a
  group when the caller stops for any reason: the callback's exception, Ctrl-C, SIGTERM or
  SIGHUP via :mod:`ssa_course.signals`, a timeout) and, on Linux, the kernel's
  "parent-death signal", so even a SIGKILLed caller takes its child with it.
* **A wall-clock limit** bounds every run (status 124, as timeout(1) gives): ``run
  --timeout SECONDS``, by default 60.
"""

from __future__ import annotations

import codecs
import ctypes
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass

from ssa_course.runtime import DEFAULT_TIMEOUT
from ssa_course.signals import raising_on_termination

DEFAULT_TIMEOUT_S = float(DEFAULT_TIMEOUT)  # run --timeout's default
# the longest single wait: a limit of 2^63-1 s (run --timeout allows it) is waited for in
# steps, since select() and unicorn take no timeout that long
MAX_WAIT_S = 3600.0
TIMEOUT_STATUS = 124  # what timeout(1) uses
MAX_STDERR = 1 << 16  # a program's error output is a line; more is cut
_PR_SET_PDEATHSIG = 1


@dataclass(slots=True)
class ChildResult:
    """What a run of machine code showed: its two streams and its exit status (negative:
    killed by that signal). ``stdout`` is empty when it was streamed to a callback."""

    stdout: str
    stderr: str
    status: int
    timed_out: bool = False


def _parent_death_signal() -> Callable[[], None] | None:
    """A pre-exec function asking Linux to SIGKILL the child when its parent dies."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):  # not Linux (or no libc symbols): best effort only
        return None

    def arm() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)

    return arm


_ARM = _parent_death_signal()


def run_child(argv: list[str], *, timeout_s: float = DEFAULT_TIMEOUT_S,
              on_stdout: Callable[[str], object] | None = None) -> ChildResult:
    """Run ``argv`` with no standard input; standard output (UTF-8, bad bytes replaced)
    goes to ``on_stdout`` as it arrives, or into the result. Raises what ``Popen`` raises
    when ``argv`` cannot start, and whatever ``on_stdout`` raises (the child is dead by
    then)."""
    with raising_on_termination(redeliver=True):
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True,
                                preexec_fn=_ARM)
        try:
            return _pump(proc, time.monotonic() + timeout_s, on_stdout)
        finally:
            _kill(proc)


def _pump(proc: subprocess.Popen[bytes], deadline: float,
          on_stdout: Callable[[str], object] | None) -> ChildResult:
    assert proc.stdout is not None and proc.stderr is not None
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    out: list[str] = []
    err = bytearray()
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ, "out")
    sel.register(proc.stderr, selectors.EVENT_READ, "err")
    timed_out = False
    try:
        while sel.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            for key, _ in sel.select(min(remaining, MAX_WAIT_S)):
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    sel.unregister(key.fileobj)
                elif key.data == "err":
                    err += chunk[:MAX_STDERR - len(err)]
                else:
                    text = decoder.decode(chunk)
                    if text:
                        _emit(text, on_stdout, out)
        if not timed_out:
            try:
                proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                timed_out = True
    finally:
        sel.close()
    tail = decoder.decode(b"", final=True)
    if tail:
        _emit(tail, on_stdout, out)
    if timed_out:
        _kill(proc)
    status = proc.returncode if proc.returncode is not None else -signal.SIGKILL
    return ChildResult("".join(out), err.decode("utf-8", "replace"), status, timed_out)


def _emit(text: str, on_stdout: Callable[[str], object] | None, out: list[str]) -> None:
    if on_stdout is None:
        out.append(text)
    else:
        on_stdout(text)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """Kill the child's whole process group (if it still runs) and reap it."""
    if proc.returncode is None and proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            proc.kill()
        proc.wait()
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
