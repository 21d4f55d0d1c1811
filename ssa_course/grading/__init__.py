"""Checks used by the exercise notebooks' autograder cells.

They compare a learner's function with the course's reference on many programs and, on
a wrong answer, show the *smallest* program where the two differ: the program, the
expected and actual results, and pictures -- not a bare ``AssertionError``. Nothing the
learner writes can crash the checker or pass it by accident: answers are compared as
plain data, each case has a time limit, and a crash is told in one line.
"""

from ssa_course.grading.check import Mismatch, check_against, lesson_programs
from ssa_course.grading.panels import Panels
from ssa_course.grading.plain import NotPlain, plain, shown

__all__ = ["Mismatch", "NotPlain", "Panels", "check_against", "lesson_programs", "plain",
           "shown"]
