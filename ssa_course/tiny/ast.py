"""The Tiny abstract syntax tree.

The parser builds these nodes; the checker (``tiny.check``) fills the annotations marked
*checked* below, so that later stages never look names up again:

* every expression's ``ty`` (a :class:`~ssa_course.tiny.types.Type`);
* every :class:`Name`, :class:`VarDecl`, :class:`Param` and :class:`Try` gets ``var``,
  the :class:`VarInfo` of the declaration it refers to (unique per declaration, so
  shadowed variables are different objects with different ``uid``);
* every :class:`Call` gets ``fn``, the :class:`FnDef` it calls;
* ``-`` applied directly to the literal 9223372036854775808 is folded by the *parser* into
  an :class:`IntLit` of ``-2**63`` at the ``-`` (the only way to write INT_MIN).

Positions (``pos``) follow LANGUAGE.md's "where errors point" table:
a :class:`Binary`/:class:`Unary` points at its operator, :class:`Index` at its ``[``,
:class:`Field` at the field name, :class:`NewArray`/:class:`NewStruct` at ``new``,
:class:`Call` at the function name, a statement at its first token.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TypeVar

from ssa_course.errors import Pos
from ssa_course.tiny.types import Type

_T = TypeVar("_T")

# ---------------------------------------------------------------- declarations


@dataclass(eq=False, slots=True)
class VarInfo:
    """One declared variable (a ``var``, a parameter, or a catch variable)."""

    name: str
    ty: Type
    uid: int  # unique within its function; 0, 1, 2, ... in declaration order
    pos: Pos

    def unique_name(self) -> str:
        """``x`` for the first declaration of ``x`` in a function, then ``x.1``, ``x.2``..."""
        return self.name if self.uid == 0 else f"{self.name}.{self.uid}"


def var_name(var: VarInfo | None) -> str:
    """The unique name of the declaration that the ``var`` of a *checked* ``Name``,
    ``VarDecl``, ``Param`` or ``Try`` is (the checker fills every one)."""
    return checked(var).unique_name()


def checked(value: _T | None) -> _T:
    """What the checker filled in: the ``ty``, ``var`` or ``fn`` of a node of a *checked*
    program (the checker fills every one; None means the program was not checked)."""
    assert value is not None, "the program was not checked"
    return value


@dataclass(eq=False, slots=True)
class StructDef:
    name: str
    fields: list[tuple[str, Type, Pos]]
    pos: Pos

    def field_index(self, name: str) -> int:
        for i, (fname, _, _) in enumerate(self.fields):
            if fname == name:
                return i
        raise KeyError(name)

    def field_type(self, name: str) -> Type:
        return self.fields[self.field_index(name)][1]


@dataclass(eq=False, slots=True)
class Param:
    name: str
    ty: Type
    pos: Pos
    var: VarInfo | None = None  # checked


@dataclass(eq=False, slots=True)
class FnDef:
    name: str
    params: list[Param]
    ret: Type  # VOID when the function has no "-> T"
    body: Block
    pos: Pos  # the function's name


@dataclass(eq=False, slots=True)
class Program:
    structs: dict[str, StructDef]
    functions: dict[str, FnDef]  # in source order
    source: str = ""
    filename: str = "<input>"
    # Every struct name written as a type, with where it was written (the parser collects
    # them so that the checker can point at an undefined struct name).
    type_refs: list[tuple[str, Pos]] = field(default_factory=list)


# ---------------------------------------------------------------- expressions


@dataclass(eq=False, slots=True)
class Expr:
    pos: Pos


@dataclass(eq=False, slots=True)
class IntLit(Expr):
    value: int
    ty: Type | None = None


@dataclass(eq=False, slots=True)
class FloatLit(Expr):
    value: float  # finite: a literal that overflows is a compile error
    ty: Type | None = None


@dataclass(eq=False, slots=True)
class BoolLit(Expr):
    value: bool
    ty: Type | None = None


@dataclass(eq=False, slots=True)
class Name(Expr):
    name: str
    ty: Type | None = None
    var: VarInfo | None = None  # checked


@dataclass(eq=False, slots=True)
class Unary(Expr):
    op: str  # "-" or "!", or a conversion: "int" (int(x)) or "float" (float(n))
    operand: Expr
    ty: Type | None = None


@dataclass(eq=False, slots=True)
class Binary(Expr):
    op: str  # + - * / % == != < <= > >= && ||
    left: Expr
    right: Expr
    ty: Type | None = None


@dataclass(eq=False, slots=True)
class Call(Expr):
    name: str
    args: list[Expr]
    ty: Type | None = None
    fn: FnDef | None = None  # checked


@dataclass(eq=False, slots=True)
class Index(Expr):
    base: Expr
    index: Expr
    ty: Type | None = None


@dataclass(eq=False, slots=True)
class Field(Expr):
    base: Expr
    name: str
    ty: Type | None = None


@dataclass(eq=False, slots=True)
class Len(Expr):
    operand: Expr
    ty: Type | None = None


@dataclass(eq=False, slots=True)
class NewArray(Expr):
    elem: Type
    length: Expr
    ty: Type | None = None


@dataclass(eq=False, slots=True)
class NewStruct(Expr):
    name: str
    fields: list[tuple[str, Expr, Pos]]  # in source order (evaluation order)
    ty: Type | None = None
    name_pos: Pos | None = None  # where the struct's name is written


# ---------------------------------------------------------------- statements


@dataclass(eq=False, slots=True)
class Stmt:
    pos: Pos


@dataclass(eq=False, slots=True)
class Block(Stmt):
    stmts: list[Stmt] = field(default_factory=list)


@dataclass(eq=False, slots=True)
class VarDecl(Stmt):
    name: str
    declared: Type | None
    init: Expr
    name_pos: Pos | None = None
    var: VarInfo | None = None  # checked


@dataclass(eq=False, slots=True)
class Assign(Stmt):
    target: Expr  # Name, Index or Field
    value: Expr


@dataclass(eq=False, slots=True)
class If(Stmt):
    cond: Expr
    then: Block
    orelse: Block | If | None = None


@dataclass(eq=False, slots=True)
class While(Stmt):
    cond: Expr
    body: Block


@dataclass(eq=False, slots=True)
class For(Stmt):
    init: VarDecl | Assign | None
    cond: Expr | None
    step: VarDecl | Assign | None
    body: Block


@dataclass(eq=False, slots=True)
class Break(Stmt):
    pass


@dataclass(eq=False, slots=True)
class Continue(Stmt):
    pass


@dataclass(eq=False, slots=True)
class Return(Stmt):
    value: Expr | None = None


@dataclass(eq=False, slots=True)
class Print(Stmt):
    args: list[Expr] = field(default_factory=list)


@dataclass(eq=False, slots=True)
class Try(Stmt):
    body: Block
    name: str
    handler: Block
    name_pos: Pos | None = None
    var: VarInfo | None = None  # checked: the catch variable (an int)


@dataclass(eq=False, slots=True)
class Throw(Stmt):
    value: Expr


@dataclass(eq=False, slots=True)
class ExprStmt(Stmt):
    expr: Expr  # always a Call after checking


# ---------------------------------------------------------------- the one child walk

Node = Expr | Stmt

# Fields that never hold a sub-tree: positions, names, operators, types and the checker's
# links (``var``, ``fn``). Leaving them out keeps the walk to the syntax.
_NOT_CHILDREN = frozenset({"pos", "ty", "var", "fn", "name", "op", "name_pos", "declared",
                           "elem", "value_pos"})
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def children(node: Node) -> list[tuple[str, Node]]:
    """``(role, child)`` for every sub-tree of ``node``, in source (evaluation) order.

    The role is the field's name (``cond``, ``then``, ``left``); an item of a list field
    is ``field[i]`` (``stmts[0]``, ``args[1]``); a struct literal's value is named by its
    struct field (``x`` in ``new P { x: 1 }``). Every walk over the tree -- the printer,
    the drawing, the checker's expression order, the verifier, the loop-variable scan --
    takes its children from here, so a new node class is walked the same way everywhere.
    """
    names = _CHILD_FIELDS.get(type(node))
    if names is None:
        names = tuple(f.name for f in fields(node) if f.name not in _NOT_CHILDREN)
        _CHILD_FIELDS[type(node)] = names
    out: list[tuple[str, Node]] = []
    for name in names:
        value = getattr(node, name)
        if isinstance(value, Expr | Stmt):
            out.append((name, value))
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, Expr | Stmt):
                    out.append((f"{name}[{i}]", item))
                elif isinstance(item, tuple) and isinstance(item[1], Expr):
                    out.append((item[0], item[1]))  # NewStruct: (field, value, pos)
    return out
