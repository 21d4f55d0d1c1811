"""Lesson 11's second target: the same programs as AArch64 machine code.

Representations (one compiled program each, built from the ``scheduled`` SSA like the
x86-64 ones in :mod:`ssa_course.lessons.l11_codegen`):

* ``asm-aarch64`` -- the allocated AArch64 listing (dot: the machine CFG);
* ``emulated-aarch64`` -- the bytes run under unicorn's ARM64 CPU (any host);
* ``qemu-aarch64`` -- the executable run as a real process under qemu-user (Linux);
* ``native-aarch64`` -- the executable run directly (aarch64 Linux only);
* ``interference-aarch64`` -- the allocator's graphs and report for this target;
* ``disasm-aarch64`` -- the bytes read back by capstone.

``asm-``, ``interference-`` and ``disasm-aarch64`` run as ``emulated-aarch64``. ``--target
aarch64`` maps ``emulated``/``native``/``asm``/``interference``/``disasm``/``qemu`` onto these
names (:func:`ssa_course.codegen.target.stage_for_target`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ssa_course.compilation import Compilation
from ssa_course.lessons.l08_scheduling import scheduled_ssa_quads

# The faces that read only what both targets compile to (the listing, the allocator's
# record, the statistics, the functions' symbols) are x86-64's (l11_codegen imports this
# module at its end, after defining them).
from ssa_course.lessons.l11_codegen import (
    _interference_dot,
    _interference_text,
    _stats,
    _symbols,
    _text,
    bounded_layout,
)
from ssa_course.registry import Drawer, Runner, add_representation
from ssa_course.runtime import Limits, Output, Value
from ssa_course.srclines import split_lines

if TYPE_CHECKING:  # modules are imported where they are used: a lesson loads cheaply
    from ssa_course.codegen.aarch64.compile import CompiledA64
    from ssa_course.codegen.assemble import Image
    from ssa_course.srclines import Lines
    from ssa_course.viz.options import DrawOptions

ASSEMBLER = "auto"  # the --assembler choice in force, else the first installed (toolchain)


def compile_machine_a64(comp: Compilation, fuel: bool = True, frame_arrays: bool = True
                        ) -> CompiledA64:
    """Compile ``comp``'s scheduled program to allocated AArch64 code (not cached)."""
    from ssa_course.codegen.aarch64.compile import compile_parts

    ssa = scheduled_ssa_quads(comp)
    lines = split_lines(comp.source) if comp.kind == "tiny" else None
    return compile_parts(ssa, lines, fuel=fuel, frame_arrays=frame_arrays)


def image_of_a64(compiled: CompiledA64, limits: Limits | None = None,
                 assembler: str = ASSEMBLER) -> Image:
    """The assembled program (runtime included) for one run's limits (cached by source)."""
    from ssa_course.codegen.aarch64.assemble import assemble

    limits = limits or Limits()
    return assemble(compiled.source(limits.steps, limits.depth, limits.cells), assembler)


def _build(comp: Compilation) -> CompiledA64:
    return compile_machine_a64(comp)


def _run_emulated(compiled: CompiledA64, args: list[Value], out: Output,
                  limits: Limits) -> int:
    from ssa_course.codegen.aarch64 import toolchain
    from ssa_course.codegen.aarch64.emulate import run_values_emulated

    toolchain.require(toolchain.emulator_missing())
    return run_values_emulated(image_of_a64(compiled, limits), args, out,
                               limits.timeout)


def _run_qemu(compiled: CompiledA64, args: list[Value], out: Output, limits: Limits) -> int:
    from ssa_course.codegen.aarch64 import toolchain
    from ssa_course.codegen.aarch64.run import run_values_qemu

    toolchain.require(toolchain.qemu_missing())
    return run_values_qemu(image_of_a64(compiled, limits), args, out, limits.timeout)


def _run_native(compiled: CompiledA64, args: list[Value], out: Output,
                limits: Limits) -> int:
    from ssa_course.codegen.aarch64 import toolchain
    from ssa_course.codegen.aarch64.run import run_values_native_a64

    toolchain.require(toolchain.native_missing())
    return run_values_native_a64(image_of_a64(compiled, limits), args, out,
                                 limits.timeout)


def _verify(compiled: CompiledA64) -> None:
    from ssa_course.codegen.aarch64.verify import verify_program

    verify_program(compiled.mprog)


def _dot(compiled: CompiledA64, title: str, options: DrawOptions | None = None) -> str:
    from ssa_course.codegen.aarch64.emit import instr_text
    from ssa_course.codegen.mir_dot import mprogram_dot

    return bounded_layout(mprogram_dot(compiled.mprog, instr_text), options)


def _disasm_text(compiled: CompiledA64) -> str:
    from ssa_course.codegen.aarch64 import toolchain
    from ssa_course.codegen.aarch64.disasm import disassemble

    toolchain.require(toolchain.disassembler_missing())
    image = image_of_a64(compiled)
    # every function's symbol and main's body entry (the same names as x86-64's listing)
    return disassemble(image, only=[n for n in _symbols(compiled) if n in image.symbols])


def _disasm_lines(compiled: CompiledA64) -> Lines:
    from ssa_course.lessons.lines_faces import disasm_lines, machine_node

    return disasm_lines(_text(compiled), _disasm_text(compiled), machine_node(compiled.mprog))


def _emulator_missing() -> str | None:
    from ssa_course.codegen.aarch64 import toolchain

    return toolchain.emulator_missing()


def _qemu_missing() -> str | None:
    from ssa_course.codegen.aarch64 import toolchain

    return toolchain.qemu_missing()


def _native_missing() -> str | None:
    from ssa_course.codegen.aarch64 import toolchain

    return toolchain.native_missing()


def _disassembler_missing() -> str | None:
    from ssa_course.codegen.aarch64 import toolchain

    return toolchain.disassembler_missing()


def _add(name: str, description: str, run: Runner[CompiledA64],
         missing: Callable[[], str | None], *,
         runs_as: str | None = None, face: str = "text",
         text: Callable[[CompiledA64], str] = _text, dot: Drawer[CompiledA64] = _dot,
         lines: Callable[[CompiledA64], Lines] | None = None) -> None:
    """One AArch64 representation: the compiled program's faces, ``run`` by one executor
    (machine code is not counted instruction by instruction: run --profile says so)."""
    add_representation(name, description, build=_build, run=run, verify=_verify, text=text,
                       dot=dot, stats=_stats, counts=False, missing=missing,
                       runs_as=runs_as, face=face, lines=lines)


_add("asm-aarch64", "the allocated AArch64 machine code as a GNU-syntax listing with the "
     "source lines (dot: the machine CFG); runs emulated", _run_emulated, _emulator_missing,
     runs_as="emulated-aarch64")
_add("emulated-aarch64", "the AArch64 machine code run under unicorn's ARM64 CPU (any host)",
     _run_emulated, _emulator_missing)
_add("qemu-aarch64", "the AArch64 executable run as a real process under qemu-user (Linux)",
     _run_qemu, _qemu_missing)
_add("native-aarch64", "the AArch64 executable run directly (aarch64 Linux)", _run_native,
     _native_missing)
_add("interference-aarch64", "register allocation for AArch64: the same allocator over 24 "
     "registers (text: coalescing, spill costs, registers)", _run_emulated,
     _emulator_missing, runs_as="emulated-aarch64", face="draw", text=_interference_text,
     dot=_interference_dot)
_add("disasm-aarch64", "the assembled AArch64 bytes disassembled by capstone; runs emulated",
     _run_emulated, _disassembler_missing, runs_as="emulated-aarch64", text=_disasm_text,
     lines=_disasm_lines)
