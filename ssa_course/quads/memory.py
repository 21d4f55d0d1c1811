"""Bril's memory and char extensions: their types, their operations, their runtime.

The memory extension (``alloc``, ``free``, ``store``, ``load``, ``ptradd``) gives Bril
programs manually managed heap blocks reached through typed pointers ``ptr<T>``; the char
extension adds a ``char`` type (one Unicode scalar value) with comparisons and
conversions. Both are defined here once -- types, the shape and signature of each
operation, and the runtime values -- so the Bril readers and checker, the quads
interpreter and the IRCode interpreter all read the same rows (``docs/quads.md``,
"Bril's memory and char extensions").

Runtime semantics follow Bril's reference interpreter (brili): ``alloc n`` needs
``n > 0``; a pointer is an allocation and an offset (``ptradd`` may leave the block:
only an access there fails); ``load`` of a slot never stored is an error; ``free`` takes
the pointer ``alloc`` returned (offset 0) exactly once; a block not freed when ``@main``
ends is an error. Messages are worded in our style, one line, exit status 2.
"""

from __future__ import annotations

from dataclasses import dataclass

from ssa_course.errors import Pos, RuntimeTrap
from ssa_course.runtime import DEFAULT_ALLOCATION_LIMIT, Limits
from ssa_course.tiny.types import BOOL, INT, Type


@dataclass(frozen=True, slots=True)
class PtrType(Type):
    """Bril's ``ptr<T>``: a pointer into a block of ``T`` slots (``T`` may be a pointer)."""

    elem: Type

    def __str__(self) -> str:
        return f"ptr<{self.elem}>"


@dataclass(frozen=True, slots=True)
class CharType(Type):
    """Bril's ``char``: one Unicode scalar value (a Python ``str`` of length 1)."""

    def __str__(self) -> str:
        return "char"


CHAR = CharType()

# op -> (number of args, has a destination). Every operation of both extensions.
MEM_SHAPES: dict[str, tuple[int, bool]] = {
    "alloc": (1, True), "free": (1, False), "store": (2, False), "load": (1, True),
    "ptradd": (2, True),
}
CHAR_SHAPES: dict[str, tuple[int, bool]] = {
    "ceq": (2, True), "clt": (2, True), "cle": (2, True), "cgt": (2, True),
    "cge": (2, True), "char2int": (1, True), "int2char": (1, True),
}
SHAPES = {**MEM_SHAPES, **CHAR_SHAPES}

# The char operations with a fixed signature: operand types, result type.
CHAR_SIGS: dict[str, tuple[tuple[Type, ...], Type]] = {
    **{op: ((CHAR, CHAR), BOOL) for op in ("ceq", "clt", "cle", "cgt", "cge")},
    "char2int": ((CHAR,), INT), "int2char": ((INT,), CHAR),
}

# Which of them may stop the program, and which have effects besides their value (an
# allocation is an effect: dropping an unused ``alloc`` would change the leak check).
TRAPPING = frozenset({"alloc", "free", "store", "load", "int2char"})
EFFECTS = frozenset({"alloc", "free", "store", "load", "int2char"})
# The pure ones an optimizer may number, move or drop.
PURE = frozenset(SHAPES) - EFFECTS


# ---------------------------------------------------------------- chars

# Bril's text form writes these control characters as escapes (``'\n'``)
CHAR_ESCAPES = {"0": "\0", "a": "\a", "b": "\b", "t": "\t", "n": "\n", "v": "\v",
                "f": "\f", "r": "\r"}
_ESCAPE_OF = {v: k for k, v in CHAR_ESCAPES.items()}


def char_literal(c: str) -> str:
    """A char as Bril text writes it: ``'a'``, ``'\\n'``."""
    esc = _ESCAPE_OF.get(c)
    return f"'\\{esc}'" if esc is not None else f"'{c}'"


def is_char(value: object) -> bool:
    """One Unicode scalar value (not a lone surrogate)."""
    return isinstance(value, str) and len(value) == 1 and not 0xD800 <= ord(value) <= 0xDFFF


def _utf16(c: str) -> bytes:
    # brili compares chars as JavaScript strings: by UTF-16 code units, so a character
    # beyond U+FFFF (two surrogates, 0xD8xx first) sorts below U+E000..U+FFFF
    return c.encode("utf-16-be", "surrogatepass")


def char_compare(op: str, a: str, b: str) -> bool:
    if op == "ceq":
        return a == b
    x, y = _utf16(a), _utf16(b)
    if op == "clt":
        return x < y
    if op == "cle":
        return x <= y
    if op == "cgt":
        return x > y
    return x >= y


def int2char(i: int, pos: Pos | None = None) -> str:
    if not 0 <= i <= 0x10FFFF or 0xD800 <= i <= 0xDFFF:
        raise RuntimeTrap(f"int2char: {i} is not a Unicode scalar value", pos)
    return chr(i)


# ---------------------------------------------------------------- pointers at run time


class Block:
    """One allocation: its slots (None: never stored), its number (brili's base) and where
    its ``alloc`` is written (a leak reports there)."""

    __slots__ = ("base", "slots", "live", "pos")

    def __init__(self, base: int, size: int, pos: Pos | None = None):
        self.base = base
        self.slots: list[object] = [None] * size
        self.live = True
        self.pos = pos


class Pointer:
    """A pointer value: a block and an offset in it (outside it after a ``ptradd`` is
    fine; only an access there fails). Compared by value (``eq`` is not Bril's, but
    ``id`` and ``phi`` copy them)."""

    __slots__ = ("block", "offset")

    def __init__(self, block: Block, offset: int):
        self.block = block
        self.offset = offset

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Pointer) and other.block is self.block \
            and other.offset == self.offset

    def __hash__(self) -> int:
        return hash((id(self.block), self.offset))

    def __str__(self) -> str:
        return f"<pointer to block {self.block.base} + {self.offset}>"


class Memory:
    """One run's Bril heap: live blocks, within ``Limits.cells`` live slots."""

    __slots__ = ("next_base", "live", "live_cells", "limit")

    def __init__(self, limits: Limits | None = None):
        self.next_base = 0
        self.live: dict[int, Block] = {}
        self.live_cells = 0
        self.limit = limits.cells if limits is not None else DEFAULT_ALLOCATION_LIMIT

    def alloc(self, n: object, pos: Pos | None = None) -> Pointer:
        if type(n) is not int:
            raise TypeError("alloc")
        if n <= 0:
            raise RuntimeTrap(f"alloc of {n} slots (must be at least 1)", pos)
        if self.live_cells + n > self.limit:
            raise RuntimeTrap("out of memory", pos)
        block = Block(self.next_base, n, pos)
        self.next_base += 1
        self.live[block.base] = block
        self.live_cells += n
        return Pointer(block, 0)

    def free(self, p: object, pos: Pos | None = None) -> None:
        if not isinstance(p, Pointer):
            raise TypeError("free")
        if not p.block.live:
            raise RuntimeTrap(f"free of block {p.block.base}, which is already freed", pos)
        if p.offset != 0:
            raise RuntimeTrap(f"free of a pointer {p.offset} slots from the start of block "
                              f"{p.block.base} (free takes what alloc returned)", pos)
        p.block.live = False
        del self.live[p.block.base]
        self.live_cells -= len(p.block.slots)

    def _slot(self, p: object, what: str, pos: Pos | None) -> tuple[list[object], int]:
        if not isinstance(p, Pointer):
            raise TypeError(what)
        block = p.block
        if not block.live:
            raise RuntimeTrap(f"{what} through a pointer to freed block {block.base}", pos)
        if not 0 <= p.offset < len(block.slots):
            raise RuntimeTrap(f"{what} at offset {p.offset} of block {block.base}, which "
                              f"has {len(block.slots)} slots", pos)
        return block.slots, p.offset

    def store(self, p: object, value: object, pos: Pos | None = None) -> None:
        slots, i = self._slot(p, "store", pos)
        slots[i] = value

    def load(self, p: object, pos: Pos | None = None) -> object:
        slots, i = self._slot(p, "load", pos)
        value = slots[i]
        if value is None:  # (no variable named: every stage but quads renames them)
            raise RuntimeTrap(f"load of a slot never stored (offset {i} of block "
                              f"{p.block.base})", pos)  # type: ignore[attr-defined]
        return value

    def check_all_freed(self) -> None:
        """brili's check when ``@main`` returns: every block was freed. The error points
        at the ``alloc`` of the first block left (the oldest)."""
        if self.live:
            n = len(self.live)
            first = self.live[min(self.live)]
            raise RuntimeTrap(f"{n} block{'s' * (n != 1)} of memory not freed at the end "
                              f"of the program; block {first.base} was allocated", first.pos)


def ptradd(p: object, k: object) -> Pointer:
    if not isinstance(p, Pointer) or type(k) is not int:
        raise TypeError("ptradd")
    return Pointer(p.block, p.offset + k)
