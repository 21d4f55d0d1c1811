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

from ssa_course.compilation import Compilation
from ssa_course.registry import add_representation, build
from ssa_course.runtime import Limits, Output

ASSEMBLER = "auto"  # the --assembler choice in force, else the first installed (toolchain)


def compile_machine_a64(comp: Compilation, fuel: bool = True, frame_arrays: bool = True
                        ) -> object:
    """Compile ``comp``'s scheduled program to allocated AArch64 code (not cached)."""
    from ssa_course.codegen.aarch64.compile import compile_parts

    ssa = build(comp, "scheduled").ssa  # type: ignore[attr-defined]
    lines = comp.source.splitlines() if comp.kind == "tiny" else None
    return compile_parts(ssa, lines, fuel=fuel, frame_arrays=frame_arrays)


def image_of_a64(compiled: object, limits: Limits | None = None, assembler: str = ASSEMBLER
                 ) -> object:
    """The assembled program (runtime included) for one run's limits (cached by source)."""
    from ssa_course.codegen.aarch64.assemble import assemble

    limits = limits or Limits()
    return assemble(compiled.source(limits.steps, limits.depth, limits.cells),  # type: ignore
                    assembler)


def _build(comp: Compilation) -> object:
    return compile_machine_a64(comp)


def _run_emulated(compiled: object, args: list[object], out: Output, limits: Limits) -> int:
    from ssa_course.codegen.aarch64 import toolchain
    from ssa_course.codegen.aarch64.emulate import run_values_emulated

    toolchain.require(toolchain.emulator_missing())
    return run_values_emulated(image_of_a64(compiled, limits), args, out)


def _run_qemu(compiled: object, args: list[object], out: Output, limits: Limits) -> int:
    from ssa_course.codegen.aarch64 import toolchain
    from ssa_course.codegen.aarch64.run import run_values_qemu

    toolchain.require(toolchain.qemu_missing())
    return run_values_qemu(image_of_a64(compiled, limits), args, out)


def _run_native(compiled: object, args: list[object], out: Output, limits: Limits) -> int:
    from ssa_course.codegen.aarch64 import toolchain
    from ssa_course.codegen.aarch64.run import run_values_native_a64

    toolchain.require(toolchain.native_missing())
    return run_values_native_a64(image_of_a64(compiled, limits), args, out)


def _verify(compiled: object) -> None:
    from ssa_course.codegen.aarch64.verify import verify_program

    verify_program(compiled.mprog)  # type: ignore[attr-defined]


def _text(compiled: object) -> str:
    return compiled.program_asm  # type: ignore[attr-defined]


def _dot(compiled: object, title: str, options: object = None) -> str:
    from ssa_course.codegen.aarch64.emit import instr_text
    from ssa_course.codegen.mir_dot import mprogram_dot

    return mprogram_dot(compiled.mprog, instr_text)  # type: ignore[attr-defined]


def _stats(compiled: object) -> str:
    from ssa_course.codegen.stats import program_stats

    s = program_stats(compiled)
    return (f"{s['instructions']} instructions, {s['spills']} spilled values, "
            f"{s['copies_removed']} copies coalesced")


def _interference_text(compiled: object) -> str:
    from ssa_course.lessons.l11_codegen import _interference_text as text

    return text(compiled)


def _interference_dot(compiled: object, title: str, options: object = None) -> str:
    from ssa_course.lessons.l11_codegen import _interference_dot as dot

    return dot(compiled, title, options)


def _disasm_text(compiled: object) -> str:
    from ssa_course.codegen.aarch64 import toolchain
    from ssa_course.codegen.aarch64.disasm import disassemble

    toolchain.require(toolchain.disassembler_missing())
    from ssa_course.lessons.l11_codegen import _symbols

    image = image_of_a64(compiled)
    # every function's symbol and main's body entry (the same names as x86-64's listing)
    return disassemble(image, only=[n for n in _symbols(compiled)
                                    if n in image.symbols])  # type: ignore[attr-defined]


def _disasm_lines(compiled: object) -> object:
    from ssa_course.lessons.lines_faces import disasm_lines, machine_node

    return disasm_lines(_text(compiled), _disasm_text(compiled),
                        machine_node(compiled.mprog))  # type: ignore[attr-defined]


def _missing(name: str):
    def missing() -> str | None:
        from ssa_course.codegen.aarch64 import toolchain

        return getattr(toolchain, name)()
    return missing


# machine code is not counted instruction by instruction (run --profile says so)
_FACES = {"build": _build, "verify": _verify, "text": _text, "dot": _dot, "stats": _stats,
          "counts": False}
add_representation("asm-aarch64", "the allocated AArch64 machine code as a GNU-syntax "
                   "listing with the source lines (dot: the machine CFG); runs emulated",
                   run=_run_emulated, missing=_missing("emulator_missing"),
                   runs_as="emulated-aarch64", **_FACES)
add_representation("emulated-aarch64", "the AArch64 machine code run under unicorn's ARM64 "
                   "CPU (any host)", run=_run_emulated, missing=_missing("emulator_missing"),
                   **_FACES)
add_representation("qemu-aarch64", "the AArch64 executable run as a real process under "
                   "qemu-user (Linux)", run=_run_qemu, missing=_missing("qemu_missing"),
                   **_FACES)
add_representation("native-aarch64", "the AArch64 executable run directly (aarch64 Linux)",
                   run=_run_native, missing=_missing("native_missing"), **_FACES)
add_representation("interference-aarch64", "register allocation for AArch64: the same "
                   "allocator over 24 registers (text: coalescing, spill costs, registers)",
                   run=_run_emulated, missing=_missing("emulator_missing"),
                   runs_as="emulated-aarch64", face="draw",
                   **{**_FACES, "text": _interference_text, "dot": _interference_dot})
add_representation("disasm-aarch64", "the assembled AArch64 bytes disassembled by capstone; "
                   "runs emulated", run=_run_emulated, missing=_missing("disassembler_missing"),
                   runs_as="emulated-aarch64",
                   **{**_FACES, "text": _disasm_text, "lines": _disasm_lines})
