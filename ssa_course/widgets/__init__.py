"""ipywidgets front ends: :func:`explore` shows any representation of a program."""

from ssa_course.widgets.explore import Explorer, explore

__all__ = ["Explorer", "explore"]
