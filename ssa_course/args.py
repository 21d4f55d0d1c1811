"""Command-line numbers: ``main``'s arguments and the step/depth limits (LANGUAGE.md).

An ``int`` argument is ``-?[0-9]+`` (ASCII digits, leading zeros allowed) within 64 bits, a
``bool`` is ``true`` or ``false``, a ``float`` a decimal number (``-1.5``, ``2e10``,
``Infinity``; not NaN); a missing, extra or malformed argument is a
:class:`UsageError` (exit status 1, nothing runs). A limit (``--steps``, ``--depth``,
``compile --step-limit``) is ``[0-9]+`` from 1 to :data:`~ssa_course.runtime.MAX_LIMIT`:
:func:`parse_limit` is the one reader of a limit's text, and
:func:`ssa_course.runtime.limit_problem` the one range check (the library's ``steps=``
and ``depth=`` use it too).
"""

from __future__ import annotations

import re

from ssa_course.errors import UsageError
from ssa_course.quads.memory import CHAR, is_char
from ssa_course.runtime import (
    INT_MAX,
    INT_MIN,
    MAX_LIMIT,
    decimal_value,
    limit_problem,
    shorten_number,
)
from ssa_course.tiny.types import BOOL, FLOAT, INT, Type

_FLOAT_ARG = re.compile(r"[-+]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|Infinity)")


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


def shown_argument(text: str) -> str:
    """An argument as an error message quotes it: its bytes (as the command line gave them,
    UTF-8 for text from the library), printable ASCII as is and every other byte as
    ``\\xNN`` -- one line whatever it holds, the same in every stage: the compiled
    executable's runtime writes it byte by byte with this rule (issue 39)."""
    try:
        data = text.encode("utf-8", "surrogateescape")  # sys.argv's undecodable bytes
    except UnicodeEncodeError:  # a lone surrogate from the library: its UTF-8 form
        data = text.encode("utf-8", "surrogatepass")
    return "".join(chr(b) if 0x20 <= b <= 0x7E else f"\\x{b:02x}" for b in data)


def _convert(name: str, ty: Type, text: str) -> object:
    if ty == INT:
        value = decimal_value(text)
        if value is None:
            raise UsageError(f"argument '{name}' must be an int, not '{shown_argument(text)}'")
        if not INT_MIN <= value <= INT_MAX:
            raise UsageError(f"argument '{name}' is out of the 64-bit int range: "
                             f"'{shown_argument(text)}'")
        return value
    if ty == BOOL:
        if text not in ("true", "false"):
            raise UsageError(f"argument '{name}' must be true or false, not "
                             f"'{shown_argument(text)}'")
        return text == "true"
    if ty == FLOAT:
        # a decimal number as brili's parseNumber reads one (or +-Infinity); not NaN
        if not _FLOAT_ARG.fullmatch(text):
            raise UsageError(f"argument '{name}' must be a float, not "
                             f"'{shown_argument(text)}'")
        return float(text.replace("Infinity", "inf"))
    if ty == CHAR:  # Bril's char extension: one Unicode character
        if not is_char(text):
            raise UsageError(f"argument '{name}' must be one character, not "
                             f"'{shown_argument(text)}'")
        return text
    raise UsageError(f"argument '{name}' has type {ty}, which cannot come from the command line")


def parse_limit(option: str, text: str, low: int = 1) -> int:
    """The value of a limit option's text (``--steps 5``), or a one-line :class:`UsageError`
    naming the option: the same digits as an int argument (no sign, no spaces, no
    full-width digits), the same range as the library's ``steps=``/``depth=``. ``low``:
    the least value (a count such as ``--radius`` or ``--budget`` may be 0)."""
    value = decimal_value(text)
    if value is None or text.startswith("-"):
        raise UsageError(f"{option} expects a whole number from {low} to {MAX_LIMIT}, not "
                         f"'{shorten_number(text)}'")
    problem = limit_problem(value, shorten_number(text), low)
    if problem is not None:
        raise UsageError(f"{option} {problem}")
    return value
