"""Checks used by the exercise notebooks' autograder cells.

They compare a learner's function with the course's reference on many programs and, on
a wrong answer, show the *smallest* program where the two differ: the program, the
expected and actual results, and a drawing -- not a bare ``AssertionError``.
"""

from ssa_course.grading.check import Mismatch, check_against, lesson_programs

__all__ = ["Mismatch", "check_against", "lesson_programs"]
