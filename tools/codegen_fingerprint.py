"""Fingerprint the code generators: one sha256 per (program, target) of the assembly text
and of the assembled bytes, over every corpus program and every native kernel.

A refactoring of ``ssa_course/codegen`` that claims to change nothing shows the same
lines before and after::

    .venv/bin/python tools/codegen_fingerprint.py > before.txt
    ... change the code ...
    .venv/bin/python tools/codegen_fingerprint.py | diff before.txt -

Each line: ``program target asm=<sha256 of the assembly file> exe=<sha256 of the image>``
(the image: text, data, bss size, entry and symbol addresses, by our own assembler, so no
installed tool is needed); a program that does not compile prints ``error=<kind>``.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks" / "native"))

from corpus import load_bril_corpus, load_corpus, load_simple_corpus  # noqa: E402
from native_kernels import KERNELS  # noqa: E402

from ssa_course.compilation import compile_source  # noqa: E402
from ssa_course.errors import SsaCourseError  # noqa: E402
from ssa_course.lessons.l11_aarch64 import compile_machine_a64, image_of_a64  # noqa: E402
from ssa_course.lessons.l11_codegen import compile_machine  # noqa: E402
from ssa_course.runtime import Limits  # noqa: E402


def programs() -> Iterator[tuple[str, str]]:
    """(name, source) of every corpus program and native kernel, in a fixed order."""
    for case in [*load_corpus(), *load_bril_corpus(), *load_simple_corpus()]:
        yield f"{case.path.parent.name}/{case.path.name}", case.source
    for k in KERNELS:
        yield f"kernels/{k.tiny.name}", k.tiny.read_text()


def image_digest(image: Any) -> str:
    h = hashlib.sha256()
    h.update(image.text)
    h.update(image.data)
    h.update(repr((image.bss_size, image.entry, sorted(image.symbols.items()))).encode())
    return h.hexdigest()


def x86_image(source: str) -> Any:
    try:  # the x86-64 assembler's home since #38; before, codegen/assemble.py
        from ssa_course.codegen.x86_64.assemble import assemble
    except ImportError:
        from ssa_course.codegen.assemble import assemble  # type: ignore[attr-defined,no-redef]
    return assemble(source, "own")


def fingerprint(name: str, source: str, target: str) -> str:
    try:
        comp = compile_source(source, name.split("/")[-1])
        comp.check()
    except SsaCourseError as e:
        return f"{name} {target} error={type(e).__name__}"
    limits = Limits()
    if target == "x86_64":
        compiled = compile_machine(comp)
        asm = compiled.source(limits.steps, limits.depth, limits.cells)
        image = x86_image(asm)
    else:
        compiled_a = compile_machine_a64(comp)
        asm = compiled_a.source(limits.steps, limits.depth, limits.cells)
        image = image_of_a64(compiled_a, limits, "own")
    asm_hash = hashlib.sha256(asm.encode()).hexdigest()
    return f"{name} {target} asm={asm_hash} exe={image_digest(image)}"


def main() -> int:
    for name, source in programs():
        for target in ("x86_64", "aarch64"):
            print(fingerprint(name, source, target), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
