"""A crash of a learner's code told in one line: what happened and where, in the
learner's words rather than the checker's."""

from __future__ import annotations

import traceback

from ssa_course.errors import SsaCourseError

RECURSION = "(RecursionError)"  # in every message about a recursion too deep


def too_deep_for(size: int) -> str:
    """What to say after "called itself too deeply (RecursionError)" when the input was
    long (``size`` of its items): a right recursive walk needs one Python frame per item on
    its path, and Python stops at its recursion limit, so the cure is a worklist, not a
    base case."""
    import sys

    return (f" on an input of {size:,} items: Python allows about "
            f"{sys.getrecursionlimit():,} nested calls, so a walk that recurses once per "
            "block or node fails on a long input even when it is right. Walk with a worklist "
            "instead: a list of what is still to visit; pop one, push what it leads to that "
            "you have not seen yet")


def explain_crash(error: BaseException) -> str:
    """One line about an exception raised by the learner's code."""
    if isinstance(error, SsaCourseError):  # the course's own message says it all
        return error.render()
    if isinstance(error, RecursionError):
        return ("your code called itself too deeply (RecursionError)"
                f"{_where(error)}: a recursion without a base case, or a walk that "
                "goes round a cycle of the graph without remembering where it has been?")
    if isinstance(error, SystemExit):
        return "your code called exit(): return a value instead"
    if isinstance(error, MemoryError):
        return f"your code ran out of memory (MemoryError){_where(error)}"
    text = traceback.format_exception_only(type(error), error)[-1].strip()
    if len(text) > 500:
        text = text[:500] + " ..."
    return f"your code raised {text}{_where(error)}"


def _where(error: BaseException) -> str:
    """`` (line 7 of your cell, in `leaders`)``: the innermost frame of the learner's code.

    Notebook cells are compiled from files named like ``/tmp/ipykernel_1/123.py`` or
    ``<ipython-input-...>``; frames of installed packages are skipped."""
    frames = [(f.filename, f.lineno or 0, f.name)
              for f in traceback.extract_tb(error.__traceback__)]
    for name, line, function in reversed(frames):
        if "site-packages" in name or "/ssa_course/" in name or name.startswith("<frozen"):
            continue
        if "ipykernel" in name or name.startswith("<ipython-input"):
            return f" (line {line} of its cell, in `{function}`)"
        return f" ({_short(name)}:{line}, in `{function}`)"
    return ""


def _short(path: str) -> str:
    return path.rsplit("/", 1)[-1]
