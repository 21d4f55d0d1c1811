"""Lesson 01 adds quads (three-address code), basic blocks, and Bril text and JSON.

The round-trip representations (``bril``, ``bril-json``) make the printers and readers
part of every differential test: a program must survive them unchanged.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ssa_course.compilation import Compilation
from ssa_course.errors import VerifyError
from ssa_course.lessons.faces import add_quads, cfg_dot, run_quads, verify_quads
from ssa_course.registry import add_representation
from ssa_course.runtime import Limits, Output


@dataclass(slots=True)
class ProgramCfgs:
    """The ``cfg`` representation: each function's CFG as built from the quads (unreachable
    blocks kept, so drawings can grey them) and the quads laid out again from CFGs with the
    unreachable blocks removed (what runs)."""

    cfgs: dict
    program: object


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


def _cfg_run(a: object, args: list[object], out: Output, limits: Limits) -> int:
    return run_quads(a.program, args, out, limits)  # type: ignore[attr-defined]


def _cfg_verify(a: object) -> None:
    """Edges agree both ways (a successor lists its predecessor), then the quads' rules."""
    for name, cfg in a.cfgs.items():  # type: ignore[attr-defined]
        for block in cfg.blocks.values():
            for succ in block.succs:
                if block.name not in cfg.blocks[succ].preds:
                    raise VerifyError("edges recorded at both ends",
                                      f"@{name}: {block.name} -> {succ}",
                                      f"{succ} does not list {block.name} as a predecessor")
    verify_quads(a.program)  # type: ignore[attr-defined]


def cfg_text(a: object) -> str:
    """Each block with its predecessors and successors, then its instructions."""
    from ssa_course.quads.bril import format_instr

    lines: list[str] = []
    for name, cfg in a.cfgs.items():  # type: ignore[attr-defined]
        lines.append(f"@{name}: entry {cfg.entry}")
        for block in cfg.blocks.values():
            preds = ", ".join(block.preds) or "-"
            succs = ", ".join(block.succs) or "-"
            lines.append(f"  {block.name}:  preds [{preds}]  succs [{succs}]")
            for instr in block.instrs:
                lines.append(f"    {format_instr(instr)}")
        lines.append("")
    return "\n".join(lines)


def _cfg_dot(a: object, title: str, options: object = None) -> str:
    from ssa_course.quads.cfg_dot import program_cfg_dot

    return program_cfg_dot(a.cfgs, title=title, options=options)  # type: ignore


def _cfg_lines(a: object) -> object:
    from ssa_course.lessons.lines_faces import cfg_lines

    return cfg_lines(a)


def _bril_roundtrip(comp: Compilation) -> object:
    from ssa_course.quads import bril

    return _same_lines(comp.quads, bril.parse_bril_text(bril.to_bril_text(comp.quads),
                                                        comp.filename, typecheck=False))


def _same_lines(original: object, read: object) -> object:
    """The program read back has the lines of the program written (the source's, not
    those of the Bril text in between): the same items in the same order."""
    for fn, back in zip(original.functions.values(), read.functions.values(),  # type: ignore
                        strict=True):
        for item, again in zip(fn.body, back.body, strict=True):
            again.line = item.line
    return read


def _json_roundtrip(comp: Compilation) -> object:
    from ssa_course.quads import bril

    return _same_lines(comp.quads, bril.parse_bril_json(bril.to_bril_json(comp.quads),
                                                        comp.filename, typecheck=False))


def _json_lines(program: object) -> object:
    from ssa_course.lessons.lines_faces import bril_json_lines

    return bril_json_lines(program, _json_text(program))


def _json_text(program: object) -> str:
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
