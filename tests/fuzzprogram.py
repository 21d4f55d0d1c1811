"""Whole programs for the generator: helper functions, a thrower, and ``main``.

Helpers call only earlier helpers, and a recursive helper recurses on ``n - 1`` (and maybe
``n - 2``) below a guard, so every program terminates; each helper's estimated cost is kept
so calls inside loops stay within the generator's budget.
"""

from __future__ import annotations

from fuzzgen import STRUCTS, Gen
from fuzzparts import Fn, Scope
from fuzzshapes import cond_block, stmt


def helper(g: Gen, index: int) -> None:
    """``fn fK(...)``: calls only earlier helpers; a recursive one recurses on ``n - 1``."""
    ret = g.pick(["int", None, "int", "bool", "[int]", "P"])
    rec = ret == "int" and g.chance(40)
    params = [("n", "int")] if rec else []
    for _ in range(g.ch.int(0 if not rec else 1, 3)):
        params.append((f"p{len(params)}", g.pick(["int", "bool", "[int]", "P", "int"])))
    fn = Fn(f"f{index}", params, ret, rec)
    g.scope, g.cur, g.cost, g.mult, g.loops = Scope(), fn, 0, 1, 0
    g.budget = max(2, g.size // 5)
    for name, ty in params:
        g.scope.add(name, ty, mutable=name != "n")
    sig = ", ".join(f"{n}: {t}" for n, t in params)
    g.emit(f"fn {fn.name}({sig}){f' -> {ret}' if ret else ''} {{")
    g.depth = 1
    if rec:
        cond_block(g, "n <= 0", lambda: g.emit(f"return {g.int_expr(2)};"))
    if g.chance(45):
        cond_block(g, g.bool_expr(1), lambda: g.emit(f"throw {g.int_expr(1)};"))
    while g.budget > 0:
        stmt(g)
    if rec:
        recurse(g, fn)
    if ret:
        g.emit(f"return {g.expr(ret, 1)};")
    g.depth = 0
    g.emit("}")
    fn.cost = max(1, g.cost) * (8 if rec else 1)
    g.fns.append(fn)


def recurse(g: Gen, fn: Fn) -> None:
    """``var r = f(n - 1, ...) op f(n - 2, ...)``: bounded, over the same arrays/structs."""
    def args(step: int) -> str:
        rest = [name if g.chance(70) else g.expr(ty, 2) for name, ty in fn.params[1:]]
        return ", ".join([f"n - {step}"] + rest)

    r = g.name("r")
    call = f"{fn.name}({args(1)})"
    if g.chance(40):
        call += f" {g.pick(['+', '-', '*'])} {fn.name}({args(2)})"
    g.emit(f"var {r} = {call};")
    g.scope.add(r, "int")
    for _ in range(g.ch.int(0, 2)):
        stmt(g)


def add_thrower(g: Gen, index: int) -> None:
    """``fn fK(i: int) -> int``: returns for most ``i``, throws for one (the second or third
    iteration of a loop calling it), so a value from an earlier iteration meets the throw."""
    k, v = g.ch.int(1, 3), g.pick(["50", "7", "-1"])
    fn = Fn(f"f{index}", [("i", "int")], "int", cost=3)
    g.emit(f"fn {fn.name}(i: int) -> int {{")
    g.emit(f"    if (i == {k}) {{ throw {v}; }}")
    g.emit(f"    return i * 10 + {g.pick(['7', '1', '0'])};")
    g.emit("}")
    g.fns.append(fn)
    g.thrower = fn


def build_program(g: Gen) -> str:
    """Structs, helpers (each calling only earlier ones), then ``main(n, flag)``."""
    n_arg = g.pick(["3", "0", "-2", "7", "1"])
    flag_arg = g.pick(["true", "false"])
    g.lines = [f"// ARGS: {n_arg} {flag_arg}", STRUCTS]
    g.thrower = None
    count = g.ch.int(0, 4)
    for index in range(count):
        helper(g, index + 1)
    if g.chance(60):
        add_thrower(g, count + 1)
    g.scope, g.cur, g.cost, g.mult, g.loops = Scope(), None, 0, 1, 0
    g.budget = g.size
    g.emit("fn main(n: int, flag: bool) {")
    g.depth = 1
    g.scope.add("n", "int")
    g.scope.add("flag", "bool")
    for v in "abcd":
        g.emit(f"var {v} = {g.pick(['0', '1', '2', '-3', '5', '10'])};")
        g.scope.add(v, "int")
    g.emit("var arr = new int[5];")
    g.emit("var p = new P { v: 1, ok: true, xs: new int[5] };")
    g.emit("var ps = new P[5];")
    g.emit("ps[0] = p;")
    for k in range(1, 5):  # most slots set: reading an unset one stays possible, not common
        if g.chance(90):
            g.emit(f"ps[{k}] = new P {{ v: {k}, ok: {'true' if k % 2 else 'false'}, "
                   f"xs: new int[{k + 4}] }};")
    for name, ty in (("arr", "[int]"), ("p", "P"), ("ps", "[P]")):
        g.scope.add(name, ty)
    if g.floats:
        g.emit(f"var x = {g.pick(['1.5', '-0.0', '(0.0 / 0.0)', '1e308'])};")
        g.emit(f"var y = float(n) / {g.pick(['3.0', '0.0', '-0.0', '1e-300'])};")
        g.scope.add("x", "float")
        g.scope.add("y", "float")
    while g.budget > 0:
        stmt(g)
    g.emit("print(a, b, c, d, flag, n, p.v, arr[0]" + (", x, y);" if g.floats else ");"))
    g.depth = 0
    g.emit("}")
    return "\n".join(g.lines) + "\n"
