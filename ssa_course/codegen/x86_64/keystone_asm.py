"""The keystone path: keystone-engine encodes instructions, :mod:`layout` does the rest.

keystone assembles Intel syntax, but its symbol handling does not give GNU's bytes (found
by trying, keystone 0.9.2): ``[rip + sym]`` to a resolved symbol is off by the length of
the instruction's tail, ``call sym`` and ``jmp sym`` are off by four, ``.text`` can crash it,
and a ``mov`` from an absolute address picks another encoding. So keystone only ever sees
one instruction without symbols, exactly like our own encoder
(:mod:`ssa_course.codegen.x86_64.encode`): :func:`ssa_course.codegen.x86_64.layout.lay_out` places
sections, labels, branches and rip-relative displacements around it.

One more keystone bug (found by the byte comparison on a program with an argument of
65535 passed on the stack): ``push 65408`` .. ``push 65535`` come out as ``push imm8``
(``6a 80`` .. ``6a ff``), which pushes -128 .. -1. Those pushes are encoded by keystone
with another immediate of the imm32 form and the four bytes replaced (GNU's ``68 imm32``).
"""

from __future__ import annotations

import re

from ssa_course.codegen.asm_data import AssemblerError
from ssa_course.codegen.elf import Sections
from ssa_course.codegen.x86_64.layout import lay_out, parse

__all__ = ["AssemblerError", "KeystoneEncoder", "assemble_keystone", "parse"]

_PUSH_IMM = re.compile(r"^push\s+(-?(?:0x[0-9a-fA-F]+|\d+))$")
_MISREAD = range(0xFF80, 0x10000)  # keystone 0.9.2 writes these as push imm8


class KeystoneEncoder:
    """keystone, one symbol-free instruction at a time."""

    def __init__(self) -> None:
        from keystone import KS_ARCH_X86, KS_MODE_64, Ks

        self.ks = Ks(KS_ARCH_X86, KS_MODE_64)

    def __call__(self, text: str) -> bytes:
        m = _PUSH_IMM.match(text.strip())
        if m is not None and int(m.group(1), 0) in _MISREAD:
            form = self._asm("push 0x10000")  # 68 00 00 01 00: the imm32 form
            return form[:1] + int(m.group(1), 0).to_bytes(4, "little")
        return self._asm(text)

    def _asm(self, text: str) -> bytes:
        from keystone import KsError

        try:
            enc, _ = self.ks.asm(text, 0)
        except KsError as e:
            raise AssemblerError(f"keystone cannot assemble '{text}': {e}") from None
        if not enc:
            raise AssemblerError(f"keystone produced nothing for '{text}'")
        return bytes(enc)


def assemble_keystone(source: str, text_addr: int, data_addr: int, bss_addr: int) -> Sections:
    """Assemble ``source`` at the given addresses (the same bytes GNU ``as``+``ld`` give)."""
    return lay_out(source, KeystoneEncoder(), text_addr, data_addr, bss_addr)
