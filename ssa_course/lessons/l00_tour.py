"""Lesson 00 adds the checked Tiny syntax tree, run by the reference interpreter."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ssa_course.compilation import Compilation
from ssa_course.registry import add_representation
from ssa_course.runtime import Limits, Output, Value

if TYPE_CHECKING:  # the faces import their modules when called: a lesson loads cheaply
    from ssa_course.tiny.ast import Program
    from ssa_course.viz.options import DrawOptions


def _build(comp: Compilation) -> Program:
    return comp.ast


def _run(program: Program, args: list[Value], out: Output, limits: Limits) -> int:
    from ssa_course.tiny.interp import run_ast

    return run_ast(program, args, out, limits)


def _verify(program: Program) -> None:
    from ssa_course.tiny.verify import verify_ast

    verify_ast(program)


def _text(program: Program) -> str:
    from ssa_course.tiny.printer import format_ast

    return format_ast(program)


def _dot(program: Program, title: str, options: DrawOptions | None = None) -> str:
    from ssa_course.tiny.astdot import ast_to_dot

    return ast_to_dot(program, options)


add_representation("ast", "the checked Tiny syntax tree, run by the tree-walking reference "
                   "interpreter", build=_build, run=_run, verify=_verify, text=_text,
                   dot=_dot, tiny_only=True)
