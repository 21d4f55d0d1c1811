"""Instructions drawn from the encoder's own table (``x86_table.FORMS``), for the tests that
hold our assembler against GNU ``as`` and keystone: every form, with operands at the edges
(registers 8-15, rsp/rbp/r12/r13 as a base, displacements and immediates at the limits
of a byte and of 32 bits)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from ssa_course.codegen.x86_64.encode import fits, form_width
from ssa_course.codegen.x86_64.table import CONDITIONS, FORMS, REGISTERS, Form

T = TypeVar("T")
Pick = Callable[[Sequence[T]], T]

_BY_WIDTH = {w: [n for n, (_, width) in REGISTERS.items() if width == w]
             for w in (8, 32, 64, 128)}  # 128: xmm0-xmm15
_SIZE = {8: "byte", 32: "dword", 64: "qword"}
DISPS = [0, 1, -1, 8, -8, 127, 128, -128, -129, 4096, -4096, 0x7FFFFFFF, -0x80000000]
IMMS = [0, 1, -1, 2, 5, 63, 127, 128, -128, -129, 255, 256, 1000, -1000, 0x7FFFFFFF,
        -0x80000000, 0x80000000, 0xFFFFFFFF, -0x80000001, 0x7FFFFFFFFFFFFFFF,
        -0x8000000000000000, 0xCCCCCCCCCCCCCCCD, 0xFFFFFFFFFFFFFFFF]
# The encoder takes the shortest form, so a row is only reached with operands that no
# shorter row takes: each form is drawn with operands of its own kinds.


def forms() -> list[Form]:
    """Every row of the table except the branches (the layout places those)."""
    return [f for rows in FORMS.values() for f in rows if not f.rel]


def memory(pick: Pick, size: str) -> str:
    shape = pick(["base", "base+index", "index", "rip"])
    disp = pick(DISPS)
    if shape == "rip":
        inner = "rip"
    elif shape == "index":
        inner = f"{pick([r for r in _BY_WIDTH[64] if r != 'rsp'])}*{pick([1, 2, 4, 8])}"
    else:
        inner = pick(_BY_WIDTH[64])
        if shape == "base+index":
            inner += f" + {pick([r for r in _BY_WIDTH[64] if r != 'rsp'])}*{pick([1, 2, 4, 8])}"
    if disp:
        inner += f" - {-disp}" if disp < 0 else f" + {disp}"
    return (f"{size} ptr " if size else "") + f"[{inner}]"


def operand(kind: str, form: Form, pick: Pick) -> str:
    if kind in ("r8", "r32", "r64"):
        return pick(_BY_WIDTH[int(kind[1:])])
    if kind == "xmm":
        return pick(_BY_WIDTH[128])
    if kind == "xmm/m64":
        return pick(_BY_WIDTH[128]) if pick([True, False]) else memory(pick, "qword")
    if kind.startswith("imm") and form.mnemonic == "cmpsd":
        return str(pick(range(8)))  # a predicate (0 eq, 1 lt, 2 le, ...)
    if kind.startswith("r/m"):
        w = int(kind[3:])
        return pick(_BY_WIDTH[w]) if pick([True, False]) else memory(pick, _SIZE[w])
    if kind == "m":
        return memory(pick, "")
    if kind.startswith("imm") and form.mnemonic in ("shl", "sal", "shr", "sar"):
        return str(pick([0, 1, 2, 5, 31, 63]))  # a count, not a number: the used range
    if kind.startswith("imm"):
        width = form_width(form)
        return str(pick([v for v in IMMS if fits(v, int(kind[3:]), width)]))
    return kind  # "1", "al", "eax", "rax"


def instruction(form: Form, pick: Pick) -> str:
    """One instruction of ``form``, its operands chosen by ``pick``."""
    name = form.mnemonic
    if name.endswith("cc"):
        name = name[:-2] + pick(sorted(CONDITIONS))
    ops = [operand(k, form, pick) for k in form.operands]
    return f"{name} {', '.join(ops)}".strip()
