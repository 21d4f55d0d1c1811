"""Regenerates the setup and graded cells of solutions/08-*.ipynb (see build.py)."""
# ruff: noqa: E402, E501 - cell templates keep the notebooks' style; imports follow setup
from common import listing, load, run, save, setsrc, table

NAME = "08-scheduling.ipynb"
nb = load(NAME)

SETUP = r'''
import networkx
import ssa_course
import ssa_course.ssa.dom
from ssa_course.grading import check_against
from ssa_course.grading.forbid import guard
from ssa_course.grading.son import draw_blocks
from ssa_course.son.gcm import schedule
from ssa_course.lessons.l07_optimistic import optimistic_program

PROGRAMS = {
    "straight": "fn main(n: int) { print(n * 2 + 1); }",
    "if": "fn main(n: int) { var x = 0; if (n > 0) { x = n * 2; } else { x = 3; } print(x + 1); }",
    "loop": "fn main(n: int, a: int) { var s = 0; var i = 0; while (i < n) { s = s + a * 3; i = i + 1; } print(s); }",
    "nested": ("fn main(n: int) { var s = 0; for (var i = 0; i < n; i = i + 1) { "
               "for (var j = 0; j < i; j = j + 1) { if (j % 2 == 0) { s = s + n * n; } } } print(s); }"),
}

def source(name):
    return PROGRAMS.get(name, name)  # a name from PROGRAMS, or a program's source itself

def sched(name):
    return schedule(optimistic_program(ssa_course.compile(source(name))).functions["main"])

def describe(case):
    return f"program:\n{source(case[0])}\ncase {case[1:]}"

def dom_tree(s):
    """The dominator tree of a schedule's blocks, as successor lists."""
    return {b: [c for c in s.blocks if s.idom.get(c) == b and c != b] for b in s.blocks}

def marks(**named):
    """Block -> text naming the roles it plays (``marks(a="b1", b="b3", LCA="b1")``)."""
    out = {}
    for role, block in named.items():
        if isinstance(block, str):
            out[block] = (out[block] + ", " if block in out else "") + role
    return out

def drawn(answer, compute, roles, result):
    """draw= for check_against: the dominator tree, expected result next to the answer's
    (``roles`` names the blocks a case gives, ``result`` names the block asked for)."""
    def draw(case):
        s = sched(case[0])
        try:
            actual = compute(answer, case)
        except Exception as e:
            actual = f"raised {type(e).__name__}"
        given = roles(case)
        return draw_blocks(dom_tree(s), s.entry, marks(**given, **{result: compute(None, case)}),
                           marks(**given, **{result: actual}), title="the dominator tree")
    return draw

# Graph libraries and the course's scheduler are off limits for these answers.
NO_ENGINE = dict(forbid=[ssa_course, networkx])
'''

T1 = r'''
# Checks lca() on pairs of blocks of each program's schedule; answers below.
_lca = guard(lca, **NO_ENGINE)
# (program, a, b) -> the deepest block dominating a and b
%s

def _lca_of(answer, case):
    if answer is None:
        return EXPECTED_LCA[case]
    s = sched(case[0])
    return answer(case[1], case[2], dict(s.idom), dict(s.dom_depth))

check_against(lambda c: _lca_of(_lca, c), EXPECTED_LCA.__getitem__, list(EXPECTED_LCA),
              describe=describe, draw=drawn(_lca, _lca_of, lambda c: {"a": c[1], "b": c[2]}, "LCA"),
              size=lambda c: len(PROGRAMS[c[0]]), what="LCA")
### BEGIN HIDDEN TESTS
def _hidden():
    def reference(a, b, idom, depth):
        while depth[a] > depth[b]:
            a = idom[a]
        while depth[b] > depth[a]:
            b = idom[b]
        while a != b:
            a, b = idom[a], idom[b]
        return a

    src = ("fn main(n: int) { var s = 0; while (s < n) { if (s % 3 == 0) { s = s + 2; } "
           "else { s = s + 1; } } print(s); }")
    s = sched(src)
    check_against(lambda c: _lca(c[1], c[2], dict(s.idom), dict(s.dom_depth)),
                  lambda c: reference(c[1], c[2], s.idom, s.dom_depth),
                  [(src, a, b) for a in s.blocks for b in s.blocks], describe=describe,
                  size=lambda c: 0, what="LCA")

_hidden()
### END HIDDEN TESTS
'''

T2 = r'''
# Checks pick_block() on every node placement of each program's schedule; answers below.
_pick_block = guard(pick_block, **NO_ENGINE)
# (program, early, late) -> the chosen block
%s

def _pick_of(answer, case):
    if answer is None:
        return EXPECTED_PICK[case]
    s = sched(case[0])
    return answer(case[1], case[2], dict(s.idom), {k: b.depth for k, b in s.blocks.items()})

check_against(lambda c: _pick_of(_pick_block, c), EXPECTED_PICK.__getitem__,
              list(EXPECTED_PICK), describe=describe,
              draw=drawn(_pick_block, _pick_of, lambda c: {"early": c[1], "late": c[2]},
                         "chosen"),
              size=lambda c: len(PROGRAMS[c[0]]), what="chosen block")
### BEGIN HIDDEN TESTS
def _hidden():
    def reference(early, late, idom, loop_depth):
        best = b = late
        while b != early:
            b = idom[b]
            if loop_depth[b] < loop_depth[best]:
                best = b
        return best

    src = ("fn main(n: int, a: int) { var s = 0; while (s < n) { var j = 0; while (j < 3) { "
           "s = s + a * a; j = j + 1; } if (s % 3 == 0) { s = s + n * 2; } else { s = s + 1; } } "
           "print(s); }")
    s = sched(src)
    depth = {k: b.depth for k, b in s.blocks.items()}
    cases = [(src, early, late) for _, early, late, _, _ in s.table()]
    # and every (dominator, block) pair, not only those the scheduler met
    for b in s.blocks:
        d = b
        while True:
            cases.append((src, d, b))
            if s.idom[d] == d:
                break
            d = s.idom[d]
    check_against(lambda c: _pick_block(c[1], c[2], dict(s.idom), dict(depth)),
                  lambda c: reference(c[1], c[2], s.idom, depth), cases, describe=describe,
                  size=lambda c: 0, what="chosen block")

_hidden()
### END HIDDEN TESTS
'''

T3 = r'''
# Checks loop_depths() on each program's blocks and on hand-made CFGs; answers below.
_loop_depths = guard(loop_depths, forbid=[ssa_course, networkx], allow=[ssa_course.ssa.dom])

def _cfg(name):
    s = sched(name)
    return {n: list(b.succs) for n, b in s.blocks.items()}, s.entry

# (successors, entry, expected depths): first the programs' schedules, then hand-made CFGs
%s

def _draw_depths(case):
    try:
        actual = _loop_depths({b: list(ss) for b, ss in case[0].items()}, case[1])
    except Exception as e:
        actual = {b: f"raised {type(e).__name__}" for b in case[0]}
    return draw_blocks(case[0], case[1], {b: str(d) for b, d in case[2].items()},
                       {b: str(d) for b, d in dict(actual).items()}, title="loop depths")

check_against(lambda c: _loop_depths({b: list(ss) for b, ss in c[0].items()}, c[1]),
              lambda c: c[2], DEPTH_CASES, describe=lambda c: f"entry {c[1]!r}, successors {c[0]}",
              draw=_draw_depths, size=lambda c: len(c[0]), what="loop depths")
### BEGIN HIDDEN TESTS
def _hidden():
    from ssa_course.son.gcm import Block, _loop_depths as engine_depths
    from ssa_course.ssa.dom import immediate_dominators

    def reference(succs, entry):  # the scheduler's own rule
        blocks = {n: Block(n, None, succs=list(ss)) for n, ss in succs.items()}
        engine_depths(blocks, immediate_dominators(succs, entry))
        return {n: b.depth for n, b in blocks.items()}

    cases = [
        ({"a": ["b"], "b": ["c", "f"], "c": ["d"], "d": ["c", "e"], "e": ["b"], "f": []}, "a"),
        ({"s": ["h"], "h": ["x", "y"], "x": ["h"], "y": ["h", "z"], "z": []}, "s"),
        ({"e": ["p", "q"], "p": ["q"], "q": ["p", "r"], "r": ["r"]}, "e"),
        _cfg("fn main(n: int) { var s = 0; while (s < n) { var j = 0; while (j < s) { "
             "var k = 0; while (k < j) { k = k + 1; } j = j + 1; } s = s + 1; } print(s); }"),
    ]
    check_against(lambda c: _loop_depths({b: list(ss) for b, ss in c[0].items()}, c[1]),
                  lambda c: reference(*c), cases,
                  describe=lambda c: f"entry {c[1]!r}, successors {c[0]}",
                  size=lambda c: len(c[0]), what="loop depths")

_hidden()
### END HIDDEN TESTS
'''

ns = {}
run(ns, SETUP)
from ssa_course.son.gcm import Block, _loop_depths, dominator_lca, pick_block
from ssa_course.ssa.dom import immediate_dominators


def ref_depths(succs, entry):
    blocks = {n: Block(n, None, succs=list(ss)) for n, ss in succs.items()}
    _loop_depths(blocks, immediate_dominators(succs, entry))
    return {n: b.depth for n, b in blocks.items()}
rows_lca, rows_pick, rows_depth = [], [], []
for name in ns["PROGRAMS"]:
    s = ns["sched"](name)
    blocks = list(s.blocks)
    pairs = [(a, b) for a in blocks for b in blocks]
    step = max(1, len(pairs) // 30)
    for a, b in pairs[::step]:
        rows_lca.append(((name, a, b), dominator_lca(a, b, s.idom, s.dom_depth)))
    depth = {k: b.depth for k, b in s.blocks.items()}
    seen = set()
    for _, early, late, _, _ in s.table():
        if (early, late) not in seen:
            seen.add((early, late))
            rows_pick.append(((name, early, late), pick_block(early, late, s.idom, depth)))
    succs, entry = ns["_cfg"](name) if "_cfg" in ns else ({n: list(b.succs) for n, b in s.blocks.items()}, s.entry)
    rows_depth.append((succs, entry, ref_depths(succs, entry)))
HAND = [
    ({"a": ["b"], "b": ["c"], "c": ["b", "d"], "d": []}, "a"),
    ({"a": ["b"], "b": ["c", "g"], "c": ["d"], "d": ["c", "e"], "e": ["f"], "f": ["b", "f"], "g": []}, "a"),
    ({"e": ["x", "y"], "x": ["y"], "y": ["x", "z"], "z": []}, "e"),
    ({"h": ["h"]}, "h"),
]
for succs, entry in HAND:
    rows_depth.append((succs, entry, ref_depths(succs, entry)))
t1 = table("EXPECTED_LCA", rows_lca)
t2 = table("EXPECTED_PICK", rows_pick)
t3 = listing("DEPTH_CASES", rows_depth, fmt=lambda r: f"({r[0]!r},\n     {r[1]!r}, {r[2]!r})")
setsrc(nb, "setup", SETUP)
setsrc(nb, "test_lca", T1.replace("%s", t1, 1))
setsrc(nb, "test_pick_block", T2.replace("%s", t2, 1))
setsrc(nb, "test_loop_depths", T3.replace("%s", t3, 1))
save(nb, NAME)
print("written", NAME)
