"""Random, well-typed, terminating Tiny programs shaped to break SSA back ends.

One generator, two drivers: ``generate(seed)`` draws from ``random.Random(seed)`` (fast and
deterministic, for ``make fuzz``), and ``tests/tiny_gen.py`` drives the same code with
hypothesis draws (so failures shrink). Every choice goes through a :class:`Chooser`, and the
first alternative of every choice is the simplest, so a shrinking driver that prefers small
numbers also prefers small programs.

Besides plain statements the generator emits, on purpose and often, the shapes the SSA
literature warns about: swaps and rotations through temporaries inside (nested) loops, a copy
of a loop-carried value read after the loop (the lost-copy problem), values assigned in
``try`` and read in ``catch`` and after (throws from called functions, nested ``try``,
rethrow), ``break``/``continue`` carrying values out, calls in loop conditions, dead and
unused traps, deep else-if chains, and recursion over arrays and structs. Every loop has a
small bound (loop counters are never assigned by the body, ``while`` counters count first),
helpers call only earlier helpers and recursion is on a shrinking depth, and a cost budget
keeps every program far below the step limit -- so every executor must agree exactly,
runtime errors and uncaught exceptions included. Output is one statement per line, with
``{``/``}`` ending/starting lines, which the line-based shrinker of ``tools/fuzz.py`` relies on.
"""

from __future__ import annotations

import random
from typing import Protocol, TypeVar

from fuzzparts import Fn, Scope, Var

from ssa_course import opcodes

T = TypeVar("T")

STRUCTS = "struct P { v: int; ok: bool; xs: [int]; }"
INT_LITS = ["0", "1", "2", "3", "-1", "7", "5", "-5", "100", "9223372036854775807",
            "-9223372036854775808"]
DIVISORS = ["1", "2", "3", "-1", "7", "-7"]
# Float programs (``floats=True``, issue #36): NaN, the infinities, signed zeros, the largest
# and smallest doubles, ties of the printing, and values that round.
FLOAT_LITS = ["0.0", "1.5", "-0.0", "(0.0 / 0.0)", "(1.0 / 0.0)", "(-1.0 / 0.0)", "1e308",
              "1e-308", "5e-324", "0.1", "3.0", "0.000003814697265625", "1e10", "2.5e-3",
              "9007199254740993.0", "-7.25"]
FLOAT_OPS = ["+", "-", "*", "/"]
FLOAT_CMPS = ["<", "<=", ">", ">=", "==", "!="]
COST_LIMIT = 3000  # rough dynamic statement count a program may reach


# The operators come from the opcode table (ssa_course/opcodes.py), read at each use: a row
# added to the table (or registered for a test) is fuzzed with no edit here. The lists keep
# the table's order, so a seed makes the same program as long as the table is unchanged.
def int_operators() -> list[opcodes.Opcode]:
    """Tiny's binary operators from two ints to an int (``+ - * / %``)."""
    return [op for op in opcodes.all_opcodes() if op.arity == 2 and op.symbol
            and op.operands == opcodes.INT and op.result == opcodes.INT]


def comparisons() -> list[str]:
    """Tiny's binary operators from two ints to a bool: the int-only ones, then the ones
    on any two values of one type (``< <= > >= == !=``)."""
    rows = [op for op in opcodes.all_opcodes() if op.arity == 2 and op.symbol
            and op.result == opcodes.BOOL and op.operands in (opcodes.INT, opcodes.SAME)]
    return [op.symbol for op in sorted(rows, key=lambda op: op.operands == opcodes.SAME)
            if op.symbol]


def bool_operators() -> list[str]:
    """Tiny's binary operators from two bools to a bool (``&& ||``)."""
    return [op.symbol for op in opcodes.all_opcodes() if op.arity == 2 and op.symbol
            and op.operands == opcodes.BOOL and op.result == opcodes.BOOL]


class Chooser(Protocol):
    """Where the generator's choices come from (``random.Random`` or hypothesis)."""

    def int(self, lo: int, hi: int) -> int: ...


class RandomChooser:
    """Choices from a seeded ``random.Random``: the same seed, the same program."""

    __slots__ = ("rng",)

    def __init__(self, rng: random.Random):
        self.rng = rng

    def int(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)


class Gen:
    """Builds one program; ``program()`` returns its text with a ``// ARGS:`` line."""

    def __init__(self, ch: Chooser, size: int = 30, floats: bool = False):
        self.ch = ch
        self.size = size
        self.floats = floats  # also float variables and expressions (off: the same draws)
        self.lines: list[str] = []
        self.fns: list[Fn] = []
        self.fresh = 0
        self.scope = Scope()
        self.cur: Fn | None = None
        self.mult = 1  # how often the current statement runs per call (enclosing loops)
        self.cost = 0  # estimated dynamic cost of the function being generated
        self.budget = 0  # statements left for the function being generated
        self.loops = 0  # loop nesting in the current function (break/continue allowed)
        self.depth = 0  # statement nesting
        self.thrower: Fn | None = None  # a helper that throws for one argument value

    # -- choices -----------------------------------------------------------------

    def pick(self, seq: list[T]) -> T:
        return seq[self.ch.int(0, len(seq) - 1)]

    def chance(self, pct: int) -> bool:
        # 0 (what a shrinker prefers) means "no": shrinking drops optional shapes.
        return self.ch.int(0, 99) >= 100 - pct

    def name(self, prefix: str) -> str:
        self.fresh += 1
        return f"{prefix}{self.fresh}"

    def emit(self, text: str) -> None:
        self.lines.append("    " * self.depth + text)

    # -- expressions -------------------------------------------------------------

    def expr(self, ty: str, depth: int = 0) -> str:
        if ty == "int":
            return self.int_expr(depth)
        if ty == "bool":
            return self.bool_expr(depth)
        if ty == "float":
            return self.float_expr(depth)
        return self.ref_expr(ty, depth)

    def float_expr(self, depth: int = 0) -> str:
        """A float: literals (NaN and infinities spelled as divisions), variables, the four
        operators, negation, ``float(n)``."""
        k = self.ch.int(0, 7 if depth < 3 else 1)
        if k == 0:
            return self.pick(FLOAT_LITS)
        if k == 1:
            return self.atom("float") or self.pick(FLOAT_LITS[:3])
        if k <= 4:
            op = self.pick(FLOAT_OPS)
            return f"({self.float_expr(depth + 1)} {op} {self.float_expr(depth + 1)})"
        if k == 5:
            return f"(-{self.float_expr(depth + 1)})"
        return f"float({self.int_expr(depth + 1)})"

    def float_int(self, depth: int) -> str:
        """``int(x)`` of a float that is mostly in range (NaN or an infinity: a trap)."""
        x = self.float_expr(depth + 1)
        if self.chance(90):
            x = f"(({x}) * 0.0 + {self.pick(['2.5', '-7.9', '1e18', '-0.5'])})"
        return f"int({x})"

    def atom(self, ty: str) -> str | None:
        names = self.scope.visible(ty)
        return self.pick(names) if names else None

    def index(self, arr: str, depth: int) -> str:
        # Mostly in bounds (arrays have 4..6 slots, counters stay below 4): an early
        # "index out of bounds" would hide the rest of the program.
        k = self.ch.int(0, 19)
        counters = self.scope.counters()
        if k < 8:
            return str(k % 4)
        if k < 15 and counters:
            return self.pick(counters)
        if k < 18:
            return f"({self.int_expr(depth + 1)} % len({arr}))"
        return self.int_expr(depth + 1)

    def int_expr(self, depth: int = 0) -> str:
        if self.floats and depth < 3 and self.chance(4):
            return self.float_int(depth)
        k = self.ch.int(0, 11 if depth < 3 else 2)
        if k == 0 or (k == 2 and not self.scope.visible("int")):
            return self.pick(INT_LITS[:9] if depth else INT_LITS)
        if k in (1, 2):
            return self.atom("int") or "0"
        if k <= 5:
            rows = int_operators()
            row = self.pick(rows + rows[:2])  # + and - twice as often
            left = self.int_expr(depth + 1)
            if row.divisor is not None and not self.chance(25):  # mostly not zero
                return f"({left} {row.symbol} {self.pick(DIVISORS)})"
            return f"({left} {row.symbol} {self.int_expr(depth + 1)})"
        if k == 6:
            return f"(-{self.int_expr(depth + 1)})"
        if k == 7 and self.scope.visible("[int]"):
            arr = self.ref_expr("[int]", depth + 1)
            return f"{arr}[{self.index(arr, depth)}]"
        if k == 8:
            arr = self.atom("[int]")
            return f"len({arr})" if arr else "3"
        if k == 9 and self.scope.visible("P"):
            return f"{self.ref_expr('P', depth + 1)}.v"
        if k == 10 and self.scope.visible("[P]"):
            ps = self.atom("[P]")
            return f"{ps}[{self.index(ps, depth)}].v"
        return self.call("int", depth) or self.atom("int") or "1"

    def bool_expr(self, depth: int = 0) -> str:
        if self.floats and depth < 2 and self.chance(25):
            op = self.pick(FLOAT_CMPS)
            return f"{self.float_expr(depth + 1)} {op} {self.float_expr(depth + 1)}"
        k = self.ch.int(0, 8 if depth < 2 else 1)
        if k == 0:
            op = self.pick(comparisons())
            return f"{self.int_expr(depth + 1)} {op} {self.int_expr(depth + 1)}"
        if k == 1:
            return self.atom("bool") or self.pick(["true", "false"])
        if k == 2:
            return f"!({self.bool_expr(depth + 1)})"
        if k in (3, 4):
            op = self.pick(bool_operators())
            return f"({self.bool_expr(depth + 1)} {op} {self.bool_expr(depth + 1)})"
        if k == 5 and self.scope.visible("P"):
            return f"{self.ref_expr('P', depth + 1)}.ok"
        if k == 6:
            ty = self.pick(["[int]", "P"])
            a, b = self.atom(ty), self.atom(ty)
            if a and b:
                return f"{a} {self.pick(['==', '!='])} {b}"
        return self.call("bool", depth) or self.pick(["true", "false"])

    def ref_expr(self, ty: str, depth: int) -> str:
        """An array or struct value: mostly a variable, sometimes fresh or from a call."""
        name = self.atom(ty)
        k = self.ch.int(0, 5)
        if name and k < 4:
            return name
        if ty == "P" and k == 4 and self.scope.visible("[P]"):
            ps = self.atom("[P]")
            return f"{ps}[{self.index(ps, depth)}]"
        if ty in ("[int]", "P") and k == 5:
            got = self.call(ty, depth)
            if got:
                return got
        if ty == "[int]":
            return f"new int[{self.pick(['5', '6', '7', '5'])}]"
        if ty == "[P]":
            return "new P[5]"
        return self.new_p(depth)

    def new_p(self, depth: int) -> str:
        return (f"new P {{ v: {self.int_expr(depth + 1)}, ok: {self.bool_expr(depth + 1)}, "
                f"xs: {self.ref_expr('[int]', depth + 1)} }}")

    def call(self, ret: str | None, depth: int) -> str | None:
        """A call of an earlier helper returning ``ret``, if one fits the cost budget."""
        fns = [f for f in self.fns if f.ret == ret and self.mult * f.cost <= COST_LIMIT
               and self.cost + self.mult * f.cost <= COST_LIMIT]
        if not fns or depth > 3:
            return None
        fn = self.pick(fns)
        self.cost += self.mult * fn.cost
        args = []
        for i, (_, ty) in enumerate(fn.params):
            if i == 0 and fn.rec:
                args.append(f"({self.int_expr(depth + 1)} % 4)")
            else:
                args.append(self.expr(ty, depth + 1))
        return f"{fn.name}({', '.join(args)})"

    # -- statements (the simple ones; shapes live in fuzzshapes) -------------------

    def assignable(self, ty: str | None = None) -> list[Var]:
        return [v for v in self.scope.mutable() if ty is None or v.ty == ty]

    def declare(self, ty: str | None = None) -> Var:
        if ty is None and self.floats and self.chance(30):
            ty = "float"
        ty = ty or self.pick(["int", "int", "bool", "int", "[int]", "P"])
        init = self.expr(ty)
        shadow = [n for n in self.scope.outer_names() if not self.scope.in_block(n)]
        name = self.pick(shadow) if shadow and self.chance(20) else self.name("v")
        self.emit(f"var {name} = {init};")
        return self.scope.add(name, ty)

    def assign(self) -> None:
        targets = self.assignable()
        if not targets:
            self.declare()
            return
        v = self.pick(targets)
        self.emit(f"{v.name} = {self.expr(v.ty)};")

    def print_stmt(self) -> None:
        n = self.ch.int(0, 3)
        kinds = ["int", "int", "bool"] + ["float", "float"] * self.floats
        parts = [self.expr(self.pick(kinds)) for _ in range(n)]
        self.emit(f"print({', '.join(parts)});")

    def store(self) -> None:
        k = self.ch.int(0, 3)
        if k == 0 and self.scope.visible("P"):
            p = self.ref_expr("P", 1)
            field = self.pick(["v", "ok", "xs"])
            ty = {"v": "int", "ok": "bool", "xs": "[int]"}[field]
            self.emit(f"{p}.{field} = {self.expr(ty)};")
        elif k == 1 and self.scope.visible("[P]"):
            ps = self.atom("[P]")
            self.emit(f"{ps}[{self.index(ps, 0)}] = {self.ref_expr('P', 1)};")
        elif k == 2 and self.scope.visible("P"):
            xs = f"{self.ref_expr('P', 1)}.xs"
            self.emit(f"{xs}[{self.index(xs, 0)}] = {self.int_expr()};")
        else:
            arr = self.ref_expr("[int]", 1)
            self.emit(f"{arr}[{self.index(arr, 0)}] = {self.int_expr()};")

    def call_stmt(self) -> None:
        got = self.call(self.pick([None, "int", "bool"]), 0)
        if got:
            self.emit(f"{got};")
        else:
            self.print_stmt()


def generate(seed: int, size: int = 30, floats: bool = False) -> str:
    """The program for ``seed`` (the same text on every machine and Python version);
    ``floats``: with float variables and expressions too (another program)."""
    from fuzzprogram import build_program

    return build_program(Gen(RandomChooser(random.Random(seed)), size, floats))
