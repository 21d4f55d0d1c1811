"""Running an AArch64 executable as a real process: natively on an aarch64 Linux machine,
or on any Linux machine under ``qemu-aarch64`` (qemu's user mode translates the program's
instructions and passes its system calls to this kernel). Both go through the x86-64
side's child-process runner (:func:`ssa_course.codegen.native.run_native`: timeout,
output streamed as it is printed, a death by signal as one ``error:`` line)."""

from __future__ import annotations

from ssa_course.codegen.aarch64 import toolchain
from ssa_course.codegen.assemble import Image
from ssa_course.codegen.child import DEFAULT_TIMEOUT_S, ChildResult
from ssa_course.codegen.native import run_native, run_values_native
from ssa_course.runtime import Output


def run_qemu(image: Image, args: list[str], timeout_s: float = DEFAULT_TIMEOUT_S
             ) -> ChildResult:
    """Run ``image`` under qemu, its output captured in the result (not streamed)."""
    toolchain.require(toolchain.qemu_missing())
    return run_native(image, args, timeout_s, launcher=(toolchain.qemu_path() or "",))


def run_native_a64(image: Image, args: list[str], timeout_s: float = DEFAULT_TIMEOUT_S
                   ) -> ChildResult:
    """Run ``image`` on this aarch64 machine, its output captured (not streamed)."""
    toolchain.require(toolchain.native_missing())
    return run_native(image, args, timeout_s, launcher=("/usr/bin/env",))


def run_values_qemu(image: Image, values: list[object], out: Output,
                    timeout_s: float = DEFAULT_TIMEOUT_S) -> int:
    """The executor interface under qemu: output streamed into ``out`` as it is printed
    (``| head -1`` stops the run at once, as on x86-64)."""
    toolchain.require(toolchain.qemu_missing())
    return run_values_native(image, values, out, timeout_s,
                             launcher=(toolchain.qemu_path() or "",))


def run_values_native_a64(image: Image, values: list[object], out: Output,
                          timeout_s: float = DEFAULT_TIMEOUT_S) -> int:
    """The executor interface on an aarch64 machine: output streamed, as under qemu."""
    toolchain.require(toolchain.native_missing())
    return run_values_native(image, values, out, timeout_s, launcher=("/usr/bin/env",))
