"""Which variables a loop mentions, so its head gets phis for those only (lesson 06).

A loop head needs a Phi for a variable only if the loop can read or change it: a variable
the loop never names keeps its value all the way round, so its phi would be
``phi(x, itself)`` -- trivial, removed again when the loop is closed. Making (and removing)
one phi per variable in scope at every loop costs the number of variables times the
number of loops, which on a long function is quadratic; asking the syntax tree which
names the condition, body and step contain costs the loop's own size.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Iterator

from ssa_course.tiny import ast

_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(cls: type) -> tuple[str, ...]:
    """The fields of a syntax class that may hold statements or expressions (cached)."""
    names = _CHILD_FIELDS.get(cls)
    if names is None:
        # Fields that hold annotations, names or positions, never code: skipping them keeps the
        # walk to the syntax (and a checker's VarInfo is not walked as if it were a child).
        skip = {"pos", "ty", "var", "fn", "name", "op", "value_pos", "name_pos", "declared",
                "elem"}
        names = tuple(f.name for f in dataclasses.fields(cls) if f.name not in skip)
        _CHILD_FIELDS[cls] = names
    return names


def _children(node: object) -> Iterator[ast.Expr | ast.Stmt]:
    for name in _child_fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, (ast.Expr, ast.Stmt)):
            yield value
        elif isinstance(value, (list, tuple)):
            for item in value:
                if isinstance(item, (ast.Expr, ast.Stmt)):
                    yield item
                elif isinstance(item, tuple):  # a struct literal's (name, value, pos)
                    yield from (x for x in item if isinstance(x, (ast.Expr, ast.Stmt)))


def mentioned_vars(*roots: ast.Expr | ast.Stmt | None) -> set[Hashable]:
    """The variables (their checked ``VarInfo``) named anywhere under ``roots``, read or
    assigned. An explicit stack: a deep expression must not overflow Python's."""
    found: set[Hashable] = set()
    stack = [r for r in roots if r is not None]
    while stack:
        node = stack.pop()
        # A name is a leaf: its checked variable is what the scope keys slots by, so shadowed
        # names with the same spelling stay apart.
        if isinstance(node, ast.Name):
            if node.var is not None:
                found.add(node.var)
            continue
        # Reads and writes alike: a variable the loop only reads gets a phi that turns out
        # trivial (``phi(x, itself)``) and goes when the loop is closed.
        stack.extend(_children(node))
    return found
