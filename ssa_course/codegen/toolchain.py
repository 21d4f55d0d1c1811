"""What this machine can do with machine code, each "no" with a one-line reason.

Every ``*_missing`` function returns ``None`` when the capability is there, or the
sentence to show (a stage's error, a test's skip reason); nothing of that kind raises on a
missing tool. :func:`choose_assembler` is the one place an assembler is picked.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import platform
import shutil
import sys
import tempfile
from collections.abc import Callable
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


def find_gnu(prefixes: tuple[str, ...]) -> tuple[str, str] | None:
    """The first ``<prefix>as`` + ``<prefix>ld`` pair on the PATH (both targets), or None."""
    for prefix in prefixes:
        tools = (shutil.which(prefix + "as"), shutil.which(prefix + "ld"))
        if tools[0] and tools[1]:
            return tools[0], tools[1]
    return None


def gnu_tools() -> tuple[str, str] | None:
    """The GNU assembler and linker for x86-64 (``as``, ``ld`` or a cross pair), or None."""
    return find_gnu(("", *CROSS_PREFIXES) if is_x86_64() else CROSS_PREFIXES)


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
    """Why keystone-engine cannot be used (for either target), or None."""
    if not _module("keystone"):
        return ("no keystone-engine: pip install keystone-engine (its wheels are for x86-64 "
                "machines only)")
    return None


def own_missing() -> str | None:
    """Our own assembler (:mod:`ssa_course.codegen.x86_64.encode`) is pure Python: always
    there."""
    return None


TARGET = "x86-64"
ASSEMBLERS = ("gnu", "keystone", "own")  # the order "auto" tries them in
ASSEMBLER_CHOICES = (*ASSEMBLERS, "auto")


TARGETS = (TARGET, "aarch64")


def _checks(target: str) -> dict[str, Callable[[], str | None]]:
    """Each assembler of ``target`` and the function saying why it cannot be used."""
    if target not in TARGETS:
        raise UsageError(f"unknown target '{target}' (known: {', '.join(TARGETS)})")
    # Each CPU's machine lists its assemblers (the registry loads the CPU when asked).
    from ssa_course.codegen.machines import machine

    return machine(target).assembler_checks()


def assembler_missing(name: str = "auto", target: str = TARGET) -> str | None:
    """Why assembler ``name`` (or, for "auto", every one) cannot be used, or None."""
    checks = _checks(target)
    if name == "auto":
        reasons = [check() for check in checks.values()]
        return None if None in reasons else "; ".join(r for r in reasons if r)
    if name not in checks:
        raise UsageError(f"unknown assembler '{name}' (known: {', '.join(ASSEMBLER_CHOICES)})")
    return checks[name]()


def choose_assembler(target: str = TARGET, name: str = "auto") -> str:
    """The assembler that makes ``target``'s bytes: ``name`` itself when it is installed
    (else :class:`ToolMissing` saying why), or for "auto" the first installed of GNU
    ``as``, keystone and our own (always there): the one place that choice is made."""
    require(assembler_missing(name, target))
    if name != "auto":
        return name
    return next(n for n, check in _checks(target).items() if check() is None)


# Pyodide (sys.platform "emscripten": the course in a browser, docs/lite.md) starts no
# processes, and its package lock has no unicorn (nor capstone): the one reason every stage
# that runs machine code gives there, instead of advice that cannot help (pip install ...)
BROWSER_REASON = ("cannot run machine code in a browser: Pyodide starts no programs and "
                  "has no unicorn emulator (the own assembler and the listings work)")


def browser_missing() -> str | None:
    """:data:`BROWSER_REASON` when running in a browser (Pyodide), else None."""
    return BROWSER_REASON if sys.platform == "emscripten" else None


def native_missing() -> str | None:
    """Why assembled programs cannot run as child processes here, or None."""
    if browser_missing():
        return BROWSER_REASON
    if not (sys.platform.startswith("linux") and is_x86_64()):
        return (f"native runs need x86-64 Linux (this is {sys.platform} on "
                f"{platform.machine()}): use --via emulated")
    return None


def emulator_missing() -> str | None:
    """Why the unicorn executor cannot run (for either target), or None."""
    if browser_missing():
        return BROWSER_REASON
    if not _module("unicorn"):
        return "no unicorn: pip install unicorn"
    return None


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
