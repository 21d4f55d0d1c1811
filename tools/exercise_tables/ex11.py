"""Regenerates the setup and graded cells of solutions/11-*.ipynb (see build.py)."""
# ruff: noqa: E402, E501 - cell templates keep the notebooks' style; imports follow setup
from common import load, run, save, setsrc, sset

NAME = "11-codegen.ipynb"
nb = load(NAME)

SETUP = r'''
import functools
import networkx
import ssa_course
from ssa_course.codegen.colouring import Colourer
from ssa_course.codegen.interference import build_interference
from ssa_course.codegen.liveness import Liveness
from ssa_course.codegen.x86_64.registers import ALLOCATABLE
from ssa_course.codegen.mir_data import FunctionData, InstrData, function_data, function_of_data
from ssa_course.compilation import compile_source
from ssa_course.grading import check_against
from ssa_course.grading.codegen import draw_colouring, draw_edges, draw_live_sets
from ssa_course.grading.forbid import guard
from ssa_course.lessons.l11_codegen import machine_ir

PROGRAMS = {
    "straight": "fn main(a: int, b: int) { var c = a + b; print(c * a); }",
    "if": "fn main(n: int) { var x = 0; if (n > 0) { x = n * 3; } else { x = n - 7; } print(x + n); }",
    "loop": "fn main(n: int) { var s = 0; var i = 0; while (i < n) { s = s + i; i = i + 1; } print(s); }",
    "swap": ("fn main(n: int) { var a = 1; var b = 2; for (var i = 0; i < n; i = i + 1) { "
             "var t = a; a = b; b = t; } print(a, b); }"),
    # sq calls itself, so it is no leaf and stays a call (son-opt inlines small leaves):
    # s and i live across it and so interfere with every caller-saved register
    "call": ("fn sq(x: int) -> int { if (x < 0) { return sq(0 - x); } return x * x; }\n"
             "fn main(n: int) { var s = 0; var i = 0; while (i < n) { s = s + sq(i); i = i + 1; } print(s); }"),
    "divide": "fn main(a: int, b: int) { print(a / b, a % b); }",
}

def I(text, defs=(), uses=(), copy=None):
    return InstrData(text, tuple(defs), tuple(uses), copy)

# Two functions written by hand, small enough to follow on paper.
HAND = {
    "hand: a loop": FunctionData("loop", "A", {
        "A": [I("mov %1.s, 0", ["%1.s"]), I("mov %2.k, 10", ["%2.k"]), I("jmp B")],
        "B": [I("add %1.s, %2.k", ["%1.s"], ["%1.s", "%2.k"]), I("dec %2.k", ["%2.k"], ["%2.k"]),
              I("jnz B"), I("jmp C")],
        "C": [I("mov rax, %1.s", ["rax"], ["%1.s"], ("rax", "%1.s")), I("ret", [], ["rax"])],
    }, {"A": ["B"], "B": ["B", "C"], "C": []}),
    "hand: a copy": FunctionData("copy", "A", {
        "A": [I("mov %1.a, rdi", ["%1.a"], ["rdi"], ("%1.a", "rdi")),
              I("mov %2.b, %1.a", ["%2.b"], ["%1.a"], ("%2.b", "%1.a")),
              I("add %2.b, 1", ["%2.b"], ["%2.b"]),
              I("mov %3.c, %1.a", ["%3.c"], ["%1.a"], ("%3.c", "%1.a")),
              I("imul %3.c, %2.b", ["%3.c"], ["%3.c", "%2.b"]),
              I("mov rax, %3.c", ["rax"], ["%3.c"], ("rax", "%3.c")), I("ret", [], ["rax"])],
    }, {"A": []}),
}

@functools.cache
def _machine(program):
    return machine_ir(compile_source(PROGRAMS.get(program, program), "exercise.tiny"))

def function(program, name="main"):
    """One function of a program (a name from PROGRAMS or HAND, or a Tiny source) as plain
    data; a fresh copy on every call."""
    if program in HAND:
        data = HAND[program]
        return data._replace(blocks={b: list(ins) for b, ins in data.blocks.items()},
                             succs={b: list(ss) for b, ss in data.succs.items()})
    return function_data(_machine(program)[name])

def is_virtual(name):
    """Does ``name`` name a virtual register (``%3.x``) rather than a physical one?"""
    return name.startswith("%")

def listing(data):
    lines = [f"function {data.name}, entry {data.entry}"]
    for label, instrs in data.blocks.items():
        lines.append(f"{label}:  -> {', '.join(data.succs[label]) or '(no successor)'}")
        for i in instrs:
            lines.append(f"    {i.text:<38} defs {list(i.defs)}  uses {list(i.uses)}"
                         + ("  (copy)" if i.copy else ""))
    return "\n".join(lines)

def show(data):
    """Print a function's blocks: each instruction with the registers it writes and reads."""
    print(listing(data))

def names_shown(regs):
    """A set of register names as Python writes it, sorted."""
    return "{" + ", ".join(repr(n) for n in sorted(regs)) + "}" if regs else "set()"

def source_text(program):
    if program in HAND:
        return f"{program} (written by hand)"
    return "program:\n" + PROGRAMS.get(program, program)

def describe(case):
    return f"{source_text(case[0])}\n{listing(function(case[0], case[1]))}"

def size(case):
    return sum(len(ins) for ins in function(case[0], case[1]).blocks.values())

def names(regs):
    return {str(r) for r in regs if not hasattr(r, "name") or r.name in ALLOCATABLE}

def given_live_out(program, name="main"):
    """Task 2's input: the registers live at the end of each block (the course's liveness)."""
    fn = function_of_data(HAND[program]) if program in HAND else _machine(program)[name]
    return {b: names(s) for b, s in Liveness(fn).live_out.items()}

# Register sets for task 3: all 14, or so few that some values must be spilled.
PALETTES = {"all": ALLOCATABLE, "three": ("rax", "rdi", "rbx"), "two": ("rdi", "rax")}

def select_input(program, name, registers, stack=None):
    """Task 3's input: (stack, adj, registers, partners) for a function allocated with only
    these registers (a tuple of names or a name from PALETTES), without coalescing; the
    stack is the one given, or the one the course's simplify leaves."""
    registers = tuple(PALETTES.get(registers, registers))
    fn = function_of_data(HAND[program]) if program in HAND else _machine(program)[name]
    graph = build_interference(fn, registers)
    if stack is None:
        stack = [str(v) for v in Colourer(graph, registers, set(), coalesce=False).simplify()[0]]
    partners = {}
    for m in sorted(graph.moves, key=lambda m: -m.weight):
        if m.dst != m.src:
            partners.setdefault(str(m.dst), []).append(str(m.src))
            partners.setdefault(str(m.src), []).append(str(m.dst))
    adj = {str(n): {str(t) for t in ts} for n, ts in graph.adj.items()}
    return list(stack), adj, registers, partners

# Graph libraries and the course's allocator are off limits for these answers.
NO_ENGINE = dict(forbid=[ssa_course, networkx])
'''

T1 = r'''
# Checks liveness() on every function of the programs and on the hand-written ones.
_liveness = guard(liveness, **NO_ENGINE)
# (program, function) -> (live_in, live_out)
%s

def _as_sets(answer):
    live_in, live_out = answer
    return ({b: set(s) for b, s in dict(live_in).items()},
            {b: set(s) for b, s in dict(live_out).items()})

def _run_liveness(case):
    data = function(*case)
    return _liveness(data.blocks, data.succs)

check_against(_run_liveness, EXPECTED_LIVE.__getitem__, list(EXPECTED_LIVE),
              describe=describe, size=size, normalise=_as_sets, what="live sets",
              draw_answer=lambda c, a: draw_live_sets(function(*c), a, EXPECTED_LIVE[c]))
### BEGIN HIDDEN TESTS
def _hidden():
    def reference(case):  # the course's liveness
        fn = function_of_data(HAND[case[0]]) if case[0] in HAND else _machine(case[0])[case[1]]
        live = Liveness(fn)
        return ({b: names(s) for b, s in live.live_in.items()},
                {b: names(s) for b, s in live.live_out.items()})

    HAND["hand: nested loops"] = FunctionData("nest", "E", {
        "E": [I("mov %1.n, rdi", ["%1.n"], ["rdi"], ("%1.n", "rdi")), I("mov %2.i, 0", ["%2.i"])],
        "H": [I("cmp %2.i, %1.n", [], ["%2.i", "%1.n"]), I("jge X")],
        "B": [I("mov %3.j, %2.i", ["%3.j"], ["%2.i"], ("%3.j", "%2.i"))],
        "J": [I("dec %3.j", ["%3.j"], ["%3.j"]), I("jnz J")],
        "L": [I("inc %2.i", ["%2.i"], ["%2.i"]), I("jmp H")],
        "X": [I("mov rax, %2.i", ["rax"], ["%2.i"], ("rax", "%2.i")), I("ret", [], ["rax"])],
    }, {"E": ["H"], "H": ["B", "X"], "B": ["J"], "J": ["J", "L"], "L": ["H"], "X": []})
    hidden = ("fn f(a: int, b: int) -> int { var r = 0; while (a > b) { a = a - b; r = r + 1; } return r; }\n"
              "fn main(n: int) { var t = 0; for (var i = 1; i < n; i = i + 1) { "
              "if (i % 3 == 0) { t = t + f(n, i); } else { t = t - i / 2; } } print(t); }")
    cases = [("hand: nested loops", "nest"), (hidden, "f"), (hidden, "main")]
    check_against(_run_liveness, reference, cases, describe=describe, size=size,
                  normalise=_as_sets, what="live sets")

_hidden()
### END HIDDEN TESTS
'''

T2 = r'''
# Checks interference() on every function of the programs and on the hand-written ones.
_interference = guard(interference, **NO_ENGINE)
# (program, function) -> the edges, each a pair of register names
%s
EXPECTED_EDGES = {k: {frozenset(e) for e in v} for k, v in _EDGES.items()}

def _as_edges(answer):
    return {frozenset(e) for e in answer}

def _run_interference(case):
    return _interference(function(*case).blocks, given_live_out(*case))

def _describe_edges(case):
    live = given_live_out(*case)
    return describe(case) + "\nlive_out: {" + ", ".join(
        f"{b!r}: {names_shown(live[b])}" for b in live) + "}"

check_against(_run_interference, EXPECTED_EDGES.__getitem__, list(EXPECTED_EDGES),
              describe=_describe_edges, size=size, normalise=_as_edges,
              what="interference edges",
              draw_answer=lambda c, a: draw_edges(function(*c), a))
### BEGIN HIDDEN TESTS
def _hidden():
    def reference(case):  # the course's interference graph
        fn = function_of_data(HAND[case[0]]) if case[0] in HAND else _machine(case[0])[case[1]]
        return {frozenset((str(a), str(b))) for a, b in build_interference(fn).edges()}

    HAND["hand: copies both ways"] = FunctionData("copies", "A", {
        "A": [I("mov %1.a, rdi", ["%1.a"], ["rdi"], ("%1.a", "rdi")),
              I("mov %2.b, %1.a", ["%2.b"], ["%1.a"], ("%2.b", "%1.a")),
              I("mov %1.a, %2.b", ["%1.a"], ["%2.b"], ("%1.a", "%2.b")),
              I("call g", ["rax", "rdi"], ["rdi"]),
              I("add %1.a, rax", ["%1.a"], ["%1.a", "rax"]),
              I("mov rax, %1.a", ["rax"], ["%1.a"], ("rax", "%1.a")), I("ret", [], ["rax"])],
    }, {"A": []})
    hidden = ("fn g(x: int) -> int { return x * 7 + 1; }\n"
              "fn main(a: int, b: int) { var s = a; var t = b; while (s < 100) { "
              "var u = s; s = t + g(u); t = u; } print(s % 5, t / (b + 1)); }")
    cases = [("hand: copies both ways", "copies"), (hidden, "g"), (hidden, "main")]
    check_against(_run_interference, reference, cases, describe=_describe_edges, size=size,
                  normalise=_as_edges, what="interference edges")

_hidden()
### END HIDDEN TESTS
'''

T3 = r'''
# Checks select() on the graphs of the programs' functions, with all
# registers and with only a few (then some values must be spilled).
_select = guard(select, **NO_ENGINE)
# (program, function, registers of PALETTES) -> (the stack simplify left, (colouring, spilled))
%s

def _describe_select(case, stack):
    stack, adj, registers, partners = select_input(*case, stack=stack)
    return "\n".join([f"{source_text(case[0])}\nfunction {case[1]}, registers {registers}",
                      f"stack (popped from the end): {stack}",
                      "adj: {" + ", ".join(f"{n!r}: {names_shown(ts)}"
                                           for n, ts in adj.items()) + "}",
                      f"partners: {partners}"])

def _check_select(table):
    def draw(case, answer):
        stack, adj, registers, partners = select_input(*case, stack=table[case][0])
        return draw_colouring(function(case[0], case[1]), adj, answer, registers)

    check_against(lambda c: _select(*select_input(*c, stack=table[c][0])),
                  lambda c: table[c][1], list(table),
                  describe=lambda c: _describe_select(c, table[c][0]),
                  size=lambda c: (len(table[c][0]), -len(PALETTES.get(c[2], c[2]))),
                  what="colouring and spills", draw_answer=draw)

_check_select(SELECT_CASES)
### BEGIN HIDDEN TESTS
def _hidden():
    def reference(case, stack):  # the course's select, on the same stack
        fn = _machine(case[0])[case[1]]
        graph = build_interference(fn, case[2])
        colourer = Colourer(graph, tuple(case[2]), set(), coalesce=False)
        node = {str(n): n for n in graph.adj}
        colours, failed = colourer.select([node[v] for v in stack])
        return ({str(n): r for n, r in colours.items() if is_virtual(str(n))},
                [str(n) for n in failed])

    hidden = ("fn main(n: int) { " + " ".join(f"var v{k} = n * {k + 2};" for k in range(7))
              + " var s = 0; for (var i = 0; i < n; i = i + 1) { s = s + "
              + " + ".join(f"v{k}" for k in range(7)) + "; } print(s); }")
    cases = [(hidden, "main", regs) for regs in (ALLOCATABLE, ALLOCATABLE[:5],
                                                 ("rbx", "r12", "rax"), ("rdi", "rsi"))]
    cases += [("swap", "main", ("rsi", "rax", "rdi")), ("call", "main", ("r12", "rdi", "rax"))]
    table = {}
    for case in cases:
        stack = select_input(*case)[0]
        table[case] = (stack, reference(case, stack))
    _check_select(table)

_hidden()
### END HIDDEN TESTS
'''

ns: dict = {}
run(ns, SETUP)
from ssa_course.codegen.colouring import Colourer
from ssa_course.codegen.interference import build_interference
from ssa_course.codegen.liveness import Liveness
from ssa_course.codegen.mir_data import function_of_data

machine, hand, names = ns["_machine"], ns["HAND"], ns["names"]


def engine_fn(program, name):
    return function_of_data(hand[program]) if program in hand else machine(program)[name]


CASES = [(h, d.name) for h, d in hand.items()]
CASES += [(p, f) for p in ns["PROGRAMS"] for f in machine(p)]


def live_sets(d):
    return "{" + ", ".join(f"{b!r}: {sset(s)}" for b, s in d.items()) + "}"


rows1, rows2, rows3 = ["EXPECTED_LIVE = {"], ["_EDGES = {"], ["SELECT_CASES = {"]
for program, fn_name in CASES:
    fn = engine_fn(program, fn_name)
    live = Liveness(fn)
    live_in = {b: names(s) for b, s in live.live_in.items()}
    live_out = {b: names(s) for b, s in live.live_out.items()}
    rows1.append(f"    {(program, fn_name)!r}: (\n        {live_sets(live_in)},\n"
                 f"        {live_sets(live_out)}),")
    edges = sorted(tuple(sorted((str(a), str(b)))) for a, b in build_interference(fn).edges())
    rows2.append(f"    {(program, fn_name)!r}: {{{', '.join(map(repr, edges))}}},"
                 if edges else f"    {(program, fn_name)!r}: set(),")

for program, fn_name in CASES:
    if program in hand:
        continue
    for palette, regs in ns["PALETTES"].items():
        graph = build_interference(machine(program)[fn_name], regs)
        colourer = Colourer(graph, regs, set(), coalesce=False)
        stack, _ = colourer.simplify()
        colours, failed = colourer.select(list(stack))
        colouring = {str(n): r for n, r in colours.items() if str(n).startswith("%")}
        colouring = dict(sorted(colouring.items(), key=lambda kv: int(kv[0][1:].split(".")[0])))
        rows3.append(f"    {(program, fn_name, palette)!r}:\n        ({[str(n) for n in stack]!r},\n"
                     f"         ({colouring!r},\n          {[str(n) for n in failed]!r})),")
for rows in (rows1, rows2, rows3):
    rows.append("}")
setsrc(nb, "setup", SETUP)
setsrc(nb, "test_liveness", T1.replace("%s", "\n".join(rows1), 1))
setsrc(nb, "test_interference", T2.replace("%s", "\n".join(rows2), 1))
setsrc(nb, "test_select", T3.replace("%s", "\n".join(rows3), 1))
save(nb, NAME)
print("written", NAME)
