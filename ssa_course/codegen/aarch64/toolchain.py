"""What this machine can do with AArch64 machine code, each "no" with a one-line reason
(the x86-64 side is :mod:`ssa_course.codegen.toolchain`; :class:`ToolMissing`, the search
for a GNU pair, keystone, unicorn and the private work directory are shared)."""

from __future__ import annotations

import platform
import shutil
import sys

from ssa_course.codegen.toolchain import (
    ToolMissing,
    browser_missing,
    emulator_missing,
    find_gnu,
    keystone_missing,
    require,
    work_dir,
)
from ssa_course.codegen.toolchain import disassembler_missing as _capstone_missing

__all__ = ["ToolMissing", "disassembler_missing", "emulator_missing", "gnu_missing",
           "gnu_tools", "is_aarch64", "keystone_missing", "native_missing", "qemu_missing",
           "qemu_path", "require", "work_dir"]

CROSS_PREFIXES = ("aarch64-linux-gnu-", "aarch64-elf-")


def is_aarch64() -> bool:
    return platform.machine().lower() in ("aarch64", "arm64")


def gnu_tools() -> tuple[str, str] | None:
    """The GNU assembler and linker for AArch64: a cross pair, or ``as``/``ld`` on an
    aarch64 Linux machine."""
    native = ("",) if is_aarch64() and sys.platform.startswith("linux") else ()
    return find_gnu((*CROSS_PREFIXES, *native))


def gnu_missing() -> str | None:
    if gnu_tools() is not None:
        return None
    return ("no GNU assembler for aarch64 ('aarch64-linux-gnu-as'): install "
            "binutils-aarch64-linux-gnu (apt-get install binutils-aarch64-linux-gnu)")


def qemu_path() -> str | None:
    return shutil.which("qemu-aarch64")


def qemu_missing() -> str | None:
    """Why an aarch64 Linux executable cannot run under qemu-user here, or None."""
    if reason := browser_missing():
        return reason
    if not sys.platform.startswith("linux"):
        return f"qemu-aarch64 (user mode) runs on Linux only (this is {sys.platform})"
    if qemu_path() is None:
        return "no qemu-aarch64: install qemu-user (apt-get install qemu-user)"
    return None


def native_missing() -> str | None:
    # What the kernel can execute, not what ``platform.machine()`` reports: the imitated
    # ARM laptop of the tests (tests/laptop/) reports arm64 on an x86-64 kernel.
    import os

    if reason := browser_missing():
        return reason
    if not (sys.platform.startswith("linux") and is_aarch64()
            and os.uname().machine.lower() in ("aarch64", "arm64")):
        return (f"native aarch64 runs need aarch64 Linux (this is {sys.platform} on "
                f"{platform.machine()}): use --via emulated-aarch64 or qemu-aarch64")
    return None


def disassembler_missing() -> str | None:
    if reason := browser_missing():  # its run is emulated
        return reason
    return _capstone_missing()
