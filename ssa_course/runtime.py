"""What every executor shares: Tiny's arithmetic, values, output formatting and limits.

Keeping these in one place is what makes the interpreters agree byte for byte:
64-bit wrapping ``+ - *``, C's truncating ``/`` and ``%``, ``print`` formatting, and the
step and call-depth limits of LANGUAGE.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ssa_course.errors import Pos, RuntimeTrap
from ssa_course.floats import format_float

# Tiny and Bril ints are 64-bit two's complement; Python's are unbounded, so every
# arithmetic result goes through ``wrap``.
INT_MIN = -(1 << 63)
INT_MAX = (1 << 63) - 1
_MASK = (1 << 64) - 1
_SIGN = 1 << 63

DEFAULT_STEP_LIMIT = 10_000_000
DEFAULT_DEPTH_LIMIT = 100_000
# seconds of wall-clock time a machine-code run (native, qemu, emulated) may take: `run
# --timeout`; the interpreters are bounded by their step limit instead
DEFAULT_TIMEOUT = 60
# The largest step or call depth limit (2^63-1): every stage accepts exactly 1..MAX_LIMIT,
# and machine code keeps both counters in signed 64-bit words, so every accepted value is
# one it can encode. More is a one-line range error, never "unlimited" in one stage only.
MAX_LIMIT = INT_MAX
MAX_ARRAY_LENGTH = 100_000_000  # LANGUAGE.md: more elements is ``array too large``
# Every element costs at least one 8-byte slot in Python: 400 million elements is about
# 3.2 GB, enough for four maximal arrays and little enough to keep a notebook kernel alive.
DEFAULT_ALLOCATION_LIMIT = 400_000_000
# A value of a running program: an int, a bool, a TinyArray, a TinyStruct, None (an unset
# array slot) or an interpreter's ``undef``. The interpreters dispatch on the operation, not
# on the value, and a wrong operand (``+`` on an array) is Python's TypeError or
# AttributeError, which they report as the program's "bad operand types": to the type
# checker a value is ``Any``, and these names say where one is meant.
Value = Any
# The sea of nodes tests both ends of a length at once; its trap names the end that failed.
ARRAY_LENGTH_TRAP = "array length out of range"


def decimal_value(text: str) -> int | None:
    """The value of ``-?[0-9]+`` (ASCII digits, any number of leading zeros), or None if
    ``text`` is not of that form. A value outside 64 bits comes back as some int outside
    ``INT_MIN..INT_MAX`` without converting all its digits (Python refuses ``int()`` of more
    than 4,300 digits): the one reader of decimal text for program arguments, limits and
    literals, so ``0...05`` is 5 everywhere and 5,000 nonzero digits are "out of range"."""
    body = text[1:] if text.startswith("-") else text
    if not body or not body.isascii() or not body.isdigit():
        return None
    digits = body.lstrip("0") or "0"  # leading zeros never make a number "long"
    value = int(digits) if len(digits) <= 19 else 10 ** 19  # 10^19 > INT_MAX + 1
    return -value if text.startswith("-") else value


def limit_problem(value: int, shown: str | None = None, low: int = 1) -> str | None:
    """Why ``value`` is not a step or depth limit (the accepted range is ``1..MAX_LIMIT``
    in every stage), or None; ``shown`` is how the message writes the value (its text).
    ``low``: another least value for a count of the same kind (``--radius``: 0)."""
    if value < low:
        return f"must be at least {low}, not {shown or value}"
    if value > MAX_LIMIT:
        return f"must be at most {MAX_LIMIT} (2^63-1), not {shown or show_int(value)}"
    return None


def show_int(value: int) -> str:
    """An int for a message; a huge one (``str()`` of 5,000 digits is refused) by its size."""
    if value.bit_length() <= 128:
        return str(value)
    return f"a number of about {int(value.bit_length() * 0.30103) + 1} digits"


def shorten_number(text: str) -> str:
    """A number's text for a message: a 5,000-digit one is cut, saying how long it was."""
    return text if len(text) <= 40 else f"{text[:20]}... ({len(text)} characters)"


def wrap(x: int) -> int:
    """Reduce an integer to 64-bit two's complement."""
    x &= _MASK  # the low 64 bits, as an unsigned number
    return x - (1 << 64) if x & _SIGN else x  # top bit set: the negative reading


def tiny_div(a: int, b: int, pos: Pos | tuple[int, int] | None = None) -> int:
    """``a / b`` truncating toward zero; ``INT_MIN / -1`` is ``INT_MIN``."""
    if b == 0:
        raise RuntimeTrap("division by zero", pos)
    # Python's // rounds toward minus infinity (-7 // 2 == -4); C and Bril truncate
    # (-7 / 2 == -3): divide the magnitudes, then give the sign
    q = abs(a) // abs(b)
    if (a < 0) != (b < 0):
        q = -q
    return wrap(q)  # INT_MIN / -1 is 2^63, which wraps back to INT_MIN


def tiny_rem(a: int, b: int, pos: Pos | tuple[int, int] | None = None) -> int:
    """``a % b`` with the sign of the dividend (C); ``INT_MIN % -1`` is ``0``."""
    if b == 0:
        raise RuntimeTrap("division by zero", pos)
    r = abs(a) % abs(b)  # (Python's % takes the divisor's sign: -7 % 2 == 1, C says -1)
    return -r if a < 0 else r


def format_value(v: object) -> str:
    """How ``print`` shows a value: ints in decimal, bools as ``true``/``false``, floats
    as Bril prints them (:func:`ssa_course.floats.format_float`)."""
    # bools first: True is an int in Python, and would print as 1
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):  # as Bril's reference interpreter prints it
        return format_float(v)
    if isinstance(v, TinyArray):
        return f"<array of {len(v.items)}>"
    if isinstance(v, TinyStruct):
        return f"<{v.name}>"
    return str(v)


def format_print(values: list[object]) -> str:
    """One ``print`` statement's line: values separated by one space, then a newline."""
    return " ".join(format_value(v) for v in values) + "\n"


class TinyArray:
    """A heap array. ``items[i] is None`` marks an unset slot (arrays of references)."""

    __slots__ = ("items",)

    def __init__(self, items: list[object]):
        self.items = items

    def __repr__(self) -> str:
        return f"TinyArray({self.items!r})"


class TinyStruct:
    """A heap struct: its type name and field values by name."""

    __slots__ = ("name", "fields")

    def __init__(self, name: str, fields: dict[str, object]):
        self.name = name
        self.fields = fields

    def __repr__(self) -> str:
        return f"TinyStruct({self.name!r}, {self.fields!r})"


def check_array_length(n: int, pos: Pos | tuple[int, int] | None = None) -> None:
    """The length test of ``new T[n]``: ``0 <= n <= MAX_ARRAY_LENGTH`` or a runtime error."""
    if n < 0:
        raise RuntimeTrap("negative array length", pos)
    if n > MAX_ARRAY_LENGTH:
        raise RuntimeTrap("array too large", pos)


class Heap:
    """One run's allocator: checks each ``new T[n]`` *before* allocating and keeps the
    run's total within ``Limits.cells`` elements (``out of memory`` past it).

    The total counts every element ever allocated, not only the live ones: it is then a
    property of the program's execution, not of when an executor drops its references.
    """

    __slots__ = ("allocated", "limit")

    def __init__(self, limits: Limits | None = None):
        self.allocated = 0
        self.limit = limits.cells if limits is not None else DEFAULT_ALLOCATION_LIMIT

    def new_array(self, n: int, zero: object,
                  pos: Pos | tuple[int, int] | None = None) -> TinyArray:
        """``new T[n]``: ``zero`` is 0, False, or None (unset) for reference elements."""
        check_array_length(n, pos)
        self.allocated += n
        if self.allocated > self.limit:
            raise RuntimeTrap("out of memory", pos)
        return TinyArray([zero] * n)


def check_index(a: TinyArray, i: int, pos: Pos | tuple[int, int] | None = None) -> None:
    if not 0 <= i < len(a.items):
        raise RuntimeTrap("index out of bounds", pos)


def load_element(a: TinyArray, i: int, pos: Pos | tuple[int, int] | None = None) -> object:
    """``a[i]`` with Tiny's checks: bounds, then unset slots."""
    check_index(a, i, pos)
    v = a.items[i]
    if v is None:
        raise RuntimeTrap("unset element", pos)
    return v


@dataclass(slots=True)
class Limits:
    """Resource limits of one run (LANGUAGE.md, "Limits")."""

    steps: int = DEFAULT_STEP_LIMIT
    depth: int = DEFAULT_DEPTH_LIMIT
    cells: int = DEFAULT_ALLOCATION_LIMIT  # array elements a run may allocate in total
    timeout: int = DEFAULT_TIMEOUT  # wall-clock seconds of a machine-code run (run --timeout)


def step_limit_exceeded() -> RuntimeTrap:
    return RuntimeTrap("step limit exceeded")


def stack_overflow() -> RuntimeTrap:
    return RuntimeTrap("stack overflow")


def uncaught(value: int) -> RuntimeTrap:
    return RuntimeTrap(f"uncaught exception {value}")


class Output:
    """Collects what a program prints; ``write`` may also stream to a callback."""

    __slots__ = ("parts", "sink")

    def __init__(self, sink: Callable[[str], object] | None = None):
        self.parts: list[str] = []
        self.sink = sink

    def write(self, text: str) -> None:
        self.parts.append(text)
        if self.sink is not None:
            self.sink(text)

    def text(self) -> str:
        return "".join(self.parts)


@dataclass(slots=True)
class RunResult:
    """The observable behaviour of one run: what it printed and how it ended."""

    stdout: str
    status: int = 0  # 0 ok, 1 compile/argument error, 2 runtime error
    error: str = ""  # the stderr message (one line, without the trailing newline)
    steps: int = 0  # dynamic instruction count (executor-specific)
    extra: dict = field(default_factory=dict)


class deep_recursion:
    """Raise Python's recursion limit while walking a tree.

    Trees follow the program text, so a 10,000-term ``1+1+...+1`` is a 10,000-deep tree;
    tree walkers (checker, lowering, the reference interpreter) recurse on it. Program
    *calls* never use Python recursion (every executor keeps an explicit frame stack).
    """

    def __init__(self, limit: int = 1_000_000):
        self.limit = limit
        self.saved = 0

    def __enter__(self) -> None:
        import sys

        self.saved = sys.getrecursionlimit()
        sys.setrecursionlimit(max(self.saved, self.limit))

    def __exit__(self, *exc: object) -> None:
        import sys

        sys.setrecursionlimit(self.saved)


class paused_gc:
    """Pause the cyclic garbage collector while building a big tree or IR.

    A compiler allocates many small objects that all stay alive; CPython's collector would
    rescan them again and again (measured: 100k-statement programs compiled 2-4x slower;
    rebuilding the CFG of a 10k-statement program 10x slower, because a full collection of
    a heap of a few hundred thousand objects costs about a second on a busy 2-core machine).
    Nothing built here is garbage until the whole structure is dropped.

    The policy, applied at the boundaries rather than pass by pass:
    :meth:`ssa_course.compilation.Compilation.cached` builds every representation (stages,
    views, the explorer) under it, the ``opt`` driver runs a whole pipeline under it (its
    checks between passes included), and the quads
    interpreter resolves a function under it. Programs *run* with the collector on (their
    structs may form cycles). Nested uses are fine: an inner one leaves it paused.
    """

    def __enter__(self) -> None:
        import gc

        self.was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: object) -> None:
        import gc

        if self.was_enabled:
            gc.enable()
