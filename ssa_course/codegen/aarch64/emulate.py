"""Run an AArch64 image under unicorn (any host): the same process as on Linux.

The x86-64 emulator's machine (:class:`ssa_course.codegen.emulate._Machine`: memory at
the image's addresses, argc/argv on a stack, ``mmap`` from fresh zeroed pages, the time
limit) with an ARM64 CPU: a system call is ``svc #0`` (an interrupt hook: number in x8,
arguments in x0-x2, result in x0). ``count=True`` also counts the instructions executed
(a block hook adds each block's length: every instruction is 4 bytes), for the
benchmarks.
"""

from __future__ import annotations

from ssa_course.codegen import emulate as x86
from ssa_course.codegen.aarch64 import toolchain
from ssa_course.codegen.assemble import Image
from ssa_course.codegen.native import (
    CRASH_STATUS,
    TIMEOUT_STATUS,
    ChildResult,
    crash_line,
    deliver,
    format_args,
)
from ssa_course.runtime import Output

SYS_WRITE, SYS_MMAP, SYS_EXIT_GROUP = 64, 222, 94
EXCP_SWI = 2  # unicorn's interrupt number for svc
SIGILL, SIGSEGV = 4, 11


Segment = tuple[int, bytes, int, int]  # address, bytes, size in memory, protection


def image_segments(image: Image) -> list[Segment]:
    """The image's text, data and bss as segments to map."""
    from unicorn.unicorn_const import UC_PROT_EXEC, UC_PROT_READ, UC_PROT_WRITE

    rw = UC_PROT_READ | UC_PROT_WRITE
    return [(image.text_addr, image.text, len(image.text), UC_PROT_READ | UC_PROT_EXEC),
            (image.data_addr, image.data, len(image.data), rw),
            (image.bss_addr, b"", image.bss_size, rw)]


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


class _A64Machine(x86._Machine):
    """One emulated aarch64 process."""

    def __init__(self, segments: list[Segment], argv: list[bytes],  # noqa: D107
                 count: bool = False):
        from unicorn import UC_ARCH_ARM64, UC_HOOK_BLOCK, UC_HOOK_INTR, UC_MODE_ARM, Uc
        from unicorn.arm64_const import UC_ARM64_REG_SP
        from unicorn.unicorn_const import UC_PROT_ALL, UC_PROT_EXEC

        self.uc = uc = Uc(UC_ARCH_ARM64, UC_MODE_ARM)
        self.hooks: list[int] = []
        self.out = bytearray()
        self.err = bytearray()
        self.status: int | None = None
        self.next_map = x86.MMAP_BASE
        self.fault: int | None = None
        self.executed = 0
        for addr, body, size, prot in segments:
            base = addr // x86.PAGE * x86.PAGE
            uc.mem_map(base, x86._up(addr + max(size, 1)) - base, prot)
            if body:
                uc.mem_write(addr, bytes(body))
        uc.mem_map(x86.STACK_TOP - x86.STACK_BYTES, x86.STACK_BYTES,
                   UC_PROT_ALL & ~UC_PROT_EXEC)
        uc.reg_write(UC_ARM64_REG_SP, self._lay_out_stack(argv))
        self.hooks.append(uc.hook_add(UC_HOOK_INTR, self._interrupt))
        if count:
            self.hooks.append(uc.hook_add(UC_HOOK_BLOCK, self._block))

    def _block(self, _uc, _address: int, size: int, _data: object) -> None:  # noqa: ANN001
        self.executed += size // 4

    def _interrupt(self, uc, intno: int, _data: object) -> None:  # noqa: ANN001
        if intno != EXCP_SWI:
            self.fault = intno
            uc.emu_stop()
            return
        from unicorn.arm64_const import (
            UC_ARM64_REG_X0,
            UC_ARM64_REG_X1,
            UC_ARM64_REG_X2,
            UC_ARM64_REG_X8,
        )

        number = uc.reg_read(UC_ARM64_REG_X8)
        a0, a1, a2 = (uc.reg_read(r) for r in (UC_ARM64_REG_X0, UC_ARM64_REG_X1,
                                                 UC_ARM64_REG_X2))
        if number == SYS_WRITE:
            if a0 not in (1, 2):
                result = -x86.EBADF
            else:
                (self.out if a0 == 1 else self.err).extend(uc.mem_read(a1, a2))
                result = a2
        elif number == SYS_MMAP:
            result = self._mmap(a1)
        elif number == SYS_EXIT_GROUP:
            self.status = a0 & 0xFF
            uc.emu_stop()
            return
        else:
            result = -x86.ENOSYS
        uc.reg_write(UC_ARM64_REG_X0, result & (1 << 64) - 1)


def run_emulated(image: Image, args: list[str], timeout_s: float = x86.DEFAULT_TIMEOUT_S,
                 max_instructions: int = 0) -> ChildResult:
    """Run ``image`` under unicorn's ARM64 CPU with ``args`` (``max_instructions`` 0: no
    count limit; the time limit always holds)."""
    return run_counted(image, args, timeout_s, max_instructions, count=False)[0]


def run_counted(image: Image | bytes, args: list[str],
                timeout_s: float = x86.DEFAULT_TIMEOUT_S, max_instructions: int = 0,
                count: bool = True) -> tuple[ChildResult, int]:
    """:func:`run_emulated` plus the number of instructions executed (0 unless ``count``);
    ``image`` may also be the bytes of any static aarch64 Linux executable."""
    toolchain.require(toolchain.emulator_missing())
    argv = [b"prog", *(a.encode("utf-8", "surrogateescape") for a in args)]
    if isinstance(image, bytes):
        segments, entry = elf_segments(image)
    else:
        segments, entry = image_segments(image), image.entry
    m = _A64Machine(segments, argv, count)
    try:
        return _run(m, entry, timeout_s, max_instructions), m.executed
    finally:
        m.close()


def _run(m: _A64Machine, entry: int, timeout_s: float, max_instructions: int
         ) -> ChildResult:
    from unicorn import UcError
    from unicorn.arm64_const import UC_ARM64_REG_PC
    from unicorn.unicorn_const import UC_ERR_INSN_INVALID

    crash, signum = "", 0
    try:
        m.uc.emu_start(entry, 0, timeout=int(timeout_s * 1_000_000),
                       count=max_instructions)
    except UcError as e:
        pc = m.uc.reg_read(UC_ARM64_REG_PC)
        signum = SIGILL if e.errno == UC_ERR_INSN_INVALID else SIGSEGV
        crash = crash_line(signum, f"{e} at pc {pc:#x}", "emulated")
    if m.fault is not None and not crash:
        pc = m.uc.reg_read(UC_ARM64_REG_PC)
        signum = SIGILL
        crash = crash_line(signum, f"CPU exception {m.fault} at pc {pc:#x}", "emulated")
    out = m.out.decode("utf-8", "replace")
    err = m.err.decode("utf-8", "replace")
    if crash:
        return ChildResult(out, err + crash, CRASH_STATUS + signum)
    if m.status is None:
        limit = (f"{max_instructions} instructions" if max_instructions
                 else f"{timeout_s:g} s")
        return ChildResult(out, err + f"error: emulated run stopped after {limit}\n",
                           TIMEOUT_STATUS)
    return ChildResult(out, err, m.status)


def run_values_emulated(image: Image, values: list[object], out: Output,
                        timeout_s: float = x86.DEFAULT_TIMEOUT_S) -> int:
    return deliver(run_emulated(image, format_args(values), timeout_s), out)
