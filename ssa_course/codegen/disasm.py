"""The ``disasm`` view's shape, for every target: an image's functions one by one, each
decoded by its CPU's disassembler (``x86_64/disasm.py``, ``aarch64/disasm.py``).
"""

from __future__ import annotations

from collections.abc import Callable

from ssa_course.codegen.assemble import Image

BYTES_WIDTH = 10  # bytes shown per line before the mnemonic (longer ones wrap like objdump)


def by_function(image: Image, only: list[str] | None,
                decode: Callable[[int, int, bytes], list[str]]) -> str:
    """The listing both targets share: for each function of ``image`` (those in ``only``,
    when given) in address order, a ``<name>:`` header and the lines its target's
    ``decode(address, size, bytes)`` makes; a blank line between functions."""
    lines: list[str] = []
    for name, addr, size in image.functions():
        if only is not None and name not in only:
            continue
        if lines:
            lines.append("")
        lines.append(f"{addr:016x} <{name}>:")
        # One function at a time from its own bytes: data or padding between functions
        # can never desynchronise the decoding of the next one.
        lines += decode(addr, size, image.function_bytes(name))
    return "\n".join(lines) + "\n"
