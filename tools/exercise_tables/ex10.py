"""Regenerates the setup and graded cells of solutions/10-*.ipynb (see build.py)."""
# ruff: noqa: E501 - cell templates keep the notebooks' style; imports follow setup
from common import load, run, save, setsrc

NAME = "10-escape.ipynb"
nb = load(NAME)

SETUP = r'''
import functools
import ssa_course
from ssa_course.grading import check_against
from ssa_course.grading.escape import (EscapeFunction, answer_text, expected_glyphs,
                                       function_data, info_of, listing, state_of, state_text)
from ssa_course.grading.forbid import guard
from ssa_course.lessons.l10_escape import code_escapes

def S(analyzed=True, returns=(), thrown=(), args=(), everywhere=False):
    """An escape state written briefly: S(returns={6}) is ReturnEscape at statement 6."""
    return {"analyzed": analyzed, "returns": set(returns), "thrown": set(thrown),
            "args": set(args), "everywhere": everywhere}

# The states the checks of tasks 1 and 2 use, by name.
STATES = {
    "◌": S(analyzed=False),
    "✓": S(),
    "↑6": S(returns={6}),
    "↑9": S(returns={9}),
    "↑6,9": S(returns={6, 9}),
    "*a1": S(args={1}),
    "*a2": S(args={2}),
    "*t4": S(thrown={4}),
    "↑6 *a1": S(returns={6}, args={1}),
    "X": S(everywhere=True),
    "X ↑9": S(returns={9}, everywhere=True),
}

def glyph(state):
    """The glyph of a state: ◌, ✓, ↑, * or X."""
    if not state["analyzed"]:
        return "◌"
    if state["everywhere"]:
        return "X"
    if state["thrown"] or state["args"]:
        return "*"
    return "↑" if state["returns"] else "✓"

PROGRAMS = {
    "fresh": """struct Box { n: int; }
fn make(k: int) -> Box { var tmp = new Box { n: k * 2 }; var out = new Box { n: tmp.n + 1 }; return out; }
fn main(n: int) { print(make(n).n); }""",
    "wrap": """struct Box { n: int; }
struct Ref { v: Box; }
fn wrap(k: int) -> Ref { var b = new Box { n: k }; var spare = new Box { n: 0 }; var r = new Ref { v: b }; print(spare.n); return r; }
fn main(n: int) { print(wrap(n).v.n); }""",
    "through": """struct Box { n: int; }
struct Ref { v: Box; }
fn through(s: Box) -> Box { var init = new Box { n: 0 }; var obj = new Ref { v: init }; obj.v = s; var v = obj.v; return v; }
fn main() { print(through(new Box { n: 5 }).n); }""",
    "deep": """struct Box { n: int; }
struct Ref { v: Box; }
struct Outer { r: Ref; }
fn deep(o: Outer, k: int) { var inner = o.r; inner.v = new Box { n: k }; var local = new Ref { v: new Box { n: 1 } }; print(local.v.n); }
fn main(n: int) { var o = new Outer { r: new Ref { v: new Box { n: 0 } } }; deep(o, n); print(o.r.v.n); }""",
    "array": """struct Box { n: int; }
fn fill(n: int) -> [Box] { var xs = new Box[3]; var tmp = new Box[2]; xs[0] = new Box { n: n }; tmp[0] = new Box { n: 1 }; print(tmp[0].n); return xs; }
fn main(n: int) { print(fill(n)[0].n); }""",
    "phi": """struct Box { n: int; }
struct Holder { b: Box; }
fn keep(c: bool, h: Holder) { var a = new Box { n: 1 }; var b = new Box { n: 2 }; var x = a; if (c) { x = b; } print(x.n); h.b = a; }
fn main() { var h = new Holder { b: new Box { n: 0 } }; keep(true, h); print(h.b.n); }""",
    "try": """struct Box { n: int; }
struct Holder { b: Box; }
fn guarded(h: Holder, n: int) -> Box {
    var r1 = new Box { n: 1 };
    var r2 = new Box { n: 2 };
    try { if (n > 0) { throw n; } r1.n = r1.n + 1; } catch (e) { h.b = r1; }
    return r2;
}
fn main(n: int) { var h = new Holder { b: new Box { n: 0 } }; print(guarded(h, n).n, h.b.n); }""",
}

@functools.cache
def _analysed(program):
    return code_escapes(PROGRAMS.get(program, program)).result

def function(program, name):
    """One function of a program (a name from PROGRAMS, or a Tiny source) as an
    EscapeFunction; a fresh copy on every call."""
    return function_data(_analysed(program)[name])

def show(fn):
    """Print a function's statements."""
    print(listing(fn))

def source_text(program):
    return "program:\n" + PROGRAMS.get(program, program)

# The course's escape analysis is off limits for these answers (printing is allowed).
NO_ENGINE = dict(forbid=[ssa_course], allow=[listing])
'''

T1 = r'''
# Checks join() on pairs of the named STATES.
_join = guard(join, **NO_ENGINE)
# (name of a, name of b) -> the join
%s

def _describe_pair(case, states=STATES):
    return f"a = {states[case[0]]}\nb = {states[case[1]]}"

def _draw_state(case, answer):
    return answer_text(answer)

check_against(lambda c: _join(STATES[c[0]], STATES[c[1]]), EXPECTED_JOIN.__getitem__,
              list(EXPECTED_JOIN), describe=_describe_pair, what="joined state",
              size=lambda c: len(repr([STATES[n] for n in c])), draw_answer=_draw_state)
### BEGIN HIDDEN TESTS
def _hidden():
    states = dict(STATES, **{"↑3 *t3": S(returns={3}, thrown={3}), "*a1,3": S(args={1, 3}),
                             "X *a2 *t1": S(args={2}, thrown={1}, everywhere=True)})

    def reference(case):  # the course's join
        return state_of(info_of(states[case[0]]).join(info_of(states[case[1]])))

    cases = [(a, b) for a in states for b in states]
    check_against(lambda c: _join(states[c[0]], states[c[1]]), reference, cases,
                  describe=lambda c: _describe_pair(c, states), what="joined state",
                  size=lambda c: len(repr([states[n] for n in c])))

_hidden()
### END HIDDEN TESTS
'''

T2 = r'''
# Checks store() on the named STATES: (state of o's class, state of v, arguments in o's class).
_store = guard(store, **NO_ENGINE)
# (name of obj, name of value, obj_args) -> v's state after the store
%s

def _describe_store(case):
    return (f"obj = {STATES[case[0]]}\nvalue = {STATES[case[1]]}\n"
            f"obj_args = {set(case[2]) or 'set()'}")

check_against(lambda c: _store(STATES[c[0]], STATES[c[1]], set(c[2])),
              EXPECTED_STORE.__getitem__, list(EXPECTED_STORE), describe=_describe_store,
              what="state of the stored value",
              size=lambda c: len(repr([STATES[c[0]], STATES[c[1]], c[2]])),
              draw_answer=lambda c, a: answer_text(a))
### BEGIN HIDDEN TESTS
def _hidden():
    def reference(case):  # the course's worklist: a container's escape and its arguments
        obj, value = info_of(STATES[case[0]]), info_of(STATES[case[1]])
        if not value.analyzed:
            return state_of(value)
        reach = obj.escape_only()
        if case[2]:
            reach = reach.join(info_of(S(args=case[2])))
        return state_of(value.join(reach))

    cases = [(o, v, args) for o in STATES if o != "◌" for v in STATES
             for args in ((), (1,), (2, 3))]
    check_against(lambda c: _store(STATES[c[0]], STATES[c[1]], set(c[2])), reference, cases,
                  describe=_describe_store, what="state of the stored value",
                  size=lambda c: len(repr([STATES[c[0]], STATES[c[1]], c[2]])))

_hidden()
### END HIDDEN TESTS
'''

T3 = r'''
# Checks glyphs() on every function of the programs that calls no function with a reference.
_glyphs = guard(glyphs, **NO_ENGINE)
# (program, function) -> allocation -> glyph
%s

def _describe_fn(case):
    return f"{source_text(case[0])}\n{listing(function(*case))}"

check_against(lambda c: _glyphs(function(*c)), EXPECTED_GLYPHS.__getitem__,
              list(EXPECTED_GLYPHS), describe=_describe_fn, what="allocation glyphs",
              size=lambda c: len(function(*c).stmts),
              draw_answer=lambda c, a: listing(function(*c), a))
### BEGIN HIDDEN TESTS
def _hidden():
    def reference(case):  # the course's escape analysis
        return expected_glyphs(_analysed(case[0])[case[1]])

    hidden = """struct Box { n: int; }
struct Holder { b: Box; }
struct Node { val: int; kids: [Node]; }
fn both(h: Holder, k: int) -> Box { var b = new Box { n: k }; h.b = b; return b; }
fn swap(h: Holder, k: int) -> Box { var old = h.b; var fresh = new Box { n: k }; var spare = new Box { n: k + 1 }; h.b = fresh; var t = new Holder { b: spare }; print(t.b.n); return old; }
fn pick(c: bool, s: Box, t: Box) -> Holder { var one = new Holder { b: s }; var two = new Holder { b: t }; var x = one; if (c) { x = two; } return x; }
fn tree(d: int) -> Node {
    var kids = new Node[2];
    var cur = new Node { val: d, kids: kids };
    var i = 0;
    while (i < d) { var leaf = new Node { val: i, kids: new Node[0] }; kids[i % 2] = leaf; i = i + 1; }
    var scratch = new Node[2];
    scratch[0] = new Node { val: 0, kids: new Node[1] };
    print(len(scratch[0].kids));
    return cur;
}
fn nest(h: Holder, k: int) { var a = new Holder { b: new Box { n: k } }; var x = a; if (k > 0) { x = h; } print(x.b.n); }
fn main(n: int) { print(n); }"""
    cases = [(hidden, name) for name in ("both", "swap", "pick", "tree", "nest", "main")]
    check_against(lambda c: _glyphs(function(*c)), reference, cases, describe=_describe_fn,
                  what="allocation glyphs", size=lambda c: len(function(*c).stmts))

_hidden()
### END HIDDEN TESTS
'''

ns = {"__name__": "__main__"}
run(ns, SETUP)
STATES, S = ns["STATES"], ns["S"]
state_of, info_of = ns["state_of"], ns["info_of"]


def s_text(state):
    """A state as the S(...) call that writes it."""
    parts = [] if state["analyzed"] else ["analyzed=False"]
    for key in ("returns", "thrown", "args"):
        if state[key]:
            parts.append(f"{key}={{{', '.join(map(str, sorted(state[key])))}}}")
    if state["everywhere"]:
        parts.append("everywhere=True")
    return f"S({', '.join(parts)})"


PAIRS = [("◌", "◌"), ("◌", "✓"), ("✓", "↑6"), ("↑6", "↑9"), ("↑6,9", "↑6"), ("↑6", "*a1"),
         ("*a1", "*a2"), ("*t4", "↑6,9"), ("↑6 *a1", "*t4"), ("✓", "X"), ("X", "↑9"),
         ("X ↑9", "*a2"), ("*a2", "◌"), ("↑9", "X ↑9")]
rows1 = ["EXPECTED_JOIN = {"]
for a, b in PAIRS:
    rows1.append(f"    {(a, b)!r}: {s_text(state_of(info_of(STATES[a]).join(info_of(STATES[b]))))},")
rows1.append("}")


def store_ref(o, v, args):
    obj, value = info_of(STATES[o]), info_of(STATES[v])
    if not value.analyzed:
        return state_of(value)
    reach = obj.escape_only()
    if args:
        reach = reach.join(info_of(S(args=args)))
    return state_of(value.join(reach))


STORES = [("✓", "✓", ()), ("✓", "◌", (1,)), ("↑6", "✓", ()), ("↑6", "◌", ()), ("✓", "✓", (2,)),
          ("*a1", "↑9", ()), ("↑6", "↑9", (1,)), ("*t4", "✓", ()), ("X", "✓", ()),
          ("X ↑9", "↑6", (2,)), ("↑6 *a1", "*a2", (1, 2)), ("✓", "↑6,9", ())]
rows2 = ["EXPECTED_STORE = {"]
for o, v, args in STORES:
    rows2.append(f"    {(o, v, args)!r}: {s_text(store_ref(o, v, args))},")
rows2.append("}")

rows3 = ["EXPECTED_GLYPHS = {"]
for program in ns["PROGRAMS"]:
    result = ns["_analysed"](program)
    for name, fe in result.functions.items():
        if ns["function_data"](fe) is None:
            continue
        rows3.append(f"    {(program, name)!r}: {ns['expected_glyphs'](fe)!r},")
rows3.append("}")

setsrc(nb, "setup", SETUP)
setsrc(nb, "test_join", T1.replace("%s", "\n".join(rows1), 1))
setsrc(nb, "test_store", T2.replace("%s", "\n".join(rows2), 1))
setsrc(nb, "test_glyphs", T3.replace("%s", "\n".join(rows3), 1))
save(nb, NAME)
print("written", NAME)
