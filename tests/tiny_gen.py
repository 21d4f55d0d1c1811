"""A hypothesis strategy for random, well-typed Tiny programs (for differential tests).

The programs use int and bool variables, arithmetic that may wrap or divide by zero,
short-circuit logic, if/else, bounded loops with break/continue, an int array that may be
indexed out of bounds, calls to helper functions, and try/catch with throws -- so the
stages are compared on runtime errors and exceptions too, not only on printed values.
Loops are bounded, so every program terminates.

``shaped_programs()`` drives the adversarial generator of ``tests/fuzzgen.py`` (the one
``make fuzz`` runs from seeds) with hypothesis draws, so its programs shrink: swaps and
rotations in loops, lost copies, values live across ``try``/``catch``, ``break``/``continue``
carrying values, calls in loop conditions, dead traps, else-if chains, recursion over arrays
and structs. ``programs()`` mixes both kinds.
"""

from __future__ import annotations

from fuzzgen import Gen, bool_operators, comparisons, int_operators
from fuzzprogram import build_program
from hypothesis import strategies as st

VARS = ["a", "b", "c", "d"]

HELPERS = """
fn h(x: int, y: int) -> int {
    if (x < y) { throw x - y; }
    return x % 7 + y;
}
fn g(x: int) -> bool {
    print(x);
    return x % 2 == 0;
}
"""


@st.composite
def int_expr(draw, depth: int = 0) -> str:
    choice = draw(st.integers(0, 9 if depth < 3 else 2))
    if choice == 0:
        return str(draw(st.sampled_from([0, 1, 2, 3, 7, -1, -5, 100, 9223372036854775807])))
    if choice in (1, 2):
        return draw(st.sampled_from(VARS))
    if choice <= 6:
        rows = [row.symbol for row in int_operators()]  # the table's (see fuzzgen)
        op = draw(st.sampled_from(rows + rows[:3]))  # + - * twice as often
        return f"({draw(int_expr(depth + 1))} {op} {draw(int_expr(depth + 1))})"
    if choice == 7:
        return f"-{draw(int_expr(depth + 1))}"
    if choice == 8:
        return f"arr[{draw(int_expr(depth + 1))} % 5]"
    return f"h({draw(int_expr(depth + 1))}, {draw(int_expr(depth + 1))})"


@st.composite
def bool_expr(draw, depth: int = 0) -> str:
    choice = draw(st.integers(0, 5 if depth < 2 else 1))
    if choice == 0:
        op = draw(st.sampled_from(comparisons()))
        return f"{draw(int_expr(depth + 1))} {op} {draw(int_expr(depth + 1))}"
    if choice == 1:
        return draw(st.sampled_from(["true", "false", "flag"]))
    if choice == 2:
        return f"!({draw(bool_expr(depth + 1))})"
    if choice == 3:
        return f"g({draw(int_expr(depth + 1))})"
    op = draw(st.sampled_from(bool_operators()))
    return f"({draw(bool_expr(depth + 1))} {op} {draw(bool_expr(depth + 1))})"


@st.composite
def statements(draw, depth: int = 0, in_loop: bool = False,
               counter: list | None = None) -> list[str]:
    counter = counter if counter is not None else [0]
    out: list[str] = []
    for _ in range(draw(st.integers(1, 4 if depth < 2 else 2))):
        kinds = ["assign", "assign", "print", "store", "flag"]
        if depth < 2:
            kinds += ["if", "loop", "try"]
        if in_loop:
            kinds += ["break", "continue"]
        kind = draw(st.sampled_from(kinds))
        if kind == "assign":
            out.append(f"{draw(st.sampled_from(VARS))} = {draw(int_expr())};")
        elif kind == "print":
            out.append(f"print({draw(int_expr())}, {draw(bool_expr())});")
        elif kind == "store":
            out.append(f"arr[{draw(int_expr())} % 6] = {draw(int_expr())};")
        elif kind == "flag":
            out.append(f"flag = {draw(bool_expr())};")
        elif kind == "if":
            then = " ".join(draw(statements(depth + 1, in_loop, counter)))
            orelse = " ".join(draw(statements(depth + 1, in_loop, counter)))
            out.append(f"if ({draw(bool_expr())}) {{ {then} }} else {{ {orelse} }}")
        elif kind == "loop":
            counter[0] += 1
            i = f"i{counter[0]}"
            body = " ".join(draw(statements(depth + 1, True, counter)))
            out.append(f"for (var {i} = 0; {i} < {draw(st.integers(0, 3))}; {i} = {i} + 1) "
                       f"{{ {body} }}")
        elif kind == "try":
            counter[0] += 1
            e = f"e{counter[0]}"
            body = " ".join(draw(statements(depth + 1, in_loop, counter)))
            throw = f"if ({draw(bool_expr())}) {{ throw {draw(int_expr())}; }}"
            out.append(f"try {{ {body} {throw} }} catch ({e}) {{ print({e}); }}")
        else:
            out.append(f"if ({draw(bool_expr())}) {{ {kind}; }}")
    return out


class DrawChooser:
    """The generator's choices as hypothesis draws (small numbers first, so it shrinks)."""

    __slots__ = ("draw",)

    def __init__(self, draw):
        self.draw = draw

    def int(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, hi))


@st.composite
def shaped_programs(draw, size: int = 12) -> str:
    """A program of ``fuzzgen``'s shapes; carries its arguments in a ``// ARGS:`` line."""
    return build_program(Gen(DrawChooser(draw), size))


@st.composite
def float_programs(draw, size: int = 10) -> str:
    """``fuzzgen``'s shapes with float variables and expressions too (NaN, infinities,
    -0.0, huge and tiny values: issue #36)."""
    return build_program(Gen(DrawChooser(draw), size, floats=True))


def programs() -> st.SearchStrategy[str]:
    """Either kind of program: the plain one or the adversarially shaped one."""
    return st.one_of(simple_programs(), shaped_programs())


@st.composite
def simple_programs(draw) -> str:
    """A whole program: helpers, then main with its variables and random statements."""
    inits = " ".join(f"var {v} = {draw(st.integers(-10, 10))};" for v in VARS)
    body = "\n    ".join(draw(statements()))
    return (f"{HELPERS}\nfn main() {{\n    {inits}\n    var flag = true;\n"
            f"    var arr = new int[5];\n    {body}\n    print(a, b, c, d, flag);\n}}\n")
