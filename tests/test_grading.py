"""The exercise checks: smallest counterexample first, readable messages, drawings."""

from __future__ import annotations

import pytest

import ssa_course
from ssa_course.grading import Mismatch, check_against, lesson_programs


def _square(n: int) -> int:
    return n * n


def test_all_agree_prints_a_verdict_and_returns_nothing(capsys):
    assert check_against(_square, _square, [3, 1, 2], what="squares") is None
    assert capsys.readouterr().out == "squares: all 3 cases agree with the reference\n"


def test_reports_the_smallest_failing_case_with_expected_and_actual():
    def wrong(n: int) -> int:
        return n * n if n < 10 else 0

    with pytest.raises(Mismatch) as info:
        check_against(wrong, _square, [1000, 10, 12345, 1], describe=lambda n: f"n = {n}")
    message = str(info.value)
    assert "n = 10\n" in message  # not 1000 or 12345: those are larger
    assert "expected: 100" in message and "got: 0" in message
    assert isinstance(info.value, AssertionError)  # nbgrader counts it as a failed test


def test_size_decides_what_smallest_means():
    cases = ["aaaa", "b", "cc"]
    with pytest.raises(Mismatch, match="'aaaa'"):
        check_against(str.upper, str.lower, cases, size=lambda s: -len(s))


def test_normalise_compares_up_to_order():
    check_against(lambda xs: list(reversed(xs)), list, [[1, 2, 3]], normalise=sorted)
    with pytest.raises(Mismatch):
        check_against(lambda xs: list(reversed(xs)), list, [[1, 2, 3]])


def test_a_crash_names_the_exception_and_the_input():
    def crashes(n: int) -> int:
        return n * n + 0 * (10 // (n - 2))

    with pytest.raises(Mismatch) as info:
        check_against(crashes, _square, [5, 2, 3], describe=lambda n: f"<{n}>")
    assert "ZeroDivisionError" in str(info.value) and "<2>" in str(info.value)
    assert isinstance(info.value.__cause__, ZeroDivisionError)


def test_a_stub_says_not_implemented():
    def stub(n: int) -> int:
        raise NotImplementedError()

    with pytest.raises(Mismatch, match="not implemented yet"):
        check_against(stub, _square, [1])


def test_the_learner_cannot_change_the_case_that_is_shown():
    def clears(xs: list[int]) -> int:
        xs.clear()
        return -1

    with pytest.raises(Mismatch) as info:
        check_against(clears, len, [[7, 8, 9]])
    assert "[7, 8, 9]" in str(info.value)


def test_draw_gets_the_failing_case_and_its_errors_are_ignored():
    drawn = []

    def draw(case: int) -> object:
        drawn.append(case)
        raise RuntimeError("no picture today")

    with pytest.raises(Mismatch, match="expected: 4"):
        check_against(lambda n: n, _square, [1, 2, 3], draw=draw)
    assert drawn == [2]


def test_lesson_programs_compile_and_are_a_fresh_copy():
    programs = lesson_programs()
    assert len(programs) >= 5
    for name, source in programs.items():
        assert ssa_course.compile(source).quads.functions, name
    programs.clear()
    assert lesson_programs()


def test_under_ipython_the_drawing_is_displayed(capsys):
    from IPython.core.interactiveshell import InteractiveShell

    class Picture:
        def __repr__(self) -> str:
            return "<a picture of the case>"

    shell = InteractiveShell.instance()
    try:
        with pytest.raises(Mismatch):
            check_against(lambda n: n, _square, [3], draw=lambda case: Picture())
    finally:
        InteractiveShell.clear_instance()
        del shell
    assert "<a picture of the case>" in capsys.readouterr().out
