"""The course's table of contents: one entry per lesson, in order.

Each entry names the lesson's notebook; :func:`load_all` imports, in the same order, the
module that registers what the lesson adds to the engine -- its representations (with
their four faces) and its passes -- in the one registry (:mod:`ssa_course.registry`).
The order here is the order everything is listed in (``ssa-course stages``, the
explorer's menu, the differential tests). A new lesson is one new entry, one new module
and its import in :func:`load_all`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Lesson:
    number: str
    title: str
    notebook: str


LESSONS: tuple[Lesson, ...] = (
    Lesson("00", "A tour: Tiny and its syntax tree", "00-tour.ipynb"),
    Lesson("01", "Quads and control-flow graphs", "01-quads.ipynb"),
    Lesson("02", "Peepholes and local value numbering", "02-peepholes.ipynb"),
    Lesson("03", "Static single assignment", "03-ssa.ipynb"),
    Lesson("04", "Julia's flat SSA IR", "04-julia-ir.ipynb"),
    Lesson("05", "Control as data: the sea of nodes", "05-control-as-data.ipynb"),
    Lesson("06", "Types and pessimistic peepholes", "06-types-and-peepholes.ipynb"),
    Lesson("07", "Optimistic analysis: SCCP", "07-optimistic.ipynb"),
    Lesson("08", "Scheduling: global code motion", "08-scheduling.ipynb"),
    Lesson("09", "Facts along edges: ranges and bounds checks", "09-ranges.ipynb"),
    Lesson("10", "Escape analysis", "10-escape.ipynb"),
    Lesson("11", "Codegen: x86-64 machine code", "11-codegen.ipynb"),
    Lesson("12", "All of Bril: memory and floats", "12-all-of-bril.ipynb"),
)


def load_all() -> None:
    """Import every lesson's module in order; each registers what its lesson adds under
    the number set just before its import (imports, not module names in strings: a
    renamed module is an error that ruff and mypy see)."""
    from ssa_course.registry import set_lesson

    loaded: list[str] = []

    def lesson(number: str) -> None:
        loaded.append(number)
        set_lesson(number)

    lesson("00")
    from ssa_course.lessons import l00_tour  # noqa: F401
    lesson("01")
    from ssa_course.lessons import l01_quads  # noqa: F401
    lesson("02")
    from ssa_course.lessons import l02_peepholes  # noqa: F401
    lesson("03")
    from ssa_course.lessons import l03_ssa  # noqa: F401
    lesson("04")
    from ssa_course.lessons import l04_julia  # noqa: F401
    lesson("05")
    from ssa_course.lessons import l05_control  # noqa: F401
    lesson("06")
    from ssa_course.lessons import l06_peepholes  # noqa: F401
    lesson("07")
    from ssa_course.lessons import l07_optimistic  # noqa: F401
    lesson("08")
    from ssa_course.lessons import l08_scheduling  # noqa: F401
    lesson("09")
    from ssa_course.lessons import l09_ranges  # noqa: F401
    lesson("10")
    from ssa_course.lessons import l10_escape  # noqa: F401
    lesson("11")
    from ssa_course.lessons import l11_codegen  # noqa: F401
    lesson("12")  # adds no representation: Bril's memory and floats run in those above
    set_lesson("?")
    assert loaded == [entry.number for entry in LESSONS], "one import per entry of LESSONS"


# Importing any lesson's module (``from ssa_course.lessons.l07_optimistic import ...``)
# runs this package first, which loads every lesson in order: the registry's order and
# lesson numbers never depend on which module a notebook happened to import first.
load_all()
