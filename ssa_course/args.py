"""Command-line arguments of ``main``: text in, typed values out (LANGUAGE.md, "Programs").

An ``int`` is ``-?[0-9]+`` within 64 bits, a ``bool`` is ``true`` or ``false``; a missing,
extra or malformed argument is a :class:`UsageError` (exit status 1, nothing runs).
"""

from __future__ import annotations

import re

from ssa_course.errors import UsageError
from ssa_course.runtime import INT_MAX, INT_MIN
from ssa_course.tiny.types import BOOL, INT, Type

_INT = re.compile(r"-?[0-9]+\Z")


def parse_main_args(params: list[tuple[str, Type]], argv: list[str]) -> list[object]:
    """Convert ``argv`` to values of ``main``'s parameter types, in order."""
    if len(argv) != len(params):
        wanted = ", ".join(f"{n}: {t}" for n, t in params) or "none"
        raise UsageError(f"main takes {len(params)} argument{'s' * (len(params) != 1)} "
                         f"({wanted}), but {len(argv)} {'was' if len(argv) == 1 else 'were'} "
                         "given")
    values: list[object] = []
    for (name, ty), text in zip(params, argv, strict=True):
        values.append(_convert(name, ty, text))
    return values


def _convert(name: str, ty: Type, text: str) -> object:
    if ty == INT:
        if not _INT.match(text) or len(text.lstrip("-").lstrip("0")) > 19:
            raise UsageError(f"argument '{name}' must be an int, not '{text}'")
        value = int(text)
        if not INT_MIN <= value <= INT_MAX:
            raise UsageError(f"argument '{name}' is out of the 64-bit int range: '{text}'")
        return value
    if ty == BOOL:
        if text not in ("true", "false"):
            raise UsageError(f"argument '{name}' must be true or false, not '{text}'")
        return text == "true"
    raise UsageError(f"argument '{name}' has type {ty}, which cannot come from the command line")
