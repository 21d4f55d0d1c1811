"""Assembler names for functions and blocks.

Bril names may hold characters an assembler symbol cannot (``.``, ``-``), so names are
escaped one-to-one: letters and digits stay, ``_`` becomes ``__``, any other character
``_xx`` (its code in hex; ``_u{hex}_`` above 255). Two different names never collide.
"""

from __future__ import annotations


# An injective escape into assembler-safe characters: letters and digits stay, "_" doubles,
# everything else becomes "_hh" or "_u...hex_". Because a single "_" is never emitted
# alone, two different Tiny names can never meet in one symbol (and `main_body` style
# runtime names cannot collide with a program's own).
def asm_name(text: str) -> str:
    out: list[str] = []
    for ch in text:
        if ch.isascii() and ch.isalnum():
            out.append(ch)
        elif ch == "_":
            out.append("__")
        elif ord(ch) < 256:
            out.append(f"_{ord(ch):02x}")
        else:
            out.append(f"_u{ord(ch):x}_")
    return "".join(out)


def function_symbol(name: str) -> str:
    """The symbol of Tiny function ``name`` (``main`` is ``tiny_main``)."""
    return "tiny_" + asm_name(name)


def block_label(function: str, label: str) -> str:
    """A local label for block ``label`` of ``function`` (unique in the program)."""
    return f".L{asm_name(function)}.{asm_name(label)}"


MAIN_BODY = "tiny_main_body"  # never a function_symbol: those double every underscore


def call_symbol(name: str) -> str:
    """What a call of Tiny function ``name`` targets: ``main`` called from the program
    skips the entry that loads the depth counter (only the runtime enters there)."""
    return MAIN_BODY if name == "main" else function_symbol(name)
