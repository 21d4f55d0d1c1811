"""Lesson 00 adds the checked Tiny syntax tree, run by the reference interpreter."""

from __future__ import annotations

from ssa_course.compilation import Compilation
from ssa_course.registry import add_representation
from ssa_course.runtime import Limits, Output


def _build(comp: Compilation) -> object:
    return comp.ast


def _run(program: object, args: list[object], out: Output, limits: Limits) -> int:
    from ssa_course.tiny.interp import run_ast

    return run_ast(program, args, out, limits)  # type: ignore[arg-type]


def _verify(program: object) -> None:
    from ssa_course.tiny.verify import verify_ast

    verify_ast(program)  # type: ignore[arg-type]


def _text(program: object) -> str:
    from ssa_course.tiny.printer import format_ast

    return format_ast(program)  # type: ignore[arg-type]


def _dot(program: object, title: str, options: object = None) -> str:
    from ssa_course.tiny.astdot import ast_to_dot

    return ast_to_dot(program, options)  # type: ignore[arg-type]


add_representation("ast", "the checked Tiny syntax tree, run by the tree-walking reference "
                   "interpreter", build=_build, run=_run, verify=_verify, text=_text,
                   dot=_dot, tiny_only=True)
