"""ipywidgets front ends: :func:`explore` shows any representation of a program."""

from ssa_course.widgets.explore import Explorer, explore
from ssa_course.widgets.steps import StepThrough, step_through

__all__ = ["Explorer", "StepThrough", "explore", "step_through"]
