"""What this machine can do with machine code, each "no" with a one-line reason.

Every function returns ``None`` when the capability is there, or the sentence to show (a
stage's error, a test's skip reason). Nothing here raises on a missing tool.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import platform
import shutil
import sys
import tempfile
from functools import cache

from ssa_course.errors import UsageError


class ToolMissing(UsageError):
    """A backend cannot work on this machine; the message says what to install."""


def is_x86_64() -> bool:
    return platform.machine().lower() in ("x86_64", "amd64")


def _module(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


# Cross binutils that target x86-64 ELF from another machine (Debian's
# binutils-x86-64-linux-gnu, Homebrew's x86_64-elf-binutils), tried after the plain names.
CROSS_PREFIXES = ("x86_64-linux-gnu-", "x86_64-elf-")


def gnu_tools() -> tuple[str, str] | None:
    """The GNU assembler and linker for x86-64 (``as``, ``ld`` or a cross pair), or None."""
    prefixes = ("", *CROSS_PREFIXES) if is_x86_64() else CROSS_PREFIXES
    for prefix in prefixes:
        tools = (shutil.which(prefix + "as"), shutil.which(prefix + "ld"))
        if tools[0] and tools[1]:
            return tools[0], tools[1]
    return None


def gnu_missing() -> str | None:
    """Why GNU ``as`` + ``ld`` (for x86-64) cannot be used, or None."""
    if gnu_tools() is not None:
        return None
    if not is_x86_64():
        return (f"no GNU assembler for x86-64 on this {platform.machine()} machine: install "
                "binutils-x86-64-linux-gnu (or x86_64-elf-binutils)")
    if shutil.which("as") is None:
        return "no GNU assembler ('as'): install binutils (apt-get install binutils)"
    return "no GNU linker ('ld'): install binutils (apt-get install binutils)"


def keystone_missing() -> str | None:
    """Why the in-process assembler cannot be used, or None."""
    if not _module("keystone"):
        return ("no keystone-engine: pip install keystone-engine (its wheels are for x86-64 "
                "machines only)")
    return None


def assembler_missing() -> str | None:
    """Why no assembler at all is available, or None."""
    gnu, ks = gnu_missing(), keystone_missing()
    if gnu is None or ks is None:
        return None
    return f"{gnu}; {ks}"


def native_missing() -> str | None:
    """Why assembled programs cannot run as child processes here, or None."""
    if not (sys.platform.startswith("linux") and is_x86_64()):
        return (f"native runs need x86-64 Linux (this is {sys.platform} on "
                f"{platform.machine()}): use --via emulated")
    return assembler_missing()


def emulator_missing() -> str | None:
    """Why the unicorn executor cannot run, or None."""
    if not _module("unicorn"):
        return "no unicorn: pip install unicorn"
    return assembler_missing()


def disassembler_missing() -> str | None:
    if not _module("capstone"):
        return "no capstone: pip install capstone"
    return None


def require(reason: str | None) -> None:
    """Raise :class:`ToolMissing` with ``reason`` when there is one."""
    if reason is not None:
        raise ToolMissing(reason)


@cache
def work_dir() -> str:
    """A private directory (mode 0700) for this process's assembled programs.

    ``SSA_COURSE_NATIVE_DIR`` chooses where (for machines whose /tmp is mounted noexec).
    """
    base = os.environ.get("SSA_COURSE_NATIVE_DIR") or None
    if base is not None:
        os.makedirs(base, exist_ok=True)
    path = tempfile.mkdtemp(prefix="ssa-course-native-", dir=base)
    atexit.register(shutil.rmtree, path, True)  # executables live as long as the process
    return path
