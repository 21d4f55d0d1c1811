"""How fast each assembler turns a kernel's assembly into an executable image: GNU ``as`` +
``ld`` (two child processes), keystone (in process, our layout around it) and our own
pure-Python encoder (``ssa_course/codegen/x86_64/encode.py``). Run by ``make bench-asm``.

For each kernel of ``native_kernels.py``: the whole assembly file as ``ssa-course compile``
makes it (the runtime included, no fuel checks), its number of instructions, and the best
of ``--repeat`` timings of each assembler in milliseconds. Our encoder keeps a cache of the
instructions it has encoded (the runtime's repeat in every program): "own cold" clears it
before each timing, "own warm" does not (the second program of a session). The images
must be byte-identical; a difference is printed loudly and makes the exit status 1. An
assembler that is missing prints ``-`` and one line says why.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent.parent))

from native_kernels import KERNELS  # noqa: E402

from ssa_course.codegen import toolchain  # noqa: E402
from ssa_course.codegen.assemble import source_hash  # noqa: E402
from ssa_course.codegen.x86_64.assemble import (  # noqa: E402
    _assemble_gnu,
    _assemble_in_process,
)
from ssa_course.codegen.x86_64.encode import encode  # noqa: E402

COLUMNS = ("gnu", "keystone", "own cold", "own warm")


def kernel_asm(path: Path) -> str:
    """The kernel's whole assembly file, as ``ssa-course compile`` assembles it."""
    from ssa_course.compilation import load_file
    from ssa_course.lessons.l11_codegen import compile_machine

    compiled = compile_machine(load_file(str(path)), fuel=False)
    return compiled.source(None)  # type: ignore[attr-defined]


def instructions(source: str) -> int:
    lines = (ln.split("#")[0].strip() for ln in source.splitlines())
    return sum(1 for ln in lines if ln and not ln.endswith(":") and not ln.startswith("."))


def timer(name: str, source: str) -> Callable[[], object]:
    digest = source_hash(source)
    if name == "gnu":
        return lambda: _assemble_gnu(source, digest)
    if name == "keystone":
        return lambda: _assemble_in_process(source, digest, "keystone")

    def own() -> object:
        if name == "own cold":
            encode.cache_clear()
        return _assemble_in_process(source, digest, "own")
    return own


def best_ms(run: Callable[[], object], repeat: int) -> tuple[float, object]:
    best, image = math.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        image = run()
        best = min(best, time.perf_counter() - t0)
    return best * 1000, image


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ns = ap.parse_args(argv)
    missing = {c: toolchain.assembler_missing(c.split()[0]) for c in COLUMNS}
    for c, why in missing.items():
        if why and not c.startswith("own"):
            print(f"{c}: '-' ({why})")
    header = f"{'kernel':16} {'instrs':>6} " + " ".join(f"{c:>9}" for c in COLUMNS)
    print(header + f" {'own/gnu':>8} {'own/ks':>7}")
    print("-" * (len(header) + 17))
    ratios: dict[str, list[float]] = {"gnu": [], "keystone": []}
    status = 0
    for k in KERNELS:
        source = kernel_asm(k.tiny)
        times: dict[str, float] = {}
        images = {}
        for c in COLUMNS:
            if missing[c] is None:
                times[c], images[c] = best_ms(timer(c, source), ns.repeat)
        texts = {(im.text, im.data, tuple(sorted(im.symbols.items())))  # type: ignore
                 for im in images.values()}
        if len(texts) > 1:
            print(f"MISMATCH: the assemblers disagree on {k.name}")
            status = 1
        cells = " ".join(f"{times[c]:9.1f}" if c in times else f"{'-':>9}" for c in COLUMNS)
        row = f"{k.name:16} {instructions(source):6} {cells}"
        for other, width in (("gnu", 8), ("keystone", 7)):
            if other in times:
                ratios[other].append(times["own cold"] / times[other])
                row += f" {times['own cold'] / times[other]:{width}.2f}"
            else:
                row += f" {'-':>{width}}"
        print(row)
    for other, rs in ratios.items():
        if rs:
            mean = math.exp(sum(map(math.log, rs)) / len(rs))
            print(f"geometric mean own (cold) / {other}: {mean:.2f}")
    return status


if __name__ == "__main__":
    sys.exit(main())
