"""The registry of machines: a target's name -> its :class:`~.machine.Machine`.

The only neutral module that reaches into a CPU's folder, and lazily: a CPU is imported
when first asked for, so importing the code generator loads neither.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, cast

from ssa_course.errors import UsageError

if TYPE_CHECKING:
    from ssa_course.codegen.machine import Machine

DEFAULT = "x86-64"
# name -> (module, attribute): adding a CPU is one row here and a folder.
MACHINES: dict[str, tuple[str, str]] = {
    "x86-64": ("ssa_course.codegen.x86_64.machine", "X86_64_MACHINE"),
    "aarch64": ("ssa_course.codegen.aarch64.machine", "AARCH64_MACHINE"),
}


def machine(target: str | None = None) -> Machine:
    """The machine of ``target`` (None: :data:`DEFAULT`)."""
    name = DEFAULT if target is None else target
    where = MACHINES.get(name)
    if where is None:
        raise UsageError(f"unknown target {name!r} (expected one of {', '.join(MACHINES)})")
    module, attribute = where
    return cast("Machine", getattr(importlib.import_module(module), attribute))
