"""The x86-64 instructions our code uses, as data: registers and opcode forms, written the
way the Intel manual (SDM volume 2) writes them, for :mod:`ssa_course.codegen.x86_64.encode`.

One row is one *form*: a mnemonic, the kinds of its operands and its encoding::

    add   r/m64, imm8     REX.W 83 /0 ib

Operand kinds: ``r8 r32 r64`` a register of that width; ``r/m8 r/m32 r/m64`` a register or
memory of that width; ``xmm`` an SSE register, ``xmm/m64`` one or a qword of memory;
``m`` any memory (``lea``); ``imm8 imm32 imm64`` an immediate that fits in that many bits
(after sign extension to the operand width); ``1`` the number 1;
``al eax rax`` exactly that register; ``rel8 rel32`` a branch displacement.

Encoding words: ``REX.W`` (64-bit operand: the REX prefix with W=1); ``F3`` and other hex
bytes, in order; ``+r`` the register number in the opcode's low three bits; ``/r`` a ModRM
byte whose ``reg`` field holds the register operand; ``/0``..``/7`` a ModRM byte whose
``reg`` field holds that digit (an opcode extension); ``ib id io`` an immediate of 1, 4
or 8 bytes; ``cb cd`` a branch displacement of 1 or 4 bytes. In a ``cc`` row the mnemonic
ends in a condition (``jcc``, ``setcc``, ``cmovcc``) and ``+cc`` adds its number.

Where several forms fit, the assembler takes the shortest, and among equally short ones
the first in this table: that is what GNU ``as`` does for every instruction we emit (and
for ``xchg rax, rax``, which GNU writes as the one-byte ``nop``, hence its own row).
"""

from __future__ import annotations

from dataclasses import dataclass

# Register number (0-15) and width in bits. Numbers 8-15 need a REX prefix bit.
_NAMES64 = ("rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi")
_NAMES32 = ("eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi")
_NAMES8 = ("al", "cl", "dl", "bl", "spl", "bpl", "sil", "dil")
REGISTERS: dict[str, tuple[int, int]] = {
    **{n: (k, 64) for k, n in enumerate(_NAMES64)},
    **{f"r{k}": (k, 64) for k in range(8, 16)},
    **{n: (k, 32) for k, n in enumerate(_NAMES32)},
    **{f"r{k}d": (k, 32) for k in range(8, 16)},
    **{n: (k, 8) for k, n in enumerate(_NAMES8)},
    **{f"r{k}b": (k, 8) for k in range(8, 16)},
    # SSE2's sixteen registers (issue #36: floats); only their low 64 bits are used
    **{f"xmm{k}": (k, 128) for k in range(16)},
}
# spl, bpl, sil, dil exist only with a REX prefix (without one, 4-7 mean ah, ch, dh, bh).
NEEDS_REX = frozenset({"spl", "bpl", "sil", "dil"})

# Condition codes: the low four bits of jcc (70+cc), setcc (0F 90+cc), cmovcc (0F 40+cc).
CONDITIONS: dict[str, int] = {
    "o": 0, "no": 1, "b": 2, "c": 2, "nae": 2, "ae": 3, "nb": 3, "nc": 3, "e": 4, "z": 4,
    "ne": 5, "nz": 5, "be": 6, "na": 6, "a": 7, "nbe": 7, "s": 8, "ns": 9, "p": 10,
    "pe": 10, "np": 11, "po": 11, "l": 12, "nge": 12, "ge": 13, "nl": 13, "le": 14,
    "ng": 14, "g": 15, "nle": 15,
}

# Rows are templates expanded per operation below, so the regular parts of the ISA are
# written once: a fix to one form fixes it for add, sub, and, or, xor and cmp together.
# The eight classic ALU operations share one layout: operation n has opcodes 8n+0..8n+5
# for its register forms and the digit /n in the 80/81/83 immediate group.
_ALU = {"add": 0, "or": 1, "adc": 2, "sbb": 3, "and": 4, "sub": 5, "xor": 6, "cmp": 7}
_ALU_ROWS = """
{op}  r/m8, imm8      80 /{n} ib
{op}  r/m32, imm8     83 /{n} ib
{op}  r/m64, imm8     REX.W 83 /{n} ib
{op}  al, imm8        {b4:02X} ib
{op}  eax, imm32      {b5:02X} id
{op}  rax, imm32      REX.W {b5:02X} id
{op}  r/m32, imm32    81 /{n} id
{op}  r/m64, imm32    REX.W 81 /{n} id
{op}  r/m8, r8        {b0:02X} /r
{op}  r/m32, r32      {b1:02X} /r
{op}  r/m64, r64      REX.W {b1:02X} /r
{op}  r8, r/m8        {b2:02X} /r
{op}  r32, r/m32      {b3:02X} /r
{op}  r64, r/m64      REX.W {b3:02X} /r
"""

# Shifts: one opcode group, the operation in the ModRM digit.
_SHIFT = {"shl": 4, "sal": 4, "shr": 5, "sar": 7}
_SHIFT_ROWS = """
{op}  r/m64, 1        REX.W D1 /{n}
{op}  r/m64, imm8     REX.W C1 /{n} ib
{op}  r/m32, 1        D1 /{n}
{op}  r/m32, imm8     C1 /{n} ib
"""

# One-operand group F7: the operation in the ModRM digit.
_UNARY = {"not": 2, "neg": 3, "mul": 4, "imul": 5, "div": 6, "idiv": 7}
_UNARY_ROWS = """
{op}  r/m64           REX.W F7 /{n}
{op}  r/m32           F7 /{n}
"""

# Everything irregular, one row per form. Order matters only among forms of equal
# length (the first wins, as in GNU as): e.g. `mov rax, 5` fits both `r/m64, imm32`
# (7 bytes) and `r64, imm64` (10 bytes), and the shorter is taken; `xchg rax, rax` has a
# row of its own so that it is the one-byte 90, as GNU writes it.
ROWS = """
mov    r/m8, r8          88 /r
mov    r/m32, r32        89 /r
mov    r/m64, r64        REX.W 89 /r
mov    r8, r/m8          8A /r
mov    r32, r/m32        8B /r
mov    r64, r/m64        REX.W 8B /r
mov    r8, imm8          B0+r ib
mov    r32, imm32        B8+r id
mov    r64, imm64        REX.W B8+r io
mov    r/m8, imm8        C6 /0 ib
mov    r/m32, imm32      C7 /0 id
mov    r/m64, imm32      REX.W C7 /0 id
movzx  r32, r/m8         0F B6 /r
movzx  r64, r/m8         REX.W 0F B6 /r
lea    r64, m            REX.W 8D /r
test   al, imm8          A8 ib
test   eax, imm32        A9 id
test   rax, imm32        REX.W A9 id
test   r/m8, imm8        F6 /0 ib
test   r/m32, imm32      F7 /0 id
test   r/m64, imm32      REX.W F7 /0 id
test   r/m8, r8          84 /r
test   r/m32, r32        85 /r
test   r/m64, r64        REX.W 85 /r
xchg   rax, rax          90
xchg   rax, r64          REX.W 90+r
xchg   r64, rax          REX.W 90+r
xchg   r/m64, r64        REX.W 87 /r
xchg   r64, r/m64        REX.W 87 /r
imul   r64, r/m64        REX.W 0F AF /r
imul   r64, r/m64, imm8  REX.W 6B /r ib
imul   r64, r/m64, imm32 REX.W 69 /r id
inc    r/m64             REX.W FF /0
dec    r/m64             REX.W FF /1
inc    r/m32             FF /0
dec    r/m32             FF /1
push   r64               50+r
push   r/m64             FF /6
push   imm8              6A ib
push   imm32             68 id
pop    r64               58+r
pop    r/m64             8F /0
call   r/m64             FF /2
jmp    r/m64             FF /4
call   rel32             E8 cd
jmp    rel8              EB cb
jmp    rel32             E9 cd
jcc    rel8              70+cc cb
jcc    rel32             0F 80+cc cd
setcc  r/m8              0F 90+cc /0
cmovcc r64, r/m64        REX.W 0F 40+cc /r
cqo                      REX.W 99
ret                      C3
leave                    C9
nop                      90
int3                     CC
hlt                      F4
ud2                      0F 0B
syscall                  0F 05
rep movsb                F3 A4
rep stosb                F3 AA
"""

# SSE2's scalar double-precision instructions (floats, issue #36: a float's bits move
# between a general register and xmm0/xmm1 with movq). The mandatory prefix (66, F2, F3)
# is written first, then REX, then 0F: the encoder moves legacy prefixes before REX.
# movq has two encodings of xmm <- xmm/m64 and of the store; as in GNU as, the 4-byte
# F3 0F 7E and 66 0F D6 win over the REX.W forms wherever both fit.
SSE_ROWS = """
movq      xmm, xmm/m64        F3 0F 7E /r
movq      xmm/m64, xmm        66 0F D6 /r
movq      xmm, r/m64          66 REX.W 0F 6E /r
movq      r/m64, xmm          66 REX.W 0F 7E /r
addsd     xmm, xmm/m64        F2 0F 58 /r
mulsd     xmm, xmm/m64        F2 0F 59 /r
subsd     xmm, xmm/m64        F2 0F 5C /r
divsd     xmm, xmm/m64        F2 0F 5E /r
ucomisd   xmm, xmm/m64        66 0F 2E /r
cmpsd     xmm, xmm/m64, imm8  F2 0F C2 /r ib
cvtsi2sd  xmm, r/m64          F2 REX.W 0F 2A /r
cvttsd2si r64, xmm/m64        F2 REX.W 0F 2C /r
"""


@dataclass(frozen=True, slots=True)
class Form:
    """One row: ``operands`` are kinds, ``opcode`` the fixed bytes (with ``+r``/``+cc``
    applying to the last one), ``modrm`` ``"r"``, a digit ``0``-``7`` or None, ``imm``
    the immediate's size in bytes (0 for none), ``rel`` the branch displacement's size."""

    mnemonic: str
    operands: tuple[str, ...]
    rex_w: bool
    opcode: bytes
    plus: str  # "" | "r" | "cc": what is added to the last opcode byte
    modrm: str | None
    imm: int
    rel: int
    text: str  # the row as written, for explanations


# Sizes in bytes of the immediate and branch-displacement words of the Intel notation.
_IMM_SIZES = {"ib": 1, "id": 4, "io": 8}
_REL_SIZES = {"cb": 1, "cd": 4}


def _parse_row(line: str) -> Form:
    words = line.split()
    mnemonic = words[0]
    k = 1
    if mnemonic == "rep":
        mnemonic, k = f"rep {words[1]}", 2
    # operands run up to the first word that is an encoding (hex byte or REX.W)
    operands: list[str] = []
    while k < len(words) and not _is_encoding(words[k]):
        operands.append(words[k].rstrip(","))
        k += 1
    rex_w, opcode, plus, modrm, imm, rel = False, bytearray(), "", None, 0, 0
    for word in words[k:]:
        if word == "REX.W":
            rex_w = True
        elif word.startswith("/"):
            modrm = word[1:]
        elif word in _IMM_SIZES:
            imm = _IMM_SIZES[word]
        elif word in _REL_SIZES:
            rel = _REL_SIZES[word]
        else:
            byte, _, plus = word.partition("+")
            opcode.append(int(byte, 16))
    return Form(mnemonic, tuple(operands), rex_w, bytes(opcode), plus, modrm, imm, rel,
                " ".join(line.split()))


def _is_encoding(word: str) -> bool:
    head = word.partition("+")[0]
    return word == "REX.W" or (len(head) == 2 and all(c in "0123456789ABCDEF" for c in head))


def _rows() -> list[str]:
    lines = [ln for ln in (ROWS + SSE_ROWS).splitlines() if ln.strip()]
    for op, n in _ALU.items():
        b = 8 * n
        lines += _ALU_ROWS.format(op=op, n=n, b0=b, b1=b + 1, b2=b + 2, b3=b + 3, b4=b + 4,
                                  b5=b + 5).strip().splitlines()
    for table, rows in ((_SHIFT, _SHIFT_ROWS), (_UNARY, _UNARY_ROWS)):
        for op, n in table.items():
            lines += rows.format(op=op, n=n).strip().splitlines()
    return lines


def _forms() -> dict[str, list[Form]]:
    out: dict[str, list[Form]] = {}
    for line in _rows():
        form = _parse_row(line)
        out.setdefault(form.mnemonic, []).append(form)
    return out


FORMS: dict[str, list[Form]] = _forms()
