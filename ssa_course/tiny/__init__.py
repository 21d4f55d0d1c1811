"""Tiny, the course's source language: lexer, parser, checker, reference interpreter.

>>> from ssa_course.tiny import compile_tiny
>>> prog = compile_tiny("fn main() { print(1); }")
"""

from __future__ import annotations

from ssa_course.runtime import deep_recursion, paused_gc
from ssa_course.tiny.ast import Program
from ssa_course.tiny.check import check
from ssa_course.tiny.parser import parse

__all__ = ["check", "compile_tiny", "parse"]


def compile_tiny(source: str, filename: str = "<input>") -> Program:
    """Parse and check a Tiny program; raises :class:`~ssa_course.errors.SourceError`."""
    with deep_recursion(), paused_gc():
        return check(parse(source, filename))
