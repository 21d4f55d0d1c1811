"""The x86-64 ``disasm`` view: the assembled bytes read back by capstone, function by function.

Each line is ``address: bytes  mnemonic operands``; a direct branch or call to a known
symbol is annotated with its name, so the listing reads like ``objdump -d`` without it.
"""

from __future__ import annotations

import bisect
import re

from ssa_course.codegen import toolchain
from ssa_course.codegen.assemble import Image
from ssa_course.codegen.disasm import BYTES_WIDTH, by_function


def disassemble(image: Image, only: list[str] | None = None) -> str:
    """The listing of every text symbol of ``image`` (or of the names in ``only``)."""
    # capstone is imported late, after a one-line ToolMissing check: a machine without
    # it can still do everything but disassemble.
    toolchain.require(toolchain.disassembler_missing())
    from capstone import CS_ARCH_X86, CS_MODE_64, Cs

    cs = Cs(CS_ARCH_X86, CS_MODE_64)
    names = {addr: name for name, addr in image.symbols.items()}
    data_names = sorted((addr, name) for name, addr in image.symbols.items())
    width = 3 * BYTES_WIDTH

    def decode(addr: int, size: int, code: bytes) -> list[str]:
        lines: list[str] = []
        done = 0
        for ins in cs.disasm(code, addr):
            text = f"{ins.mnemonic} {ins.op_str}".rstrip()
            target = _target(ins.op_str)
            if target is not None and target in names:
                text += f"  <{names[target]}>"
            rip = _RIP.search(ins.op_str)
            if rip is not None:  # a data (or handler) address: name it like objdump
                where = ins.address + ins.size + int(rip.group(1).replace(" ", ""), 16)
                text += f"  # {_name(where, data_names)}"
            raw = ins.bytes.hex(" ")
            lines.append(f"  {ins.address:x}: {raw:<{width}} {text}")
            done = ins.address + ins.size - addr
        if done < size:  # capstone stops at bytes it cannot decode: show them as data
            lines.append(f"  {addr + done:x}: {code[done:].hex(' ')}  (not decoded)")
        return lines

    return by_function(image, only, decode)


_RIP = re.compile(r"\[rip ([+-] 0x[0-9a-f]+)\]")


def _name(addr: int, symbols: list[tuple[int, str]]) -> str:
    """``symbol+offset`` of the nearest symbol at or below ``addr``."""
    k = bisect.bisect_right(symbols, (addr, "\uffff")) - 1
    if k < 0:
        return f"{addr:#x}"
    base, name = symbols[k]
    return name if base == addr else f"{name}+{addr - base:#x}"


def _target(op_str: str) -> int | None:
    """The address of a direct branch/call operand (``0x401020``), else None."""
    if op_str.startswith("0x"):
        try:
            return int(op_str, 16)
        except ValueError:
            return None
    return None
