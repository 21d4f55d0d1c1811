"""Bril pointers and chars in machine code: how they are represented, the runtime entries
both CPUs provide for them, and their messages (issue #36; ``docs/codegen.md``, "Bril
pointers and chars").

**A pointer is one 64-bit word**: the allocation's number (brili's block, counted from 0
in allocation order, never reused) in the high 32 bits, the element offset in the low
32 bits, read as a signed 32-bit number. ``ptradd`` adds to the low half only and wraps
there, so a pointer never moves into another allocation: an offset outside its block
fails the bounds check of the access, as brili's does (offsets beyond +-2^31 are the one
difference from the interpreters, whose offsets are unbounded: the message then names the
wrapped offset). Element values are opaque 64-bit words (an int, a bool, a char's key, a
pointer, a float's bits).

The runtime keeps an allocation table (per block: the address of its cells, 0 once freed,
and its length), grown by doubling; each block is ``8 * n`` bytes of cells followed by
``n`` initialised flags (one byte each), rounded up to a power of two and bump-allocated
like arrays; a freed block goes on the free list of its size and is taken back (flags
cleared) by the next ``alloc`` of that size, so allocating and freeing in a loop stays
in the same memory. Every access is a call
of a runtime entry that checks (freed, bounds, never stored) and traps with the
interpreters' one-line message, at the instruction's position when it has one.

**A char is its sort key**: the code point, except U+E000..U+FFFF, which get 0x200000
added. brili compares chars as JavaScript strings, by UTF-16 code units, where a character
beyond U+FFFF (a surrogate pair, 0xD800.. first) sorts below U+E000..U+FFFF; with the key
``ceq``/``clt``/... are plain signed compares of the words (the selection rewrites them to
``eq``/``lt``/...). ``char2int``, ``int2char`` and printing (UTF-8) convert.
"""

from __future__ import annotations

from ssa_course.runtime import DEFAULT_ALLOCATION_LIMIT

KEY_SHIFT = 0x200000  # added to U+E000..U+FFFF (see the module docstring)
OFFSET_BITS = 32

# The entries that return a value in the result register (minstr.RUNTIME_RESULTS).
RETURNING = frozenset({"rt_ptr_alloc", "rt_ptr_load", "rt_ptr_add", "rt_char2int",
                       "rt_int2char"})

# Messages with numbers: "%1" ... "%3" stand for the trap's first to third number
# (written in decimal by the runtime), exactly as quads/memory.py words them.
TEMPLATES = (
    ("rt_pmsg_alloc", "alloc of %1 slots (must be at least 1)"),
    ("rt_pmsg_double_free", "free of block %1, which is already freed"),
    ("rt_pmsg_free_offset", "free of a pointer %1 slots from the start of block %2 "
                            "(free takes what alloc returned)"),
    ("rt_pmsg_load_freed", "load through a pointer to freed block %1"),
    ("rt_pmsg_store_freed", "store through a pointer to freed block %1"),
    ("rt_pmsg_load_bounds", "load at offset %1 of block %2, which has %3 slots"),
    ("rt_pmsg_store_bounds", "store at offset %1 of block %2, which has %3 slots"),
    ("rt_pmsg_uninit", "load of a slot never stored (offset %1 of block %2)"),
    ("rt_pmsg_leak1", "%1 block of memory not freed at the end of the program"),
    ("rt_pmsg_leak", "%1 blocks of memory not freed at the end of the program"),
    ("rt_pmsg_char", "int2char: %1 is not a Unicode scalar value"),
    ("rt_pmsg_ptr", "<pointer to block %1 + %2>"),
)
# The initial capacity of the allocation table (entries of 16 bytes); it doubles.
TABLE_START = 256


def char_key(c: str) -> int:
    """The machine word of the char ``c`` (see the module docstring)."""
    cp = ord(c)
    return cp + KEY_SHIFT if 0xE000 <= cp <= 0xFFFF else cp


def key_char(key: int) -> str:
    """The char whose machine word is ``key`` (the inverse of :func:`char_key`)."""
    return chr(key - KEY_SHIFT if key >= KEY_SHIFT else key)


def print_entry(ty: object) -> str | None:
    """The runtime entry printing a value of type ``ty``, when it is a Bril pointer or a
    char (None: another type, printed by the shared entries)."""
    from ssa_course.quads.memory import CharType, PtrType

    if isinstance(ty, CharType):
        return "rt_print_char"
    if isinstance(ty, PtrType):
        return "rt_print_ptr"
    return None


def _ascii(text: str) -> str:
    return '.ascii "' + text.replace("\\", "\\\\").replace('"', '\\"') + '\\000"'


def ptr_data_lines(allocation_limit: int = DEFAULT_ALLOCATION_LIMIT) -> list[str]:
    """The data of the pointer runtime (both CPUs): its messages, NUL-terminated, and the
    budget of live cells (the interpreters' ``Limits.cells``)."""
    out = [".balign 8", "rt_ptr_left:", f"    .quad {allocation_limit}"]
    for label, text in TEMPLATES:
        out += [f"{label}:", f"    {_ascii(text)}"]
    out += ["rt_str_not_char:", '    .ascii "\' must be one character, not \'"']
    return out


NOT_CHAR = "' must be one character, not '"

# bss: the allocation table's address, its capacity and entries used (the next block's
# number), the blocks not yet freed; a scratch buffer for a char's UTF-8 bytes and the
# numbers of a message being written; the heads of the free lists (64 size classes).
PTR_BSS = ["rt_ptr_table:", "    .zero 8", "rt_ptr_cap:", "    .zero 8", "rt_ptr_count:",
           "    .zero 8", "rt_ptr_live:", "    .zero 8", "rt_charbuf:", "    .zero 8",
           "rt_ptr_nums:", "    .zero 24", "rt_ptr_free_lists:", "    .zero 512"]
