"""Bril's bitcast extension: ``float2bits`` and ``bits2float`` (a base module).

A float's 64 bits read as a signed 64-bit int, and back: exact bit patterns (NaN
payloads, ``-0.0``, infinities), as brilirs does with ``to_ne_bytes``. Both are rows of
the opcode table (:mod:`ssa_course.opcodes`), so every stage reads, checks, runs, folds
and writes them.
"""

from __future__ import annotations

import struct

_DOUBLE = struct.Struct("<d")
_INT64 = struct.Struct("<q")


def float2bits(x: float) -> int:
    """The bits of ``x`` as a signed 64-bit int (0.1 -> 4591870180066957722)."""
    return int(_INT64.unpack(_DOUBLE.pack(x))[0])


def bits2float(n: int) -> float:
    """The double whose bits are the 64-bit int ``n``."""
    return float(_DOUBLE.unpack(_INT64.pack(n))[0])
