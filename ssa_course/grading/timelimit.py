"""A time limit for one call of a learner's function.

In a Jupyter kernel (and under nbgrader) cells run on the main thread, where a
``SIGALRM`` timer can interrupt Python code: :func:`call_with_limit` raises
:class:`OutOfTime` in the call once its time is up. A learner's ``except:`` in a loop may
swallow that, so the alarm repeats, and from the second alarm on it also switches on a
line tracer that raises the exception again on the next line the call runs -- the first
line of the ``except:`` body, so it escapes the handler that swallowed the alarm. (Python
turns a tracer off when it raises; every alarm switches it on again.) Where timers are
impossible (Windows, another thread) the call runs unlimited, and nbgrader's own cell
timeout still applies -- as it does for what a signal cannot interrupt: one endless call
into C code (``list(itertools.count())``), or handlers nested so deep that each swallows
one of the two exceptions an alarm brings.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any, TypeVar

T = TypeVar("T")
_REPEAT = 0.01  # seconds between alarms once the limit has passed


class OutOfTime(BaseException):
    """The learner's call ran past its time limit.

    A ``BaseException``, like ``KeyboardInterrupt``, so ``except Exception`` in the learner's
    code does not catch it. In a notebook it is one line, not a traceback."""

    def _render_traceback_(self) -> list[str]:
        return ["\x1b[1;31mOutOfTime:\x1b[0m your code did not finish in its time limit "
                "(an endless loop?)"]


def can_limit_time() -> bool:
    """Can :func:`call_with_limit` really stop a call here (POSIX timers, main thread)?"""
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


def call_with_limit(fn: Callable[..., T], args: tuple, seconds: float | None) -> T:
    """``fn(*args)``, raising :class:`OutOfTime` once it has run ``seconds`` (wall clock).

    ``None`` (or a platform without timers) means no limit. An outer ``SIGALRM`` handler,
    timer and trace function are put back afterwards."""
    if seconds is None or not can_limit_time():
        return fn(*args)
    alarm = _Alarm()

    def boundary() -> T:  # every frame of the limited call runs below this one
        alarm.boundary = sys._getframe()
        return fn(*args)

    previous = signal.signal(signal.SIGALRM, alarm.on_alarm)
    outer_delay, outer_interval = signal.setitimer(signal.ITIMER_REAL, seconds, _REPEAT)
    tracer = sys.gettrace()
    try:
        return boundary()
    finally:
        alarm.armed = False
        while True:  # an exception still pending from the tracer may fire once, here
            try:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, previous)
                if alarm.tracing:
                    sys.settrace(tracer)
                if outer_delay > 0:  # someone else's timer was running: let it go on
                    signal.setitimer(signal.ITIMER_REAL, outer_delay, outer_interval)
                break
            except OutOfTime:
                continue


class _Alarm:
    """The state of one limited call: armed until it returns."""

    __slots__ = ("armed", "fired", "boundary", "tracing")

    def __init__(self) -> None:
        self.armed = True
        self.fired = 0
        self.boundary: FrameType | None = None
        self.tracing = False

    def on_alarm(self, signum: int, frame: FrameType | None) -> None:
        if not self.armed:
            return
        self.fired += 1
        if self.fired > 1:  # the first one was swallowed
            self.tracing = True
            sys.settrace(self._on_call)
            while frame is not None and frame is not self.boundary:
                frame.f_trace = self._on_line
                frame = frame.f_back
        raise OutOfTime

    def _on_call(self, frame: FrameType, event: str, arg: Any) -> Any:
        return self._on_line if self.armed and self._inside(frame) else None

    def _on_line(self, frame: FrameType, event: str, arg: Any) -> Any:
        # Only on "line": raising on the "exception" event would turn tracing off before
        # the learner's handler runs.
        if self.armed and event == "line":
            raise OutOfTime
        return self._on_line

    def _inside(self, frame: FrameType | None) -> bool:
        """Does ``frame`` run inside the limited call (not in the checker around it)?"""
        while frame is not None:
            if frame is self.boundary:
                return True
            frame = frame.f_back
        return False
