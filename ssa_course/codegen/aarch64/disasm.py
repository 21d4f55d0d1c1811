"""The ``disasm-aarch64`` view: an AArch64 image read back by capstone, function by
function (``address: word  mnemonic operands``; branch targets named)."""

from __future__ import annotations

import re

from ssa_course.codegen.aarch64 import toolchain
from ssa_course.codegen.assemble import Image
from ssa_course.codegen.disasm import by_function

_TARGET = re.compile(r"#(0x[0-9a-f]+)$")


def disassemble(image: Image, only: list[str] | None = None) -> str:
    """The listing of every text symbol of ``image`` (or of the names in ``only``)."""
    toolchain.require(toolchain.disassembler_missing())
    from capstone import CS_ARCH_ARM64, CS_MODE_ARM, Cs

    cs = Cs(CS_ARCH_ARM64, CS_MODE_ARM)
    names = {addr: name for name, addr in image.symbols.items()}

    def decode(addr: int, _size: int, code: bytes) -> list[str]:
        lines: list[str] = []
        for k in range(0, len(code), 4):  # fixed-length: one word at a time
            word = code[k:k + 4]
            decoded = next(cs.disasm(word, addr + k), None)
            if decoded is None:
                lines.append(f"  {addr + k:x}: {word[::-1].hex()}  (not decoded)")
                continue
            text = f"{decoded.mnemonic} {decoded.op_str}".rstrip()
            m = _TARGET.search(decoded.op_str)
            if m is not None and int(m.group(1), 16) in names and decoded.mnemonic in (
                    "b", "bl", "cbz", "cbnz", "adr") or m is not None and \
                    decoded.mnemonic.startswith("b.") and int(m.group(1), 16) in names:
                text += f"  <{names[int(m.group(1), 16)]}>"
            lines.append(f"  {addr + k:x}: {word[::-1].hex()}  {text}")
        return lines

    # The walk over functions is x86-64's (disasm.by_function); only decoding differs.
    return by_function(image, only, decode)
