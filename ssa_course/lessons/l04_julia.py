"""Lesson 04 adds Julia's flat SSA IR (IRCode): statements in one array, PiNodes, and
Upsilon/PhiC for exceptions; compacted and verified when built."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ssa_course.compilation import Compilation, compile_source
from ssa_course.registry import add_representation
from ssa_course.runtime import Limits, Output, Value

if TYPE_CHECKING:  # the faces import their modules when called: a lesson loads cheaply
    from ssa_course.quads.ir import Program
    from ssa_course.srclines import Lines
    from ssa_course.ssa.ircode import IRProgram
    from ssa_course.ssa.julia import TypedCode
    from ssa_course.viz.options import DrawOptions


def ircode_of(quads: Program) -> IRProgram:
    """Every function of a quads program as compacted IRCode (an ``IRProgram``)."""
    from ssa_course.ssa.julia import program_ircode

    return program_ircode(quads)


def run_ir(program: IRProgram, args: list[Value], out: Output, limits: Limits) -> int:
    from ssa_course.ssa.irinterp import run_ircode

    return run_ircode(program, args, out, limits)


def verify_ir(program: IRProgram) -> None:
    from ssa_course.ssa.irverify import verify_ir as verify

    for ir in program.values():
        verify(ir)


def ir_text(program: IRProgram) -> str:
    from ssa_course.ssa.julia import format_ir

    return "\n".join(format_ir(ir) for ir in program.values())


def ir_lines(program: IRProgram) -> Lines:
    from ssa_course.lessons.lines_faces import ir_lines as lines

    return lines(program)


def ir_dot(program: IRProgram, title: str, options: DrawOptions | None = None) -> str:
    from ssa_course.ssa.julia import program_ir_dot

    return program_ir_dot(program, title, options)


def code_typed(source: str | Compilation, fn: str = "main") -> TypedCode:
    """The IRCode of function ``fn`` of a Tiny (or Bril) program, like Julia's
    ``@code_typed``: prints like Julia's, ``.draw()`` draws its blocks."""
    from ssa_course.ssa.julia import TypedCode, build_ircode

    comp = source if isinstance(source, Compilation) else compile_source(source)
    return TypedCode(build_ircode(comp.quads.functions[fn]))


def _build(comp: Compilation) -> IRProgram:
    return ircode_of(comp.quads)


add_representation("julia", "Julia-style IRCode (flat statements, PiNodes, Upsilon/PhiC), "
                   "compacted", build=_build, run=run_ir, verify=verify_ir, text=ir_text,
                   dot=ir_dot, lines=ir_lines)
