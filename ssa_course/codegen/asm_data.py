"""What every target's own assembler reads the same way: comments, data directives, and the
error for source outside what an assembler accepts.
"""

from __future__ import annotations


class AssemblerError(Exception):
    """The source is outside what the assembler accepts (a bug of the code generator)."""


def strip_comment(line: str, marker: str = "#") -> str:
    """``line`` without its comment (from ``marker``: ``#`` in x86-64's Intel syntax, ``//``
    in AArch64's) and surrounding spaces; a marker inside a string stays. Both of our own
    assemblers read their source with it."""
    quoted = False
    for k, ch in enumerate(line):
        if ch == '"' and (k == 0 or line[k - 1] != "\\"):
            quoted = not quoted
        elif not quoted and line.startswith(marker, k):
            return line[:k].strip()
    return line.strip()


def number(text: str) -> int:
    """An integer as assemblers write it (decimal, 0x hex, 0o octal, 0b binary)."""
    return int(text.strip(), 0)


def ascii_bytes(arg: str) -> bytes:
    """The bytes of an ``.ascii`` string (``\\n``, ``\\t``, ``\\\\``, ``\\"``, ``\\r``, ``\\0`` and
    three-digit octal escapes)."""
    body = arg.strip()
    if len(body) < 2 or body[0] != '"' or body[-1] != '"':
        raise AssemblerError(f"bad string: {arg}")
    body = body[1:-1]
    out = bytearray()
    k = 0
    simple = {"n": 10, "t": 9, "\\": 92, '"': 34, "r": 13, "0": 0}
    while k < len(body):
        ch = body[k]
        if ch != "\\":
            out += ch.encode()
            k += 1
        elif body[k + 1:k + 4].isdigit() and len(body[k + 1:k + 4]) == 3:
            out.append(int(body[k + 1:k + 4], 8) & 0xFF)
            k += 4
        elif body[k + 1:k + 2] in simple:
            out.append(simple[body[k + 1]])
            k += 2
        else:
            raise AssemblerError(f"unknown escape in string: {arg}")
    return bytes(out)


DATA_WORDS = (".quad", ".byte", ".zero", ".ascii")


def data_bytes(word: str, arg: str) -> bytes:
    """The bytes data directive ``word`` (one of :data:`DATA_WORDS`) puts in ``.data``:
    little-endian quads and bytes (wrapped to their width), zeros, a string. Both of our
    own assemblers (x86-64, AArch64) lay out their data with it."""
    if word == ".quad":
        return b"".join((number(v) & (1 << 64) - 1).to_bytes(8, "little")
                        for v in arg.split(","))
    if word == ".byte":
        return bytes(number(v) & 0xFF for v in arg.split(","))
    if word == ".zero":
        return bytes(number(arg))
    if word == ".ascii":
        return ascii_bytes(arg)
    raise AssemblerError(f"not a data directive: {word}")
