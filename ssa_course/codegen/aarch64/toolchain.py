"""What this machine can do with AArch64 machine code, each "no" with a one-line reason
(the x86-64 side is :mod:`ssa_course.codegen.toolchain`; :class:`ToolMissing` and the
private work directory are shared)."""

from __future__ import annotations

import platform
import shutil
import sys

from ssa_course.codegen.toolchain import ToolMissing, _module, browser_missing, require, work_dir

__all__ = ["ToolMissing", "gnu_missing", "gnu_tools", "is_aarch64", "keystone_missing",
           "native_missing", "qemu_missing", "qemu_path", "require", "work_dir"]

CROSS_PREFIXES = ("aarch64-linux-gnu-", "aarch64-elf-")


def is_aarch64() -> bool:
    return platform.machine().lower() in ("aarch64", "arm64")


def gnu_tools() -> tuple[str, str] | None:
    """The GNU assembler and linker for AArch64: a cross pair, or ``as``/``ld`` on an
    aarch64 Linux machine."""
    native = ("",) if is_aarch64() and sys.platform.startswith("linux") else ()
    for prefix in (*CROSS_PREFIXES, *native):
        tools = (shutil.which(prefix + "as"), shutil.which(prefix + "ld"))
        if tools[0] and tools[1]:
            return tools[0], tools[1]
    return None


def gnu_missing() -> str | None:
    if gnu_tools() is not None:
        return None
    return ("no GNU assembler for aarch64 ('aarch64-linux-gnu-as'): install "
            "binutils-aarch64-linux-gnu (apt-get install binutils-aarch64-linux-gnu)")


def keystone_missing() -> str | None:
    if not _module("keystone"):
        return ("no keystone-engine: pip install keystone-engine (its wheels are for x86-64 "
                "machines only)")
    return None


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


def emulator_missing() -> str | None:
    if reason := browser_missing():
        return reason
    if not _module("unicorn"):
        return "no unicorn: pip install unicorn"
    return None


def disassembler_missing() -> str | None:
    if reason := browser_missing():  # its run is emulated
        return reason
    if not _module("capstone"):
        return "no capstone: pip install capstone"
    return None
