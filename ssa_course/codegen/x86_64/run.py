"""Running x86-64 programs natively: an image, or assembly source assembled on the way
(:func:`ssa_course.codegen.native.run_native` runs any target's image)."""

from __future__ import annotations

from collections.abc import Callable

from ssa_course.codegen import native
from ssa_course.codegen.assemble import Image
from ssa_course.codegen.child import DEFAULT_TIMEOUT_S, ChildResult
from ssa_course.codegen.x86_64.assemble import assemble


def run_native(program: Image | str, args: list[str], timeout_s: float = DEFAULT_TIMEOUT_S,
               backend: str = "auto",
               on_stdout: Callable[[str], object] | None = None) -> ChildResult:
    """Run ``program`` (an image, or x86-64 assembly source to assemble first with
    ``backend``) on this machine with ``args``."""
    image = assemble(program, backend) if isinstance(program, str) else program
    return native.run_native(image, args, timeout_s, on_stdout=on_stdout)
