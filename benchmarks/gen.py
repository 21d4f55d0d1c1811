"""Generators of large Tiny programs for the benchmarks (deterministic for a given size)."""

from __future__ import annotations

import random


def straight_line_program(statements: int, seed: int = 1) -> str:
    """``main`` with about ``statements`` statements: declarations, arithmetic, small ifs
    and loops, over a rolling window of variables (so every value is used)."""
    rng = random.Random(seed)
    lines = ["fn main(n: int) {", "    var v0 = n;", "    var v1 = n + 1;"]
    count = 2
    names = ["v0", "v1"]
    while count < statements:
        a, b = rng.choice(names[-8:]), rng.choice(names[-8:])
        kind = rng.random()
        if kind < 0.6:
            name = f"v{len(names)}"
            op = rng.choice(["+", "-", "*", "/", "%"])
            if op in "/%":
                lines.append(f"    var {name} = {a} {op} ({b} % 7 + 8);")
            else:
                lines.append(f"    var {name} = {a} {op} {b} + {rng.randint(0, 9)};")
            names.append(name)
            count += 1
        elif kind < 0.8:
            lines.append(f"    if ({a} < {b}) {{ {a} = {a} + 1; }} else {{ {b} = {b} - 1; }}")
            count += 3
        else:
            lines.append(f"    var i{count} = 0;")
            lines.append(f"    while (i{count} < 3) {{ {a} = {a} + i{count}; "
                         f"i{count} = i{count} + 1; }}")
            count += 4
    lines.append(f"    print({names[-1]}, {names[-2]});")
    lines.append("}")
    return "\n".join(lines) + "\n"


LOOP_PROGRAM = """
fn main(n: int) {
    var acc = 0;
    var i = 0;
    while (i < n) {
        if (i % 3 == 0) { acc = acc + i * i; } else { acc = acc - i; }
        i = i + 1;
    }
    print(acc);
}
"""

CALL_PROGRAM = """
fn fib(n: int) -> int {
    if (n < 2) { return n; }
    return fib(n - 1) + fib(n - 2);
}
fn main(n: int) { print(fib(n)); }
"""


def blocks_program(statements: int, seed: int = 2) -> str:
    """``main`` with about ``statements`` statements in many small blocks: each block
    declares a few locals (so the scope stays small, as in real code), updates four outer
    variables, and has an if/else and a short loop. Used for parse-into-graph timings,
    whose cost per merge grows with the number of variables in scope."""
    rng = random.Random(seed)
    lines = ["fn main(n: int) {", "    var a = n;", "    var b = n + 1;", "    var c = 2;",
             "    var d = 0;"]
    count = 4
    outer = ["a", "b", "c", "d"]
    block = 0
    while count < statements:
        block += 1
        lines.append("    {")
        local = [f"x{block}_{k}" for k in range(6)]
        for k, name in enumerate(local):
            x, y = rng.choice(outer + local[:k]), rng.choice(outer + local[:k])
            op = rng.choice(["+", "-", "*", "/", "%"])
            rhs = f"{x} {op} ({y} % 7 + 8)" if op in "/%" else f"{x} {op} {y} + {k}"
            lines.append(f"        var {name} = {rhs};")
        p, q = rng.sample(outer, 2)
        lines.append(f"        if ({local[0]} < {local[1]}) {{ {p} = {p} + {local[2]}; }}"
                     f" else {{ {q} = {q} - {local[3]}; }}")
        lines.append("        var i = 0;")
        lines.append(f"        while (i < 3) {{ {p} = {p} + i * {local[4]}; i = i + 1; }}")
        lines.append(f"        {q} = {q} % 1000003 + {local[5]} % 5;")
        lines.append("    }")
        count += 6 + 3 + 2 + 2 + 1
    lines.append("    print(a, b, c, d);")
    lines.append("}")
    return "\n".join(lines) + "\n"
