"""Run an assembled program's bytes under unicorn (x86-64 emulated, any host).

The image's text, data and bss go to their addresses; a stack holds ``argc``, ``argv`` and
the argument strings as Linux lays them out; the runtime's three system calls are served
by a hook: ``write`` to fd 1/2 collects the bytes, ``mmap`` maps fresh zeroed memory at an
address chosen here, ``exit_group`` stops. A wall-clock limit (and optionally a count of
instructions) bounds every run; a bad memory access becomes one ``error:`` line. The
result has the same shape and the same text as :func:`ssa_course.codegen.native.run_native`.
"""

from __future__ import annotations

import codecs
import time
from collections.abc import Callable

from ssa_course.codegen import toolchain
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

PAGE = 0x1000
STACK_TOP = 0x7FFF_F000_0000
STACK_BYTES = 1 << 20  # the loader's stack: only the arguments live there (_start moves)
MMAP_BASE = 0x1000_0000_0000
SYS_WRITE, SYS_MMAP, SYS_EXIT_GROUP = 1, 9, 231
ENOSYS, EBADF, ENOMEM = 38, 9, 12
DEFAULT_TIMEOUT_S = 60.0
SLICE_S = 0.25  # emulation runs in slices this long: signals are handled in between
SIGSEGV, SIGILL = 11, 4
# x86 exception vectors -> the signal Linux sends: divide error, breakpoint, invalid opcode
_FAULT_SIGNALS = {0: 8, 3: 5, 6: SIGILL}


def _up(n: int) -> int:
    return (n + PAGE - 1) // PAGE * PAGE


class _Machine:
    """One emulated process: memory, the system-call hook, what was written."""

    def __init__(self, image: Image, argv: list[bytes],
                 on_stdout: Callable[[str], object] | None = None):
        from unicorn import UC_ARCH_X86, UC_HOOK_INSN, UC_HOOK_INTR, UC_MODE_64, UC_PROT_ALL, Uc
        from unicorn.unicorn_const import UC_PROT_EXEC, UC_PROT_READ, UC_PROT_WRITE
        from unicorn.x86_const import UC_X86_INS_SYSCALL, UC_X86_REG_RSP

        self.uc = uc = Uc(UC_ARCH_X86, UC_MODE_64)
        self.hooks: list[int] = []
        self.out = bytearray()
        self.err = bytearray()
        # streamed output (as run_child streams a native child's): what the callback
        # raised (a reader that hung up) stops the run and is raised again by _run
        self.on_stdout = on_stdout
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.sink_error: BaseException | None = None
        self.status: int | None = None
        self.next_map = MMAP_BASE
        rw = UC_PROT_READ | UC_PROT_WRITE
        for addr, size, body, prot in (
                (image.text_addr, len(image.text), image.text, UC_PROT_READ | UC_PROT_EXEC),
                (image.data_addr, len(image.data), image.data, rw),
                (image.bss_addr, image.bss_size, b"", rw)):
            base = addr // PAGE * PAGE
            uc.mem_map(base, _up(addr + max(size, 1)) - base, prot)
            if body:
                uc.mem_write(addr, bytes(body))
        uc.mem_map(STACK_TOP - STACK_BYTES, STACK_BYTES, UC_PROT_ALL & ~UC_PROT_EXEC)
        uc.reg_write(UC_X86_REG_RSP, self._lay_out_stack(argv))
        self.hooks.append(uc.hook_add(UC_HOOK_INSN, self._syscall, None, 1, 0,
                                      UC_X86_INS_SYSCALL))
        self.hooks.append(uc.hook_add(UC_HOOK_INTR, self._interrupt))
        self.fault: int | None = None  # the CPU exception that stopped the run

    def _interrupt(self, uc, intno: int, _data: object) -> None:  # noqa: ANN001
        """A CPU exception (divide error, breakpoint, ...): the process would die here."""
        self.fault = intno
        uc.emu_stop()

    def _lay_out_stack(self, argv: list[bytes]) -> int:
        """Strings at the top; below them argc, argv[], NULL, envp NULL, auxv AT_NULL."""
        sp = STACK_TOP - 16
        pointers = []
        for arg in argv:
            sp -= len(arg) + 1
            self.uc.mem_write(sp, arg + b"\0")
            pointers.append(sp)
        words = [len(argv), *pointers, 0, 0, 0, 0]
        sp = (sp - 8 * len(words)) // 16 * 16
        self.uc.mem_write(sp, b"".join(w.to_bytes(8, "little") for w in words))
        return sp

    def close(self) -> None:
        """Free the engine now (its hooks first: they point back at this machine)."""
        uc, self.uc = self.uc, None
        if uc is None:
            return
        for h in self.hooks:
            uc.hook_del(h)
        self.hooks.clear()
        # The binding's own hook wrappers keep the engine in a reference cycle; its
        # finalizer (run at most once) closes the native engine and frees its memory now.
        finalize = getattr(uc, "_Uc__finalizer", None)
        if finalize is not None:
            finalize()

    def _syscall(self, uc, _data: object) -> None:  # noqa: ANN001 - unicorn's callback
        from unicorn.x86_const import (
            UC_X86_REG_RAX,
            UC_X86_REG_RDI,
            UC_X86_REG_RDX,
            UC_X86_REG_RSI,
        )

        number = uc.reg_read(UC_X86_REG_RAX)
        a0, a1, a2 = (uc.reg_read(r) for r in (UC_X86_REG_RDI, UC_X86_REG_RSI, UC_X86_REG_RDX))
        if number == SYS_WRITE:
            if a0 not in (1, 2):
                result = -EBADF
            elif a0 == 1 and self.on_stdout is not None:
                try:
                    self.on_stdout(self.decoder.decode(bytes(uc.mem_read(a1, a2))))
                except BaseException as e:  # noqa: BLE001 - re-raised after emu_start
                    self.sink_error = e
                    uc.emu_stop()
                    return
                result = a2
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
            result = -ENOSYS
        uc.reg_write(UC_X86_REG_RAX, result & (1 << 64) - 1)

    def _mmap(self, size: int) -> int:
        """Fresh zeroed read-write memory (unicorn maps lazily: untouched pages are free)."""
        from unicorn import UcError
        from unicorn.unicorn_const import UC_PROT_READ, UC_PROT_WRITE

        size = _up(size)
        if size == 0 or size > 1 << 40:
            return -ENOMEM
        try:
            self.uc.mem_map(self.next_map, size, UC_PROT_READ | UC_PROT_WRITE)
        except UcError:
            return -ENOMEM
        addr = self.next_map
        self.next_map += size + PAGE  # a gap: running off the end faults, as natively
        return addr


def run_emulated(image: Image, args: list[str], timeout_s: float = DEFAULT_TIMEOUT_S,
                 max_instructions: int = 0,
                 on_stdout: Callable[[str], object] | None = None) -> ChildResult:
    """Run ``image`` under unicorn with ``args`` (after ``argv[0]``); ``max_instructions``
    0 means no count limit (counting slows unicorn down), the time limit always holds.
    Output streams to ``on_stdout`` when given, and what it raises stops the run and
    propagates, as with :func:`ssa_course.codegen.child.run_child`."""
    toolchain.require(toolchain.emulator_missing())
    argv = [b"prog", *(a.encode("utf-8", "surrogateescape") for a in args)]
    m = _Machine(image, argv, on_stdout)
    try:
        return _run(m, image, timeout_s, max_instructions)
    finally:
        # Each engine holds a large translation buffer, and its hooks make a reference
        # cycle only the cyclic collector would break (paused while representations are
        # built): without this, a few hundred runs in one process exhaust memory ("Could
        # not allocate dynamic translator buffer", a make fuzz finding).
        m.close()


def _emulate(m: _Machine, entry: int, timeout_s: float, max_instructions: int) -> None:
    """Run from ``entry`` until the program exits, faults, or the time is up.

    In slices of :data:`SLICE_S`, resumed where the last one stopped: Python runs signal
    handlers only between slices (never inside unicorn), so Ctrl-C, SIGTERM and SIGHUP stop
    an endless emulated loop within a slice, not after the whole time limit. An
    instruction count (``max_instructions``) is one run: unicorn cannot say how far a
    slice got."""
    from unicorn.x86_const import UC_X86_REG_RIP

    if max_instructions:
        m.uc.emu_start(entry, 0, timeout=int(timeout_s * 1_000_000), count=max_instructions)
        return
    deadline = time.monotonic() + timeout_s
    start = entry
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return
        m.uc.emu_start(start, 0, timeout=max(1, int(min(left, SLICE_S) * 1_000_000)))
        if m.status is not None or m.fault is not None or m.sink_error is not None:
            return
        start = m.uc.reg_read(UC_X86_REG_RIP)


def _run(m: _Machine, image: Image, timeout_s: float, max_instructions: int) -> ChildResult:
    from unicorn import UcError
    from unicorn.unicorn_const import UC_ERR_INSN_INVALID
    from unicorn.x86_const import UC_X86_REG_RIP

    crash, signum = "", 0
    try:
        _emulate(m, image.entry, timeout_s, max_instructions)
    except UcError as e:
        rip = m.uc.reg_read(UC_X86_REG_RIP)
        signum = SIGILL if e.errno == UC_ERR_INSN_INVALID else SIGSEGV
        crash = crash_line(signum, f"{e} at rip {rip:#x}", "emulated")
    if m.sink_error is not None:
        raise m.sink_error
    if m.fault is not None and not crash:
        signum = _FAULT_SIGNALS.get(m.fault, SIGSEGV)
        rip = m.uc.reg_read(UC_X86_REG_RIP)
        crash = crash_line(signum, f"CPU exception {m.fault} at rip {rip:#x}", "emulated")
    out = m.out.decode("utf-8", "replace")
    if m.on_stdout is not None:
        tail = m.decoder.decode(b"", final=True)
        if tail:
            m.on_stdout(tail)
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
                        timeout_s: float = DEFAULT_TIMEOUT_S) -> int:
    """The executor interface over an emulated run: typed ``main`` arguments in, status
    out, errors raised as the interpreters raise them (see :func:`native.deliver`)."""
    return deliver(run_emulated(image, format_args(values), timeout_s, on_stdout=out.write),
                   out)
