"""The Bril side of the generator: variants of a generated program that only Bril can
say -- variables with no value on some paths (issue #19).

A Tiny program always assigns a variable before reading it, so its Bril text never
exercises Bril's "undefined variable" (a read on a path that assigned nothing) or
``undef`` values. :func:`undefined_variant` takes the program's quads and, for a few
variables assigned more than once in one function, removes the first assignment or turns
it into ``undef``: the reads before the next assignment now find no value on some paths
(or on every path: then the program is refused when loaded, in every stage alike). The
fuzzer compares every Bril stage with the ``quads`` stage, which runs the text as written
(as strict as Bril's reference interpreter).
"""

from __future__ import annotations

import random
import zlib

from ssa_course.quads.ir import Function, Instr, Program
from ssa_course.tiny.types import BOOL, INT


def variant_seed(source: str) -> int:
    """A seed from the program text, so a program always gets the same variant."""
    return zlib.crc32(source.encode())


def undefined_variant(program: Program, seed: int, count: int = 2) -> Program | None:
    """``program`` with up to ``count`` first assignments removed or made ``undef``
    (None when no variable is assigned twice)."""
    rng = random.Random(seed)
    choices: list[tuple[str, str]] = []
    for fname, fn in program.functions.items():
        params = {n for n, _ in fn.params}
        seen: dict[str, int] = {}
        for i in fn.instrs():
            if i.dest is not None and i.dest not in params and i.op not in ("call", "catch"):
                seen[i.dest] = seen.get(i.dest, 0) + 1
        choices += [(fname, v) for v, n in sorted(seen.items()) if n >= 2]
    if not choices:
        return None
    picked = rng.sample(choices, min(count, len(choices)))
    functions = dict(program.functions)
    for fname, var in picked:
        functions[fname] = _drop_first(functions[fname], var, rng.random() < 0.5)
    return Program(functions, program.structs)


def _drop_first(fn: Function, var: str, undef: bool) -> Function:
    body: list = []
    done = False
    for item in fn.body:
        if not done and isinstance(item, Instr) and item.dest == var:
            done = True
            if undef and item.type in (INT, BOOL):
                body.append(Instr("undef", var, item.type))
            continue
        body.append(item)
    return Function(fn.name, list(fn.params), fn.ret, body)
