"""The keystone path: keystone-engine encodes instructions, :mod:`layout` does the rest.

keystone assembles Intel syntax, but its symbol handling does not give GNU's bytes (found
by trying, keystone 0.9.2): ``[rip + sym]`` to a resolved symbol is off by the length of
the instruction's tail, ``call sym`` and ``jmp sym`` are off by four, ``.text`` can crash it,
and a ``mov`` from an absolute address picks another encoding. So keystone only ever sees
one instruction without symbols, exactly like our own encoder
(:mod:`ssa_course.codegen.x86_encode`): :func:`ssa_course.codegen.layout.lay_out` places
sections, labels, branches and rip-relative displacements around it.
"""

from __future__ import annotations

from ssa_course.codegen.elf import Sections
from ssa_course.codegen.layout import AssemblerError, lay_out, parse

__all__ = ["AssemblerError", "KeystoneEncoder", "assemble_keystone", "parse"]


class KeystoneEncoder:
    """keystone, one symbol-free instruction at a time."""

    def __init__(self) -> None:
        from keystone import KS_ARCH_X86, KS_MODE_64, Ks

        self.ks = Ks(KS_ARCH_X86, KS_MODE_64)

    def __call__(self, text: str) -> bytes:
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
