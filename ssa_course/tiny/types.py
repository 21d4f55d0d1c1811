"""Tiny's static types: ``int``, ``bool``, arrays ``[T]``, structs by name, and ``void``.

Types are immutable values compared with ``==``; ``str(t)`` prints them as Tiny writes them.
"""

from __future__ import annotations

from dataclasses import dataclass


# Types are values: frozen dataclasses compare by structure, so ``[[int]]`` made twice is
# one type (``ArrayType(ArrayType(INT)) == ArrayType(ArrayType(INT))``), and hash, so they
# can key dicts. ``str()`` of a type is how Tiny and Bril text write it.
@dataclass(frozen=True, slots=True)
class Type:
    """Base of Tiny types."""

    def is_ref(self) -> bool:
        """True for heap references (arrays and structs)."""
        return False


@dataclass(frozen=True, slots=True)
class IntType(Type):
    def __str__(self) -> str:
        return "int"


@dataclass(frozen=True, slots=True)
class BoolType(Type):
    def __str__(self) -> str:
        return "bool"


@dataclass(frozen=True, slots=True)
class FloatType(Type):
    """IEEE 754 doubles (Bril's float extension)."""

    def __str__(self) -> str:
        return "float"


@dataclass(frozen=True, slots=True)
class VoidType(Type):
    def __str__(self) -> str:
        return "void"


@dataclass(frozen=True, slots=True)
class ArrayType(Type):
    elem: Type  # (no length: the length is a property of each array value)

    def is_ref(self) -> bool:
        return True

    def __str__(self) -> str:
        return f"[{self.elem}]"


@dataclass(frozen=True, slots=True)
class StructType(Type):
    name: str  # nominal: the fields live in the program's declarations, looked up by name

    def is_ref(self) -> bool:
        return True

    def __str__(self) -> str:
        return self.name


# The scalar types have no fields: one instance each, compared with ``==`` or ``is``.
INT = IntType()
BOOL = BoolType()
FLOAT = FloatType()
VOID = VoidType()  # a function that returns nothing


def parse_type_text(text: str) -> Type:
    """Parse a type written as Tiny prints it (``int``, ``[[bool]]``, ``Point``)."""
    text = text.strip()
    if text == "int":
        return INT
    if text == "bool":
        return BOOL
    if text == "void":
        return VOID
    if text == "float":
        return FLOAT
    if text.startswith("[") and text.endswith("]"):
        return ArrayType(parse_type_text(text[1:-1]))  # one bracket pair per level
    return StructType(text)  # any other name is a struct (checked where it is used)


def element_zero(elem: object) -> object:
    """The initial value of a new array's slots: 0, false, or unset (None) for references."""
    # (unset references make a read of an unassigned slot an error, not a null)
    if isinstance(elem, IntType):
        return 0
    if isinstance(elem, BoolType):
        return False
    if isinstance(elem, FloatType):
        return 0.0
    return None
