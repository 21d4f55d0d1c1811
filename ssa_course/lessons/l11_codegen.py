"""Lesson 11 brings the scheduled graph to x86-64: instruction selection, register
allocation, a generated runtime, three assemblers that agree byte for byte (GNU ``as``,
keystone, our own), and runs on the machine itself or emulated.

Representations (all built from one compiled program, cached):

* ``asm`` -- the allocated machine code as an Intel-syntax listing, after one line naming
  the assembler that makes its bytes (dot: the machine CFG);
* ``interference`` -- each function's interference graph, coloured by register (text: the
  allocator's report: coalesced copies, spill costs, registers and slots);
* ``disasm`` -- the assembled bytes disassembled by capstone, address by address (any
  machine with capstone: our own assembler makes the bytes where no other is);
* ``native`` -- the executable run as a child process (text: the listing);
* ``emulated`` -- the same machine code run under unicorn (works where x86-64 cannot run).

``asm``, ``interference`` and ``disasm`` run natively (``runs_as="native"``), so the
differential tests run the machine code twice (native, emulated), not five times.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ssa_course.compilation import Compilation
from ssa_course.registry import add_representation, build
from ssa_course.runtime import Limits, Output

if TYPE_CHECKING:
    from ssa_course.codegen.mir import MFunction


def compile_machine(comp: Compilation, allocator: str = "color", fuel: bool = True,
                    frame_arrays: bool = True) -> object:
    """Compile ``comp``'s scheduled program to allocated machine code (not cached);
    ``frame_arrays=False`` keeps every array in the heap (lesson 10 compares the two)."""
    from ssa_course.codegen.compile import compile_parts

    ssa = build(comp, "scheduled").ssa  # type: ignore[attr-defined]
    lines = comp.source.splitlines() if comp.kind == "tiny" else None
    return compile_parts(ssa, lines, allocator=allocator, fuel=fuel,
                         frame_arrays=frame_arrays)


def machine_ir(comp: Compilation) -> dict[str, MFunction]:
    """Each function of ``comp`` as machine IR over virtual registers, before register
    allocation (phis lowered to copies, no fuel checks): what the allocator starts from.
    A fresh copy on every call, so it may be changed freely."""
    from ssa_course.codegen.compile import select_program

    return dict(select_program(build(comp, "scheduled").ssa, None).functions)  # type: ignore[attr-defined]


def _build(comp: Compilation) -> object:
    return compile_machine(comp)


def image_of(compiled: object, limits: Limits | None = None) -> object:
    """The assembled program (runtime included) for one run's limits (cached by source),
    by the assembler chosen for this context (``--assembler``, ``assembler=``)."""
    from ssa_course.codegen.assemble import assemble

    limits = limits or Limits()
    return assemble(compiled.source(limits.steps, limits.depth, limits.cells))  # type: ignore


def _run_native(compiled: object, args: list[object], out: Output, limits: Limits) -> int:
    from ssa_course.codegen import toolchain
    from ssa_course.codegen.native import run_values_native

    toolchain.require(toolchain.native_missing())
    return run_values_native(image_of(compiled, limits), args, out)


def _run_emulated(compiled: object, args: list[object], out: Output, limits: Limits) -> int:
    from ssa_course.codegen import toolchain
    from ssa_course.codegen.emulate import run_values_emulated

    toolchain.require(toolchain.emulator_missing())
    return run_values_emulated(image_of(compiled, limits), args, out)


def _verify(compiled: object) -> None:
    from ssa_course.codegen.verify import verify_program

    verify_program(compiled.mprog, allocated=True, laid_out=True)  # type: ignore[attr-defined]


def _text(compiled: object) -> str:
    return compiled.program_asm  # type: ignore[attr-defined]


def _dot(compiled: object, title: str, options: object = None) -> str:
    from ssa_course.codegen.mir_dot import mprogram_dot

    return mprogram_dot(compiled.mprog)  # type: ignore[attr-defined]


def _stats(compiled: object) -> str:
    from ssa_course.codegen.stats import program_stats

    s = program_stats(compiled)
    return (f"{s['instructions']} instructions, {s['spills']} spilled values, "
            f"{s['copies_removed']} copies coalesced")


def _interference_text(compiled: object) -> str:
    parts = []
    for name, alloc in compiled.allocations.items():  # type: ignore[attr-defined]
        text = alloc.text() if hasattr(alloc, "text") else f"{name}: every value in a slot\n"
        parts.append(text.rstrip("\n"))
    return "\n\n".join(parts) + "\n"


def _interference_dot(compiled: object, title: str, options: object = None) -> str:
    """The interference graph of one function: the options' ``function`` or ``main``."""
    allocations = compiled.allocations  # type: ignore[attr-defined]
    wanted = getattr(options, "function", None) or ("main" if "main" in allocations
                                                   else next(iter(allocations), None))
    if wanted not in allocations:
        from ssa_course.errors import UsageError

        raise UsageError(f"no function '{wanted}' (functions: {', '.join(allocations)})")
    return allocations[wanted].dot()


def _symbols(compiled: object) -> list[str]:
    """The text symbols of the program's own functions (main's body entry included)."""
    from ssa_course.codegen.names import MAIN_BODY, function_symbol

    names = [function_symbol(n) for n in compiled.mprog.functions]  # type: ignore[attr-defined]
    return names + [MAIN_BODY] if "main" in compiled.mprog.functions else names  # type: ignore


def _asm_text(compiled: object) -> str:
    """The listing, after one line saying which assembler makes its bytes and how many."""
    from ssa_course.codegen.assemble import DESCRIPTIONS

    image = image_of(compiled)
    size = sum(image.sizes.get(n, 0) for n in _symbols(compiled))  # type: ignore[attr-defined]
    backend = image.backend  # type: ignore[attr-defined]
    return (f"# assembled by {backend} ({DESCRIPTIONS[backend]}): {size} bytes of machine "
            f"code for these functions\n" + _text(compiled))


def _disasm_text(compiled: object) -> str:
    from ssa_course.codegen import toolchain
    from ssa_course.codegen.disasm import disassemble

    toolchain.require(toolchain.disassembler_missing())
    image = image_of(compiled)
    return disassemble(image, only=[n for n in _symbols(compiled)
                                    if n in image.symbols])  # type: ignore[attr-defined]


def _native_missing() -> str | None:
    from ssa_course.codegen import toolchain

    return toolchain.native_missing()


def _emulator_missing() -> str | None:
    from ssa_course.codegen import toolchain

    return toolchain.emulator_missing()


def _disasm_missing() -> str | None:
    from ssa_course.codegen import toolchain

    return toolchain.browser_missing() or toolchain.disassembler_missing()


def _lines(compiled: object) -> object:
    from ssa_course.lessons.lines_faces import machine_lines

    return machine_lines(compiled, _text(compiled))


def _asm_lines(compiled: object) -> object:
    from ssa_course.lessons.lines_faces import machine_lines

    return machine_lines(compiled, _asm_text(compiled))


def _disasm_lines(compiled: object) -> object:
    from ssa_course.lessons.lines_faces import disasm_lines, machine_node

    return disasm_lines(_text(compiled), _disasm_text(compiled),
                        machine_node(compiled.mprog))  # type: ignore[attr-defined]


add_representation("native", "x86-64 machine code from the scheduled graph, assembled and "
                   "run as a child process (text: the listing)", build=_build,
                   run=_run_native, verify=_verify, text=_text, dot=_dot, stats=_stats,
                   missing=_native_missing, lines=_lines, counts=False)
add_representation("emulated", "the same machine code run under the unicorn emulator "
                   "(works where x86-64 cannot run natively)", build=_build,
                   run=_run_emulated, verify=_verify, text=_text, dot=_dot, stats=_stats,
                   missing=_emulator_missing, lines=_lines, counts=False)
add_representation("asm", "the allocated machine code as an Intel-syntax listing with the "
                   "source lines, after which assembler made its bytes (dot: the machine "
                   "CFG); runs natively", build=_build,
                   run=_run_native, verify=_verify, text=_asm_text, dot=_dot, stats=_stats,
                   missing=_native_missing, runs_as="native", lines=_asm_lines, counts=False)
add_representation("interference", "register allocation: each function's interference "
                   "graph coloured by register (text: coalescing, spill costs, registers)",
                   build=_build, run=_run_native, verify=_verify, text=_interference_text,
                   dot=_interference_dot, stats=_stats, face="draw",
                   missing=_native_missing, runs_as="native", counts=False)
add_representation("disasm", "the assembled bytes disassembled by capstone, address by "
                   "address; runs natively", build=_build, run=_run_native, verify=_verify,
                   text=_disasm_text, dot=_dot, stats=_stats, missing=_disasm_missing,
                   runs_as="native", lines=_disasm_lines, counts=False)
from ssa_course.lessons import l11_aarch64  # noqa: E402, F401  (the second target)
