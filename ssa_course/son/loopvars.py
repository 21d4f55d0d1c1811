"""Which variables a loop mentions, so its head gets phis for those only (lesson 06).

A loop head needs a Phi for a variable only if the loop can read or change it: a variable
the loop never names keeps its value all the way round, so its phi would be
``phi(x, itself)`` -- trivial, removed again when the loop is closed. Making (and removing)
one phi per variable in scope at every loop costs the number of variables times the
number of loops, which on a long function is quadratic; asking the syntax tree which
names the condition, body and step contain costs the loop's own size.
"""

from __future__ import annotations

from collections.abc import Hashable

from ssa_course.tiny import ast


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
        stack.extend(child for _, child in ast.children(node))
    return found
