"""A minimal ELF64 executable: written for the keystone path, read for the GNU path.

The writer makes what ``ld -static -nostdlib`` makes for our programs: a text segment
(read + execute), a data segment (read + write) and a zero-filled bss segment, each at its
fixed address, plus a symbol table so ``objdump`` and gdb see the functions. The reader
takes the three sections and the symbols back out of either kind of file.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

PAGE = 0x1000
_EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
_PHDR = struct.Struct("<IIQQQQQQ")
_SHDR = struct.Struct("<IIQQQQIIQQ")
_SYM = struct.Struct("<IBBHQQ")
PT_LOAD, PF_X, PF_W, PF_R = 1, 1, 2, 4
SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB, SHT_NOBITS = 1, 2, 3, 8
SHF_WRITE, SHF_ALLOC, SHF_EXEC = 1, 2, 4
STT_OBJECT, STT_FUNC, STB_GLOBAL = 1, 2, 1
# Symbols ld adds on its own; they are not the program's.
LINKER_SYMBOLS = frozenset({"__bss_start", "_edata", "_end"})


@dataclass(slots=True)
class Sections:
    """The loadable contents of an executable and its symbols (name -> address)."""

    text: bytes
    text_addr: int
    data: bytes
    data_addr: int
    bss_size: int
    bss_addr: int
    entry: int
    symbols: dict[str, int]


def _align(n: int, a: int) -> int:
    return (n + a - 1) // a * a


def write_elf(s: Sections) -> bytes:
    """An executable ELF64 file for x86-64 Linux holding ``s``."""
    text_off = PAGE
    data_off = _align(text_off + len(s.text), PAGE)
    end = data_off + len(s.data)
    phdrs = [
        _PHDR.pack(PT_LOAD, PF_R | PF_X, text_off, s.text_addr, s.text_addr,
                   len(s.text), len(s.text), PAGE),
        _PHDR.pack(PT_LOAD, PF_R | PF_W, data_off, s.data_addr, s.data_addr,
                   len(s.data), len(s.data), PAGE),
        _PHDR.pack(PT_LOAD, PF_R | PF_W, 0, s.bss_addr, s.bss_addr, 0, s.bss_size, PAGE),
    ]
    # Symbol and string tables after the data, then the section headers.
    strtab = bytearray(b"\0")
    syms = [_SYM.pack(0, 0, 0, 0, 0, 0)]
    for name, addr in sorted(s.symbols.items(), key=lambda kv: (kv[1], kv[0])):
        if s.text_addr <= addr < s.text_addr + len(s.text):
            shndx, kind = 1, STT_FUNC
        elif s.data_addr <= addr < s.data_addr + max(1, len(s.data)):
            shndx, kind = 2, STT_OBJECT
        else:
            shndx, kind = 3, STT_OBJECT
        syms.append(_SYM.pack(len(strtab), (STB_GLOBAL << 4) | kind, 0, shndx, addr, 0))
        strtab += name.encode() + b"\0"
    shstr = bytearray(b"\0")
    names = {}
    for n in (".text", ".data", ".bss", ".symtab", ".strtab", ".shstrtab"):
        names[n] = len(shstr)
        shstr += n.encode() + b"\0"
    sym_off = _align(end, 8)
    symbytes = b"".join(syms)
    str_off = sym_off + len(symbytes)
    shstr_off = str_off + len(strtab)
    sh_off = _align(shstr_off + len(shstr), 8)
    shdrs = [
        _SHDR.pack(0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
        _SHDR.pack(names[".text"], SHT_PROGBITS, SHF_ALLOC | SHF_EXEC, s.text_addr, text_off,
                   len(s.text), 0, 0, 16, 0),
        _SHDR.pack(names[".data"], SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, s.data_addr, data_off,
                   len(s.data), 0, 0, 8, 0),
        _SHDR.pack(names[".bss"], SHT_NOBITS, SHF_ALLOC | SHF_WRITE, s.bss_addr, data_off,
                   s.bss_size, 0, 0, 8, 0),
        _SHDR.pack(names[".symtab"], SHT_SYMTAB, 0, 0, sym_off, len(symbytes), 5, 1,
                   8, _SYM.size),
        _SHDR.pack(names[".strtab"], SHT_STRTAB, 0, 0, str_off, len(strtab), 0, 0, 1, 0),
        _SHDR.pack(names[".shstrtab"], SHT_STRTAB, 0, 0, shstr_off, len(shstr), 0, 0, 1, 0),
    ]
    ident = b"\x7fELF" + bytes([2, 1, 1, 0]) + bytes(8)
    ehdr = _EHDR.pack(ident, 2, 62, 1, s.entry, _EHDR.size, sh_off, 0, _EHDR.size,
                      _PHDR.size, len(phdrs), _SHDR.size, len(shdrs), len(shdrs) - 1)
    out = bytearray(sh_off + _SHDR.size * len(shdrs))
    out[0:_EHDR.size] = ehdr
    out[_EHDR.size:_EHDR.size + _PHDR.size * len(phdrs)] = b"".join(phdrs)
    out[text_off:text_off + len(s.text)] = s.text
    out[data_off:end] = s.data
    out[sym_off:str_off] = symbytes
    out[str_off:shstr_off] = strtab
    out[shstr_off:shstr_off + len(shstr)] = shstr
    out[sh_off:] = b"".join(shdrs)
    return bytes(out)


def read_elf(blob: bytes) -> Sections:
    """The ``.text``/``.data``/``.bss`` sections and the symbols of an executable."""
    if blob[:4] != b"\x7fELF" or blob[4] != 2:
        raise ValueError("not an ELF64 file")
    hdr = _EHDR.unpack_from(blob, 0)
    entry, shoff, shentsize, shnum, shstrndx = hdr[4], hdr[6], hdr[11], hdr[12], hdr[13]
    shdrs = [_SHDR.unpack_from(blob, shoff + k * shentsize) for k in range(shnum)]
    strsec = shdrs[shstrndx]

    def name_at(table_off: int, off: int) -> str:
        end = blob.index(b"\0", table_off + off)
        return blob[table_off + off:end].decode()

    by_name = {name_at(strsec[4], sh[0]): (k, sh) for k, sh in enumerate(shdrs)}

    def section(name: str) -> tuple[int, bytes, int, int]:
        if name not in by_name:
            return -1, b"", 0, 0
        k, sh = by_name[name]
        body = b"" if sh[1] == SHT_NOBITS else blob[sh[4]:sh[4] + sh[5]]
        return k, body, sh[3], sh[5]

    ti, text, text_addr, _ = section(".text")
    di, data, data_addr, _ = section(".data")
    bi, _, bss_addr, bss_size = section(".bss")
    symbols: dict[str, int] = {}
    if ".symtab" in by_name:
        _, sym = by_name[".symtab"]
        strtab_off = shdrs[sym[6]][4]
        for k in range(sym[5] // _SYM.size):
            st_name, _info, _other, shndx, value, _size = _SYM.unpack_from(
                blob, sym[4] + k * _SYM.size)
            if shndx in (ti, di, bi) and st_name:
                name = name_at(strtab_off, st_name)
                if name not in LINKER_SYMBOLS:
                    symbols[name] = value
    return Sections(text, text_addr, data, data_addr, bss_size, bss_addr, entry, symbols)
