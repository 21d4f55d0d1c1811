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
import subprocess

from ssa_course.codegen import toolchain as choices
from ssa_course.codegen.aarch64 import toolchain
from ssa_course.codegen.assemble import (
    BSS_ADDR,
    DATA_ADDR,
    TEXT_ADDR,
    Image,
    current_assembler,
    source_hash,
)
from ssa_course.codegen.elf import Sections, read_elf, write_elf
from ssa_course.codegen.keystone_asm import AssemblerError

ASSEMBLERS = ("own", "gnu", "keystone")
EM_AARCH64 = 183
# Symbols GNU ld adds on its own for aarch64 (beyond the x86-64 ones elf.py drops)
LINKER_SYMBOLS = frozenset({"__bss_start__", "_bss_end__", "__bss_end__", "__end__"})

_CACHE: dict[tuple[str, str], Image] = {}
_CACHE_SIZE = 256


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
    key = (source_hash(source), backend)
    image = _CACHE.get(key)
    if image is None or not os.path.exists(image.path):
        if backend == "gnu":
            image = _assemble_gnu(source, key[0])
        else:
            from ssa_course.codegen.aarch64.layout import assemble_sections

            image = _write(assemble_sections(source, TEXT_ADDR, DATA_ADDR, BSS_ADDR, backend),
                           key[0], backend)
        if len(_CACHE) >= _CACHE_SIZE:
            del _CACHE[next(iter(_CACHE))]
        _CACHE[key] = image
    return image


def _image(s: Sections, path: str, backend: str) -> Image:
    symbols = {n: a for n, a in s.symbols.items()  # $x/$d: ld's mapping symbols
               if not n.startswith("$") and n not in LINKER_SYMBOLS}
    text_end = s.text_addr + len(s.text)
    starts = sorted((a, n) for n, a in symbols.items() if s.text_addr <= a < text_end)
    sizes = {}
    for k, (address, name) in enumerate(starts):
        nxt = starts[k + 1][0] if k + 1 < len(starts) else text_end
        sizes[name] = nxt - address
    return Image(s.text, s.data, s.bss_size, symbols, s.entry, path, backend,
                 s.text_addr, s.data_addr, s.bss_addr, sizes)


def _assemble_gnu(source: str, digest: str) -> Image:
    tools = toolchain.gnu_tools()
    assert tools is not None
    gas, gld = tools
    base = os.path.join(toolchain.work_dir(), f"a64-gnu-{digest}")
    with open(base + ".s", "w") as f:
        f.write(source)
    steps = [
        [gas, "-o", base + ".o", base + ".s"],
        [gld, "-static", "-nostdlib", "-z", "noexecstack", "-e", "_start",
         f"-Ttext={TEXT_ADDR:#x}", f"-Tdata={DATA_ADDR:#x}", f"-Tbss={BSS_ADDR:#x}",
         "-o", base, base + ".o"],
    ]
    for cmd in steps:
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            lines = (done.stderr or done.stdout).strip().splitlines()[:8]
            raise AssemblerError(f"{os.path.basename(cmd[0])} failed on {base}.s:\n"
                                 + "\n".join(lines))
    with open(base, "rb") as f:
        return _image(read_elf(f.read()), base, "gnu")


def _write(s: Sections, digest: str, backend: str) -> Image:
    blob = bytearray(write_elf(s))
    blob[18:20] = EM_AARCH64.to_bytes(2, "little")  # e_machine: the writer says x86-64
    path = os.path.join(toolchain.work_dir(), f"a64-{backend}-{digest}")
    with open(path, "wb") as f:
        f.write(bytes(blob))
    os.chmod(path, 0o700)
    return _image(s, path, backend)


def differences(source: str, a: str = "gnu", b: str = "own") -> list[str]:
    """What differs between two assemblers' images of ``source`` (function names whose
    bytes differ, ``data``, ``bss``, ``symbols``); empty when they agree."""
    x, y = assemble(source, a), assemble(source, b)
    diffs = [name for name, _, _ in x.functions()
             if x.function_bytes(name) != (y.function_bytes(name) if name in y.sizes
                                           else None)]
    if x.text != y.text and not diffs:
        diffs.append("text")
    for name, p, q in (("data", x.data, y.data), ("bss", x.bss_size, y.bss_size),
                       ("symbols", x.symbols, y.symbols)):
        if p != q:
            diffs.append(name)
    return diffs
