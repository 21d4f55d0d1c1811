"""Running an AArch64 executable as a real process: natively on an aarch64 Linux machine,
or on any Linux machine under ``qemu-aarch64`` (qemu's user mode translates the program's
instructions and passes its system calls to this kernel). Both go through the x86-64
side's child-process runner (:func:`ssa_course.codegen.native.run_native`: timeout,
captured streams, a death by signal as one ``error:`` line)."""

from __future__ import annotations

from ssa_course.codegen.aarch64 import toolchain
from ssa_course.codegen.assemble import Image
from ssa_course.codegen.native import (
    DEFAULT_TIMEOUT_S,
    ChildResult,
    deliver,
    format_args,
    run_native,
)
from ssa_course.runtime import Output


def run_qemu(image: Image, args: list[str], timeout_s: float = DEFAULT_TIMEOUT_S
             ) -> ChildResult:
    toolchain.require(toolchain.qemu_missing())
    return run_native(image, args, timeout_s, launcher=(toolchain.qemu_path() or "",))


def run_native_a64(image: Image, args: list[str], timeout_s: float = DEFAULT_TIMEOUT_S
                   ) -> ChildResult:
    toolchain.require(toolchain.native_missing())
    return run_native(image, args, timeout_s, launcher=("/usr/bin/env",))


def run_values_qemu(image: Image, values: list[object], out: Output,
                    timeout_s: float = DEFAULT_TIMEOUT_S) -> int:
    return deliver(run_qemu(image, format_args(values), timeout_s), out)


def run_values_native_a64(image: Image, values: list[object], out: Output,
                          timeout_s: float = DEFAULT_TIMEOUT_S) -> int:
    return deliver(run_native_a64(image, format_args(values), timeout_s), out)
