"""Lesson 01 adds quads (three-address code), basic blocks, and Bril text and JSON.

The round-trip representations (``bril``, ``bril-json``) make the printers and readers
part of every differential test: a program must survive them unchanged.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ssa_course.compilation import Compilation
from ssa_course.errors import VerifyError
from ssa_course.lessons.faces import add_quads, cfg_dot, run_quads, verify_quads
from ssa_course.registry import add_representation
from ssa_course.runtime import Limits, Output, Value

if TYPE_CHECKING:  # the faces import their modules when called: a lesson loads cheaply
    from ssa_course.quads.cfg import CFG
    from ssa_course.quads.ir import Program
    from ssa_course.srclines import Lines
    from ssa_course.viz.options import DrawOptions


@dataclass(slots=True)
class ProgramCfgs:
    """The ``cfg`` representation: each function's CFG as built from the quads (unreachable
    blocks kept, so drawings can grey them) and the quads laid out again from CFGs with the
    unreachable blocks removed (what runs)."""

    cfgs: dict[str, CFG]
    program: Program


def cfg_program(comp: Compilation) -> ProgramCfgs:
    from ssa_course.quads import ir
    from ssa_course.quads.cfg import build_cfg, remove_unreachable

    functions = {}
    for name, fn in comp.quads.functions.items():
        cfg = build_cfg(fn)
        remove_unreachable(cfg)
        functions[name] = cfg.to_function()
    cfgs = {name: build_cfg(fn) for name, fn in comp.quads.functions.items()}
    return ProgramCfgs(cfgs, ir.Program(functions, comp.quads.structs))


def _cfg_run(a: ProgramCfgs, args: list[Value], out: Output, limits: Limits) -> int:
    return run_quads(a.program, args, out, limits)


def _cfg_verify(a: ProgramCfgs) -> None:
    """Edges agree both ways (a successor lists its predecessor), then the quads' rules."""
    for name, cfg in a.cfgs.items():
        for block in cfg.blocks.values():
            for succ in block.succs:
                if block.name not in cfg.blocks[succ].preds:
                    raise VerifyError("edges recorded at both ends",
                                      f"@{name}: {block.name} -> {succ}",
                                      f"{succ} does not list {block.name} as a predecessor")
    verify_quads(a.program)


def cfg_text(a: ProgramCfgs) -> str:
    """Each block with its predecessors and successors, then its instructions."""
    from ssa_course.quads.bril import format_instr

    lines: list[str] = []
    for name, cfg in a.cfgs.items():
        lines.append(f"@{name}: entry {cfg.entry}")
        for block in cfg.blocks.values():
            preds = ", ".join(block.preds) or "-"
            succs = ", ".join(block.succs) or "-"
            lines.append(f"  {block.name}:  preds [{preds}]  succs [{succs}]")
            for instr in block.instrs:
                lines.append(f"    {format_instr(instr)}")
        lines.append("")
    return "\n".join(lines)


def _cfg_dot(a: ProgramCfgs, title: str, options: DrawOptions | None = None) -> str:
    from ssa_course.quads.cfg_dot import program_cfg_dot

    return program_cfg_dot(a.cfgs, title=title, options=options)


def _cfg_lines(a: ProgramCfgs) -> Lines:
    from ssa_course.lessons.lines_faces import cfg_lines

    return cfg_lines(a)


def _bril_roundtrip(comp: Compilation) -> Program:
    from ssa_course.quads import bril

    return _same_lines(comp.quads, bril.parse_bril_text(comp.bril_text(), comp.filename,
                                                        typecheck=False))


def _same_lines(original: Program, read: Program) -> Program:
    """The program read back has the lines and the error positions of the program written
    (the source's, not those of the Bril text in between, which the reader would give an
    operation that can fail and has no ``# at``): the same items in the same order."""
    from ssa_course.quads.ir import Instr

    for fn, back in zip(original.functions.values(), read.functions.values(), strict=True):
        for item, again in zip(fn.body, back.body, strict=True):
            again.line = item.line
            if isinstance(item, Instr) and isinstance(again, Instr):
                again.pos = item.pos
    return read


def _json_roundtrip(comp: Compilation) -> Program:
    from ssa_course.quads import bril

    return _same_lines(comp.quads, bril.parse_bril_json(bril.to_bril_json(comp.quads),
                                                        comp.filename, typecheck=False))


def _json_lines(program: Program) -> Lines:
    from ssa_course.lessons.lines_faces import bril_json_lines

    return bril_json_lines(program, _json_text(program))


def _json_text(program: Program) -> str:
    from ssa_course.quads.bril import to_bril_json

    return json.dumps(to_bril_json(program), indent=2, sort_keys=True) + "\n"


add_quads("quads", "three-address code (Bril-compatible quads) as written, run by the quads "
          "interpreter", lambda comp: comp.quads_as_written,
          checks=("source", "phis", "quads"))
add_representation("cfg", "quads split into basic blocks (unreachable ones drawn grey), run "
                   "as laid out again without the unreachable blocks", build=cfg_program,
                   lines=_cfg_lines,
                   run=_cfg_run, verify=_cfg_verify, text=cfg_text, dot=_cfg_dot, face="draw")
add_quads("bril", "quads printed as Bril text and read back", _bril_roundtrip)
add_representation("bril-json", "quads written as Bril JSON and read back",
                   build=_json_roundtrip, run=run_quads, verify=verify_quads, text=_json_text,
                   lines=_json_lines,
                   dot=cfg_dot)
