"""Run an assembled program's bytes under unicorn (x86-64 emulated, any host).

The process, its system calls, the slices, the limits and how a run ends are
:mod:`ssa_course.codegen.emulator`'s (shared with AArch64); this module is the x86-64 CPU:
a system call is the ``syscall`` instruction (number in rax, arguments in rdi, rsi, rdx,
result in rax), a CPU exception (divide error, breakpoint, invalid opcode) is the signal
Linux sends for it. The result has the same shape and the same text as
:func:`ssa_course.codegen.native.run_native`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ssa_course.codegen import toolchain
from ssa_course.codegen.assemble import Image
from ssa_course.codegen.child import DEFAULT_TIMEOUT_S, ChildResult
from ssa_course.codegen.emulator import (
    EXIT,
    MMAP,
    MPROTECT,
    SIGILL,
    SIGSEGV,
    WRITE,
    Machine,
    encode_argv,
    image_segments,
    run_machine,
)
from ssa_course.codegen.native import deliver, format_args
from ssa_course.codegen.runtime_abi import SYS_EXIT_GROUP, SYS_MMAP, SYS_MPROTECT, SYS_WRITE
from ssa_course.runtime import Output

# The Linux x86-64 system call numbers are the runtime's (runtime_abi): it needs only
# these three (write its output, map heap chunks, exit), so the emulator implements exactly
# these and nothing else.
# x86 exception vectors -> the signal Linux sends: divide error, breakpoint, invalid opcode
_FAULT_SIGNALS = {0: 8, 3: 5, 6: SIGILL}


class _Machine(Machine):
    """One emulated x86-64 process."""

    SYSCALLS = {SYS_WRITE: WRITE, SYS_MMAP: MMAP, SYS_MPROTECT: MPROTECT,
                SYS_EXIT_GROUP: EXIT}
    PC_NAME = "rip"

    # unicorn is imported only when an emulated run happens: it is not installed in the
    # browser build (emscripten, see pyproject.toml), and the back end must import there.
    def engine(self) -> Any:
        from unicorn import UC_ARCH_X86, UC_MODE_64, Uc

        return Uc(UC_ARCH_X86, UC_MODE_64)

    def sp_reg(self) -> int:
        from unicorn.x86_const import UC_X86_REG_RSP

        return int(UC_X86_REG_RSP)

    def pc_reg(self) -> int:
        from unicorn.x86_const import UC_X86_REG_RIP

        return int(UC_X86_REG_RIP)

    def install(self) -> None:
        from unicorn import UC_HOOK_INSN, UC_HOOK_INTR
        from unicorn.x86_const import UC_X86_INS_SYSCALL

        self.hooks.append(self.uc.hook_add(UC_HOOK_INSN, self._syscall, None, 1, 0,
                                           UC_X86_INS_SYSCALL))
        self.hooks.append(self.uc.hook_add(UC_HOOK_INTR, self._interrupt))

    def fault_signal(self, intno: int) -> int:
        return _FAULT_SIGNALS.get(intno, SIGSEGV)

    def _interrupt(self, _uc: object, intno: int, _data: object) -> None:
        self.stop_on_fault(intno)

    def syscall_regs(self) -> tuple[int, tuple[int, int, int], int]:
        from unicorn.x86_const import (
            UC_X86_REG_RAX,
            UC_X86_REG_RDI,
            UC_X86_REG_RDX,
            UC_X86_REG_RSI,
        )

        # The Linux syscall convention: number in rax, arguments in rdi, rsi, rdx (not the
        # System V function-call registers, which use rcx where the kernel uses r10), result
        # in rax.
        return UC_X86_REG_RAX, (UC_X86_REG_RDI, UC_X86_REG_RSI, UC_X86_REG_RDX), UC_X86_REG_RAX

    def _syscall(self, _uc: object, _data: object) -> None:
        self.serve_syscall()


def run_emulated(image: Image, args: list[str], timeout_s: float = DEFAULT_TIMEOUT_S,
                 max_instructions: int = 0,
                 on_stdout: Callable[[str], object] | None = None) -> ChildResult:
    """Run ``image`` under unicorn with ``args`` (after ``argv[0]``); ``max_instructions``
    0 means no count limit (counting slows unicorn down), the time limit always holds.
    Output streams to ``on_stdout`` when given, and what it raises stops the run and
    propagates, as with :func:`ssa_course.codegen.child.run_child`."""
    toolchain.require(toolchain.emulator_missing())
    m = _Machine(image_segments(image), encode_argv(args), on_stdout)
    return run_machine(m, image.entry, timeout_s, max_instructions)


def run_values_emulated(image: Image, values: list[object], out: Output,
                        timeout_s: float = DEFAULT_TIMEOUT_S) -> int:
    """The executor interface over an emulated run: typed ``main`` arguments in, status
    out, errors raised as the interpreters raise them (see :func:`native.deliver`)."""
    return deliver(run_emulated(image, format_args(values), timeout_s, on_stdout=out.write),
                   out)
