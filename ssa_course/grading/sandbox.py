"""Run graded calls in a child process, so that a learner's answer cannot take the
kernel down with it.

:func:`stream` forks the kernel (or whatever process checks): the child inherits the
learner's functions and the cases, runs ``fn(case)`` for each case in turn and sends each
result back through a pipe; the *parent* computes the expected answers (after the child
has its copy of memory, so they are never in it) and compares. In the child:

* every file descriptor but the result pipe is closed; standard output is captured and
  shown by the parent;
* memory is limited (``RLIMIT_AS``: the child's size at the fork plus :data:`MEMORY_GB`),
  CPU time too (``RLIMIT_CPU``), and the parent kills a case that runs past its time;
* on Linux x86-64 and AArch64 a seccomp filter (:func:`ssa_course.grading.seccomp.install`)
  refuses new processes and threads, which would outlive those limits.

What comes back is unpickled as data only (builtin containers and the course's own
classes). This serves the checks in a learner's own kernel; grades are decided in the
grading sandbox (docs/grading.md). Where ``os.fork`` is missing or unsafe (Windows,
macOS, the browser) :func:`can_isolate` is False and the callers run in-process.
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import select
import signal
import struct
import sys
import time
from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass
from typing import Any

from ssa_course.grading import seccomp
from ssa_course.memlimit import cap_address_space

MEMORY_GB = 2.0  # per graded cell, on top of what the kernel already uses
FRAME_LIMIT = 64 << 20  # bytes of one answer
OUTPUT_LIMIT = 20_000  # characters of a case's printed output shown
HEADER = struct.Struct("!I")  # the length before each frame on the result pipe
_CHILD_PID = -1  # set in a child this module forked


@dataclass(slots=True)
class Outcome:
    """What one case gave: ``kind`` is ``value`` (``value`` holds the answer), ``raised``
    (``category`` is ``mismatch``, ``notimpl`` or ``crash``; ``text`` says what),
    ``refused`` (the call watch's advice), ``timeout``, ``memory`` or ``died`` (``text``
    says what)."""

    kind: str
    value: object = None
    text: str = ""
    category: str = ""
    output: str = ""


REGRADE = False  # set in a regrade's grading process (grading/regrade.py)


def can_isolate() -> bool:
    """Can graded calls run in a child process here (Linux with ``os.fork``)? Not in a
    regrade's grading process (the learner's functions run in learner's processes) nor
    in nbgrader's kernel in the grading sandbox (its checks do not count)."""
    return (sys.platform.startswith("linux") and hasattr(os, "fork") and not REGRADE
            and not os.environ.get("SSA_COURSE_GRADING_BOX"))


def in_child() -> bool:
    """Is this process a child started by :func:`stream`?"""
    return os.getpid() == _CHILD_PID


# ------------------------------------------------------------------ the parent side


def stream(fn: Callable[[Any], Any], cases: Iterable[Any], *, seconds: float | None,
           memory_gb: float = MEMORY_GB) -> Generator[Outcome, None, None]:
    """``fn(case)`` for each case, run in one child process; yields an :class:`Outcome`
    per case, in order. The child stops after the first case that does not give a value;
    closing the generator early kills it."""
    cases = list(cases)
    read_end, write_end = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read_end)
        _child(fn, cases, write_end, memory_gb, seconds)
    os.close(write_end)
    reader = _Frames(read_end)
    done = False
    try:
        for _ in cases:
            frame = reader.next(seconds)
            if frame is None:  # no frame in time, or the child ended without one
                yield _ended(pid, reader, seconds, memory_gb)
                done = True
                return
            outcome = _outcome(frame)
            if outcome.output:
                sys.stdout.write(outcome.output)
            yield outcome
            if outcome.kind != "value":
                return
    finally:
        if not done:
            _kill(pid)
        os.close(read_end)


def call(fn: Callable[..., Any], args: tuple = (), *, seconds: float | None = 10.0,
         memory_gb: float = MEMORY_GB) -> Outcome:
    """``fn(*args)`` in a child process: its :class:`Outcome`."""
    return next(stream(lambda a: fn(*a), [args], seconds=seconds, memory_gb=memory_gb))


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    _wait(pid)


def _wait(pid: int) -> int:
    while True:
        try:
            return os.waitpid(pid, 0)[1]
        except ChildProcessError:
            return 0
        except InterruptedError:
            continue


def _ended(pid: int, reader: _Frames, seconds: float | None, memory_gb: float) -> Outcome:
    """The child sent nothing more: why (time, memory, a signal, an exit)."""
    if reader.timed_out:
        _kill(pid)
        return Outcome("timeout", text=f"did not finish in {seconds:g} s")
    if reader.too_big:
        _kill(pid)
        return Outcome("died", text=f"your answer is larger than {FRAME_LIMIT >> 20} MB")
    status = _wait(pid)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGXCPU:
            return Outcome("timeout", text=f"did not finish in {seconds:g} s")
        name = signal.Signals(sig).name if sig in signal.Signals.__members__.values() else sig
        return Outcome("died", text=f"your code crashed the process it ran in ({name})")
    code = os.WEXITSTATUS(status)
    return Outcome("died", text=f"your code ended the process it ran in (exit status {code}) "
                                "instead of returning")


class _Frames:
    """Length-prefixed frames from the child's pipe."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = bytearray()
        self.timed_out = False
        self.too_big = False
        self.eof = False

    def next(self, seconds: float | None) -> bytes | None:
        deadline = None if seconds is None else time.monotonic() + seconds + 0.5
        while True:
            if len(self.buffer) >= HEADER.size:
                (size,) = HEADER.unpack_from(self.buffer)
                if size > FRAME_LIMIT:
                    self.too_big = True
                    return None
                if len(self.buffer) >= HEADER.size + size:
                    frame = bytes(self.buffer[HEADER.size:HEADER.size + size])
                    del self.buffer[:HEADER.size + size]
                    return frame
            if self.eof:
                return None
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                self.timed_out = True
                return None
            ready, _, _ = select.select([self.fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                self.eof = True
            self.buffer += chunk


class _NoClasses(pickle.Unpickler):
    """Unpickles plain builtin data only: no class, no function is ever looked up."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"{module}.{name} is not data")


_BUILTIN_TYPES = {"list", "dict", "set", "frozenset", "tuple", "int", "float", "str",
                  "bytes", "bool", "complex"}


class _CourseValues(pickle.Unpickler):
    """Unpickles plain data and values of the course's own classes (lattice types,
    enums, dataclasses): nothing of the learner's crosses into the grader."""

    def find_class(self, module: str, name: str) -> Any:
        if module == "builtins" and name in _BUILTIN_TYPES:
            import builtins

            return getattr(builtins, name)
        if module == "collections" and name in ("defaultdict", "OrderedDict"):
            import collections
            return getattr(collections, name)
        if module == "copyreg" and name == "_reconstructor":
            import copyreg
            return copyreg._reconstructor  # type: ignore[attr-defined]  # private, real
        if module == "ssa_course" or module.startswith("ssa_course."):
            found: object = sys.modules.get(module)
            for part in name.split("."):
                found = getattr(found, part, None)
            if isinstance(found, type) and found.__module__ == module:
                return found
        raise pickle.UnpicklingError(f"{module}.{name} is not one of the values an answer "
                                     "can hold")


def _outcome(frame: bytes) -> Outcome:
    try:
        message = _NoClasses(io.BytesIO(frame)).load()
        kind, payload, text, category, output = message
        if kind == "value":
            value = _CourseValues(io.BytesIO(payload)).load()
            return Outcome("value", value=value, output=str(output))
        return Outcome(str(kind), text=str(text), category=str(category), output=str(output))
    except Exception as e:
        return Outcome("died", text=f"your answer could not be read back ({e})")


# ------------------------------------------------------------------ the child side


def _child(fn: Callable[[Any], Any], cases: list, fd: int, memory_gb: float,
           seconds: float | None) -> None:
    global _CHILD_PID
    try:
        _CHILD_PID = os.getpid()
        out = _isolate(fd, memory_gb, seconds, len(cases))
        for case in cases:
            message = _run_one(fn, case)
            text = out.getvalue()
            out.seek(0)
            out.truncate()
            data = pickle.dumps(message + (text[:OUTPUT_LIMIT],))
            _write(fd, HEADER.pack(len(data)) + data)
            if message[0] != "value":
                break
    except BaseException as e:
        try:
            data = pickle.dumps(("died", b"", f"the grader failed in its child: {e!r}",
                                 "", ""))
            _write(fd, HEADER.pack(len(data)) + data)
        except BaseException:
            pass
    finally:
        os._exit(0)


def _run_one(fn: Callable[[Any], Any], case: object) -> tuple:
    from ssa_course.grading.check import Mismatch, _crash_line
    from ssa_course.grading.watch import Forbidden

    try:
        value = fn(case)
    except MemoryError:
        return ("memory", b"", "", "")
    except Forbidden as e:
        return ("refused", b"", str(e), "")
    except Mismatch as e:
        return ("raised", b"", str(e), "mismatch")
    except NotImplementedError:
        return ("raised", b"", "", "notimpl")
    except BaseException as e:
        return ("raised", b"", _crash_line(e), "crash")
    try:
        payload = pickle.dumps(value, protocol=4)
    except MemoryError:
        return ("memory", b"", "", "")
    except Exception as e:
        return ("raised", b"", f"your answer cannot be sent back for checking ({e})", "crash")
    return ("value", payload, "", "")


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _isolate(keep: int, memory_gb: float, seconds: float | None, cases: int) -> io.StringIO:
    """Cut the child off: descriptors, signals, limits, the seccomp filter."""
    import resource

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGALRM, signal.SIGXCPU,
                signal.SIGUSR1, signal.SIGUSR2, signal.SIGCHLD, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_DFL)
    signal.setitimer(signal.ITIMER_REAL, 0)
    os.closerange(3, keep)
    os.closerange(keep + 1, 1 << 16)
    out = io.StringIO()
    sys.stdout = sys.stderr = out
    cap_address_space(int(memory_gb * (1 << 30)))
    if seconds is not None:
        cpu = int(resource.getrusage(resource.RUSAGE_SELF).ru_utime
                  + resource.getrusage(resource.RUSAGE_SELF).ru_stime
                  + seconds * cases + 2)
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 2))
    try:
        seccomp.install()
    except OSError:  # a container that forbids seccomp: no new processes or threads for a
        # user that is not root
        with contextlib.suppress(OSError, ValueError):
            resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
    return out
