"""One emulated Linux process under unicorn, for any target: the run loop both CPUs share.

A :class:`Machine` maps the program's segments at their addresses, lays ``argc``, ``argv``
and the argument strings on a stack as Linux does, and serves the runtime's three system
calls (:meth:`Machine.syscall`): ``write`` to fd 1/2 (streamed to ``on_stdout`` when
given), ``mmap`` of fresh zeroed memory, ``exit_group``. :func:`run_machine` runs it once
under a wall-clock limit (or an instruction count), on a worker thread so that signals
are handled at once, and turns how it ended into the
:class:`~ssa_course.codegen.native.ChildResult` a native run gives: the exit status, a
crash line, or a limit. A target subclass supplies only the CPU: :meth:`Machine.engine`,
the stack and program-counter registers, the hook that decodes a system call
(:meth:`Machine.install`) and which signal a CPU exception is.
"""

from __future__ import annotations

import codecs
import threading
from collections.abc import Callable
from typing import Any

from ssa_course.codegen.assemble import Image
from ssa_course.codegen.child import TIMEOUT_STATUS, ChildResult
from ssa_course.codegen.native import CRASH_STATUS, crash_line

PAGE = 0x1000
STACK_TOP = 0x7FFF_F000_0000
STACK_BYTES = 1 << 20  # the loader's stack: only the arguments live there (_start moves)
MMAP_BASE = 0x1000_0000_0000
ENOSYS, EBADF, ENOMEM = 38, 9, 12
SIGILL, SIGSEGV = 4, 11
WRITE, MMAP, MPROTECT, EXIT = "write", "mmap", "mprotect", "exit_group"

Segment = tuple[int, bytes, int, int]  # address, bytes, size in memory, protection


def up(n: int) -> int:
    """``n`` rounded up to whole pages."""
    return (n + PAGE - 1) // PAGE * PAGE


def image_segments(image: Image) -> list[Segment]:
    """An assembled image's text, data and bss as segments to map."""
    from unicorn.unicorn_const import UC_PROT_EXEC, UC_PROT_READ, UC_PROT_WRITE

    rw = UC_PROT_READ | UC_PROT_WRITE
    return [(image.text_addr, image.text, len(image.text), UC_PROT_READ | UC_PROT_EXEC),
            (image.data_addr, image.data, len(image.data), rw),
            (image.bss_addr, b"", image.bss_size, rw)]


def encode_argv(args: list[str]) -> list[bytes]:
    """``argv`` as the process sees it: ``prog`` and the arguments' bytes."""
    return [b"prog", *(a.encode("utf-8", "surrogateescape") for a in args)]


class Machine:
    """One emulated process: memory, the system calls, what was written.

    Subclasses set :attr:`SYSCALLS` (number -> ``write``/``mmap``/``exit_group``),
    :attr:`PC_NAME` (``rip``, ``pc``) and implement :meth:`engine`, :meth:`sp_reg`,
    :meth:`pc_reg`, :meth:`install`, :meth:`fault_signal` and :meth:`syscall_regs`."""

    SYSCALLS: dict[int, str] = {}
    PC_NAME = "pc"

    def __init__(self, segments: list[Segment], argv: list[bytes],
                 on_stdout: Callable[[str], object] | None = None):
        from unicorn.unicorn_const import UC_PROT_ALL, UC_PROT_EXEC

        self.uc = uc = self.engine()
        self.hooks: list[int] = []
        self.out = bytearray()
        self.err = bytearray()
        # streamed output (as run_child streams a native child's): what the callback
        # raised (a reader that hung up) stops the run and is raised again by run_machine
        self.on_stdout = on_stdout
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.sink_error: BaseException | None = None
        self.status: int | None = None
        self.fault: int | None = None  # the CPU exception that stopped the run
        self.next_map = MMAP_BASE
        for addr, body, size, prot in segments:
            base = addr // PAGE * PAGE
            uc.mem_map(base, up(addr + max(size, 1)) - base, prot)
            if body:
                uc.mem_write(addr, bytes(body))
        uc.mem_map(STACK_TOP - STACK_BYTES, STACK_BYTES, UC_PROT_ALL & ~UC_PROT_EXEC)
        uc.reg_write(self.sp_reg(), self._lay_out_stack(argv))
        self.install()

    # -- the CPU (per target) -------------------------------------------------------------
    def engine(self) -> Any:
        raise TypeError(f"{type(self).__name__} names no CPU")

    def sp_reg(self) -> int:
        raise TypeError(f"{type(self).__name__} names no stack register")

    def pc_reg(self) -> int:
        raise TypeError(f"{type(self).__name__} names no program counter")

    def install(self) -> None:
        """Add the hooks (to :attr:`hooks`) that decode system calls and CPU exceptions."""

    def fault_signal(self, intno: int) -> int:
        """The signal Linux sends for CPU exception ``intno``."""
        return SIGSEGV

    def syscall_regs(self) -> tuple[int, tuple[int, int, int], int]:
        """Linux's system-call registers on this CPU: (the number's, the three
        arguments', the result's)."""
        raise TypeError(f"{type(self).__name__} names no system-call registers")

    # -- what every target shares ---------------------------------------------------------
    def pc(self) -> int:
        return int(self.uc.reg_read(self.pc_reg()))

    def stop_on_fault(self, intno: int) -> None:
        """A CPU exception (divide error, breakpoint, ...): the process would die here."""
        self.fault = intno
        self.uc.emu_stop()

    def serve_syscall(self) -> None:
        """The system call the CPU trapped on (the target's hook calls this): number and
        arguments read from :meth:`syscall_regs`, the result written back as an unsigned
        64-bit value (a negative errno wraps), unless the run stops."""
        uc = self.uc
        number, args, result = self.syscall_regs()
        value = self.syscall(uc.reg_read(number), *(uc.reg_read(r) for r in args))
        if value is not None:
            uc.reg_write(result, value & (1 << 64) - 1)

    def syscall(self, number: int, a0: int, a1: int, a2: int) -> int | None:
        """Serve system call ``number``; its result, or None when the run stops."""
        uc = self.uc
        kind = self.SYSCALLS.get(number)
        if kind == WRITE:
            if a0 not in (1, 2):
                return -EBADF
            data = bytes(uc.mem_read(a1, a2))
            if a0 == 1 and self.on_stdout is not None:
                try:
                    self.on_stdout(self.decoder.decode(data))
                except BaseException as e:
                    self.sink_error = e
                    uc.emu_stop()
                    return None
            else:
                (self.out if a0 == 1 else self.err).extend(data)
            return a2
        if kind == MMAP:
            return self._mmap(a1)
        if kind == MPROTECT:
            return self._mprotect(a0, a1, a2)
        if kind == EXIT:
            self.status = a0 & 0xFF
            uc.emu_stop()
            return None
        return -ENOSYS

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

    def _mmap(self, size: int) -> int:
        """Fresh zeroed read-write memory (unicorn maps lazily: untouched pages are free)."""
        from unicorn import UcError
        from unicorn.unicorn_const import UC_PROT_READ, UC_PROT_WRITE

        size = up(size)
        if size == 0 or size > 1 << 40:
            return -ENOMEM
        try:
            self.uc.mem_map(self.next_map, size, UC_PROT_READ | UC_PROT_WRITE)
        except UcError:
            return -ENOMEM
        addr = self.next_map
        self.next_map += size + PAGE  # a gap: running off the end faults, as natively
        return addr

    def _mprotect(self, addr: int, size: int, prot: int) -> int:
        """The runtime's guard below its stack (``mprotect(base, guard, PROT_NONE)``),
        accepted and not applied: unicorn would split the stack's region and copy all of
        it (a gigabyte touched per run). No need: the stack is the first ``mmap``, at
        MMAP_BASE, and nothing is mapped below it, so running off its end faults here
        too (one page later than natively, the same crash line)."""
        return 0

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


def _emulate(m: Machine, entry: int, timeout_s: float, max_instructions: int) -> None:
    """Run from ``entry`` until the program exits, faults, or the time (or instruction
    count) is up: ONE ``emu_start``, never resumed.

    It runs on a worker thread (ctypes lets go of the GIL) while this thread waits in short
    joins, so Python handles Ctrl-C, SIGTERM and SIGHUP at once: the handler's exception
    stops the engine (``emu_stop``) and propagates. The run used to be cut into 0.25 s
    slices resumed at the program counter, but unicorn does not resume exactly after a
    timeout (it runs the interrupted instruction again: unicorn issues #1565, #1105): a
    long x86-64 loop of ``add qword ptr [rsp], 1`` counted a few too many, and AArch64 runs
    crashed on a load after ``add x9, x9, x11, lsl #4``."""
    # unicorn's timeout is a 64-bit count of microseconds: 10^12 s is as good as none
    timeout = int(min(timeout_s, 1e12) * 1_000_000)
    count = max_instructions or 0
    failure: list[BaseException] = []
    done = threading.Event()  # (not Thread.join: an interrupted join marks the worker dead)

    def run() -> None:
        try:
            m.uc.emu_start(entry, 0, timeout=timeout, count=count)
        except BaseException as e:  # handed to the waiting thread, raised there
            failure.append(e)
        finally:
            done.set()

    try:
        threading.Thread(target=run, name="unicorn", daemon=True).start()
    except RuntimeError:  # no threads here (a browser build): one run on this thread
        run()
    else:
        try:
            while not done.wait(0.05):
                pass
        except BaseException:
            while not done.is_set():  # (a stop before the run began is ignored: repeat)
                m.uc.emu_stop()
                done.wait(0.1)
            raise
    if failure:
        raise failure[0]


def run_machine(m: Machine, entry: int, timeout_s: float, max_instructions: int
                ) -> ChildResult:
    """Run ``m`` from ``entry``: its status and output, a crash line, or a limit; what the
    output callback raised propagates. The engine is freed before this returns: each holds
    a large translation buffer and its hooks make a reference cycle only the cyclic
    collector would break (paused while representations are built), so hundreds of runs
    in one process would exhaust memory ("Could not allocate dynamic translator buffer",
    a make fuzz finding)."""
    from unicorn import UcError
    from unicorn.unicorn_const import UC_ERR_INSN_INVALID

    try:
        crash, signum = "", 0
        try:
            _emulate(m, entry, timeout_s, max_instructions)
        except UcError as e:
            signum = SIGILL if e.errno == UC_ERR_INSN_INVALID else SIGSEGV
            crash = crash_line(signum, f"{e} at {m.PC_NAME} {m.pc():#x}", "emulated")
        if m.sink_error is not None:
            raise m.sink_error
        if m.fault is not None and not crash:
            signum = m.fault_signal(m.fault)
            crash = crash_line(signum, f"CPU exception {m.fault} at {m.PC_NAME} {m.pc():#x}",
                               "emulated")
    finally:
        m.close()
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
