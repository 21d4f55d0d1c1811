"""Laying out AArch64 assembly: labels to addresses, symbols to numbers, data to bytes.

With fixed-length instructions the layout is one pass: each instruction takes 4 bytes,
so every label's address is known before any instruction is encoded (x86-64 needs
rounds of branch relaxation). Then each instruction's symbols become numbers
(:func:`resolve`) and an encoder turns it into its word: our own (:mod:`.encode`) or
keystone's, one instruction at a time. The source subset is what :mod:`.emit` and
:mod:`.runtime` write: ``.text``/``.data``/``.bss``, ``.globl``, ``.balign``, ``.quad``,
``.byte``, ``.ascii``, ``.zero``, labels, ``//`` comments.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ssa_course.codegen.aarch64.encode import EncodeError, encode
from ssa_course.codegen.asm_data import DATA_WORDS, AssemblerError, data_bytes, strip_comment
from ssa_course.codegen.elf import Sections
from ssa_course.tiny.lexer import split_lines

_LO12 = re.compile(r":lo12:([A-Za-z_.$][\w.$]*)")
_BRANCHES = ("b", "bl", "cbz", "cbnz")


@dataclass(slots=True)
class Laid:
    """The source laid out: each section's items, every label's address."""

    text: list[tuple[int, str, int]] = field(default_factory=list)  # (address, instr, line)
    data: bytearray = field(default_factory=bytearray)
    bss: int = 0
    labels: dict[str, int] = field(default_factory=dict)


def lay_out(source: str, text_addr: int, data_addr: int, bss_addr: int) -> Laid:
    out = Laid()
    section = "text"
    for number, raw in enumerate(split_lines(source), 1):
        line = strip_comment(raw, "//")
        while line and re.match(r"^[A-Za-z_.$][\w.$]*:", line):
            name, line = line.split(":", 1)
            line = line.strip()
            where = {"text": text_addr + 4 * len(out.text),
                     "data": data_addr + len(out.data), "bss": bss_addr + out.bss}[section]
            if name in out.labels:
                raise AssemblerError(f"line {number}: label {name} defined twice")
            out.labels[name] = where
        if not line:
            continue
        word, _, arg = line.partition(" ")
        if word in (".text", ".data", ".bss"):
            section = word[1:]
        elif word == ".globl":
            continue
        elif word == ".balign":
            n = int(arg, 0)
            if section == "data":
                out.data += bytes(-len(out.data) % n)
            elif section == "bss":
                out.bss += -out.bss % n
            elif len(out.text) * 4 % n:
                raise AssemblerError(f"line {number}: .balign in text")
        elif word in DATA_WORDS:
            if section == "text":
                raise AssemblerError(f"line {number}: data in the text section")
            if word == ".zero" and section == "bss":
                out.bss += int(arg, 0)
                continue
            if section == "bss":
                raise AssemblerError(f"line {number}: initialised data in .bss")
            # The data bytes, comments and strings are read as x86-64's own assembler
            # reads them (codegen/layout.py); only the instructions are AArch64's.
            out.data += data_bytes(word, arg)
        elif word.startswith("."):
            raise AssemblerError(f"line {number}: unknown directive {word}")
        elif section != "text":
            raise AssemblerError(f"line {number}: an instruction outside .text")
        else:
            out.text.append((text_addr + 4 * len(out.text), line, number))
    return out


def resolve(instr: str, pc: int, labels: dict[str, int]) -> str:
    """``instr`` with its symbols replaced by numbers: a branch target or ``adrp``'s page
    by its address (``#0x401100``), ``adr`` by ``.+offset``, ``:lo12:sym`` by the low 12
    bits of the address."""
    def address(name: str) -> int:
        if name not in labels:
            raise AssemblerError(f"undefined symbol {name} in `{instr}`")
        return labels[name]

    instr = _LO12.sub(lambda m: f"#{address(m.group(1)) & 0xFFF}", instr)
    op, _, rest = instr.partition(" ")
    parts = [p.strip() for p in rest.split(",")]
    if op in _BRANCHES or op.startswith("b."):
        parts[-1] = f"#{address(parts[-1]):#x}"
    elif op == "adrp":
        parts[1] = f"#{address(parts[1]) & ~0xFFF:#x}"  # the page
    elif op == "adr":
        off = address(parts[1]) - pc
        parts[1] = f".+{off}" if off >= 0 else f".-{-off}"
    else:
        return instr
    return f"{op} " + ", ".join(parts)


def _keystone_encoder() -> Callable[[str, int], int]:
    from keystone import KS_ARCH_ARM64, KS_MODE_LITTLE_ENDIAN, Ks, KsError

    ks = Ks(KS_ARCH_ARM64, KS_MODE_LITTLE_ENDIAN)

    def word(text: str, pc: int) -> int:
        try:
            encoding, _ = ks.asm(text, pc)
        except KsError as e:
            raise EncodeError(f"keystone: {e}") from None
        if not encoding or len(encoding) != 4:
            raise EncodeError(f"keystone gave {len(encoding or [])} bytes")
        return int.from_bytes(bytes(encoding), "little")
    return word


def assemble_sections(source: str, text_addr: int, data_addr: int, bss_addr: int,
                      encoder: str = "own") -> Sections:
    """Assemble ``source`` with ``encoder`` (``"own"`` or ``"keystone"``) into sections."""
    laid = lay_out(source, text_addr, data_addr, bss_addr)
    word = encode if encoder == "own" else _keystone_encoder()
    text = bytearray()
    for pc, instr, number in laid.text:
        try:
            text += word(resolve(instr, pc, laid.labels), pc).to_bytes(4, "little")
        except EncodeError as e:
            raise AssemblerError(f"line {number}: `{instr}`: {e}") from None
    entry = laid.labels.get("_start", text_addr)
    symbols = {n: a for n, a in laid.labels.items() if not n.startswith(".L")}
    return Sections(bytes(text), text_addr, bytes(laid.data), data_addr, laid.bss, bss_addr,
                    entry, symbols)
