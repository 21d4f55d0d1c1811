"""The bookkeeping of the program generator: variables, nested scopes, helper signatures.

Tiny's scoping (LANGUAGE.md): a ``var`` belongs to its block, an inner block may shadow an
outer name (with any type), and a name may not be declared twice in one block. The generator
asks this module which names are visible with which type, so every program it writes
type-checks.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class Var:
    """A variable. Loop counters are read-only so every loop stays bounded."""

    name: str
    ty: str
    mutable: bool = True


@dataclass(slots=True)
class Fn:
    """A helper function. ``rec``: the first parameter is a recursion depth."""

    name: str
    params: list[tuple[str, str]]
    ret: str | None
    rec: bool = False
    cost: int = 1


@dataclass(slots=True)
class Scope:
    """A stack of blocks, innermost last; each block maps a name to its variable."""

    blocks: list[dict[str, Var]] = field(default_factory=lambda: [{}])

    def push(self) -> None:
        self.blocks.append({})

    def pop(self) -> None:
        self.blocks.pop()

    def add(self, name: str, ty: str, mutable: bool = True) -> Var:
        var = Var(name, ty, mutable)
        self.blocks[-1][name] = var
        return var

    def _bindings(self) -> dict[str, Var]:
        seen: dict[str, Var] = {}
        for block in self.blocks:
            seen.update(block)  # inner blocks shadow outer ones
        return seen

    def visible(self, ty: str) -> list[str]:
        return [v.name for v in self._bindings().values() if v.ty == ty]

    def mutable(self) -> list[Var]:
        return [v for v in self._bindings().values() if v.mutable]

    def counters(self) -> list[str]:
        return [v.name for v in self._bindings().values() if not v.mutable and v.ty == "int"]

    def outer_names(self) -> list[str]:
        return [name for block in self.blocks[:-1] for name in block]

    def in_block(self, name: str) -> bool:
        return name in self.blocks[-1]
