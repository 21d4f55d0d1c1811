"""Shared by the codegen runtime tests: build a program around a hand-written ``tiny_main``
and observe it through every backend this machine has, checking they all agree.

``observe`` runs the GNU-assembled executable natively, checks the keystone path and our
own assembler give the same text, data and symbols (and that their ELF files run the same),
and runs the bytes under unicorn: every available way must show the same stdout, stderr
and status.
"""

from __future__ import annotations

import pytest

from ssa_course.codegen import toolchain
from ssa_course.codegen.assemble import Image
from ssa_course.codegen.native import ChildResult, run_native
from ssa_course.codegen.x86_64.assemble import assemble
from ssa_course.codegen.x86_64.runtime import RuntimeConfig, program_source


def source(main_asm: str, params: tuple[tuple[str, str], ...] = (), **config: object) -> str:
    return program_source(main_asm, RuntimeConfig(main_params=params, **config))  # type: ignore


def images(src: str) -> list[Image]:
    """The program assembled by every available assembler (GNU first, our own last: it is
    always there)."""
    return [assemble(src, name) for name in toolchain.ASSEMBLERS
            if toolchain.assembler_missing(name) is None]


def same_bytes(a: Image, b: Image) -> None:
    assert a.text == b.text, _first_difference(a, b)
    assert a.data == b.data
    assert a.bss_size == b.bss_size
    assert a.symbols == b.symbols
    assert a.sizes == b.sizes
    assert a.entry == b.entry


def _first_difference(a: Image, b: Image) -> str:
    for name, _, _ in a.functions():
        if name in b.sizes and a.function_bytes(name) != b.function_bytes(name):
            return f"first function that differs: {name}"
    return "text lengths or layout differ"


def observe(src: str, args: list[str], timeout_s: float = 60.0) -> ChildResult:
    """Run ``src`` with ``args`` every available way; all must agree; the result."""
    imgs = images(src)
    for other in imgs[1:]:
        same_bytes(imgs[0], other)
    results: list[tuple[str, ChildResult]] = []
    if toolchain.native_missing() is None:
        for img in imgs:
            results.append((f"native/{img.backend}", run_native(img, args, timeout_s)))
    if toolchain.emulator_missing() is None:
        from ssa_course.codegen.x86_64.emulate import run_emulated

        results.append(("emulated", run_emulated(imgs[0], args, timeout_s)))
    if not results:
        pytest.skip(toolchain.native_missing() or "no way to run machine code here")
    first_name, first = results[0]
    for name, r in results[1:]:
        assert (r.stdout, r.stderr, r.status) == (first.stdout, first.stderr, first.status), \
            f"{name} differs from {first_name}"
    return first


# Prologue/epilogue of a hand-written function that keeps the depth limit, like isel's.
def prologue(frame: int = 0) -> str:
    sub = f"    sub rsp, {frame}\n" if frame else ""
    return ("    push rbp\n    mov rbp, rsp\n    sub qword ptr [rip + rt_depth], 1\n"
            f"    js rt_stack_overflow\n{sub}")


EPILOGUE = "    add qword ptr [rip + rt_depth], 1\n    leave\n    ret\n"
