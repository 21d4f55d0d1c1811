"""Large single-function programs of several shapes, for the scaling benchmarks.

Each generator takes a size ``n`` (statements, or terms for one long expression) and returns
deterministic Tiny source whose ``main(n: int)`` uses every value it computes, so no stage can
throw the work away. The shapes are the ones that exposed super-linear passes: long chains of
if/else diamonds with small loops, straight-line arithmetic, one huge expression, a long
else-if chain, and loops over arrays (every access carries a bounds check). ``SHAPES`` maps a
name to its generator; :func:`as_bril` turns any of them into one large Bril function.
"""

from __future__ import annotations

from collections.abc import Callable

from gen import straight_line_program


def diamonds(n: int) -> str:
    """If/else diamonds and small while loops over a rolling window of variables."""
    return straight_line_program(n, seed=7)


def straight(n: int) -> str:
    """Straight-line arithmetic: ``n`` declarations, each using the previous two."""
    lines = ["fn main(n: int) {", "    var v0 = n;", "    var v1 = n + 1;"]
    ops = ["+", "-", "*", "+", "-"]
    for i in range(2, n):
        lines.append(f"    var v{i} = v{i - 1} {ops[i % 5]} v{i - 2} + {i % 13};")
    lines.append(f"    print(v{n - 1});")
    lines.append("}")
    return "\n".join(lines) + "\n"


def expression(n: int) -> str:
    """One expression of ``n`` terms (alternating + and -, some products)."""
    terms = []
    for i in range(n):
        op = "+" if i % 2 == 0 else "-"
        term = f"n * {i % 7}" if i % 5 == 0 else str(i % 100)
        terms.append(f"{op} {term}" if i else term)
    body = " ".join(terms)
    return f"fn main(n: int) {{\n    var x = {body};\n    print(x);\n}}\n"


def elif_chain(n: int) -> str:
    """An else-if chain of ``n`` arms on the parameter."""
    lines = ["fn main(n: int) {", "    var y = 0;"]
    for i in range(n):
        prefix = "    if" if i == 0 else "    } else if"
        lines.append(f"{prefix} (n == {i}) {{")
        lines.append(f"        y = y + {i * 3 % 17};")
    lines.append("    } else {")
    lines.append("        y = 0 - 1;")
    lines.append("    }")
    lines.append("    print(y);")
    lines.append("}")
    return "\n".join(lines) + "\n"


def array_loops(n: int) -> str:
    """Loops over an array, one after another (about 6 statements each)."""
    lines = ["fn main(n: int) {", "    var a = new int[n % 50 + 10];", "    var s = 0;"]
    count = 3
    k = 0
    while count < n:
        lines.append(f"    var i{k} = 0;")
        lines.append(f"    while (i{k} < len(a)) {{")
        lines.append(f"        a[i{k}] = a[i{k}] + i{k} * {k % 9 + 1};")
        lines.append(f"        s = s + a[i{k}];")
        lines.append(f"        i{k} = i{k} + 1;")
        lines.append("    }")
        count += 6
        k += 1
    lines.append("    print(s);")
    lines.append("}")
    return "\n".join(lines) + "\n"


SHAPES: dict[str, Callable[[int], str]] = {
    "diamonds": diamonds,
    "straight": straight,
    "expression": expression,
    "elif": elif_chain,
    "arrays": array_loops,
}


def as_bril(tiny_source: str) -> str:
    """The same program as one Bril text (our quads printed as Bril)."""
    from ssa_course.compilation import compile_source
    from ssa_course.quads.bril import to_bril_text

    return to_bril_text(compile_source(tiny_source).quads)
