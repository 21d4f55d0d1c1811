"""Checking what a caller hands the public API (``compile``, ``run``, ``show``, ``explore``).

Each check names the function and the parameter and says what it expected, so a
learner's ``run(prog, steps="10")`` ends in one line (``ArgumentTypeError``, a
``TypeError``) instead of a failure deep inside an interpreter.
"""

from __future__ import annotations

from ssa_course.errors import ArgumentTypeError, ArgumentValueError
from ssa_course.runtime import INT_MAX, INT_MIN, MAX_LIMIT, limit_problem

_FACES = ("text", "dot", "draw", "svg", "png")


def type_name(value: object) -> str:
    return "None" if value is None else type(value).__name__


def source_text(func: str, source: object) -> None:
    """``source`` is a program text (str); Compilations are handled by the caller."""
    if isinstance(source, str):
        return
    hint = ""
    if isinstance(source, (bytes, bytearray)):
        hint = " (decode it first: source.decode('utf-8'))"
    elif source is None:
        hint = " (pass the program text, or ssa_course.load_file(path) for a file)"
    raise ArgumentTypeError(f"{func}(): 'source' must be a str (the program text) or a "
                            f"Compilation, not {type_name(source)}{hint}")


def filename(func: str, value: object) -> None:
    if not isinstance(value, str):
        raise ArgumentTypeError(f"{func}(): 'filename' must be a str, not {type_name(value)}")


def kind(func: str, value: object, kinds: tuple[str, ...]) -> None:
    if value is None:
        return
    if not isinstance(value, str):
        raise ArgumentTypeError(f"{func}(): 'kind' must be a str or None, not "
                                f"{type_name(value)}")
    if value not in kinds:
        raise ArgumentValueError(f"{func}(): unknown kind {value!r} (known: "
                                 f"{', '.join(kinds)})")


def name_in(func: str, param: str, value: object, names: list[str], what: str) -> None:
    """``value`` is one of ``names`` (stage, view or face names)."""
    if not isinstance(value, str):
        raise ArgumentTypeError(f"{func}(): '{param}' must be a str naming a {what}, not "
                                f"{type_name(value)}")
    if value not in names:
        raise ArgumentValueError(f"{func}(): unknown {what} {value!r} for '{param}' "
                                 f"(known: {', '.join(names)})")


def limit(func: str, param: str, value: object) -> None:
    """A step or depth limit: None (the default) or an int from 1 to ``MAX_LIMIT`` (the
    CLI's range: :func:`ssa_course.runtime.limit_problem` checks both)."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArgumentTypeError(f"{func}(): '{param}' must be an int from 1 to {MAX_LIMIT} "
                                f"or None, not {type_name(value)} {value!r}"[:200])
    problem = limit_problem(value)
    if problem is not None:
        raise ArgumentValueError(f"{func}(): '{param}' {problem}")


def count(func: str, param: str, value: object, low: int, none_ok: bool = False) -> None:
    """A count of drawing options (``radius=``, ``budget=``): an int (not a bool) from
    ``low`` to ``MAX_LIMIT`` -- the CLI's ``--radius``/``--budget`` range -- or None when
    ``none_ok``."""
    if value is None and none_ok:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        allowed = " or None" if none_ok else ""
        raise ArgumentTypeError(f"{func}(): '{param}' must be an int from {low} to "
                                f"{MAX_LIMIT}{allowed}, not {type_name(value)} {value!r}"[:200])
    problem = limit_problem(value, low=low)
    if problem is not None:
        raise ArgumentValueError(f"{func}(): '{param}' {problem}")


def draw_options(func: str, function: object, around: object, radius: object,
                 budget: object) -> None:
    """What ``show()`` and ``linked()`` take for a drawing, checked as :func:`run` checks
    its arguments: a wrong type is a ``TypeError``, a value out of range a ``ValueError``,
    each naming the function."""
    if function is not None and not isinstance(function, str):
        raise ArgumentTypeError(f"{func}(): 'function' must be a str naming a function or "
                                f"None, not {type_name(function)} {function!r}"[:200])
    if around is not None and (isinstance(around, bool) or not isinstance(around, str | int)):
        raise ArgumentTypeError(f"{func}(): 'around' must be a node id (an int such as 12) "
                                f"or a block name (a str), or None, not {type_name(around)} "
                                f"{around!r}"[:200])
    count(func, "radius", radius, 0)
    count(func, "budget", budget, 1, none_ok=True)


def main_arg(func: str, index: int, value: object) -> str:
    """One argument of ``main`` as command-line text: ints, bools, or strings as typed."""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        if not INT_MIN <= value <= INT_MAX:
            raise ArgumentValueError(f"{func}(): argument {index} of main is outside the "
                                     "64-bit int range")
        return str(value)
    if isinstance(value, str):
        return value
    shown = "" if value is None else f" {value!r}"[:60]
    raise ArgumentTypeError(f"{func}(): argument {index} of main must be an int, a bool or "
                            f"a str, not {type_name(value)}{shown}")


def fmt(func: str, value: object) -> None:
    if value is None:
        return
    name_in(func, "fmt", value, list(_FACES), "format")
