"""Run an AArch64 image under unicorn (any host): the same process as on Linux.

The process, its system calls, the slices, the limits and how a run ends are
:mod:`ssa_course.codegen.emulator`'s (shared with x86-64); this module is the ARM64 CPU: a
system call is ``svc #0`` (an interrupt hook: number in x8, arguments in x0-x2, result in
x0), any other CPU exception is SIGILL. ``count=True`` also counts the instructions
executed (a block hook adds each block's length: every instruction is 4 bytes), for the
benchmarks, which also run any static aarch64 executable (:func:`elf_segments`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ssa_course.codegen.aarch64 import toolchain
from ssa_course.codegen.aarch64.asmtext import SYS_EXIT_GROUP, SYS_MMAP, SYS_MPROTECT, SYS_WRITE
from ssa_course.codegen.assemble import Image
from ssa_course.codegen.child import DEFAULT_TIMEOUT_S, ChildResult
from ssa_course.codegen.emulator import (
    EXIT,
    MMAP,
    MPROTECT,
    SIGILL,
    WRITE,
    Machine,
    Segment,
    encode_argv,
    image_segments,
    run_machine,
)
from ssa_course.codegen.native import deliver, format_args
from ssa_course.runtime import Output

EXCP_SWI = 2  # unicorn's interrupt number for svc


def elf_segments(blob: bytes) -> tuple[list[Segment], int]:
    """The PT_LOAD segments and the entry of a static ELF64 executable (any linker's:
    the benchmarks run gcc's executables with it)."""
    import struct

    from unicorn.unicorn_const import UC_PROT_EXEC, UC_PROT_READ, UC_PROT_WRITE

    entry, phoff = struct.unpack_from("<QQ", blob, 24)
    phentsize, phnum = struct.unpack_from("<HH", blob, 54)
    out: list[Segment] = []
    for k in range(phnum):
        kind, flags, off, vaddr, _, filesz, memsz, _ = struct.unpack_from(
            "<IIQQQQQQ", blob, phoff + k * phentsize)
        if kind != 1:  # PT_LOAD
            continue
        prot = (UC_PROT_READ if flags & 4 else 0) | (UC_PROT_WRITE if flags & 2 else 0) \
            | (UC_PROT_EXEC if flags & 1 else 0)
        out.append((vaddr, blob[off:off + filesz], memsz, prot))
    return out, entry


class _A64Machine(Machine):
    """One emulated aarch64 process (``count``: also count executed instructions)."""

    SYSCALLS = {SYS_WRITE: WRITE, SYS_MMAP: MMAP, SYS_MPROTECT: MPROTECT,
                SYS_EXIT_GROUP: EXIT}
    PC_NAME = "pc"

    def __init__(self, segments: list[Segment], argv: list[bytes],
                 on_stdout: Callable[[str], object] | None = None, count: bool = False):
        self.count = count
        self.executed = 0
        super().__init__(segments, argv, on_stdout)

    def engine(self) -> Any:
        from unicorn import UC_ARCH_ARM64, UC_MODE_ARM, Uc

        return Uc(UC_ARCH_ARM64, UC_MODE_ARM)

    def sp_reg(self) -> int:
        from unicorn.arm64_const import UC_ARM64_REG_SP

        return int(UC_ARM64_REG_SP)

    def pc_reg(self) -> int:
        from unicorn.arm64_const import UC_ARM64_REG_PC

        return int(UC_ARM64_REG_PC)

    def install(self) -> None:
        from unicorn import UC_HOOK_BLOCK, UC_HOOK_INTR

        self.hooks.append(self.uc.hook_add(UC_HOOK_INTR, self._interrupt))
        if self.count:
            self.hooks.append(self.uc.hook_add(UC_HOOK_BLOCK, self._block))

    def fault_signal(self, intno: int) -> int:
        return SIGILL

    def _block(self, _uc: object, _address: int, size: int, _data: object) -> None:
        self.executed += size // 4

    def syscall_regs(self) -> tuple[int, tuple[int, int, int], int]:
        from unicorn.arm64_const import (
            UC_ARM64_REG_X0,
            UC_ARM64_REG_X1,
            UC_ARM64_REG_X2,
            UC_ARM64_REG_X8,
        )

        # Linux on AArch64: number in x8, arguments in x0-x2, result in x0.
        return UC_ARM64_REG_X8, (UC_ARM64_REG_X0, UC_ARM64_REG_X1, UC_ARM64_REG_X2), \
            UC_ARM64_REG_X0

    def _interrupt(self, _uc: object, intno: int, _data: object) -> None:
        if intno != EXCP_SWI:
            self.stop_on_fault(intno)
            return
        self.serve_syscall()


def run_emulated(image: Image, args: list[str], timeout_s: float = DEFAULT_TIMEOUT_S,
                 max_instructions: int = 0,
                 on_stdout: Callable[[str], object] | None = None) -> ChildResult:
    """Run ``image`` under unicorn's ARM64 CPU with ``args`` (``max_instructions`` 0: no
    count limit; the time limit always holds); output streams to ``on_stdout`` as in
    :func:`ssa_course.codegen.x86_64.emulate.run_emulated`."""
    return run_counted(image, args, timeout_s, max_instructions, count=False,
                       on_stdout=on_stdout)[0]


def run_counted(image: Image | bytes, args: list[str],
                timeout_s: float = DEFAULT_TIMEOUT_S, max_instructions: int = 0,
                count: bool = True, on_stdout: Callable[[str], object] | None = None
                ) -> tuple[ChildResult, int]:
    """:func:`run_emulated` plus the number of instructions executed (0 unless ``count``);
    ``image`` may also be the bytes of any static aarch64 Linux executable."""
    toolchain.require(toolchain.emulator_missing())
    if isinstance(image, bytes):
        segments, entry = elf_segments(image)
    else:
        segments, entry = image_segments(image), image.entry
    m = _A64Machine(segments, encode_argv(args), on_stdout, count)
    return run_machine(m, entry, timeout_s, max_instructions), m.executed


def run_values_emulated(image: Image, values: list[object], out: Output,
                        timeout_s: float = DEFAULT_TIMEOUT_S) -> int:
    """The executor interface (see :func:`ssa_course.codegen.x86_64.emulate.run_values_emulated`):
    output streams into ``out`` as the program prints."""
    return deliver(run_emulated(image, format_args(values), timeout_s, on_stdout=out.write),
                   out)
