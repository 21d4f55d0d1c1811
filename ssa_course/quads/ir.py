"""Quads: three-address code, one operation per instruction, Bril-compatible.

An :class:`Instr` has an opcode, at most one destination and a few sources -- the
"quad" of Click & Paleczny (op, dest, src1, src2), plus Bril's ``funcs``/``labels``/``value``
slots. Its core opcodes are exactly Bril's core ops, with Bril's meaning; the extensions Tiny
needs are listed in :data:`EXTENSION_OPS` and documented in ``docs/quads.md``.

A :class:`Function` holds a flat list of instructions and :class:`Label` markers, executed
top to bottom with fall-through into labels, exactly as Bril does.

Types of variables are Tiny types (``INT``, ``BOOL``, ``ArrayType``, ``StructType``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ssa_course import opcodes
from ssa_course.errors import Pos
from ssa_course.quads import memory as _memory
from ssa_course.tiny.types import Type

# op -> (number of args or None for "any", has dest?). The value operators (``add``,
# ``eq``, ``not``, ...) are not listed here: they are the rows of the opcode table
# (:mod:`ssa_course.opcodes`), which :func:`op_shape` reads.
CORE_OPS: dict[str, tuple[int | None, bool | None]] = {
    "const": (0, True),
    "id": (1, True),
    "jmp": (0, False), "br": (1, False),
    "call": (None, None),  # dest optional
    "ret": (None, False),  # 0 or 1 arg
    "print": (None, False),
    "nop": (0, False),
}

EXTENSION_OPS: dict[str, tuple[int | None, bool | None]] = {
    "newarr": (1, True),     # dest: [T] = newarr n        (zero-filled or unset slots)
    "alen": (1, True),       # dest: int = alen a
    "aload": (2, True),      # dest: T = aload a i         (bounds + unset checks)
    "astore": (3, False),    # astore a i v                (bounds check)
    "newstruct": (None, True),  # dest: S = newstruct v1 v2 ...  (fields in declaration order)
    "getf": (1, True),       # dest: T = getf p   field=f
    "setf": (2, False),      # setf p v           field=f
    "enter": (0, False),     # enter .body .handler   (push a handler; terminator)
    "leave": (0, False),     # pop the innermost handler of this frame
    "throw": (1, False),     # throw v                (terminator)
    "catch": (0, True),      # dest: int = catch      (the exception being handled)
    # checkdef ok x: stops with "undefined variable 'x'" unless ok -- a read of a Bril
    # variable that may have no value there, made explicit (quads/undefined_reads.py)
    "checkdef": (1, False),  # checkdef ok   field=x
}

# Bril's SSA extension (lesson 03): ``x.2: int = phi x.0 x.1 .entry .loop;`` takes the
# argument paired with the label of the block control came from. All phis at the top of a
# block read their arguments before any of them is assigned (simultaneous semantics).
# Bril's current SSA form (``set``/``get``/``undef``) is read too: ``set x v`` stores ``v``
# in the shadow of ``x``; ``x: T = get`` reads it; ``x: T = undef`` is a value no operation
# may use (see ``docs/quads.md``).
SSA_OPS: dict[str, tuple[int | None, bool | None]] = {
    "phi": (None, True), "set": (2, False), "get": (0, True), "undef": (0, True),
}

# Bril's memory and char extensions (``alloc``, ``load``, ``ceq``, ``int2char``, ...):
# their rows live in :mod:`ssa_course.quads.memory`.
MEMORY_OPS: dict[str, tuple[int | None, bool | None]] = dict(_memory.SHAPES)

# every op but the value operators
OTHER_OPS = {**CORE_OPS, **EXTENSION_OPS, **SSA_OPS, **MEMORY_OPS}


def op_shape(op: str) -> tuple[int | None, bool | None] | None:
    """``(number of args or None, has dest?)`` of a Bril op, or None for an unknown op."""
    shape = OTHER_OPS.get(op)
    if shape is not None:
        return shape
    value_op = opcodes.bril_op(op)
    return (value_op.arity, True) if value_op is not None else None


def is_known_op(op: str) -> bool:
    return op_shape(op) is not None


# A phi argument for an edge where the variable has no value (SSA construction writes it).
UNDEFINED = "__undefined"

TERMINATORS = frozenset({"jmp", "br", "ret", "enter", "throw"})

# Operations besides the value operators that may stop the program with a runtime error;
# they carry a ``pos``. (A value operator may trap when its table row says so: ``div``.)
TRAPPING_OPS = frozenset({"newarr", "aload", "astore", "checkdef"}) | _memory.TRAPPING

# Operations with effects beyond their destination (never removed as dead code); a value
# operator that may trap counts too (see :func:`has_effect`).
EFFECT_OPS = frozenset(
    {"call", "print", "ret", "jmp", "br", "astore", "setf", "enter", "leave", "throw",
     "newarr", "aload", "nop", "checkdef"}
) | _memory.EFFECTS


def may_trap(op: str) -> bool:
    """May an instruction with this op stop the program with a runtime error?"""
    value_op = opcodes.get(op)
    return value_op.may_trap if value_op is not None else op in TRAPPING_OPS


def has_effect(op: str) -> bool:
    """Must an instruction with this op stay even when its result is unused?"""
    value_op = opcodes.get(op)
    return value_op.may_trap or not value_op.pure if value_op is not None \
        else op in EFFECT_OPS


@dataclass(eq=False, slots=True)
class Instr:
    """One quad. ``args`` are variable names, ``funcs`` function names (no ``@``),
    ``labels`` label names (no ``.``), ``value`` the constant of ``const``,
    ``field`` the field name of ``getf``/``setf``, ``pos`` the source position
    reported by a runtime error."""

    op: str
    dest: str | None = None
    type: Type | None = None
    args: list[str] = field(default_factory=list)
    funcs: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    value: int | bool | float | str | None = None  # (a str: Bril's char constant)
    field: str | None = None
    pos: Pos | None = None
    line: int | None = None  # the source line it was made for, when known (listings)
    at: Pos | None = None  # where an instruction that cannot fail was written (listings)
    # ``aload``/``astore`` whose index is proven in bounds (lesson 09): the same meaning
    # (the index never fails), but machine code may leave its bounds test out
    in_bounds: bool = False
    # an ``aload`` of a reference whose element is known to be set, or whose reader tests
    # the 0 of an unset slot itself (codegen/loop_rows.py): machine code may leave its
    # unset test out. Made only inside code generation, never by the middle end.
    set_known: bool = False

    def is_terminator(self) -> bool:
        return self.op in TERMINATORS

    def result(self) -> str:
        """The destination of an instruction whose operation always has one (``phi``,
        ``get``, ``const``, a value operator...): checked shapes guarantee it."""
        assert self.dest is not None, f"'{self.op}' without a destination"
        return self.dest

    def field_name(self) -> str:
        """The field of a ``getf``, ``setf`` or ``checkdef``: checked shapes guarantee it."""
        assert self.field is not None, f"'{self.op}' without a field"
        return self.field

    def result_type(self) -> Type:
        """The type of an instruction with a destination (``const``, ``aload``, ``getf``,
        a value operator...): checked shapes guarantee it."""
        assert self.type is not None, f"'{self.op}' without a type"
        return self.type

    def constant(self) -> int | bool | float | str:
        """The value of a ``const``: checked shapes guarantee it."""
        assert self.value is not None, f"'{self.op}' without a value"
        return self.value

    def copy(self) -> Instr:
        return Instr(self.op, self.dest, self.type, list(self.args), list(self.funcs),
                     list(self.labels), self.value, self.field, self.pos, self.line, self.at,
                     self.in_bounds, self.set_known)

    def renamed(self, rename: dict[str, str]) -> Instr:
        """This instruction reading ``rename[a]`` for each argument ``a`` it names: itself
        when it names none, else a copy (the original may be shared with another list)."""
        if not any(a in rename for a in self.args):
            return self
        c = self.copy()
        c.args = [rename.get(a, a) for a in c.args]
        return c


NEVER_RETURNS = "never.returns"  # the label of never_returns' block (no Tiny name has a dot)


def never_returns() -> list[Instr]:
    """The body of a block no jump reaches, for a function with a return type whose every
    path runs into a loop that never ends: Bril wants a ``ret`` in such a function
    (brilck's rule, kept by ``bril_check``), and a ``throw`` counts as one without needing
    a value of the return type. Used where the last ``ret`` can disappear: building quads
    from the sea of nodes (whose endless loops exit through Never nodes) and
    ``cfg.remove_unreachable`` (fuzz seed 54124: ``while (0 < 4) {} return false;``)."""
    from ssa_course.tiny.types import INT

    return [Instr("const", "never.v", INT, value=0), Instr("throw", args=["never.v"])]


def returns_somewhere(items: Iterable[Instr | Label]) -> bool:
    """Some instruction leaves the function (``ret`` or ``throw``)."""
    return any(isinstance(i, Instr) and i.op in ("ret", "throw") for i in items)


@dataclass(eq=False, slots=True)
class Label:
    name: str
    line: int | None = None  # the source line of the statement that made the block


Item = Instr | Label


@dataclass(eq=False, slots=True)
class Function:
    name: str
    params: list[tuple[str, Type]]
    ret: Type | None  # None: returns nothing
    body: list[Item] = field(default_factory=list)

    def instrs(self) -> list[Instr]:
        return [i for i in self.body if isinstance(i, Instr)]


@dataclass(eq=False, slots=True)
class StructInfo:
    """Field names and types of a struct, in declaration order."""

    name: str
    fields: list[tuple[str, Type]]


@dataclass(eq=False, slots=True)
class Program:
    functions: dict[str, Function]
    structs: dict[str, StructInfo] = field(default_factory=dict)


def first_index(labels: list[str]) -> dict[str, int]:
    """Where each label first occurs in a phi's ``labels`` (what ``labels.index`` answers,
    in O(1): asking ``index`` once per edge is quadratic on a join of many edges)."""
    index: dict[str, int] = {}
    for i, label in enumerate(labels):
        index.setdefault(label, i)
    return index
