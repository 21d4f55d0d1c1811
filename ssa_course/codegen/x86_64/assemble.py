"""x86-64 assembly source -> an executable :class:`~ssa_course.codegen.assemble.Image`, by
GNU ``as`` + ``ld``, keystone, or our own encoder (:mod:`.encode`, pure Python, so always
there); all three give the same bytes at the same addresses.

Which assembler: the ``backend`` argument, else the one chosen for the current context
(:func:`ssa_course.codegen.assemble.using_assembler`), else "auto"
(:func:`ssa_course.codegen.toolchain.choose_assembler`).
"""

from __future__ import annotations

import os

from ssa_course.codegen import toolchain
from ssa_course.codegen.asm_data import AssemblerError
from ssa_course.codegen.assemble import (
    BACKENDS,
    BSS_ADDR,
    DATA_ADDR,
    TEXT_ADDR,
    Image,
    cached,
    chosen_assembler,
    image_differences,
    image_of,
    link_gnu,
    write_executable,
)
from ssa_course.codegen.elf import Sections, read_elf
from ssa_course.codegen.x86_64.encode import EncodeError, encode
from ssa_course.codegen.x86_64.keystone_asm import assemble_keystone
from ssa_course.codegen.x86_64.layout import lay_out

# Assembling is the slow step of a lesson cell (a subprocess pair for GNU); the same
# source is assembled again and again (run, disassemble, compare), so images are cached
# by (source hash, backend). Bounded: a long session must not grow without limit.
_CACHE: dict[tuple[str, str], Image] = {}


def assemble(source: str, backend: str | None = None) -> Image:
    """Assemble and link ``source`` (cached by its hash): ``backend`` is ``"gnu"``,
    ``"keystone"``, ``"own"`` or ``"auto"`` (the first installed of those three); None
    means the context's choice (:func:`using_assembler`, "auto" by default).

    A missing backend raises :class:`toolchain.ToolMissing` with a one-line reason; source
    the assembler rejects raises :class:`AssemblerError` (a code generator bug)."""
    # A programming error (argparse's `choices` check --assembler before it gets here), hence
    # ValueError rather than UsageError.
    if backend is not None and backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, not {backend!r}")
    backend = toolchain.choose_assembler(toolchain.TARGET, backend or chosen_assembler())
    if backend == "gnu":
        return cached(_CACHE, source, backend, lambda digest: _assemble_gnu(source, digest))
    return cached(_CACHE, source, backend,
                  lambda digest: _assemble_in_process(source, digest, backend))


def _assemble_gnu(source: str, digest: str) -> Image:
    tools = toolchain.gnu_tools()
    assert tools is not None  # checked by the caller
    base = os.path.join(toolchain.work_dir(), f"gnu-{digest}")
    elf = link_gnu(source, base, tools, ["--64"], ["-m", "elf_x86_64"])
    return image_of(read_elf(elf), base, "gnu")


def own_encoder(text: str) -> bytes:
    """Our encoder as the layout wants it: an instruction it cannot encode is an
    :class:`AssemblerError` like keystone's."""
    try:
        return encode(text)
    except EncodeError as e:
        raise AssemblerError(f"cannot assemble '{text}': {e}") from None


def assemble_own(source: str, text_addr: int = TEXT_ADDR, data_addr: int = DATA_ADDR,
                 bss_addr: int = BSS_ADDR) -> Sections:
    """Assemble ``source`` with our own encoder (no tool, no package: pure Python)."""
    return lay_out(source, own_encoder, text_addr, data_addr, bss_addr)


def _assemble_in_process(source: str, digest: str, backend: str) -> Image:
    s = (assemble_keystone(source, TEXT_ADDR, DATA_ADDR, BSS_ADDR) if backend == "keystone"
         else assemble_own(source))
    path = os.path.join(toolchain.work_dir(), f"{backend}-{digest}")
    write_executable(s, path)
    return image_of(s, path, backend)


def backend_differences(source: str, first: str = "gnu", second: str = "keystone"
                        ) -> list[str]:
    """What differs between two assemblers' images of ``source``: the names of functions
    whose bytes differ, plus ``"data"``/``"bss"``/``"symbols"``; empty when the two agree.
    Both must be installed (else :class:`toolchain.ToolMissing`)."""
    return image_differences(assemble(source, first), assemble(source, second))
