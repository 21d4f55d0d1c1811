"""Small pieces of AArch64 assembly text the runtime is written with: constants, data
addresses, strings for ``write``, the ``mmap`` system call."""

from __future__ import annotations

from ssa_course.codegen.aarch64.emit import load_constant
from ssa_course.codegen.runtime_abi import MAP_PRIVATE_ANON_NORESERVE, PROT_RW, length_of

SYS_WRITE, SYS_MMAP, SYS_EXIT_GROUP = 64, 222, 94  # Linux aarch64 (asm-generic numbers)
SYS_MPROTECT = 226


def const(reg: str, value: int) -> str:
    """Lines that load ``value`` into ``reg`` (movz/movn/movk or orr)."""
    return "".join(f"    {line}\n" for line in load_constant(reg, value))


def addr(reg: str, symbol: str) -> str:
    """``reg`` = the address of a data symbol (its 4 KiB page, then the offset in it)."""
    return f"    adrp {reg}, {symbol}\n    add {reg}, {reg}, :lo12:{symbol}\n"


def string(symbol: str) -> str:
    """x1 = the string's address, x2 = its length (rt_err_write's arguments)."""
    return addr("x1", symbol) + const("x2", length_of(symbol))


def mmap(size_reg: str) -> str:
    """``mmap(0, size, rw, private|anonymous|noreserve, -1, 0)`` -> x0."""
    return (f"    movz x0, #0\n    mov x1, {size_reg}\n" + const("x2", PROT_RW)
            + const("x3", MAP_PRIVATE_ANON_NORESERVE) + const("x4", -1)
            + "    movz x5, #0\n" + const("x8", SYS_MMAP) + "    svc #0\n")
