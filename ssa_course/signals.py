"""SIGTERM and SIGHUP as an exception, so a stopped run cleans up after itself.

Python's default for SIGTERM/SIGHUP is to die on the spot: no ``finally`` runs, so a native
child process would keep running under PID 1 and the private directory of assembled
programs (removed at exit) would stay behind (issue 19). Inside :func:`raising_on_termination`
either signal raises :class:`Terminated` instead; the code that started a child kills it in
its ``finally``, and the CLI exits with status 128 + the signal number, as a shell reports a
death by that signal.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator

SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class Terminated(BaseException):
    """The process was asked to stop (SIGTERM or SIGHUP)."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _raise(signum: int, _frame: object) -> None:
    raise Terminated(signum)


@contextlib.contextmanager
def raising_on_termination(redeliver: bool = False) -> Iterator[None]:
    """Within the block SIGTERM/SIGHUP raise :class:`Terminated`; outside it nothing changes.

    Only a signal still at its default action is taken over (an application with its own
    handler keeps it), and only in the main thread (the only one Python delivers signals
    to). With ``redeliver`` a :class:`Terminated` that leaves the block -- after the
    ``finally`` clauses inside it have run -- is turned back into the signal at its default
    action, so a library caller (a notebook kernel, a grader) still dies of it as it would
    have; without, the caller handles it (the CLI: exit status 128 + the signal)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = {}
    for signum in SIGNALS:
        if signal.getsignal(signum) is signal.SIG_DFL:
            saved[signum] = signal.signal(signum, _raise)
    try:
        yield
    except Terminated as e:
        if redeliver and e.signum in saved:
            _restore(saved)
            os.kill(os.getpid(), e.signum)  # the default action: the process ends here
        raise
    finally:
        _restore(saved)


def _restore(saved: dict) -> None:
    for signum, handler in saved.items():
        signal.signal(signum, handler)
    saved.clear()
