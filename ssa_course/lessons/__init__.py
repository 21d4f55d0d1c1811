"""The course's table of contents: one entry per lesson, in order.

Each entry names the lesson's notebook and the module that registers what the lesson adds
to the engine -- its representations (with their four faces) and its passes -- in the one
registry (:mod:`ssa_course.registry`). The order here is the order everything is listed in
(``ssa-course stages``, the explorer's menu, the differential tests). A new lesson is one
new entry and one new module.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Lesson:
    number: str
    title: str
    notebook: str
    module: str  # registers the lesson's representations and passes when imported


LESSONS: tuple[Lesson, ...] = (
    Lesson("00", "A tour: Tiny and its syntax tree", "00-tour.ipynb", "l00_tour"),
    Lesson("01", "Quads and control-flow graphs", "01-quads.ipynb", "l01_quads"),
    Lesson("02", "Peepholes and local value numbering", "02-peepholes.ipynb",
           "l02_peepholes"),
    Lesson("03", "Static single assignment", "03-ssa.ipynb", "l03_ssa"),
    Lesson("04", "Julia's flat SSA IR", "04-julia-ir.ipynb", "l04_julia"),
    Lesson("05", "Control as data: the sea of nodes", "05-control-as-data.ipynb",
           "l05_control"),
    Lesson("06", "Types and pessimistic peepholes", "06-types-and-peepholes.ipynb",
           "l06_peepholes"),
    Lesson("07", "Optimistic analysis: SCCP", "07-optimistic.ipynb", "l07_optimistic"),
    Lesson("08", "Scheduling: global code motion", "08-scheduling.ipynb", "l08_scheduling"),
    Lesson("09", "Facts along edges: ranges and bounds checks", "09-ranges.ipynb",
           "l09_ranges"),
    Lesson("11", "Codegen: x86-64 machine code", "11-codegen.ipynb", "l11_codegen"),
)


def load_all() -> None:
    """Import every lesson's module in order (each registers its additions once)."""
    from ssa_course.registry import set_lesson

    for lesson in LESSONS:
        set_lesson(lesson.number)
        importlib.import_module(f"{__name__}.{lesson.module}")
    set_lesson("?")


# Importing any lesson's module (``from ssa_course.lessons.l07_optimistic import ...``)
# runs this package first, which loads every lesson in order: the registry's order and
# lesson numbers never depend on which module a notebook happened to import first.
load_all()
