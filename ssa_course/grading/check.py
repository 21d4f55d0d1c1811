"""Compare a learner's answer with the reference and explain the first difference.

:func:`check_against` runs both functions on every case, smallest first, and raises
:class:`Mismatch` (an ``AssertionError``) at the first case where they disagree or the
learner's code crashes or runs too long. The message shows the case, what was expected
and what came back; in a notebook it also displays pictures (the input, the expected
answer and the learner's, side by side) when the caller says how to draw them.

Nothing the learner returns is trusted: answers are compared as plain data
(:mod:`ssa_course.grading.plain`), never with their own ``==``, and every step that touches
them runs inside the ``try``.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Generator, Iterable
from typing import Any

from ssa_course.grading.crash import RECURSION, explain_crash, too_deep_for
from ssa_course.grading.panels import Panels
from ssa_course.grading.plain import NotPlain, first_difference, kind_name, plain, shown
from ssa_course.grading.regrade import RemoteFailure
from ssa_course.grading.timelimit import OutOfTime, call_with_limit

DEFAULT_TIME_LIMIT = 10.0  # seconds per case: lesson-size inputs take milliseconds
NOT_ANSWERED = "not implemented yet: replace the stub's `raise` line with your code"


class Mismatch(AssertionError):
    """A wrong answer, with the smallest counterexample in the message.

    In a notebook the message is all that is shown: IPython asks an exception for
    ``_render_traceback_()`` before printing a traceback, and the checker's own frames
    would only hide the explanation."""

    def _render_traceback_(self) -> list[str]:
        lines = str(self).splitlines() or [""]
        return [f"\x1b[1;31mMismatch:\x1b[0m {lines[0]}", *lines[1:]]


DISPLAY_SINK: list | None = None  # a regrade (grading/regrade.py) collects pictures here


def _display(obj: object) -> None:
    if DISPLAY_SINK is not None:
        DISPLAY_SINK.append(obj)
        return
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
    size: Callable[[Any], Any] = lambda case: len(repr(case)),
    draw: Callable[[Any], object] | None = None,
    draw_answer: Callable[[Any, Any], object] | None = None,
    normalise: Callable[[Any], Any] = lambda x: x,
    what: str = "answer",
    time_limit: float | None = DEFAULT_TIME_LIMIT,
    show: Callable[[Any], str] = shown,
) -> None:
    """Check ``student(case)`` against ``reference(case)`` on every case; print a one-line
    verdict, or raise :class:`Mismatch` at the smallest case that differs.

    (It returns nothing on purpose: nbgrader would read a number left as a cell's last
    value as partial credit.)

    ``size`` orders the cases (the first failure reported is the smallest); ``normalise``
    maps both results to a comparable form (e.g. ``sorted``); ``describe`` renders a case
    for the message. On a failure, under IPython, ``draw(case)`` pictures the input and
    ``draw_answer(case, answer)`` pictures an answer: the expected one and the learner's
    are shown side by side (``answer`` is the function's result before ``normalise``).

    The learner's function receives a deep copy of each case and gets ``time_limit``
    seconds per case (``None``: no limit). Results are compared as plain data: an answer of
    the wrong type (``True`` for ``1``, a numpy array for a list) is a wrong answer.
    ``show`` writes a value in a message (exercise 09 writes ``INT_MAX - 1``, not its digits).
    """
    from ssa_course.grading.box import INSIDE_ENV

    if os.environ.get(INSIDE_ENV):  # nbgrader's kernel in the grading sandbox: the regrade
        # (grading/regrade.py) decides
        print(f"{what}: checked outside this kernel, by the autograder's regrade")
        return
    ordered = sorted(cases, key=size)  # stable: equal sizes keep the caller's order
    answers = _answers(student, ordered, describe, draw, time_limit, size)
    try:
        for case in ordered:
            # the learner's answer first: the expected one is computed afterwards, in this
            # process, so it is never in the child that ran the learner's code
            raw_actual = next(answers)
            _compare(case, raw_actual, reference, describe, draw, draw_answer, normalise,
                     what, time_limit, show)
    finally:
        answers.close()  # stops the child at the first wrong case
    print(f"{what}: all {len(ordered)} cases agree with the reference")


def _answers(student: Callable[..., Any], ordered: list, describe: Callable[[Any], str],
             draw: Callable[[Any], object] | None, seconds: float | None,
             size: Callable[[Any], Any] | None = None) -> Generator[object, None, None]:
    """The learner's raw answer to each case in turn; a failure becomes a Mismatch.

    Where it can (:func:`sandbox.can_isolate`), all cases run in one child process, each on
    its own deep copy, and each answer comes back as plain data."""
    from ssa_course.grading import sandbox
    from ssa_course.grading.detach import detach

    if not sandbox.can_isolate() or sandbox.in_child():
        for case in ordered:
            yield _run_student(student, case, describe, draw, seconds, size)
        return
    outcomes = sandbox.stream(lambda case: detach(student(_private_copy(case))), ordered,
                              seconds=seconds)
    try:
        for case, outcome in zip(ordered, outcomes, strict=False):
            if outcome.kind == "value":
                yield outcome.value
                continue
            raise _failure(outcome, case, describe, draw, seconds, size)
    finally:
        outcomes.close()


def _failure(outcome: Any, case: object, describe: Callable[[Any], str],
             draw: Callable[[Any], object] | None, seconds: float | None,
             size: Callable[[Any], Any] | None = None) -> Mismatch:
    """The Mismatch for a case that gave no answer (the same words as in-process)."""
    from ssa_course.grading.sandbox import MEMORY_GB

    if RECURSION in outcome.text:
        _show(case, draw)
        return _too_deep(outcome.text, case, describe, size)
    if outcome.kind in ("refused",) or outcome.category == "mismatch":
        return Mismatch(outcome.text)
    if outcome.category == "notimpl":
        return Mismatch(NOT_ANSWERED)
    _show(case, draw)
    if outcome.kind == "timeout":
        return Mismatch(f"your code did not finish in {seconds:g} s on this input "
                        f"(an endless loop?):\n{describe(case)}")
    if outcome.kind == "memory":
        return Mismatch(f"your code used more than {MEMORY_GB:g} GB of memory on this "
                        f"input:\n{describe(case)}")
    return Mismatch(f"{outcome.text}\non this input:\n{describe(case)}")


def _compare(case: object, raw_actual: object, reference: Callable[[Any], Any],
             describe: Callable[[Any], str], draw: Callable[[Any], object] | None,
             draw_answer: Callable[[Any, Any], object] | None,
             normalise: Callable[[Any], Any], what: str, time_limit: float | None,
             show: Callable[[Any], str]) -> None:
    """Raise a Mismatch unless ``raw_actual`` is the reference's answer to ``case``."""
    raw_expected = reference(case)
    expected = normalise(raw_expected)
    try:
        expected_plain = plain(expected)
    except NotPlain as e:  # a mistake in the exercise itself, not the learner's
        raise TypeError(f"the reference's {what} cannot be compared: {e}") from None
    actual = _normalised(raw_actual, normalise, expected, case, describe, draw, what,
                         time_limit, show)
    try:
        same = plain(actual) == expected_plain
    except NotPlain as e:
        _show(case, draw, draw_answer, raw_expected, raw_actual)
        raise Mismatch("\n".join([
            f"wrong {what} on this input (the smallest one that differs):",
            describe(case), f"expected: {show(expected)}",
            f"     got: {_safe_shown(actual, show)}",
            f"(that is not a value the check can compare: {e})"])) from None
    if same:
        return
    _show(case, draw, draw_answer, raw_expected, raw_actual)
    raise Mismatch(_wrong_message(what, describe(case), expected, actual, show))


_UNSET = object()  # "no answer to draw"


def _run_student(student: Callable[..., Any], case: object, describe: Callable[[Any], str],
                 draw: Callable[[Any], object] | None, seconds: float | None,
                 size: Callable[[Any], Any] | None = None) -> object:
    """The learner's raw result on ``case``; a crash or a time-out becomes a Mismatch."""
    try:
        return call_with_limit(student, (_private_copy(case),), seconds)
    except RemoteFailure as e:  # a regrade: the learner's process said why, in its words
        raise _failure(e.outcome, case, describe, draw, seconds, size) from None
    except Mismatch as e:  # raised by a guard around the answer: its message is for the learner
        if RECURSION in str(e):
            _show(case, draw)
            raise _too_deep(str(e), case, describe, size) from None
        raise
    except NotImplementedError:
        raise Mismatch(NOT_ANSWERED) from None
    except OutOfTime:
        _show(case, draw)
        raise Mismatch(f"your code did not finish in {seconds:g} s on this input "
                       f"(an endless loop?):\n{describe(case)}") from None
    except (Exception, SystemExit) as e:  # the learner's code crashed: say what, where, on what
        _show(case, draw)
        if isinstance(e, RecursionError):
            raise _too_deep(_crash_line(e), case, describe, size) from None
        raise Mismatch(f"{_crash_line(e)}\non this input:\n{describe(case)}") from e


def _too_deep(text: str, case: object, describe: Callable[[Any], str],
              size: Callable[[Any], Any] | None) -> Mismatch:
    """A RecursionError, told with the input it happened on; on a long input (at least
    half the recursion limit) the likely cause is the input's length, not a missing base
    case, and the message says so (and how to walk without recursing)."""
    import sys

    n = size(case) if size is not None else None
    if isinstance(n, int) and n >= sys.getrecursionlimit() // 2:
        text = text.split(": a recursion without a base case")[0] + too_deep_for(n)
    return Mismatch(f"{text}\non this input:\n{describe(case)}")


def _crash_line(error: BaseException) -> str:
    from ssa_course.errors import SsaCourseError

    line = explain_crash(error)
    return f"your code stopped with: {line}" if isinstance(error, SsaCourseError) else line


def _normalised(raw: object, normalise: Callable[[Any], Any], expected: object, case: object,
                describe: Callable[[Any], str], draw: Callable[[Any], object] | None,
                what: str, seconds: float | None, show: Callable[[Any], str] = shown) -> object:
    """``normalise(raw)``; an answer it cannot handle (``sorted`` of an int, an endless
    generator) is wrong."""
    from ssa_course.grading.detach import Foreign

    if isinstance(raw, Foreign):  # what came back from a child was not data
        _show(case, draw)
        raise Mismatch("\n".join([
            f"wrong {what} on this input (the smallest one that differs):",
            describe(case), f"expected: {show(expected)}", f"     got: {raw.text}",
            f"(that is not a value the check can compare: it is {raw.kind}, not plain data "
            "(a number, string, list, set, dict or one of the course's values))"]))
    try:
        return call_with_limit(normalise, (raw,), seconds)
    except OutOfTime:
        raise Mismatch(f"reading your {what} did not finish in {seconds:g} s (an endless "
                       f"generator?) on this input:\n{describe(case)}") from None
    except Exception as e:
        _show(case, draw)
        raise Mismatch(
            f"your {what} has the wrong form: {explain_crash(e).removeprefix('your code ')}"
            f" when the check read it\non this input:\n{describe(case)}\n"
            f"expected: {show(expected)}\n     got: {_safe_shown(raw, show)}") from None


def _safe_shown(value: object, show: Callable[[Any], str] = shown) -> str:
    try:
        return show(value)
    except Exception:  # shown() already guards repr; this is for the truly hostile
        return f"<{type(value).__name__} object>"


def _wrong_message(what: str, case_text: str, expected: object, actual: object,
                   show: Callable[[Any], str] = shown) -> str:
    lines = [f"wrong {what} on this input (the smallest one that differs):", case_text,
             f"expected: {_safe_shown(expected, show)}", f"     got: {_safe_shown(actual, show)}"]
    if type(actual) is not type(expected):
        lines.append(f"(expected {kind_name(expected)}, got {kind_name(actual)})")
    else:
        try:
            where = first_difference(expected, actual, show)
        except Exception:  # a hint only
            where = ""
        if where:
            lines.append(f"first difference: {where}")
    return "\n".join(lines)


def _private_copy(case: object) -> object:
    """The learner's function gets its own copy, so a case it mutates is still shown
    (and drawn) as it was given."""
    try:
        return copy.deepcopy(case)
    except Exception:  # an uncopyable case (a generator, a lock): share it
        return case


def _show(case: object, draw: Callable[[Any], object] | None,
          draw_answer: Callable[[Any, Any], object] | None = None,
          expected: object = _UNSET, actual: object = _UNSET) -> None:
    """Display the pictures of a failing case (under IPython; a drawing that fails is
    left out, the message still explains the failure)."""
    panels = Panels()
    if draw is not None:
        _add(panels, "the input", lambda: draw(case))
    if draw_answer is not None and expected is not _UNSET:
        _add(panels, "expected", lambda: draw_answer(case, expected))
        if actual is not _UNSET:
            _add(panels, "yours", lambda: draw_answer(case, actual))
    if panels.items:
        _display(panels)


def _add(panels: Panels, caption: str, make: Callable[[], object]) -> None:
    try:
        panels.add(caption, call_with_limit(make, (), DEFAULT_TIME_LIMIT))
    except (Exception, OutOfTime) as e:
        panels.add(caption, f"(cannot draw it: {explain_crash(e).removeprefix('your code ')})")


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
