"""Regenerates the setup and graded cells of solutions/01-*.ipynb (see build.py)."""
# ruff: noqa: E501 - cell templates keep the notebooks' style; imports follow setup
from common import listing, load, run, save, setsrc, sset, table

NAME = "01-quads.ipynb"
nb = load(NAME)

SETUP = r'''
import copy
import networkx
import ssa_course
import ssa_course.quads.bril
import ssa_course.quads.bril_write
import ssa_course.quads.ir
import ssa_course.tiny.types
from ssa_course.grading import check_against, lesson_programs
from ssa_course.grading.forbid import guard
from ssa_course.quads.bril import format_instr
from ssa_course.quads.cfg import BasicBlock, build_cfg
from ssa_course.quads.ir import Function, Instr, Label
from ssa_course.quads.cfg_dot import cfg_to_dot
from ssa_course.viz.dot import Drawing, GraphEdge, GraphNode, graph_drawing

PROGRAMS = lesson_programs()
PROGRAMS["dead_loop"] = ("fn f(x: int) -> int {\n    return x;\n    print(1);\n"
                         "    while (true) { print(2); }\n}\nfn main() {\n    print(f(1));\n}\n")
# "program/function" -> the function's quads
FUNCTIONS = {f"{name}/{fn.name}": fn for name, src in PROGRAMS.items()
             for fn in ssa_course.compile(src).quads.functions.values()}

def body_of(key):
    """A private copy of a function's body (an answer may change what it gets)."""
    return copy.deepcopy(FUNCTIONS[key].body)

def describe(fn):
    lines = [f"@{fn.name}:"]
    for i, item in enumerate(fn.body):
        lines.append(f"{i:3}  " + (f".{item.name}:" if isinstance(item, Label)
                                    else "    " + format_instr(item)))
    return "\n".join(lines)

def draw(fn):
    return Drawing(cfg_to_dot(build_cfg(fn)))

def draw_succs(succs, entry):
    return graph_drawing([GraphNode(n, header=n, shape="box", emphasis=n == entry)
                          for n in succs],
                         [GraphEdge(a, b) for a, bs in succs.items() for b in bs])
'''

T1_HEAD = r'''
# Checks leaders() on the lesson's programs; the expected answers are written out below.
# (Your function may use the IR classes it gets and print them with format_instr; not the
# course's own block builder.)
_leaders = guard(leaders, forbid=[ssa_course], allow=[ssa_course.quads.ir, ssa_course.quads.bril, ssa_course.quads.bril_write,
                                                     ssa_course.tiny.types])
'''
T1_CHECK = r'''
check_against(lambda k: _leaders(body_of(k)), EXPECTED_LEADERS.__getitem__,
              list(EXPECTED_LEADERS), describe=lambda k: describe(FUNCTIONS[k]),
              draw=lambda k: draw(FUNCTIONS[k]), size=lambda k: len(FUNCTIONS[k].body),
              what="leaders")
### BEGIN HIDDEN TESTS
def _hidden():
    from ssa_course.quads.cfg import find_leaders  # the engine's rule is the reference here
    bodies = [
        [Label("a"), Label("b"), Instr("nop"), Instr("jmp", labels=["a"]), Instr("nop"),
         Instr("ret"), Label("c")],
        [Instr("nop"), Instr("ret"), Instr("nop"), Label("x"), Label("y"), Instr("ret")],
        [Instr("nop"), Instr("jmp", labels=["l"]), Label("l"), Instr("ret")],
    ]
    fns = [Function("hidden", [], None, b) for b in bodies]
    fns += ssa_course.compile("fn main(n: int) { while (n > 0) { if (n == 3) { break; } "
                              "n = n - 1; } print(n); }").quads.functions.values()
    check_against(lambda fn: _leaders(fn.body), find_leaders, fns, describe=describe,
                  size=lambda fn: len(fn.body), what="leaders")

_hidden()
### END HIDDEN TESTS
'''

T2_HEAD = r'''
# Checks successors() on the lesson's programs; the expected answers are written out below.
def _blank_blocks(fn):
    return [BasicBlock(b.name, b.instrs) for b in build_cfg(fn).blocks.values()]

_successors = guard(successors, forbid=[ssa_course],
                    allow=[ssa_course.quads.ir, ssa_course.quads.bril, ssa_course.quads.bril_write, ssa_course.tiny.types,
                           BasicBlock])
'''
T2_CHECK = r'''
check_against(lambda k: _successors(_blank_blocks(FUNCTIONS[k])), EXPECTED_SUCCESSORS.__getitem__,
              list(EXPECTED_SUCCESSORS), describe=lambda k: describe(FUNCTIONS[k]),
              draw=lambda k: draw(FUNCTIONS[k]), size=lambda k: len(FUNCTIONS[k].body),
              what="successors")
### BEGIN HIDDEN TESTS
def _hidden():
    more = [ssa_course.compile(s).quads.functions["main"] for s in [
        "fn main(n: int) { while (n > 0) { if (n == 3) { break; } n = n - 1; } print(n); }",
        "fn main() { try { print(1); } catch (e) { print(e); } print(2); }",
        "fn main(n: int) { if (n > 0) { } else { } print(n); }",
    ]]
    check_against(lambda fn: _successors(_blank_blocks(fn)),
                  lambda fn: {b.name: b.succs for b in build_cfg(fn).blocks.values()},
                  more, describe=describe, draw=draw, what="successors")

_hidden()
### END HIDDEN TESTS
'''

T3_HEAD = r'''
# Checks unreachable() on the lesson's programs, on hand-made graphs and on a long chain.
def _graph_of(k):
    cfg = build_cfg(FUNCTIONS[k])
    return {b.name: list(b.succs) for b in cfg.blocks.values()}, cfg.entry

_unreachable = guard(unreachable, forbid=[ssa_course, networkx])
'''
T3_CHECK = r'''
check_against(lambda k: _unreachable(*_graph_of(k)), EXPECTED_UNREACHABLE.__getitem__,
              list(EXPECTED_UNREACHABLE), describe=lambda k: describe(FUNCTIONS[k]),
              draw=lambda k: draw(FUNCTIONS[k]), size=lambda k: len(FUNCTIONS[k].body),
              what="unreachable set")
check_against(lambda c: _unreachable(c[0], c[1]), lambda c: c[2], HAND_MADE,
              describe=lambda c: f"entry {c[1]!r}, successors {c[0]}",
              draw=lambda c: draw_succs(c[0], c[1]), size=lambda c: len(c[0]),
              what="unreachable set")
_chain = {f"b{i}": [f"b{i + 1}"] for i in range(5000)}
_chain["b5000"] = []
_chain["lost"] = ["b0"]
check_against(lambda c: _unreachable(c, "b0"), lambda c: {"lost"}, [_chain],
              describe=lambda c: f"a long chain of {len(c):,} blocks b0 -> b1 -> ... -> b5000, "
                                 "and 'lost' -> b0 (entry b0: only 'lost' is unreachable)",
              size=len, what="unreachable set")
### BEGIN HIDDEN TESTS
def _hidden():
    import random

    def reference(succs, entry):
        seen, work = {entry}, [entry]
        while work:
            for s in succs[work.pop()]:
                if s not in seen:
                    seen.add(s)
                    work.append(s)
        return set(succs) - seen

    dead = [ssa_course.compile(s).quads.functions["f"] for s in [
        "fn f(x: int) -> int { while (true) { return 1; } }\nfn main() {}",
        "fn f(x: int) -> int { return x; if (x > 0) { print(1); } else { print(2); } }\n"
        "fn main() {}",
    ]]
    check_against(lambda fn: _unreachable({b.name: list(b.succs) for b in build_cfg(fn).blocks.values()},
                                          build_cfg(fn).entry),
                  lambda fn: set(build_cfg(fn).blocks) - build_cfg(fn).reachable(), dead,
                  describe=describe, draw=draw, what="unreachable set")
    rng = random.Random(7)
    graphs = []
    for _ in range(300):
        n = rng.randint(1, 9)
        graphs.append(({f"b{i}": sorted({f"b{rng.randrange(n)}" for _ in range(rng.randint(0, 2))})
                        for i in range(n)}, f"b{rng.randrange(n)}"))
    check_against(lambda c: _unreachable(*c), lambda c: reference(*c), graphs,
                  describe=lambda c: f"entry {c[1]!r}, successors {c[0]}",
                  size=lambda c: len(c[0]), what="unreachable set")

_hidden()
### END HIDDEN TESTS
'''

ns = {}
run(ns, SETUP)
run(ns, "from ssa_course.quads.cfg import find_leaders")
F = ns["FUNCTIONS"]
t1 = table("EXPECTED_LEADERS", [(k, ns["find_leaders"](fn)) for k, fn in F.items()])
t2 = table("EXPECTED_SUCCESSORS", [(k, {b.name: b.succs for b in ns["build_cfg"](fn).blocks.values()})
                                   for k, fn in F.items()])
def unr(fn):
    cfg = ns["build_cfg"](fn)
    return set(cfg.blocks) - cfg.reachable()
t3 = table("EXPECTED_UNREACHABLE", [(k, unr(fn)) for k, fn in F.items()], val=sset)
HAND = [
    ({"entry": ["a"], "a": [], "d1": ["d2"], "d2": []}, "entry", {"d1", "d2"}),
    ({"entry": [], "x": ["y"], "y": ["x"]}, "entry", {"x", "y"}),
    ({"e": ["a", "b"], "a": ["c"], "b": ["c"], "c": ["e"], "z": ["c"]}, "e", {"z"}),
    ({"e": ["e"]}, "e", set()),
    ({"s": ["t"], "t": [], "u": ["v"], "v": ["w"], "w": ["u", "t"]}, "s", {"u", "v", "w"}),
]
hand = listing("HAND_MADE", HAND, fmt=lambda c: f"({c[0]!r}, {c[1]!r}, {sset(c[2])})")
hand = "# (successors, entry, the blocks no path from the entry reaches)\n" + hand

setsrc(nb, "setup", SETUP)
setsrc(nb, "test_leaders", T1_HEAD.strip("\n") + "\n" + t1 + "\n" + T1_CHECK)
setsrc(nb, "test_successors", T2_HEAD.strip("\n") + "\n" + t2 + "\n" + T2_CHECK)
setsrc(nb, "test_unreachable", T3_HEAD.strip("\n") + "\n" + t3 + "\n" + hand + "\n" + T3_CHECK)
save(nb, NAME)
print("written", NAME)
