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

import re
from typing import TYPE_CHECKING, TypeAlias

from ssa_course.compilation import Compilation
from ssa_course.lessons.l08_scheduling import scheduled_ssa_quads
from ssa_course.registry import add_representation
from ssa_course.runtime import Limits, Output, Value
from ssa_course.srclines import split_lines

if TYPE_CHECKING:  # modules are imported where they are used: a lesson loads cheaply
    from ssa_course.codegen.aarch64.compile import CompiledA64
    from ssa_course.codegen.assemble import Image
    from ssa_course.codegen.compile import CompiledProgram
    from ssa_course.codegen.mir import MFunction
    from ssa_course.srclines import Lines
    from ssa_course.viz.options import DrawOptions

# what either target compiles a program to (lesson 11's AArch64 faces share some of these)
Compiled: TypeAlias = "CompiledProgram | CompiledA64"


def compile_machine(comp: Compilation, allocator: str = "color", fuel: bool = True,
                    frame_arrays: bool = True) -> CompiledProgram:
    """Compile ``comp``'s scheduled program to allocated machine code (not cached);
    ``frame_arrays=False`` keeps every array in the heap (lesson 10 compares the two)."""
    from ssa_course.codegen.x86_64.compile import compile_parts

    ssa = scheduled_ssa_quads(comp)
    lines = split_lines(comp.source) if comp.kind == "tiny" else None
    return compile_parts(ssa, lines, allocator=allocator, fuel=fuel,
                         frame_arrays=frame_arrays)


def machine_ir(comp: Compilation) -> dict[str, MFunction]:
    """Each function of ``comp`` as machine IR over virtual registers, before register
    allocation (phis lowered to copies, no fuel checks): what the allocator starts from.
    A fresh copy on every call, so it may be changed freely."""
    from ssa_course.codegen.x86_64.compile import select_program

    return dict(select_program(scheduled_ssa_quads(comp), None).functions)


# In a browser (Pyodide, docs/lite.md) what is missing cannot be installed: no programs
# start (GNU as and ld) and its package lock has no capstone or keystone. The lesson says
# so there, instead of install advice that cannot work (pip install capstone, binutils).
IN_BROWSER = {
    "capstone": "no disassembler in a browser: Pyodide has no capstone package "
                "(the course on your own machine shows it)",
    "gnu": "not in a browser: Pyodide starts no programs (GNU as, ld)",
    "keystone": "not in a browser: Pyodide has no keystone package",
}


def _in_browser(reason: str | None, tool: str) -> str | None:
    import sys

    if reason is None or sys.platform != "emscripten":
        return reason
    return IN_BROWSER.get(tool, reason)


def disassembler_missing() -> str | None:
    """Why capstone cannot disassemble here (the lesson's cells), or None; in a browser
    without install advice."""
    from ssa_course.codegen import toolchain

    return _in_browser(toolchain.disassembler_missing(), "capstone")


def assembler_missing(name: str = "auto") -> str | None:
    """Why assembler ``name`` cannot be used here, or None; in a browser without install
    advice (:func:`ssa_course.codegen.toolchain.assembler_missing` otherwise)."""
    from ssa_course.codegen import toolchain

    return _in_browser(toolchain.assembler_missing(name), name)


def _build(comp: Compilation) -> CompiledProgram:
    return compile_machine(comp)


def image_of(compiled: CompiledProgram, limits: Limits | None = None) -> Image:
    """The assembled program (runtime included) for one run's limits (cached by source),
    by the assembler chosen for this context (``--assembler``, ``assembler=``)."""
    from ssa_course.codegen.x86_64.assemble import assemble

    limits = limits or Limits()
    return assemble(compiled.source(limits.steps, limits.depth, limits.cells))


def _run_native(compiled: CompiledProgram, args: list[Value], out: Output,
                limits: Limits) -> int:
    from ssa_course.codegen import toolchain
    from ssa_course.codegen.native import run_values_native

    toolchain.require(toolchain.native_missing())
    return run_values_native(image_of(compiled, limits), args, out, limits.timeout)


def _run_emulated(compiled: CompiledProgram, args: list[Value], out: Output,
                  limits: Limits) -> int:
    from ssa_course.codegen import toolchain
    from ssa_course.codegen.x86_64.emulate import run_values_emulated

    toolchain.require(toolchain.emulator_missing())
    return run_values_emulated(image_of(compiled, limits), args, out, limits.timeout)


def _verify(compiled: CompiledProgram) -> None:
    from ssa_course.codegen.x86_64.verify import verify_program

    verify_program(compiled.mprog, allocated=True, laid_out=True)


def _text(compiled: Compiled) -> str:
    return compiled.program_asm


def _dot(compiled: CompiledProgram, title: str, options: DrawOptions | None = None) -> str:
    from ssa_course.codegen.mir_dot import mprogram_dot

    return bounded_layout(mprogram_dot(compiled.mprog), options)


_NODE_LINE = re.compile(r'^\s*(\w+) \[', re.M)


def bounded_layout(dot: str, options: DrawOptions | None = None) -> str:
    """``dot`` (a machine CFG: one record per block) with the graph attributes that bound
    Graphviz's layout effort, as every other CFG drawing has them from
    :mod:`ssa_course.viz.select` (``options.bounded``, from
    :data:`~ssa_course.viz.options.BOUNDED_FROM` nodes on): the same blocks and edges,
    laid out in a fraction of a second instead of seconds (300 lines: 3.7 s -> 0.26 s)."""
    from ssa_course.viz.options import BOUNDED_FROM, BOUNDED_LAYOUT, DrawOptions

    options = options or DrawOptions()
    nodes = sum(1 for m in _NODE_LINE.finditer(dot) if m[1] not in ("node", "edge", "graph"))
    head, brace, rest = dot.partition("{\n")
    if not options.bounded or nodes < BOUNDED_FROM or not brace:
        return dot
    attrs = ", ".join(f"{k}={v}" for k, v in BOUNDED_LAYOUT.items())
    return f"{head}{brace}  graph [{attrs}];\n{rest}"


_INTERFERENCE_NODE = re.compile(r'^  (n\d+) \[.*shape=(\w+)', re.M)
_INTERFERENCE_EDGE = re.compile(r'^  (n\d+) -- (n\d+)\b')
_GRAPH_LABEL = re.compile(r'^(  label=")((?:[^"\\]|\\.)*)(";)', re.M)


def capped_interference(dot: str, options: DrawOptions | None = None) -> str:
    """An interference graph (:meth:`~ssa_course.codegen.regalloc.Allocation.dot`) with at
    most ``options.budget`` values (the machine registers always stay): the first ones in
    program order and the edges between what is kept, the label saying what was left out
    -- as the sea-of-nodes drawings cap theirs. Neato takes seconds past a few hundred
    nodes (a 300-line ``main``: ~700 values, ~4400 edges)."""
    from ssa_course.viz.options import DrawOptions

    options = options or DrawOptions()
    values = [m[1] for m in _INTERFERENCE_NODE.finditer(dot) if m[2] != "doublecircle"]
    if options.budget is None or len(values) <= options.budget:
        return dot
    gone = set(values[options.budget:])
    lines = []
    for line in dot.splitlines(keepends=True):
        node = _INTERFERENCE_NODE.match(line)
        edge = _INTERFERENCE_EDGE.match(line)
        if (node and node[1] in gone) or (edge and (edge[1] in gone or edge[2] in gone)):
            continue
        lines.append(line)
    caption = (f"{options.budget} of {len(values)} values shown (the first in program "
               f"order); {len(gone)} left out: use function= or a larger budget=")
    out = "".join(lines)
    if _GRAPH_LABEL.search(out):
        return _GRAPH_LABEL.sub(lambda m: f"{m[1]}{m[2]}\\n{caption}{m[3]}", out, count=1)
    head, brace, rest = out.partition("{\n")
    return f'{head}{brace}  label="{caption}"; labelloc=t;\n{rest}'


def _stats(compiled: Compiled) -> str:
    from ssa_course.codegen.stats import program_stats

    s = program_stats(compiled)
    return (f"{s['instructions']} instructions, {s['spills']} spilled values, "
            f"{s['copies_removed']} copies coalesced")


def _interference_text(compiled: Compiled) -> str:
    from ssa_course.codegen.regalloc import Allocation

    parts = []
    for name, alloc in compiled.allocations.items():
        # (spill-all's record has no graph)
        text = alloc.text() if isinstance(alloc, Allocation) \
            else f"{name}: every value in a slot\n"
        parts.append(text.rstrip("\n"))
    return "\n\n".join(parts) + "\n"


def _interference_dot(compiled: Compiled, title: str,
                      options: DrawOptions | None = None) -> str:
    """The interference graph of one function: the options' ``function`` or ``main``."""
    from ssa_course.codegen.regalloc import Allocation
    from ssa_course.errors import UsageError

    allocations = compiled.allocations
    wanted = getattr(options, "function", None) or ("main" if "main" in allocations
                                                   else next(iter(allocations), None))
    if wanted not in allocations:
        raise UsageError(f"no function '{wanted}' (functions: {', '.join(allocations)})")
    alloc = allocations[wanted]
    if not isinstance(alloc, Allocation):
        raise UsageError(f"function '{wanted}' has no interference graph: every value is "
                         "in a slot")
    return capped_interference(alloc.dot(), options)


def _symbols(compiled: Compiled) -> list[str]:
    """The text symbols of the program's own functions (main's body entry included)."""
    from ssa_course.codegen.names import MAIN_BODY, function_symbol

    names = [function_symbol(n) for n in compiled.mprog.functions]
    return names + [MAIN_BODY] if "main" in compiled.mprog.functions else names


def _asm_text(compiled: CompiledProgram) -> str:
    """The listing, after one line saying which assembler makes its bytes and how many."""
    from ssa_course.codegen.assemble import DESCRIPTIONS

    image = image_of(compiled)
    size = sum(image.sizes.get(n, 0) for n in _symbols(compiled))
    backend = image.backend
    return (f"# assembled by {backend} ({DESCRIPTIONS[backend]}): {size} bytes of machine "
            f"code for these functions\n" + _text(compiled))


def _disasm_text(compiled: CompiledProgram) -> str:
    from ssa_course.codegen import toolchain
    from ssa_course.codegen.x86_64.disasm import disassemble

    toolchain.require(toolchain.disassembler_missing())
    image = image_of(compiled)
    return disassemble(image, only=[n for n in _symbols(compiled) if n in image.symbols])


def _native_missing() -> str | None:
    from ssa_course.codegen import toolchain

    return toolchain.native_missing()


def _emulator_missing() -> str | None:
    from ssa_course.codegen import toolchain

    return toolchain.emulator_missing()


def _disasm_missing() -> str | None:
    from ssa_course.codegen import toolchain

    return toolchain.browser_missing() or toolchain.disassembler_missing()


def _lines(compiled: CompiledProgram) -> Lines:
    from ssa_course.lessons.lines_faces import machine_lines

    return machine_lines(compiled, _text(compiled))


def _asm_lines(compiled: CompiledProgram) -> Lines:
    from ssa_course.lessons.lines_faces import machine_lines

    return machine_lines(compiled, _asm_text(compiled))


def _disasm_lines(compiled: CompiledProgram) -> Lines:
    from ssa_course.lessons.lines_faces import disasm_lines, machine_node

    return disasm_lines(_text(compiled), _disasm_text(compiled), machine_node(compiled.mprog))


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
