"""Closed forms for counting loops (the ``closed-form`` pass of ``ssa-course opt``).

A loop that only counts and sums computes a polynomial of its trip count::

    .loop:  c = le i n;  br c .body .exit;        # i = i0, i0+1, ..., n
    .body:  s = add s i;  i = add i one;  jmp .loop

leaves ``s = s0 + T*i0 + T*(T-1)/2`` and ``i = i0 + T`` for ``T = n - i0 + 1`` trips.
Compilers call this *final value replacement* (LLVM's scalar evolution does it at -O2).
Bril's ``triangle``, ``sum-check`` and ``sum-sq-diff`` spend almost all their time in such
loops; the formula costs about twenty instructions whatever ``n`` is.

**What is recognised** (quads out of SSA, after coalescing: every name is a variable):

* a header of exactly ``c = le i n`` (or ``lt``) and ``br c .body .exit``, entered from one
  block ``P`` and from the body;
* a body entered only from the header and jumping back to it, made only of
  ``i = add i one`` (once; ``one`` is a variable whose only definition is ``const 1``),
  ``t = mul i i`` (a square of the counter) and accumulators ``s = add s x`` where ``x``
  is the counter or such a square, each accumulator written once;
* ``n`` not written in the loop; neither ``c`` nor a square live after it.

**Why the formula gives exactly what the loop gives.** Ints wrap at 64 bits, and a product
wraps the same way however it is grouped, so the sums are right modulo 2^64 as long as
the two divisions (by 2 and by 6) divide exact products. They do when ``T <= 2^20``:
``T*(T-1)*(2T-1) < 2^62`` does not wrap. So the rewritten program tests first:

* the loop's own test (not entered: straight to the exit, as before);
* ``least <= T <= 2^20`` with ``T`` computed by wrapping subtraction (a wrapped ``T`` lands
  outside that range), and for ``le``, ``n`` below the largest int (``i <= MAX`` holds for
  every ``i``: that loop never ends, and it must not end after the rewrite either).
  ``least`` is the fewest trips for which the loop costs at least the formula does.

When a test fails the loop runs as before (straight into its body: its test already
passed). The loop stays in the program for that case; only ``P``'s jump into it changes.
So the formula never executes more instructions than the loop it replaces, and a loop
too short for it pays only the guard (at most a dozen instructions, once).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ssa_course.quads.analyses import liveness
from ssa_course.quads.cfg import CFG, BasicBlock, build_cfg
from ssa_course.quads.domtree import Dominance
from ssa_course.quads.ir import Function, Instr, Label
from ssa_course.quads.names import label_names, variable_names
from ssa_course.tiny.types import BOOL, INT, Type

LIMIT = 1 << 20  # the largest trip count whose T*(T-1)*(2T-1) does not wrap
MAX_INT = (1 << 63) - 1


@dataclass(slots=True)
class Loop:
    """A counting loop found in a function: its blocks and what its body sums."""

    pre: str  # the one block that enters the header from outside
    header: str
    body: str
    exit: str
    counter: str  # i
    bound: str  # n
    inclusive: bool  # le (True) or lt
    # accumulator -> (what it adds: "iv" (the counter) or "sq" (its square), offset: 0
    # when it reads i before the increment, 1 after)
    sums: dict[str, tuple[str, int]]


def close_loops(fn: Function) -> Function:
    """``fn`` with each counting loop entered through its closed form when it is exact."""
    if any(i.op in ("phi", "enter") for i in fn.instrs()) or not _has_header(fn):
        return fn
    cfg = build_cfg(fn)
    loops = find_loops(cfg, fn)
    if not loops:
        return fn
    variables = variable_names(fn)
    labels = label_names(fn)
    for loop in loops:
        _rewrite(cfg, loop, variables.fresh, labels.fresh)
    return cfg.to_function()


def _has_header(fn: Function) -> bool:
    """Does a label start a ``le``/``lt`` and a ``br`` on it? (A cheap look at the flat
    body first: most functions have no counting loop, and need no CFG.)"""
    body = fn.body
    for k in range(len(body) - 2):
        label, test, br = body[k], body[k + 1], body[k + 2]
        if isinstance(label, Label) and isinstance(test, Instr) and test.op in ("le", "lt") \
                and isinstance(br, Instr) and br.op == "br":
            return True
    return False


def _const_one_vars(fn: Function) -> set[str]:
    """Variables whose only definition in ``fn`` is ``const 1`` (an int)."""
    defs: dict[str, list[Instr]] = {}
    for instr in fn.instrs():
        if instr.dest is not None:
            defs.setdefault(instr.dest, []).append(instr)
    params = {name for name, _ in fn.params}
    return {v for v, ds in defs.items() if v not in params and len(ds) == 1
            and ds[0].op == "const" and ds[0].value == 1 and ds[0].type == INT
            and not isinstance(ds[0].value, bool)}


def find_loops(cfg: CFG, fn: Function) -> list[Loop]:
    """The counting loops of ``cfg`` (see the module text for the shape)."""
    ones = _const_one_vars(fn)
    def_block = {i.dest: name for name, b in cfg.blocks.items() for i in b.instrs
                 if i.dest in ones}
    dom: Dominance[str] | None = None
    live = None
    found = []
    for name, header in cfg.blocks.items():
        loop = _match(cfg, name, header, ones)
        if loop is None:
            continue
        # the ``const 1`` the body reads is assigned before the loop on every path
        one = next(a for i in cfg.blocks[loop.body].instrs for a in i.args if a in ones)
        dom = dom or Dominance({name: b.succs for name, b in cfg.blocks.items()}, cfg.entry)
        if loop.pre not in dom or not dom.dominates(def_block[one], loop.pre):
            continue
        live = live or liveness(cfg)
        after = live.top[loop.exit]
        temps = {i.dest for i in cfg.blocks[loop.body].instrs if i.op == "mul"}
        cond = header.instrs[0].result()
        if cond in after or temps & after or temps & live.top[name]:
            continue
        found.append(loop)
    return found


def _match(cfg: CFG, name: str, header: BasicBlock, ones: set[str]) -> Loop | None:
    """The loop whose header is ``header``, when it has the shape of the module text."""
    if len(header.instrs) != 2 or header.throws_to is not None:
        return None
    test, br = header.instrs
    if test.op not in ("le", "lt") or br.op != "br" or br.args != [test.dest] \
            or len(set(br.labels)) != 2:
        return None
    i, n = test.args
    body_name, exit_name = br.labels
    body = cfg.blocks[body_name]
    if i == n or body.preds != [name] or body.succs != [name] or len(header.preds) != 2:
        return None
    pre = next((p for p in header.preds if p != body_name), None)
    if pre is None or cfg.blocks[pre].succs != [name] or body.throws_to is not None:
        return None
    instrs = body.instrs[:-1] if body.terminator is not None else body.instrs
    if body.terminator is not None and body.terminator.op != "jmp":
        return None
    shapes: dict[str, tuple[str, int]] = {i: ("iv", 0)}
    sums: dict[str, tuple[str, int]] = {}
    stepped = False
    for instr in instrs:
        a = instr.args
        d = instr.dest
        if d is None or d == n or d in sums or instr.type != INT:
            return None
        if instr.op == "add" and d == i and not stepped and len(a) == 2 \
                and i in a and (a[1] if a[0] == i else a[0]) in ones:
            shapes[i] = ("iv", 1)
            stepped = True
        elif instr.op == "mul" and a == [i, i] and d not in shapes and d not in ones:
            shapes[d] = ("sq", shapes[i][1])
        elif instr.op == "add" and len(a) == 2 and d in a and d not in shapes \
                and d not in ones and d != test.dest:
            x = a[1] if a[0] == d else a[0]
            if x == d or x not in shapes:
                return None
            sums[d] = shapes[x]
        else:
            return None
    if not stepped or not sums:
        return None
    return Loop(pre, name, body_name, exit_name, i, n, test.op == "le", sums)


def _rewrite(cfg: CFG, loop: Loop, var: Callable[..., str], label: Callable[..., str]) -> None:
    """Send ``loop.pre`` through the guard: the closed form when exact, else the loop."""
    i, n = loop.counter, loop.bound
    guard, check, closed = label("cf.test", sep=""), label("cf.count", sep=""), \
        label("cf.closed", sep="")

    def emit(block: list[Instr], op: str, args: list[str], typ: Type = INT) -> str:
        d = var("cf")
        block.append(Instr(op, d, typ, args))
        return d

    def const(block: list[Instr], value: int) -> str:
        d = var("cf")
        block.append(Instr("const", d, INT, value=value))
        return d

    # the loop's own test: not entered, straight to the exit
    first: list[Instr] = []
    entered = emit(first, "le" if loop.inclusive else "lt", [i, n], BOOL)
    first.append(Instr("br", args=[entered], labels=[check, loop.exit]))
    # the sums: S1 = T(T-1)/2 = sum of j < T, S2 = (T-1)T(2T-1)/6 = sum of j*j
    second: list[Instr] = []  # (the guard, written once ``third`` says what it costs)
    third: list[Instr] = []
    trips = var("cf")
    one = var("cf")
    pairs = emit(third, "mul", [trips, emit(third, "sub", [trips, one])])
    two = const(third, 2)
    s1 = emit(third, "div", [pairs, two])
    s2 = None
    if any(kind == "sq" for kind, _ in loop.sums.values()):
        odd = emit(third, "sub", [emit(third, "mul", [trips, two]), one])
        s2 = emit(third, "div", [emit(third, "mul", [pairs, odd]), const(third, 6)])
    for s, (kind, offset) in loop.sums.items():
        a = i if offset == 0 else emit(third, "add", [i, one])  # the first value added
        if kind == "iv":  # sum of a + j = T*a + S1
            terms = [emit(third, "mul", [trips, a]), s1]
        else:  # sum of (a + j)^2 = T*a*a + 2*a*S1 + S2
            assert s2 is not None
            twice = emit(third, "mul", [a, s1])
            terms = [emit(third, "mul", [trips, emit(third, "mul", [a, a])]),
                     emit(third, "add", [twice, twice]), s2]
        for term in terms:
            third.append(Instr("add", s, INT, [s, term]))
    third.append(Instr("add", i, INT, [i, trips]))
    third.append(Instr("jmp", labels=[loop.exit]))
    # Is the trip count T in [least, LIMIT] (and the loop finite)? ``least``: the fewest
    # trips for which the loop (its body, test and branch each trip) costs at least the
    # formula -- below it the loop runs, so the formula never costs more than the loop.
    per_trip = len(cfg.blocks[loop.body].instrs) + 2
    least = max(1, -(-len(third) // per_trip))
    second.append(Instr("sub", trips, INT, [n, i]))
    second.append(Instr("const", one, INT, value=1))
    if loop.inclusive:
        second.append(Instr("add", trips, INT, [trips, one]))
    ok = emit(second, "le", [trips, const(second, LIMIT)], BOOL)
    low = one if least == 1 else const(second, least)
    ok = emit(second, "and", [ok, emit(second, "ge", [trips, low], BOOL)], BOOL)
    if loop.inclusive:
        ok = emit(second, "and", [ok, emit(second, "lt", [n, const(second, MAX_INT)], BOOL)],
                  BOOL)
    # (the loop's test already passed: a short loop goes straight into its body)
    second.append(Instr("br", args=[ok], labels=[closed, loop.body]))
    # P jumps to the first test instead of the header
    pre = cfg.blocks[loop.pre]
    if pre.terminator is not None:
        pre.terminator.labels = [guard if lb == loop.header else lb
                                 for lb in pre.terminator.labels]
    else:
        pre.instrs.append(Instr("jmp", labels=[guard]))
    pre.succs = [guard]
    header = cfg.blocks[loop.header]
    header.preds = [p for p in header.preds if p != loop.pre]
    cfg.blocks[loop.body].preds.append(check)
    for name, instrs, succs in ((guard, first, [check, loop.exit]),
                                (check, second, [closed, loop.body]),
                                (closed, third, [loop.exit])):
        cfg.blocks[name] = BasicBlock(name, instrs, succs)
