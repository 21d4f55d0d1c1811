"""AArch64 assembly source -> an executable image, by one of three assemblers.

* ``own`` -- :mod:`.encode` (pure Python: every instruction is one 32-bit word, so the
  layout is a single pass; :mod:`.layout` places labels and data);
* ``gnu`` -- ``aarch64-linux-gnu-as`` + ``-ld`` (Debian's binutils-aarch64-linux-gnu);
* ``keystone`` -- keystone's ARM64 mode, handed one instruction at a time with every
  symbol already resolved by :mod:`.layout` (as the x86-64 keystone path does).

All three place the program at the same fixed addresses as x86-64 (text ``0x401000``,
data ``0x20000000``, bss ``0x30000000``) and give the same bytes (a test checks it). The
result is the x86-64 side's :class:`~ssa_course.codegen.assemble.Image`; its ELF file
says ``EM_AARCH64``.
"""

from __future__ import annotations

import os

from ssa_course.codegen import toolchain as choices
from ssa_course.codegen.aarch64 import toolchain
from ssa_course.codegen.assemble import (
    BSS_ADDR,
    DATA_ADDR,
    TEXT_ADDR,
    Image,
    cached,
    current_assembler,
    image_of,
    link_gnu,
    write_executable,
)
from ssa_course.codegen.elf import Sections, read_elf

ASSEMBLERS = ("own", "gnu", "keystone")
EM_AARCH64 = 183
# Symbols GNU ld adds on its own for aarch64 (beyond the x86-64 ones elf.py drops)
LINKER_SYMBOLS = frozenset({"__bss_start__", "_bss_end__", "__bss_end__", "__end__"})

_CACHE: dict[tuple[str, str], Image] = {}  # (source hash, backend) -> image


def assembler_missing(name: str) -> str | None:
    """Why assembler ``name`` cannot be used for aarch64 here, or None."""
    if name not in ASSEMBLERS:
        return f"unknown assembler {name!r} (expected one of {', '.join(ASSEMBLERS)})"
    return choices.assembler_missing(name, "aarch64")


def default_assembler() -> str:
    """What ``"auto"`` means here: the ``--assembler`` choice in force
    (:func:`ssa_course.codegen.assemble.using_assembler`), else the first installed of GNU,
    keystone and our own -- one choice for both targets (:func:`toolchain.choose_assembler`)."""
    return current_assembler("aarch64")


def assemble(source: str, backend: str = "auto") -> Image:
    """Assemble and link ``source`` for AArch64 (cached by its hash). ``backend`` is one
    of :data:`ASSEMBLERS` or ``"auto"`` (:func:`default_assembler`: GNU, keystone, own)."""
    if backend == "auto":
        backend = default_assembler()
    if backend not in ASSEMBLERS:
        raise ValueError(f"backend must be one of {', '.join(ASSEMBLERS)} or auto, "
                         f"not {backend!r}")
    toolchain.require(assembler_missing(backend))
    return cached(_CACHE, source, backend, lambda digest: _make(source, digest, backend))


def _make(source: str, digest: str, backend: str) -> Image:
    if backend == "gnu":
        return _assemble_gnu(source, digest)
    from ssa_course.codegen.aarch64.layout import assemble_sections

    s = assemble_sections(source, TEXT_ADDR, DATA_ADDR, BSS_ADDR, backend)
    path = os.path.join(toolchain.work_dir(), f"a64-{backend}-{digest}")
    write_executable(s, path, EM_AARCH64)
    return _image(s, path, backend)


def _image(s: Sections, path: str, backend: str) -> Image:
    symbols = {n: a for n, a in s.symbols.items()  # $x/$d: ld's mapping symbols
               if not n.startswith("$") and n not in LINKER_SYMBOLS}
    return image_of(s, path, backend, symbols)


def _assemble_gnu(source: str, digest: str) -> Image:
    tools = toolchain.gnu_tools()
    assert tools is not None  # checked by the caller
    base = os.path.join(toolchain.work_dir(), f"a64-gnu-{digest}")
    return _image(read_elf(link_gnu(source, base, tools, [], [])), base, "gnu")

