"""Statements, compound statements and the adversarial shapes of the program generator.

Each function here writes one statement (with its nested blocks) through a
:class:`fuzzgen.Gen`. The shapes are the ones SSA construction, out-of-SSA translation and
scheduling get wrong: swaps and rotations through temporaries in loops, copies of
loop-carried values read after the loop (lost copy), values assigned in ``try`` and read in
``catch`` and after, ``break``/``continue`` carrying values out, calls in loop conditions,
dead traps that must vanish and unused traps that must still fire, deep else-if chains, and
recursion over arrays and structs.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise

from fuzzgen import Gen

MAX_MULT = 16  # a loop body may run at most this many times per call of its function


def block(g: Gen, body: Callable[[], None] | None = None, most: int = 3) -> None:
    """``{ ... }`` contents at one more indentation level, in a new scope."""
    g.depth += 1
    g.scope.push()
    if body is not None:
        body()
    for _ in range(g.ch.int(0 if body else 1, min(most, max(1, g.budget)))):
        stmt(g)
    g.scope.pop()
    g.depth -= 1


def stmt(g: Gen) -> None:
    """One random statement; compound ones only while the budget and nesting allow."""
    g.budget -= 1
    g.cost += g.mult
    kinds = ["assign", "assign", "print", "store", "declare", "call", "assign"]
    if g.depth < 4 and g.budget > 2:
        kinds += ["if", "loop", "try", "swap_loop", "lost_copy", "try_shape", "chain",
                  "while", "dead_trap", "loop", "try_shape"]
    if g.loops:
        kinds += ["break", "continue", "swap", "rotate", "swap"]
    kinds += ["throw", "return"]
    KINDS[g.pick(kinds)](g)


def cond_block(g: Gen, cond: str, body: Callable[[], None] | None = None) -> None:
    g.emit(f"if ({cond}) {{")
    block(g, body, most=2)
    g.emit("}")


def if_stmt(g: Gen) -> None:
    g.emit(f"if ({g.bool_expr()}) {{")
    block(g)
    if g.chance(60):
        g.emit("} else {")
        block(g)
    g.emit("}")


def chain(g: Gen) -> None:
    """A deep else-if chain on one value (phis with many inputs)."""
    arms = g.ch.int(2, 8)
    subject = g.atom("int") or "0"
    if g.chance(50):
        subject = f"({g.int_expr(1)} % {arms})"
    for k in range(arms):
        head = "if" if k == 0 else "} else if"
        g.emit(f"{head} ({subject} == {k - 1 if k % 3 == 2 else k}) {{")
        block(g, most=1)
    if g.chance(70):
        g.emit("} else {")
        block(g, most=1)
    g.emit("}")


def loop_bound(g: Gen) -> int:
    bound = g.ch.int(1, max(1, min(4, MAX_MULT // g.mult)))
    # Sometimes the body never runs: a trap in it must not be hoisted out (GCM, LICM).
    return 0 if g.chance(8) else bound


def loop_cond(g: Gen, counter: str, bound: int) -> str:
    cond = f"{counter} < {bound}"
    if not g.chance(35):
        return cond
    extra = g.call("bool", 1) if g.chance(60) else None
    extra = extra or g.bool_expr(1)
    return f"{cond} && ({extra})" if g.chance(50) else f"({extra}) && {cond}"


def run_loop(g: Gen, body: Callable[[], None] | None = None, kind: str = "",
             bound: int | None = None) -> None:
    """A bounded ``for`` or ``while`` loop; the body may add a shape before random code."""
    if g.mult >= MAX_MULT and bound is None:  # too deep for a loop: the body runs once
        if body:
            g.emit("{")
            block(g, body)
            g.emit("}")
        return
    bound = loop_bound(g) if bound is None else bound
    kind = kind or g.pick(["for", "while"])
    counter = g.name("i" if kind == "for" else "w")
    g.scope.push()  # the for's init scope (or the while counter's enclosing block)
    if kind == "while":
        g.emit(f"var {counter} = 0;")
    g.scope.add(counter, "int", mutable=False)
    cond = loop_cond(g, counter, bound)
    if kind == "for":
        g.emit(f"for (var {counter} = 0; {cond}; {counter} = {counter} + 1) {{")
    else:
        g.emit(f"while ({cond}) {{")
    saved = g.mult
    g.mult *= max(1, bound)
    g.loops += 1

    def counted() -> None:
        if kind == "while":  # count first, so continue cannot skip the increment
            g.emit(f"{counter} = {counter} + 1;")
        if body:
            body()

    block(g, counted)
    g.loops -= 1
    g.mult = saved
    g.emit("}")
    g.scope.pop()
    if kind == "while":  # the counter's var must stay declared in this block
        g.scope.add(counter, "int", mutable=False)
    if g.chance(60):
        print_vars(g)


def print_vars(g: Gen) -> None:
    """Print some visible int/bool variables (what a loop or a try left behind)."""
    names = g.scope.visible("int") + g.scope.visible("bool")
    if names:
        count = min(len(names), g.ch.int(1, 4))
        g.emit(f"print({', '.join(g.pick(names) for _ in range(count))});")


def pair(g: Gen, n: int) -> list[str]:
    """``n`` distinct mutable variables of one type, declaring fresh ones if needed."""
    ty = g.pick(["int", "int", "bool", "[int]", "P"])
    have = [v.name for v in g.assignable(ty)]
    out: list[str] = []
    while len(out) < n:
        fresh = [x for x in have if x not in out]
        out.append(g.pick(fresh) if fresh and g.chance(80) else g.declare(ty).name)
    return out


def swap(g: Gen, n: int = 2) -> None:
    """``var t = a; a = b; b = t;`` (or a rotation of three), maybe under a condition."""
    names = pair(g, n)

    def body() -> None:
        t = g.name("t")
        g.emit(f"var {t} = {names[0]};")
        for x, y in pairwise(names):
            g.emit(f"{x} = {y};")
        g.emit(f"{names[-1]} = {t};")

    if g.chance(30):
        cond_block(g, g.bool_expr(), body)
    else:
        body()


def swap_loop(g: Gen) -> None:
    n = g.pick([2, 2, 3])
    run_loop(g, lambda: swap(g, n))


def lost_copy(g: Gen) -> None:
    """``y = x; x = x + 1;`` in a loop, ``y`` read after it: the lost-copy problem."""
    x = pair(g, 1)[0]
    ty = next(v.ty for v in g.scope.mutable() if v.name == x)
    y = g.declare(ty).name

    def body() -> None:
        g.emit(f"{y} = {x};")
        g.emit(f"{x} = {g.expr(ty, 1)};")

    run_loop(g, body)
    if ty in ("int", "bool"):
        g.emit(f"print({y}, {x});")


def try_stmt(g: Gen, body: Callable[[], None] | None = None,
             handler: Callable[[str], None] | None = None) -> None:
    g.emit("try {")
    block(g, body)
    e = g.name("e")
    g.emit(f"}} catch ({e}) {{")

    def bind() -> None:
        g.scope.add(e, "int")
        if handler:
            handler(e)

    block(g, bind)
    g.emit("}")


def throw_point(g: Gen) -> None:
    """Something that may throw: a conditional throw or a call of a helper."""
    if g.chance(50):
        got = g.call(g.pick(["int", None, "bool"]), 0)
        if got:
            g.emit(f"{got};")
            return
    cond_block(g, g.bool_expr(), lambda: g.emit(f"throw {g.int_expr(1)};"))


def try_shape(g: Gen) -> None:
    """A value assigned before, in and after a throw in ``try``; read in catch and after."""
    x = pair(g, 1)[0]
    ty = next(v.ty for v in g.scope.mutable() if v.name == x)
    g.emit(f"{x} = {g.expr(ty)};")

    def body() -> None:
        g.emit(f"{x} = {g.expr(ty, 1)};")
        # The call that throws may be the one assigning x: x's old value must reach the
        # handler (liveness along the exceptional edge), sometimes from inside a loop.
        got = g.call(ty, 1) if g.chance(50) else None
        thrower = getattr(g, "thrower", None)
        if ty == "int" and thrower and g.chance(50):
            run_loop(g, lambda: g.emit(f"{x} = {thrower.name}("
                                       f"{(g.scope.counters() or ['0'])[-1]});"), bound=4)
        elif got and g.chance(40):
            run_loop(g, lambda: g.emit(f"{x} = {g.call(ty, 1) or g.expr(ty, 1)};"))
        elif got:
            g.emit(f"{x} = {got};")
        else:
            throw_point(g)
        g.emit(f"{x} = {g.expr(ty, 1)};")

    def handler(e: str) -> None:
        if ty in ("int", "bool"):
            g.emit(f"print({x}, {e});")
        if ty == "int":
            g.emit(f"{x} = {x} + {e};")
        if g.chance(15):
            cond_block(g, g.bool_expr(), lambda: g.emit(f"throw {e} + 1;"))

    try_stmt(g, body, handler)
    if ty in ("int", "bool"):
        g.emit(f"print({x});")


def dead_trap(g: Gen) -> None:
    """A trap behind a false condition (must vanish), an unused one (must fire), or one
    behind its guard (must not be hoisted above it)."""
    k = g.ch.int(0, 7)
    x = g.int_expr(1)
    v = g.atom("int") or "0"
    if k == 6:
        g.emit(f"if ({v} != 0) {{ print({x} / {v}, {x} % {v}); }}")
        return
    if k == 7:
        a = g.atom("[int]") or "new int[5]"
        g.emit(f"if ({v} >= 0 && {v} < len({a})) {{ print({a}[{v}]); }}")
        return
    if k == 0:
        g.emit(f"if (false) {{ var z{g.fresh} = {x} / 0; }}")
    elif k == 1:
        g.emit(f"if (1 > 2) {{ {g.ref_expr('[int]', 1)}[9] = {x}; }}")
    elif k == 2:
        g.emit(f"while (false) {{ print({x} % 0); }}")
    elif k == 3:
        g.emit(f"var u{g.name('')} = {x} / {g.int_expr(1)};")
    else:
        d = g.name("dead")
        g.emit(f"var {d} = new int[3];")
        g.scope.add(d, "[int]")
        cond = "true" if k == 4 and g.chance(10) else f"{g.int_expr(1)} == 3"
        g.emit(f"if ({cond}) {{ {d}[9] = {x}; }}")


def jump(g: Gen, what: str) -> None:
    """``break``/``continue`` carrying a value out: assign, then leave under a condition."""
    def body() -> None:
        if g.chance(70):
            simple(g)
        g.emit(f"{what};")

    cond_block(g, g.bool_expr(), body)


def simple(g: Gen) -> None:
    g.assign()


def throw_stmt(g: Gen) -> None:
    if g.chance(40 if g.cur else 15):  # main throws rarely, or nothing after it would run
        cond_block(g, g.bool_expr(), lambda: g.emit(f"throw {g.int_expr(1)};"))
    else:
        g.assign()


def return_stmt(g: Gen) -> None:
    if not g.chance(25 if g.cur else 5):
        g.assign()
        return
    ret = g.cur.ret if g.cur else None
    value = f" {g.expr(ret, 1)}" if ret else ""
    cond_block(g, g.bool_expr(), lambda: g.emit(f"return{value};"))


KINDS: dict[str, Callable[[Gen], None]] = {
    "assign": simple, "print": lambda g: g.print_stmt(), "store": lambda g: g.store(),
    "declare": lambda g: g.declare() and None, "call": lambda g: g.call_stmt(),
    "if": if_stmt, "loop": lambda g: run_loop(g), "while": lambda g: run_loop(g, kind="while"),
    "try": lambda g: try_stmt(g), "swap_loop": swap_loop, "lost_copy": lost_copy,
    "try_shape": try_shape, "chain": chain, "dead_trap": dead_trap,
    "break": lambda g: jump(g, "break"), "continue": lambda g: jump(g, "continue"),
    "swap": lambda g: swap(g, 2), "rotate": lambda g: swap(g, 3),
    "throw": throw_stmt, "return": return_stmt,
}
