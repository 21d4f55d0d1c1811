"""Compare a learner's answer with the reference and explain the first difference.

:func:`check_against` runs both functions on every case, smallest first, and raises
:class:`Mismatch` (an ``AssertionError``) at the first case where they disagree or the
learner's code crashes. The message shows the case, what was expected and what came back;
in a notebook it also displays a drawing of the case when one is given.
"""

from __future__ import annotations

import copy
import traceback
from collections.abc import Callable, Iterable
from typing import Any


class Mismatch(AssertionError):
    """A wrong answer, with the smallest counterexample in the message."""


def _display(obj: object) -> None:
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:  # outside IPython: the message alone has to do
        return
    if get_ipython() is not None:
        display(obj)


def check_against(
    student: Callable[..., Any],
    reference: Callable[..., Any],
    cases: Iterable[Any],
    *,
    describe: Callable[[Any], str] = repr,
    size: Callable[[Any], int] = lambda case: len(repr(case)),
    draw: Callable[[Any], object] | None = None,
    normalise: Callable[[Any], Any] = lambda x: x,
    what: str = "answer",
) -> None:
    """Check ``student(case) == reference(case)`` on every case; print a one-line verdict.

    (It returns nothing on purpose: nbgrader would read a number left as a cell's last
    value as partial credit.)

    ``size`` orders the cases (the first failure reported is the smallest); ``normalise``
    maps both results to a comparable form (e.g. ``sorted``); ``describe`` renders a case
    for the message; ``draw`` makes a picture of a failing case, displayed when running
    under IPython. The learner's function receives a deep copy of each case.
    """
    ordered = sorted(cases, key=size)  # stable: equal sizes keep the caller's order
    for case in ordered:
        expected = normalise(reference(case))
        try:
            actual = normalise(student(_private_copy(case)))
        except NotImplementedError:
            raise Mismatch("not implemented yet: replace the stub's `raise` line with "
                           "your code") from None
        except Exception as e:  # the learner's code crashed: show where, on what
            tb = traceback.format_exception_only(type(e), e)[-1].strip()
            _show(case, draw)
            raise Mismatch(f"your code raised {tb}\non this input:\n{describe(case)}") from e
        if actual != expected:
            _show(case, draw)
            raise Mismatch(
                f"wrong {what} on this input (the smallest one that differs):\n"
                f"{describe(case)}\n"
                f"expected: {expected!r}\n"
                f"     got: {actual!r}"
            )
    print(f"{what}: all {len(ordered)} cases agree with the reference")


def _private_copy(case: object) -> object:
    """The learner's function gets its own copy, so a case it mutates is still shown
    (and drawn) as it was given."""
    try:
        return copy.deepcopy(case)
    except Exception:  # an uncopyable case (a generator, a lock): share it
        return case


def _show(case: object, draw: Callable[[Any], object] | None) -> None:
    if draw is None:
        return
    try:
        picture = draw(case)
    except Exception:  # a drawing is a bonus; the message still explains the failure
        return
    _display(picture)


def lesson_programs() -> dict[str, str]:
    """Small Tiny programs the exercises check answers on (name -> source)."""
    return dict(_PROGRAMS)


_PROGRAMS = [
    ("straight", "fn main() {\n    var x = 1;\n    print(x + 2);\n}\n"),
    ("if_else", "fn main(n: int) {\n    if (n > 0) { print(1); } else { print(2); }\n"
                "    print(3);\n}\n"),
    ("if_only", "fn main(n: int) {\n    var x = 0;\n    if (n > 0) { x = n; }\n"
                "    print(x);\n}\n"),
    ("while", "fn main(n: int) {\n    var i = 0;\n    while (i < n) { i = i + 1; }\n"
              "    print(i);\n}\n"),
    ("nested", "fn main(n: int) {\n    var s = 0;\n    for (var i = 0; i < n; i = i + 1) {\n"
               "        if (i % 2 == 0) { continue; }\n"
               "        for (var j = 0; j < i; j = j + 1) { s = s + j; }\n    }\n"
               "    print(s);\n}\n"),
    ("short_circuit", "fn main(a: int, b: int) {\n    if (a > 0 && b > 0 || a == b) {"
                      " print(1); }\n}\n"),
    ("dead_after_return", "fn f(x: int) -> int {\n    return x;\n    print(1);\n}\n"
                          "fn main() {\n    print(f(2));\n}\n"),
    ("break_loop", "fn main() {\n    var i = 0;\n    while (true) {\n"
                   "        if (i > 3) { break; }\n        i = i + 1;\n    }\n"
                   "    print(i);\n}\n"),
    ("try_catch", "fn main() {\n    try { throw 1; } catch (e) { print(e); }\n}\n"),
    ("calls", "fn sq(x: int) -> int { return x * x; }\n"
              "fn main() {\n    print(sq(3) + sq(4));\n}\n"),
]
