"""The one table of value operators: what every stage knows about ``+``, ``div`` or ``not``.

A value operator takes one or two values and gives one value, with no effect on memory,
control or output; at most it can fail with a runtime error (division by zero). Each
:class:`Opcode` row says everything a stage asks about it: Bril's name, Tiny's symbol and
precedence level, arity, operand and result types, algebraic facts (commutative, identity
elements, ``x op x``), whether and how it can trap, and its meaning on Python values
(:meth:`Opcode.apply`, Tiny's exact semantics: 64-bit wrapping, truncating division,
``INT_MIN / -1 == INT_MIN``).

The lexer, parser, checker, printer, lowering, peepholes, every interpreter, the Bril
readers and type rules, the IRCode builder and verifier and the sea-of-nodes builders all
read this table, so adding an operator is one :func:`register` call (see
``docs/adding-an-operator.md``). This is a base module: it imports nothing from the IR
packages.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from ssa_course.bitcast import bits2float, float2bits
from ssa_course.errors import Pos, RuntimeTrap
from ssa_course.floats import FLOAT_TO_INT_TRAP, float_to_int, foldable, ieee_div
from ssa_course.runtime import TinyArray, TinyStruct, tiny_div, tiny_rem, wrap

# Operand and result kinds (names of Tiny types; SAME: any two values of one type).
INT = "int"
BOOL = "bool"
FLOAT = "float"  # Bril's float extension (IEEE doubles)
SAME = "same"

# Tiny's precedence levels, loosest first (LANGUAGE.md's grammar: or, and, cmp, sum, term).
OR_LEVEL, AND_LEVEL, CMP_LEVEL, SUM_LEVEL, TERM_LEVEL = 1, 2, 3, 4, 5
PREFIX_LEVEL = 6  # unary operators bind tighter than every binary one
# Comparisons do not chain: ``a < b < c`` is a syntax error.
NON_ASSOCIATIVE = frozenset({CMP_LEVEL})

_NONE = None  # an absent algebraic fact


@dataclass(frozen=True, slots=True)
class Opcode:
    """One value operator.

    ``name`` is its Bril name (``bril=False``: an operator of Tiny and the sea of nodes
    that quads spell with other ops, like ``!=`` as ``not (eq a b)``). ``evaluate`` is its
    meaning on operands that do not trap; ``divisor`` names the operand whose zero value
    is the trap ``trap``. ``right_identity`` ``e`` means ``x op e == x`` (``left_identity``
    likewise), ``zero`` is absorbing (``x op z == z``), ``same`` is ``x op x``; each is
    None when the operator has no such rule (the peepholes then skip it).
    """

    name: str
    arity: int
    operands: str  # INT, BOOL or SAME
    result: str  # INT or BOOL
    evaluate: Callable[..., object]
    symbol: str | None = None  # Tiny's spelling, if Tiny has the operator
    precedence: int | None = None  # Tiny's level (PREFIX_LEVEL for unary operators)
    commutative: bool = False
    pure: bool = True  # no effect besides its value (a trap is not an effect here)
    trap: str | None = None  # the runtime error it may raise ...
    divisor: int | None = None  # ... when this operand is zero
    # ... or, for a trap that is not a zero operand (``ftoi`` of NaN): when this is true
    # of the operands
    trap_if: Callable[..., bool] | None = None
    bril: bool = True  # Bril programs may use it (readers, writer, type rules)
    # Tiny evaluates the right operand only when the left one is not this value (then the
    # result is this value): False for &&, True for ||; None: both operands, always.
    short_circuit: bool | None = None
    right_identity: object = _NONE
    left_identity: object = _NONE
    zero: object = _NONE
    same: object = _NONE
    mirror: str | None = None  # the op with the operands swapped: a < b is b > a
    negation: str | None = None  # the op that gives the opposite answer: a < b, a >= b
    label: str | None = None  # the sea of nodes' label (default: the symbol, else the name)
    doc: str = ""

    @property
    def may_trap(self) -> bool:
        return self.trap is not None

    @property
    def node_label(self) -> str:
        return self.label or self.symbol or self.name

    def traps(self, values: Sequence[object]) -> bool:
        """Would these operands make the operator fail?"""
        if self.trap_if is not None:
            return bool(self.trap_if(*values))
        d = self.divisor
        return d is not None and values[d] == 0 and values[d] is not False

    def apply(self, values: Sequence[object],
              pos: Pos | tuple[int, int] | None = None) -> object:
        """The operator's value, or :class:`RuntimeTrap` at ``pos`` when it fails."""
        if self.traps(values):
            raise RuntimeTrap(self.trap or "runtime error", pos)
        return self.evaluate(*values)

    def fold(self, values: Sequence[object]) -> object | None:
        """The constant a compiler may put in place of the operation, or None when it must
        stay (it would trap: the program must fail at run time, where it says; or it is a
        NaN or an infinity, which no constant of Bril's text can spell)."""
        if self.traps(values):
            return None
        value = self.evaluate(*values)
        return value if foldable(value) else None


def _eq(a: object, b: object) -> bool:
    """``==`` on ints and bools by value, on arrays and structs by reference."""
    return a is b if isinstance(a, TinyArray | TinyStruct) else a == b


def _ne(a: object, b: object) -> bool:
    return a is not b if isinstance(a, TinyArray | TinyStruct) else a != b


_BUILTIN = (
    Opcode("add", 2, INT, INT, lambda a, b: wrap(a + b), "+", SUM_LEVEL, commutative=True,
           right_identity=0, left_identity=0, doc="64-bit wrapping sum"),
    Opcode("sub", 2, INT, INT, lambda a, b: wrap(a - b), "-", SUM_LEVEL,
           right_identity=0, same=0, doc="64-bit wrapping difference"),
    Opcode("mul", 2, INT, INT, lambda a, b: wrap(a * b), "*", TERM_LEVEL, commutative=True,
           right_identity=1, left_identity=1, zero=0, doc="64-bit wrapping product"),
    Opcode("div", 2, INT, INT, tiny_div, "/", TERM_LEVEL, trap="division by zero",
           divisor=1, right_identity=1,
           doc="truncates toward zero; INT_MIN / -1 is INT_MIN"),
    Opcode("rem", 2, INT, INT, tiny_rem, "%", TERM_LEVEL, trap="division by zero",
           divisor=1, doc="sign of the dividend; INT_MIN % -1 is 0 (a Bril extension)"),
    Opcode("eq", 2, SAME, BOOL, _eq, "==", CMP_LEVEL, commutative=True, same=True,
           mirror="eq", negation="ne",
           doc="ints and bools by value, arrays and structs by reference"),
    Opcode("ne", 2, SAME, BOOL, _ne, "!=", CMP_LEVEL, commutative=True, same=False,
           mirror="ne", negation="eq",
           bril=False, doc="Tiny's !=; quads write it not (eq a b)"),
    Opcode("lt", 2, INT, BOOL, lambda a, b: a < b, "<", CMP_LEVEL, same=False,
           mirror="gt", negation="ge"),
    Opcode("le", 2, INT, BOOL, lambda a, b: a <= b, "<=", CMP_LEVEL, same=True,
           mirror="ge", negation="gt"),
    Opcode("gt", 2, INT, BOOL, lambda a, b: a > b, ">", CMP_LEVEL, same=False,
           mirror="lt", negation="le"),
    Opcode("ge", 2, INT, BOOL, lambda a, b: a >= b, ">=", CMP_LEVEL, same=True,
           mirror="le", negation="lt"),
    Opcode("and", 2, BOOL, BOOL, lambda a, b: bool(a and b), "&&", AND_LEVEL,
           commutative=True, short_circuit=False, right_identity=True, label="and",
           doc="Bril's and evaluates both operands; Tiny's && short-circuits"),
    Opcode("or", 2, BOOL, BOOL, lambda a, b: bool(a or b), "||", OR_LEVEL,
           commutative=True, short_circuit=True, right_identity=False, label="or",
           doc="Bril's or evaluates both operands; Tiny's || short-circuits"),
    Opcode("not", 1, BOOL, BOOL, lambda a: not a, "!", PREFIX_LEVEL),
    Opcode("neg", 1, INT, INT, lambda a: wrap(-a), "-", PREFIX_LEVEL, bril=False,
           doc="Tiny's unary minus; quads write it sub 0 x"),
) + (
    # Bril's float extension. No algebraic facts at all: under IEEE 754 ``x * 0.0`` is not
    # 0.0 (NaN, -0.0), ``x + 0.0`` is not x (-0.0 + 0.0 is 0.0), ``x == x`` is false for
    # NaN, ``x - x`` is NaN for an infinity. Commuting an add or a multiply is exact.
    # Tiny spells them with the int symbols (``+`` on floats): see :func:`tiny_row`.
    Opcode("fadd", 2, FLOAT, FLOAT, lambda a, b: a + b, commutative=True,
           doc="IEEE sum"),
    Opcode("fsub", 2, FLOAT, FLOAT, lambda a, b: a - b, doc="IEEE difference"),
    Opcode("fmul", 2, FLOAT, FLOAT, lambda a, b: a * b, commutative=True,
           doc="IEEE product"),
    Opcode("fdiv", 2, FLOAT, FLOAT, ieee_div,
           doc="IEEE quotient: by zero gives an infinity or NaN, not an error"),
    Opcode("feq", 2, FLOAT, BOOL, lambda a, b: a == b, commutative=True,
           mirror="feq", negation="fne", doc="false when either is NaN; -0.0 == 0.0"),
    Opcode("fne", 2, FLOAT, BOOL, lambda a, b: a != b, commutative=True,
           mirror="fne", negation="feq", bril=False,
           doc="Tiny's != on floats (true when either is NaN); quads write not (feq a b)"),
    # (no negation for the orderings: with NaN, not (a < b) is not a >= b)
    Opcode("flt", 2, FLOAT, BOOL, lambda a, b: a < b, mirror="fgt"),
    Opcode("fle", 2, FLOAT, BOOL, lambda a, b: a <= b, mirror="fge"),
    Opcode("fgt", 2, FLOAT, BOOL, lambda a, b: a > b, mirror="flt"),
    Opcode("fge", 2, FLOAT, BOOL, lambda a, b: a >= b, mirror="fle"),
    Opcode("fneg", 1, FLOAT, FLOAT, lambda a: -a, bril=False,
           doc="Tiny's unary minus on floats; quads write it fmul x -1.0"),
    Opcode("itof", 1, INT, FLOAT, float,
           doc="Tiny's float(n): the nearest double (an ssa_course extension)"),
    Opcode("ftoi", 1, FLOAT, INT, lambda a: float_to_int(a), trap=FLOAT_TO_INT_TRAP,
           trap_if=lambda a: float_to_int(a) is None,
           doc="Tiny's int(x): toward zero; NaN, an infinity or a value outside the 64-bit "
               "range is a runtime error (an ssa_course extension)"),
    # Bril's bitcast extension: the same 64 bits read as the other type (ssa_course/bitcast.py)
    Opcode("float2bits", 1, FLOAT, INT, float2bits, doc="a float's bits as a 64-bit int"),
    Opcode("bits2float", 1, INT, FLOAT, bits2float, doc="a 64-bit int's bits as a float"),
)

# Tiny's operators on floats: the int symbol, resolved by the operands' type (see tiny_row).
FLOAT_VARIANTS = {"add": "fadd", "sub": "fsub", "mul": "fmul", "div": "fdiv", "eq": "feq",
                  "ne": "fne", "lt": "flt", "le": "fle", "gt": "fgt", "ge": "fge",
                  "neg": "fneg"}
# Tiny's conversions ``int(x)`` and ``float(n)``: a keyword (a type) called like a function.
CONVERSIONS = {"int": "ftoi", "float": "itof"}


class OpcodeTable:
    """The registry: opcodes by name and by Tiny symbol, and a version that changes on
    every edit (the lexer caches its regular expression per version)."""

    __slots__ = ("by_name", "binary", "prefix", "version")

    def __init__(self, rows: tuple[Opcode, ...] = ()):
        self.by_name: dict[str, Opcode] = {}
        self.binary: dict[str, Opcode] = {}  # Tiny's binary operators by symbol
        self.prefix: dict[str, Opcode] = {}  # ... and its prefix operators
        self.version = 0
        for row in rows:
            self.add(row)

    def add(self, op: Opcode) -> None:
        if op.name in self.by_name:
            raise ValueError(f"opcode '{op.name}' is already in the table")
        if op.arity not in (1, 2):
            raise ValueError(f"opcode '{op.name}': arity must be 1 or 2")
        if op.symbol is not None:
            if op.precedence is None:
                raise ValueError(f"opcode '{op.name}' has a symbol but no precedence")
            if (op.precedence == PREFIX_LEVEL) != (op.arity == 1):
                raise ValueError(f"opcode '{op.name}': unary operators (only) are prefix")
            clash = (self.binary if op.arity == 2 else self.prefix).get(op.symbol)
            if clash is not None:
                raise ValueError(f"symbol '{op.symbol}' already spells '{clash.name}'")
        if op.divisor is not None and (op.trap is None or op.divisor >= op.arity):
            raise ValueError(f"opcode '{op.name}': a divisor needs a trap message and "
                             "must name an operand")
        if op.trap is not None and op.divisor is None and op.trap_if is None:
            raise ValueError(f"opcode '{op.name}': a trap needs a divisor or a trap_if")
        self.by_name[op.name] = op
        if op.symbol is not None:
            (self.binary if op.arity == 2 else self.prefix)[op.symbol] = op
        self.version += 1

    def remove(self, name: str) -> None:
        op = self.by_name.pop(name)
        if op.symbol is not None:
            del (self.binary if op.arity == 2 else self.prefix)[op.symbol]
        self.version += 1


TABLE = OpcodeTable(_BUILTIN)
BUILTIN_NAMES = frozenset(op.name for op in _BUILTIN)


def get(name: str) -> Opcode | None:
    """The opcode named ``name`` (Bril's spelling), or None."""
    return TABLE.by_name.get(name)


def bril_op(name: str) -> Opcode | None:
    """The opcode a Bril program may spell ``name``, or None."""
    op = TABLE.by_name.get(name)
    return op if op is not None and op.bril else None


def all_opcodes() -> list[Opcode]:
    return list(TABLE.by_name.values())


def tiny_operator(symbol: str, arity: int) -> Opcode | None:
    """The opcode Tiny spells ``symbol`` with ``arity`` operands (``-`` is both)."""
    return (TABLE.binary if arity == 2 else TABLE.prefix).get(symbol)


def tiny_row(symbol: str, arity: int, floats: bool = False) -> Opcode:
    """The row a Tiny operator means: ``symbol`` with ``arity`` operands, on floats when
    ``floats`` (``+`` is ``add`` on ints, ``fadd`` on floats); ``int``/``float`` are the
    conversions. Raises KeyError for a symbol Tiny does not have."""
    if arity == 1 and symbol in CONVERSIONS:
        return TABLE.by_name[CONVERSIONS[symbol]]
    row = (TABLE.binary if arity == 2 else TABLE.prefix)[symbol]
    if floats and row.name in FLOAT_VARIANTS:
        return TABLE.by_name[FLOAT_VARIANTS[row.name]]
    return row


def float_row(row: Opcode) -> Opcode:
    """The float variant of an int row (``add`` -> ``fadd``), or the row itself."""
    name = FLOAT_VARIANTS.get(row.name)
    return row if name is None else TABLE.by_name[name]


def binary_symbols(level: int) -> frozenset[str]:
    """Tiny's binary operator symbols at one precedence level."""
    return frozenset(op.symbol for op in TABLE.by_name.values()
                     if op.arity == 2 and op.precedence == level and op.symbol)


def prefix_symbols() -> frozenset[str]:
    return frozenset(op.symbol for op in TABLE.by_name.values()
                     if op.arity == 1 and op.symbol)


def symbols() -> list[str]:
    """Every operator symbol Tiny knows (for the lexer)."""
    return sorted({op.symbol for op in TABLE.by_name.values() if op.symbol})


def precedence(symbol: str) -> int:
    """The level of a binary operator symbol (the printer's parenthesisation)."""
    op = tiny_operator(symbol, 2)
    if op is None or op.precedence is None:
        raise KeyError(symbol)
    return op.precedence


def register(op: Opcode) -> Opcode:
    """Add an operator to the table; every stage knows it from now on."""
    TABLE.add(op)
    return op


def unregister(name: str) -> None:
    """Remove an operator added by :func:`register` (the built-in ones stay)."""
    if name in BUILTIN_NAMES:
        raise ValueError(f"'{name}' is a built-in opcode")
    TABLE.remove(name)


@contextmanager
def registered(op: Opcode) -> Iterator[Opcode]:
    """``with registered(Opcode(...)):`` -- the operator exists inside the block only."""
    register(op)
    try:
        yield op
    finally:
        unregister(op.name)
