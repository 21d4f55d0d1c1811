"""Where autograding's time goes (``make bench-grading``): with
``SSA_COURSE_GRADING_TIMES=<file>`` set, the grading processes append one line per
measured step to that file -- ``<what>\\t<seconds>`` -- and the benchmark sums them.

The steps: ``kernel.home`` / ``learner.home`` (copying the submission's directory into a
sandbox's private home), ``kernel.start`` (nbgrader's kernel started in the sandbox, until
it answers), ``kernel.stop`` / ``learner.stop`` (killing a sandboxed process, removing its
home), ``learner.ready`` (a learner's process started until it has run the setup and the
student's cells), ``learner.calls`` (answering the grader's calls) and ``learner.process``
(one per learner's process). Nothing is written when the variable is unset.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator

ENV = "SSA_COURSE_GRADING_TIMES"


def record(what: str, seconds: float) -> None:
    path = os.environ.get(ENV)
    if not path:
        return
    with contextlib.suppress(OSError), open(path, "a", encoding="utf-8") as f:
        f.write(f"{what}\t{seconds:.6f}\n")


@contextlib.contextmanager
def timed(what: str) -> Iterator[None]:
    if not os.environ.get(ENV):
        yield
        return
    start = time.perf_counter()
    try:
        yield
    finally:
        record(what, time.perf_counter() - start)
