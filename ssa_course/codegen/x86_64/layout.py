"""What an assembler does around its instruction encoder: sections, labels, branches.

An encoder turns one instruction without symbols into bytes (ours,
:mod:`ssa_course.codegen.x86_64.encode`, or keystone's,
:mod:`ssa_course.codegen.x86_64.keystone_asm`);
this module does the rest, the way GNU ``as`` + ``ld`` do it for our programs:

* data and bss directives (``.quad .byte .zero .ascii .balign``) become bytes here;
* a branch to a label (``jmp``, ``jcc``, ``call``) is encoded here, short when the target
  is within a byte, near otherwise, relaxed the way GNU ``as`` relaxes (start short, grow
  what does not fit, repeat until nothing changes);
* ``[rip + sym + k]`` becomes ``[rip + disp]`` with the displacement computed from the
  instruction's address and length (the length does not depend on the displacement):
  the encoder sees a marker displacement, which is then patched.

The result is the :class:`~ssa_course.codegen.elf.Sections` the ELF writer writes. The
source subset (docs/codegen.md, "Layout and assemblers") is what every backend accepts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol

from ssa_course.codegen.asm_data import (
    DATA_WORDS,
    AssemblerError,
    data_bytes,
    number,
    strip_comment,
)
from ssa_course.codegen.elf import Sections
from ssa_course.codegen.x86_64 import encode as x86_encode
from ssa_course.codegen.x86_64.table import CONDITIONS, REGISTERS
from ssa_course.tiny.lexer import split_lines

_IDENT = r"[A-Za-z_.$][\w.$]*"
_LABEL = re.compile(rf"^({_IDENT}):\s*(.*)$")
_RIP = re.compile(rf"\[\s*rip\s*\+\s*({_IDENT})\s*(?:([+-])\s*(0x[0-9a-fA-F]+|\d+))?\s*\]")
_BRANCH = re.compile(rf"^(jmp|call|j[a-z]{{1,3}})\s+({_IDENT})$")
_IGNORED = (".intel_syntax", ".globl", ".global", ".section .note", ".type", ".size")


@dataclass(slots=True)
class _Instr:
    text: str  # as written (rip operands still symbolic)
    kind: str  # "fixed" | "rip" | "branch"
    size: int = 0
    target: str = ""
    op: str = ""
    short: bool = True  # branches: the rel8 form
    addr: int = 0


@dataclass(slots=True)
class _Parsed:
    text: list[_Instr | str] = field(default_factory=list)  # str = a label
    data: bytearray = field(default_factory=bytearray)
    data_labels: dict[str, int] = field(default_factory=dict)
    bss_size: int = 0
    bss_labels: dict[str, int] = field(default_factory=dict)


def parse(source: str) -> _Parsed:
    """Split the source into text items, data bytes and bss size, with their labels."""
    p = _Parsed()
    section = ".text"
    for raw in split_lines(source):
        line = strip_comment(raw)
        while line:
            m = _LABEL.match(line)
            if m is None or "[" in m.group(1):
                break
            name = m.group(1)
            if section == ".text":
                p.text.append(name)
            elif section == ".data":
                p.data_labels[name] = len(p.data)
            else:
                p.bss_labels[name] = p.bss_size
            line = m.group(2).strip()
        if not line or line.startswith(_IGNORED):
            continue
        if line in (".text", ".data", ".bss"):
            section = line
            continue
        word, _, arg = line.partition(" ")
        if word.startswith("."):
            _directive(p, section, word, arg, line)
        elif section != ".text":
            raise AssemblerError(f"instruction outside .text: {line}")
        else:
            p.text.append(_classify(line))
    return p


def _directive(p: _Parsed, section: str, word: str, arg: str, line: str) -> None:
    if section == ".bss":
        if word == ".zero":
            p.bss_size += number(arg)
        elif word == ".balign":
            p.bss_size = -(-p.bss_size // number(arg)) * number(arg)
        else:
            raise AssemblerError(f"only .zero and .balign in .bss: {line}")
        return
    if section != ".data":
        raise AssemblerError(f"directive in .text: {line}")
    if word in DATA_WORDS:
        p.data += data_bytes(word, arg)
    elif word == ".balign":
        p.data += bytes(-len(p.data) % number(arg))
    else:
        raise AssemblerError(f"unsupported directive: {line}")


def _classify(line: str) -> _Instr:
    line = " ".join(line.split())
    m = _BRANCH.match(line)
    if m and m.group(2) not in REGISTERS:
        op = m.group(1)
        if op in ("jmp", "call") or op[1:] in CONDITIONS:
            return _Instr(line, "branch", target=m.group(2), op=op, short=op != "call")
    if _RIP.search(line):
        return _Instr(line, "rip")
    return _Instr(line, "fixed")


class Encoder(Protocol):
    """Turns one instruction (Intel syntax, no symbols) into its bytes, or raises
    :class:`AssemblerError`."""

    def __call__(self, text: str) -> bytes: ...


class _Cached:
    """An encoder with a cache (most instructions of a program repeat)."""

    def __init__(self, encoder: Encoder) -> None:
        self.encoder = encoder
        self.cache: dict[str, bytes] = {}

    def encode(self, text: str) -> bytes:
        got = self.cache.get(text)
        if got is None:
            got = self.cache[text] = self.encoder(text)
            if not got:
                raise AssemblerError(f"the encoder produced nothing for '{text}'")
        return got

    def encode_rip(self, text: str, symbols: dict[str, int], end: int) -> bytes:
        """``text`` with its ``[rip + sym + k]`` operand resolved, for an instruction ending
        at ``end``: encoded once with a marker displacement, then the marker is patched."""
        m = _RIP.search(text)
        assert m is not None
        name = m.group(1)
        if name not in symbols:
            raise AssemblerError(f"undefined symbol '{name}' in '{text}'")
        k = number(m.group(3)) if m.group(3) else 0
        disp = symbols[name] + (-k if m.group(2) == "-" else k) - end
        if not -(1 << 31) <= disp < 1 << 31:
            raise AssemblerError(f"'{name}' is out of rip-relative reach in '{text}'")
        shape = _RIP.sub(f"[rip + {_MARKER:#x}]", text, count=1)
        code = self.encode(shape)
        at = code.find(_MARKER.to_bytes(4, "little"))
        if at < 0 or code.find(_MARKER.to_bytes(4, "little"), at + 1) >= 0:
            raise AssemblerError(f"cannot place the displacement of '{text}'")
        return code[:at] + disp.to_bytes(4, "little", signed=True) + code[at + 4:]


_MARKER = 0x5A3C_E1F7  # a displacement no immediate of ours looks like


def _branch_bytes(ins: _Instr, rel: int) -> bytes:
    return x86_encode.branch(ins.op, rel, ins.short)


def _branch_size(ins: _Instr) -> int:
    return x86_encode.branch_size(ins.op, ins.short)


def lay_out(source: str, encoder: Encoder, text_addr: int, data_addr: int,
            bss_addr: int) -> Sections:
    """Assemble ``source`` at the given addresses with ``encoder`` for the instructions
    (the same bytes GNU ``as`` + ``ld`` give)."""
    p = parse(source)
    enc = _Cached(encoder)
    symbols = {n: data_addr + o for n, o in p.data_labels.items()}
    symbols.update({n: bss_addr + o for n, o in p.bss_labels.items()})
    items = p.text
    for ins in items:
        if isinstance(ins, _Instr) and ins.kind != "branch":
            probe = (_RIP.sub(f"[rip + {_MARKER:#x}]", ins.text, count=1)
                     if ins.kind == "rip" else ins.text)
            ins.size = len(enc.encode(probe))
    seen: set[str] = set()
    for ins in items:
        if isinstance(ins, str):
            if ins in seen or ins in symbols:
                raise AssemblerError(f"symbol '{ins}' is already defined")
            seen.add(ins)
    labels: dict[str, int] = {}
    changed = True
    while changed:  # relaxation: only ever grows, so it ends
        addr = text_addr
        for ins in items:
            if isinstance(ins, str):
                labels[ins] = addr
            else:
                ins.addr = addr
                addr += _branch_size(ins) if ins.kind == "branch" else ins.size
        changed = False
        for ins in items:
            if isinstance(ins, _Instr) and ins.kind == "branch" and ins.short:
                if ins.target not in labels:
                    raise AssemblerError(f"undefined label '{ins.target}' in '{ins.text}'")
                rel = labels[ins.target] - (ins.addr + 2)
                if not -128 <= rel <= 127:
                    ins.short = False
                    changed = True
    symbols.update(labels)
    out = bytearray()
    for ins in items:
        if isinstance(ins, str):
            continue
        if ins.kind == "branch":
            size = _branch_size(ins)
            out += _branch_bytes(ins, labels[ins.target] - (ins.addr + size))
        elif ins.kind == "rip":
            out += enc.encode_rip(ins.text, symbols, ins.addr + ins.size)
        else:
            out += enc.encode(ins.text)
    public = {n: a for n, a in symbols.items() if not n.startswith(".L")}
    return Sections(bytes(out), text_addr, bytes(p.data), data_addr, p.bss_size, bss_addr,
                    symbols.get("_start", text_addr), public)
