"""Tiny, the course's source language: lexer, parser, checker, reference interpreter.

>>> from ssa_course.tiny import compile_tiny
>>> prog = compile_tiny("fn main() { print(1); }")
>>> prog.functions["main"].body.stmts[0].args[0].ty
IntType()

* :func:`tokenize` -- source text to :class:`Token` s (:mod:`.lexer`);
* :func:`parse` -- tokens to the syntax tree of :mod:`.ast` (:mod:`.parser`);
* :func:`check` -- names resolved, types computed, the tree annotated (:mod:`.check`);
* :func:`compile_tiny` -- all three; every mistake in the text is a located
  :class:`~ssa_course.errors.SourceError`.
"""

from __future__ import annotations

from ssa_course.runtime import deep_recursion, paused_gc
from ssa_course.tiny.ast import Program
from ssa_course.tiny.check import check
from ssa_course.tiny.lexer import Token, tokenize
from ssa_course.tiny.parser import parse

__all__ = ["Token", "check", "compile_tiny", "parse", "tokenize"]


def compile_tiny(source: str, filename: str = "<input>") -> Program:
    """Parse and check a Tiny program; raises :class:`~ssa_course.errors.SourceError`."""
    with deep_recursion(), paused_gc():
        return check(parse(source, filename))
