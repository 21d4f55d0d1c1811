"""The call watch behind a guarded answer: advice in a learner's own kernel, not a guard.

While a guarded answer runs (:func:`ssa_course.grading.forbid.guard`), a profile function
(``sys.setprofile``, and ``threading.setprofile`` for a thread the answer starts) sees
every Python function it enters. If one belongs to the course's own version of the task,
the call fails with :class:`Forbidden` -- "your leaders calls ssa_course's own
find_leaders (ssa_course.quads.cfg); write it yourself" -- so the learner hears early
what grading would say. The same watch notes which required functions were entered
(exercise 04 asks for ``insert_node`` and ``compact``).

Nothing here is a boundary: an answer can switch the watch off or copy the engine's
code, and its own kernel's checks pass. No grade depends on it: at grading time the
sandbox's copy of the package does not hold the withheld functions (docs/grading.md).
"""

from __future__ import annotations

import sys
import threading
import types
from collections.abc import Callable
from typing import Any

from ssa_course.grading.check import Mismatch


class Forbidden(Mismatch):
    """The answer used code the task asks the learner to write (or skipped required code)."""


def short(name: str) -> str:
    """``ssa_course.quads.cfg.find_leaders`` -> ``find_leaders (ssa_course.quads.cfg)``."""
    parts = name.split(".")
    cut = len(parts) - (2 if len(parts) >= 2 and parts[-2][:1].isupper() else 1)
    module, last = ".".join(parts[:cut]), ".".join(parts[cut:])  # Class.method together
    return f"{last} ({module})" if module else last


def advice(label: str, name: str, how: str) -> str:
    """The message for an answer that called the forbidden ``name``."""
    if name.startswith("ssa_course"):
        return f"your {label} calls ssa_course's own {short(name)}; {how}"
    return f"your {label} calls the library {name}, which does the task for you; {how}"


def watched(fn: Callable[..., Any], args: tuple, kwargs: dict,
            verdict: Callable[[types.CodeType], str | None],
            required: dict[types.CodeType, str], label: str, how: str) -> Any:
    """``fn(*args, **kwargs)``, watched: :class:`Forbidden` if it entered code for which
    ``verdict`` names something forbidden (even if it then failed), or if it returned
    without entering each code object of ``required`` (code -> the name to show)."""
    hits: list[str] = []
    seen: set[str] = set()

    def hook(frame: types.FrameType, event: str, arg: object) -> None:
        if event != "call":
            return
        code = frame.f_code
        if code in required:
            seen.add(required[code])
        if not hits:
            found = verdict(code)
            if found is not None:
                hits.append(found)

    previous, previous_threads = sys.getprofile(), threading.getprofile()
    threading.setprofile(hook)
    sys.setprofile(hook)
    try:
        result = fn(*args, **kwargs)
    except Exception as e:
        if hits:  # a forbidden call that then failed is still told as the forbidden call
            raise Forbidden(advice(label, hits[0], how)) from e
        raise
    finally:
        sys.setprofile(previous)
        threading.setprofile(previous_threads)
    if hits:
        raise Forbidden(advice(label, hits[0], how))
    missing = sorted(set(required.values()) - seen)
    if missing:
        raise Forbidden(f"your {label} never calls {', '.join(map(short, missing))}: "
                        "the task asks you to use it")
    return result
