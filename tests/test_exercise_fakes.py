"""Every graded task is earned: faked and commonly wrong answers score nothing.

The notebooks' cells run in this process, as autograding runs a submission (no kernel):
setup, the answer cells (released stub, then the answer under test), then one graded cell
-- the source version with its hidden tests, or the released one. Other graded cells are
skipped, so a graded cell that needs another one's definitions fails here too.

* the solution passes each graded cell on its own;
* *fakes* -- answers built from whatever the released notebook and the installed package
  offer (the course's own implementation of the task, wrappers adapting it, graph
  libraries, look-ups in the visible expected answers, the removed reference modules) --
  fail the graded cell; the ones that call the course's code fail already on the visible
  tests with a message naming the call, and (where marked) would pass those tests if the
  call were not watched, so the watch is what stops them;
* every function the setup cell offers fails as an answer to every task;
* common wrong answers fail the visible tests.
"""

from __future__ import annotations

import contextlib
import functools
import io
import sys
import types
from pathlib import Path

import nbformat
import pytest

from ssa_course.grading import forbid

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted(p.name for p in (ROOT / "solutions").glob("*.ipynb"))


# ---------------------------------------------------------------- running cells


@functools.cache
def _cells(folder: str, name: str) -> tuple[tuple[str, str, str], ...]:
    """(kind, grade id, source) of each code cell; kind is setup, answer or graded."""
    nb = nbformat.read(ROOT / folder / name, as_version=4)
    out = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        meta = cell.metadata.get("nbgrader", {})
        kind = "answer" if meta.get("solution") else "graded" if meta.get("grade") else "setup"
        out.append((kind, meta.get("grade_id", ""), cell.source))
    return tuple(out)


def tasks(name: str) -> list[tuple[str, str]]:
    """(answer cell id, the graded cell after it) per task."""
    out, answer = [], None
    for kind, gid, _ in _cells("solutions", name):
        if kind == "answer":
            answer = gid
        elif kind == "graded":
            out.append((answer, gid))
    return out


def _exec(source: str, where: str, ns: dict) -> None:
    exec(compile(source, f"<{where}>", "exec"), ns)


def _setup(name: str) -> dict:
    ns: dict = {"__name__": "__main__"}
    for kind, gid, src in _cells("solutions", name):
        if kind == "setup":
            _exec(src, f"{name}:{gid}", ns)
    return ns


def outcome(name: str, graded: str, answers: dict[str, str] | None = None,
            released: bool = False, watched: bool = True, earlier: bool = False
            ) -> str | None:
    """Run ``name`` up to its graded cell ``graded``: None if it passes, else the error.

    ``answers`` maps answer-cell ids to the code run after the released stub (the others
    run the solution); ``released`` runs the released graded cell (no hidden tests);
    ``watched=False`` turns the guard off (to show a fake would pass without it);
    ``earlier`` also runs the graded cells before it, as autograding does."""
    answers = answers or {}
    stubs = {gid: src for kind, gid, src in _cells("exercises", name) if kind == "answer"}
    shown = {gid: src for kind, gid, src in _cells("exercises", name) if kind == "graded"}
    with contextlib.ExitStack() as stack:
        stack.enter_context(contextlib.redirect_stdout(io.StringIO()))
        if not watched:
            mp = stack.enter_context(pytest.MonkeyPatch.context())
            mp.setattr(forbid, "guard", lambda fn, **_: fn)
        ns: dict = {"__name__": "__main__"}
        for kind, gid, src in _cells("solutions", name):
            where = f"{name}:{gid}"
            if kind == "setup":
                _exec(src, where, ns)
            elif kind == "answer":
                _exec(stubs[gid], where, ns)
                if gid in answers:
                    with contextlib.suppress(Exception):  # a fake that cannot even be built
                        _exec(answers[gid], where, ns)
                else:
                    _exec(src, where, ns)
            elif gid != graded:
                if earlier:  # autograde runs every cell; a failing one does not stop it
                    with contextlib.suppress(Exception):
                        _exec(shown[gid] if released else src, where, ns)
            else:
                try:
                    _exec(shown[gid] if released else src, where, ns)
                except Exception as e:
                    return f"{type(e).__name__}: {e}"
                return None
    raise KeyError(f"{name} has no graded cell {graded!r}")


def _graded_of(name: str, answer: str) -> str:
    return dict(tasks(name))[answer]


# ---------------------------------------------------------------- the solution


@pytest.mark.parametrize("name,graded", [(n, g) for n in NOTEBOOKS for _, g in tasks(n)])
def test_solution_passes_each_graded_cell_on_its_own(name, graded):
    assert outcome(name, graded) is None
    assert outcome(name, graded, released=True) is None


def test_every_exercise_has_three_tasks():
    assert len(NOTEBOOKS) == 11
    for name in NOTEBOOKS:
        assert len(tasks(name)) == (4 if name == "09-ranges.ipynb" else 3), name


# ---------------------------------------------------------------- fakes

# (notebook, answer cell, label, code, kind). kind "engine": calls the course's code, so
# the visible tests must refuse it by name; "engine!": the same, and without the watch it
# would pass the visible tests; "lookup": reads the visible expected answers (only the
# hidden tests can catch it); "gone": imports a reference that no longer exists.
FAKES = [
    ("01-quads.ipynb", "leaders", "find_leaders", """
from ssa_course.quads.cfg import find_leaders
def leaders(body):
    return find_leaders(Function("f", [], None, list(body)))
""", "engine!"),
    ("01-quads.ipynb", "leaders", "lookup", """
def leaders(body):
    return next(v for k, v in EXPECTED_LEADERS.items() if FUNCTIONS[k].body == body)
""", "lookup"),
    ("01-quads.ipynb", "leaders", "reference module", """
from ssa_course.grading.references import find_leaders as leaders
""", "gone"),
    ("01-quads.ipynb", "successors", "build_cfg", """
def successors(blocks):
    body = [item for b in blocks for item in (Label(b.name), *b.instrs)]
    cfg = build_cfg(Function("f", [], None, body))
    names = [b.name for b in blocks]
    return {n: cfg.blocks[n].succs if n in cfg.blocks else [] for n in names}
""", "engine"),
    ("01-quads.ipynb", "unreachable", "immediate_dominators", """
from ssa_course.ssa.dom import immediate_dominators
def unreachable(succs, entry):
    return set(succs) - set(immediate_dominators(succs, entry))
""", "engine!"),
    ("01-quads.ipynb", "unreachable", "networkx", """
def unreachable(succs, entry):
    g = networkx.DiGraph([(a, b) for a, bs in succs.items() for b in bs])
    g.add_nodes_from(succs)
    return set(succs) - networkx.descendants(g, entry) - {entry}
""", "engine!"),
    ("01-quads.ipynb", "unreachable", "CFG.reachable", """
from collections import OrderedDict
from ssa_course.quads.cfg import CFG
def unreachable(succs, entry):
    blocks = OrderedDict((n, BasicBlock(n, [], list(s))) for n, s in succs.items())
    return set(succs) - CFG(Function("f", [], None, []), blocks, entry).reachable()
""", "engine!"),
    ("02-peepholes.ipynb", "fold_constant", "fold", """
from ssa_course.quads.fold import fold
def fold_constant(op, a, b):
    return fold(op, [a, b])
""", "engine!"),
    ("02-peepholes.ipynb", "fold_constant", "setup's fold (gone)", """
fold_constant = lambda op, a, b: fold(op, [a, b])
fold_constant(1, 2, 3)
""", "gone"),
    ("02-peepholes.ipynb", "fold_constant", "lookup", """
def fold_constant(op, a, b):
    return next(r for o, x, y, r in FOLDED if (o, x, y) == (op, a, b))
""", "lookup"),
    ("02-peepholes.ipynb", "value_key", "reference module", """
from ssa_course.grading.references import value_key
""", "gone"),
    ("02-peepholes.ipynb", "count_redundant", "LVN", """
from ssa_course.quads.peephole import _lvn_block
def count_redundant(block):
    out = _lvn_block(list(block))
    return sum(1 for a, b in zip(block, out) if a.op in PURE_OPS and b.op != a.op)
""", "engine"),
    ("02-peepholes.ipynb", "count_redundant", "lookup", """
def count_redundant(block):
    return next(EXPECTED_REDUNDANT[i] for i, b in enumerate(BLOCKS) if b == block)
""", "lookup"),
    ("03-ssa.ipynb", "frontiers", "dominance_frontiers", """
from ssa_course.ssa.dom import dominance_frontiers
def frontiers(succs, idom):
    return dominance_frontiers(succs, idom)
""", "engine!"),
    ("03-ssa.ipynb", "frontiers", "networkx", """
def frontiers(succs, idom):
    entry = next(n for n, d in idom.items() if n == d)
    g = networkx.DiGraph([(a, b) for a, bs in succs.items() for b in bs])
    g.add_nodes_from(succs)
    return {n: set(f) for n, f in networkx.dominance_frontiers(g, entry).items() if n in idom}
""", "engine"),
    ("03-ssa.ipynb", "frontiers", "lookup", """
def frontiers(succs, idom):
    return next(df for s, e, df in FRONTIER_CASES if s == succs)
""", "lookup"),
    ("03-ssa.ipynb", "phi_blocks", "iterated_frontier", """
from ssa_course.ssa.dom import iterated_frontier
def phi_blocks(df, defsites):
    return iterated_frontier(df, set(defsites))
""", "engine!"),
    ("03-ssa.ipynb", "sequentialize_copies", "sequentialize", """
import itertools
from ssa_course.ssa.destruct import sequentialize
def sequentialize_copies(copies):
    names = (f"tmp{i}" for i in itertools.count())
    return sequentialize(list(copies), lambda d: next(names))
""", "engine!"),
    ("04-julia-ir.ipynb", "uses_of", "reference module", """
from ssa_course.grading.references import uses_of
""", "gone"),
    ("04-julia-ir.ipynb", "uses_of", "lookup", """
_seen = {repr(ir_of(n).stmts): n for n in PROGRAMS}
def uses_of(ir):
    return EXPECTED_USES[_seen[repr(ir.stmts)]]
""", "lookup"),
    ("04-julia-ir.ipynb", "dead_pure", "lookup", """
_seen = {repr(ir_of(n).stmts): n for n in PROGRAMS}
def dead_pure(ir):
    return EXPECTED_DEAD[_seen[repr(ir.stmts)]]
""", "lookup"),
    ("04-julia-ir.ipynb", "double_to_add", "reference module", """
from ssa_course.grading.references import double_to_add
""", "gone"),
    ("05-control-as-data.ipynb", "control_successors", "grading.son (gone)", """
from ssa_course.grading.son import control_successors
""", "gone"),
    ("05-control-as-data.ipynb", "control_successors", "lookup", """
def control_successors(node):
    return next(v for (p, f, i), v in EXPECTED_SUCCESSORS.items()
                if i == node.id and f == node.graph.name)
""", "lookup"),
    ("05-control-as-data.ipynb", "split_phi", "grading.son (gone)", """
from ssa_course.grading.son import split_phi
""", "gone"),
    ("05-control-as-data.ipynb", "loop_carried", "Phi.idealize", """
def loop_carried(fg):
    return {n.id: sorted(p.var_name for p in n.phis() if p.idealize() is None)
            for n in fg.nodes() if isinstance(n, Loop)}
""", "engine!"),
    ("05-control-as-data.ipynb", "loop_carried", "grading.son (gone)", """
from ssa_course.grading.son import loop_carried
""", "gone"),
    ("06-types-and-peepholes.ipynb", "transfer", "engine_compute", """
from ssa_course.grading.son import engine_compute
def mul_type(a, b):
    return engine_compute(Mul, a, b)
def not_type(t):
    if isinstance(t, BoolType) and t.is_constant():
        return FALSE if t.value else TRUE
    return BOOL_TOP if t in (TOP, BOOL_TOP) else BOOL_BOTTOM
""", "engine!"),
    ("06-types-and-peepholes.ipynb", "transfer", "Not.compute by hand", """
from ssa_course.son.graph import Graph
def mul_type(a, b):
    if TOP in (a, b) or INT_TOP in (a, b):
        return INT_TOP
    if int_const(0) in (a, b):
        return int_const(0)
    if a.is_constant() and b.is_constant():
        return int_const(wrap(a.lo * b.lo))
    return INT_BOTTOM
def not_type(t):
    g = Graph()
    x = Node(g)
    x.type = t
    return Not(g, None, x).compute()
""", "engine"),
    ("06-types-and-peepholes.ipynb", "idealize_add", "Add.idealize", """
def idealize_add(node):
    return Add.idealize(node)
""", "engine"),
    ("06-types-and-peepholes.ipynb", "idealize_add", "reference (gone)", """
from ssa_course.grading.son import reference_idealize_add as idealize_add
""", "gone"),
    ("06-types-and-peepholes.ipynb", "gvn_key", "node.key()", """
def gvn_key(node):
    return node.key()
""", "engine!"),
    ("06-types-and-peepholes.ipynb", "gvn_key", "Node.key", """
def gvn_key(node):
    return Node.key(node)
""", "engine!"),
    ("07-optimistic.ipynb", "phi_type", "with_types", """
from ssa_course.grading.son import with_types
def phi_type(phi, types):
    return with_types(phi, types)
""", "engine!"),
    ("07-optimistic.ipynb", "phi_type", "Phi.compute by hand", """
def phi_type(phi, types):
    touched = [phi, *[i for i in phi.inputs if i is not None],
               *[c for c in phi.inputs[0].inputs if c is not None]]
    saved = {n.id: n.type for n in touched}
    for n in touched:
        n.type = types.get(n.id, TOP)
    try:
        return phi.compute()
    finally:
        for n in touched:
            n.type = saved[n.id]
""", "engine!"),
    ("07-optimistic.ipynb", "if_type", "If.compute", """
from ssa_course.son.graph import Graph, Node
def if_type(ctrl, pred):
    g = Graph()
    Start(g, [])
    c, p = Node(g), Node(g)
    c.type, p.type = ctrl, pred
    return If(g, c, p).compute()
""", "engine!"),
    ("07-optimistic.ipynb", "if_type", "grading.son (gone)", """
from ssa_course.grading.son import if_type
""", "gone"),
    ("07-optimistic.ipynb", "users_to_push", "sccp.users_to_push", """
from ssa_course.son.sccp import users_to_push as engine_push
def users_to_push(node):
    return [u.id for u in engine_push(node)]
""", "engine!"),
    ("08-scheduling.ipynb", "lca", "dominator_lca", """
from ssa_course.son.gcm import dominator_lca as lca
""", "engine!"),
    ("08-scheduling.ipynb", "lca", "networkx", """
def lca(a, b, idom, depth):
    g = networkx.DiGraph([(d, x) for x, d in idom.items() if d != x])
    g.add_nodes_from(idom)
    return networkx.lowest_common_ancestor(g, a, b)
""", "engine!"),
    ("08-scheduling.ipynb", "lca", "lookup", """
_idoms = {p: dict(sched(p).idom) for p in PROGRAMS}
def lca(a, b, idom, depth):
    return next(v for (p, x, y), v in EXPECTED_LCA.items() if (x, y) == (a, b)
                and _idoms[p] == idom)
""", "lookup"),
    ("08-scheduling.ipynb", "pick_block", "gcm.pick_block", """
from ssa_course.son.gcm import pick_block
""", "engine!"),
    ("08-scheduling.ipynb", "loop_depths", "gcm._loop_depths", """
from ssa_course.son.gcm import Block, _loop_depths as engine_depths
def loop_depths(succs, entry):
    blocks = {n: Block(n, None, succs=list(s)) for n, s in succs.items()}
    engine_depths(blocks, immediate_dominators(succs, entry))
    return {n: b.depth for n, b in blocks.items()}
""", "engine!"),
    ("08-scheduling.ipynb", "loop_depths", "grading.son (gone)", """
from ssa_course.grading.son import loop_depths
""", "gone"),
    ("09-ranges.ipynb", "add_range", "intervals.add", """
from ssa_course.son.intervals import add
from ssa_course.son.types import IntType
def add_range(a, b):
    if a is None or b is None:
        return None
    r = add(IntType("int", *a), IntType("int", *b))
    return (r.lo, r.hi)
""", "engine!"),
    ("09-ranges.ipynb", "add_range", "grading.ranges.engine_add", """
from ssa_course.grading.ranges import engine_add as add_range
""", "engine!"),
    ("09-ranges.ipynb", "add_range", "lookup", """
def add_range(a, b):
    return EXPECTED_ADD[(a, b)]
""", "lookup"),
    ("09-ranges.ipynb", "branch_ranges", "RangeAnalysis._apply", """
from ssa_course.son.edge_facts import Fact
from ssa_course.son.range_facts import DEPTH, RangeAnalysis
from ssa_course.son.types import IntType
class _Given:
    def __init__(self, r):
        self.r = r
    def range_of(self, node):
        return self.r
def branch_ranges(x, op, y):
    negate = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}
    given = _Given(IntType("int", *y))
    out = []
    for rel in (op, negate[op]):
        r = RangeAnalysis._apply(given, IntType("int", *x), Fact(None, None, 0, rel, given),
                                 None, DEPTH)
        out.append(None if r.lo > r.hi else (r.lo, r.hi))
    return tuple(out)
""", "engine!"),
    ("09-ranges.ipynb", "branch_ranges", "grading.ranges.engine_branch", """
from ssa_course.grading.ranges import engine_branch as branch_ranges
""", "engine!"),
    ("09-ranges.ipynb", "branch_ranges", "lookup", """
def branch_ranges(x, op, y):
    return EXPECTED_BRANCH[(x, op, y)]
""", "lookup"),
    ("09-ranges.ipynb", "check_redundant", "range_facts.fits", """
from ssa_course.son.range_facts import fits
from ssa_course.son.types import IntType
def check_redundant(index, length, facts):
    if index[0] < 0:
        return False
    if index[1] < length[0]:
        return True
    return any(fits(IntType("int", *index), k) and
               ((op == "<" and k >= 0) or (op in ("<=", "==") and k >= 1)) for k, op in facts)
""", "engine!"),
    ("09-ranges.ipynb", "check_redundant", "lookup", """
def check_redundant(index, length, facts):
    return EXPECTED_CHECK[(index, length, tuple(facts))]
""", "lookup"),
    ("09-ranges.ipynb", "loop_range", "intervals.widen and narrow", """
from ssa_course.son.intervals import narrow, widen
from ssa_course.son.types import IntType
def loop_range(entry, back):
    def t(r):
        return IntType("int", 1, 0) if r is None else IntType("int", *r)
    def p(r):
        return None if r.lo > r.hi else (r.lo, r.hi)
    def hull(*ranges):
        known = [r for r in ranges if r is not None]
        return (min(r[0] for r in known), max(r[1] for r in known)) if known else None
    trace, current, growths = [], None, 0
    while True:
        new = hull(current, entry, back(current))
        if new == current:
            break
        growths += 1
        if growths > 3:
            new = p(widen(t(current), t(new)))
        current = new
        trace.append(current)
    for _ in range(8):
        new = p(narrow(t(current), t(hull(entry, back(current)))))
        if new == current:
            break
        current = new
        trace.append(current)
    return trace
""", "engine!"),
    ("09-ranges.ipynb", "loop_range", "grading.ranges.engine_widen", """
from ssa_course.grading.ranges import engine_narrowing, engine_widen
def loop_range(entry, back):
    def hull(*ranges):
        known = [r for r in ranges if r is not None]
        return (min(r[0] for r in known), max(r[1] for r in known)) if known else None
    trace, current, growths = [], None, 0
    while True:
        new = hull(current, entry, back(current))
        if new == current:
            break
        growths += 1
        if growths > 3:
            new = engine_widen(current, new)
        current = new
        trace.append(current)
    for _ in range(8):
        new = engine_narrowing(current, hull(entry, back(current)))
        if new == current:
            break
        current = new
        trace.append(current)
    return trace
""", "engine!"),
    ("09-ranges.ipynb", "loop_range", "lookup", """
def loop_range(entry, back):
    for (e, op, limit, step), trace in EXPECTED_LOOP.items():
        if e == entry and back(entry) == loop_back(op, limit, step)(entry):
            return trace
""", "lookup"),
    ("11-codegen.ipynb", "liveness", "codegen.liveness.Liveness", """
from ssa_course.codegen.liveness import Liveness
from ssa_course.codegen.mir_data import FunctionData, function_of_data
def liveness(blocks, succs):
    live = Liveness(function_of_data(FunctionData("f", next(iter(blocks)), blocks, succs)))
    return ({b: {str(r) for r in s} for b, s in live.live_in.items()},
            {b: {str(r) for r in s} for b, s in live.live_out.items()})
""", "engine!"),
    ("11-codegen.ipynb", "liveness", "lookup", """
_labels = {frozenset(function(p, f).blocks): (p, f)
           for p in [*HAND, *PROGRAMS] for f in ([HAND[p].name] if p in HAND else _machine(p))}
def liveness(blocks, succs):
    return EXPECTED_LIVE[_labels[frozenset(blocks)]]
""", "lookup"),
    ("11-codegen.ipynb", "interference", "build_interference", """
from ssa_course.codegen.interference import build_interference
from ssa_course.codegen.liveness import Liveness
from ssa_course.codegen.mir_data import FunctionData, function_of_data
def interference(blocks, live_out):
    fn = function_of_data(FunctionData("f", next(iter(blocks)), blocks, {b: [] for b in blocks}))
    live = Liveness(fn)
    regs = {str(r): r for b in fn.blocks for i in b.instrs for r in (*i.defs, *i.uses)}
    live.live_out = {b: {regs[n] for n in s if n in regs} for b, s in live_out.items()}
    return {frozenset((str(a), str(b))) for a, b in build_interference(fn, liveness=live).edges()}
""", "engine!"),
    ("11-codegen.ipynb", "interference", "lookup", """
_labels = {frozenset(function(p, f).blocks): (p, f)
           for p in [*HAND, *PROGRAMS] for f in ([HAND[p].name] if p in HAND else _machine(p))}
def interference(blocks, live_out):
    return EXPECTED_EDGES[_labels[frozenset(blocks)]]
""", "lookup"),
    ("11-codegen.ipynb", "select", "colouring.choose_register", """
from ssa_course.codegen.colouring import choose_register
def select(stack, adj, registers, partners):
    colour, spilled = {}, []
    def of(n):
        return colour.get(n) if n.startswith("%") else n
    for n in reversed(stack):
        taken = {of(t) for t in adj[n]} - {None}
        preferred = [of(p) for p in partners.get(n, []) if of(p)]
        r = choose_register(taken, tuple(registers), preferred)
        if r is None:
            spilled.append(n)
        else:
            colour[n] = r
    return colour, spilled
""", "engine!"),
    ("11-codegen.ipynb", "select", "networkx greedy_color", """
def select(stack, adj, registers, partners):
    g = networkx.Graph([(a, b) for a, bs in adj.items() for b in bs])
    g.add_nodes_from(adj)
    order = list(reversed(stack))
    colours = networkx.greedy_color(g.subgraph(order), strategy=lambda g, c: order)
    spilled = [n for n in order if colours[n] >= len(registers)]
    return {n: registers[c] for n, c in colours.items() if c < len(registers)}, spilled
""", "engine"),
    ("11-codegen.ipynb", "select", "lookup", """
def select(stack, adj, registers, partners):
    return next(v[1] for k, v in SELECT_CASES.items()
                if v[0] == stack and PALETTES[k[2]] == tuple(registers))
""", "lookup"),
    ("10-escape.ipynb", "join", "EscapeInfo.join", """
def join(a, b):
    return state_of(info_of(a).join(info_of(b)))
""", "engine!"),
    ("10-escape.ipynb", "join", "lookup", """
def join(a, b):
    names = {repr(v): k for k, v in STATES.items()}
    return EXPECTED_JOIN[(names[repr(a)], names[repr(b)])]
""", "lookup"),
    ("10-escape.ipynb", "store", "FunctionSolver's reach", """
from ssa_course.analysis.escape_lattice import EscapeInfo
def store(obj, value, obj_args):
    v = info_of(value)
    if not v.analyzed:
        return value
    reach = info_of(obj).escape_only().join(EscapeInfo(True, args=frozenset(obj_args)))
    return state_of(v.join(reach))
""", "engine!"),
    ("10-escape.ipynb", "store", "lookup", """
def store(obj, value, obj_args):
    names = {repr(v): k for k, v in STATES.items()}
    return EXPECTED_STORE[(names[repr(obj)], names[repr(value)], tuple(sorted(obj_args)))]
""", "lookup"),
    ("10-escape.ipynb", "glyphs", "code_escapes", """
def glyphs(fn):
    for program in PROGRAMS:
        result = code_escapes(PROGRAMS[program]).result
        if fn.name in result.functions:
            return expected_glyphs(result[fn.name])
""", "engine!"),
    ("10-escape.ipynb", "glyphs", "lookup", """
def glyphs(fn):
    return next(v for (p, f), v in EXPECTED_GLYPHS.items() if f == fn.name)
""", "lookup"),
]


@pytest.mark.parametrize("name,answer,label,code,kind", FAKES,
                         ids=[f"{f[0][:2]}-{f[1]}-{f[2]}" for f in FAKES])
def test_a_faked_answer_fails_its_graded_cell(name, answer, label, code, kind):
    graded = _graded_of(name, answer)
    assert outcome(name, graded, {answer: code}) is not None, "the fake scores"
    visible = outcome(name, graded, {answer: code}, released=True)
    if kind == "lookup":  # only the hidden tests can tell
        pass
    elif kind.startswith("engine"):
        assert visible is not None and ("ssa_course's own" in visible
                                        or "the library networkx" in visible), visible
        if kind == "engine!":
            unwatched = outcome(name, graded, {answer: code}, released=True, watched=False)
            assert unwatched is None, f"without the watch the fake would fail anyway: {unwatched}"
    else:
        assert visible is not None


def _offered(name: str) -> list[str]:
    """Names of the functions the released setup cell offers (its own and imported ones)."""
    ns = _setup(name)
    return sorted(k for k, v in ns.items()
                  if isinstance(v, types.FunctionType) and not k.startswith("__"))


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_no_function_the_setup_offers_answers_a_task(name):
    offered = _offered(name)
    assert offered
    for answer, graded in tasks(name):
        targets = ["mul_type", "not_type"] if answer == "transfer" else [answer]
        for fn in offered:
            code = "\n".join(f"{t} = {fn}" for t in targets)
            assert outcome(name, graded, {answer: code}, released=True) is not None, \
                f"{name}: the setup's {fn} answers {answer}"


# ---------------------------------------------------------------- common wrong answers

# (notebook, answer cell, label, code, what the failure message must mention)
WRONG = [
    ("01-quads.ipynb", "unreachable", "not transitive", """
def unreachable(succs, entry):
    targets = {s for ss in succs.values() for s in ss}
    return set(succs) - targets - {entry}
""", "unreachable set"),
    ("02-peepholes.ipynb", "fold_constant", "div never wraps", """
def fold_constant(op, a, b):
    def wrap(x):
        return (x + 2**63) % 2**64 - 2**63
    if op in ("div", "rem") and b == 0:
        return None
    if op in ("add", "sub", "mul"):
        return wrap({"add": a + b, "sub": a - b, "mul": a * b}[op])
    q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
    return q if op == "div" else a - q * b
""", "fold_constant('div', INT_MIN, -1)"),
    ("02-peepholes.ipynb", "value_key", "drops the opcode", """
def value_key(op, nums):
    return tuple(sorted(nums)) if op in ("add", "mul", "eq", "and", "or") else tuple(nums)
""", "different keys"),
    ("02-peepholes.ipynb", "value_key", "unhashable", """
def value_key(op, nums):
    return [op, *sorted(nums)] if op in ("add", "mul", "eq", "and", "or") else [op, *nums]
""", "cannot be a dict key"),
    ("02-peepholes.ipynb", "count_redundant", "availability never ends", """
def count_redundant(block):
    numbers, table, holder = {}, {}, {}
    counter = itertools.count(1)
    def num(var):
        if var not in numbers:
            numbers[var] = next(counter)
            holder[numbers[var]] = var
        return numbers[var]
    redundant = 0
    for instr in block:
        nums = [num(a) for a in instr.args]
        if instr.dest is None:
            continue
        if instr.op == "const":
            key = ("const", type(instr.value).__name__, instr.value)
        elif instr.op == "id":
            numbers[instr.dest] = nums[0]
            continue
        elif instr.op in PURE_OPS:
            key = value_key(instr.op, nums)
        else:
            numbers[instr.dest] = next(counter)
            continue
        n = table.get(key)
        if n is not None and instr.op in PURE_OPS:
            redundant += 1
        if n is None:
            n = table[key] = next(counter)
        numbers[instr.dest] = n
        holder.setdefault(n, instr.dest)
    return redundant
""", "redundant computations"),
    ("04-julia-ir.ipynb", "double_to_add", "ignores 2 * x", """
def double_to_add(ir):
    for i, stmt in enumerate(list(ir.stmts), start=1):
        if isinstance(stmt, Expr) and stmt.head == "mul" and stmt.args[1] == 2:
            v = stmt.args[0]
            ir.replace_uses(SSAValue(i), ir.insert_node(i, Expr("add", [v, v]), INT))
    return compact(ir)
""", "2 * x"),
    ("04-julia-ir.ipynb", "double_to_add", "edits ir.stmts in place", """
def double_to_add(ir):
    for i, stmt in enumerate(ir.stmts, start=1):
        if isinstance(stmt, Expr) and stmt.head == "mul" and 2 in stmt.args:
            v = stmt.args[0] if stmt.args[1] == 2 else stmt.args[1]
            ir.stmts[i - 1] = Expr("add", [v, v])
    return compact(ir)
""", "never calls IRCode.insert_node"),
    ("04-julia-ir.ipynb", "double_to_add", "returns a broken IR", """
def double_to_add(ir):
    for i, stmt in enumerate(list(ir.stmts), start=1):
        if isinstance(stmt, Expr) and stmt.head == "mul" and 2 in stmt.args:
            v = stmt.args[0] if stmt.args[1] == 2 else stmt.args[1]
            ir.insert_node(i, Expr("add", [v, v]), INT)
            ir.delete(SSAValue(i))
    return compact(ir)
""", "does not run"),
    ("05-control-as-data.ipynb", "control_successors", "drops the call's exception path", """
def control_successors(node):
    if isinstance(node, (Start, If, Call)):
        projs = sorted((u for u in node.outputs if isinstance(u, Proj) and u.is_control),
                       key=lambda p: p.index)
        return [p.id for p in (projs[:1] if isinstance(node, Call) else projs)]
    return sorted({u.id for u in node.outputs
                   if u.is_control and not isinstance(u, (Proj, Never))
                   and (u.inputs[0] is node or isinstance(u, (Region, Stop)))})
""", "'try'"),
    ("08-scheduling.ipynb", "lca", "walks only one side", """
def lca(a, b, idom, depth):
    while depth[a] > depth[b]:
        a = idom[a]
    return a
""", "LCA"),
    ("09-ranges.ipynb", "add_range", "ignores overflow", """
def add_range(a, b):
    if a is None or b is None:
        return None
    return (a[0] + b[0], a[1] + b[1])
""", "add_range((0, INT_MAX), (1, 1))"),
    ("09-ranges.ipynb", "add_range", "wraps the bounds", """
def add_range(a, b):
    def wrap(v):
        return (v - INT_MIN) % 2 ** 64 + INT_MIN
    if a is None or b is None:
        return None
    return (wrap(a[0] + b[0]), wrap(a[1] + b[1]))
""", "expected: (INT_MIN, INT_MAX)"),
    ("09-ranges.ipynb", "add_range", "clamps at the ends", """
def add_range(a, b):
    if a is None or b is None:
        return None
    return (max(INT_MIN, a[0] + b[0]), min(INT_MAX, a[1] + b[1]))
""", "range of the sum"),
    ("09-ranges.ipynb", "branch_ranges", "i < n gives hi = n.hi", """
def branch_ranges(x, op, y):
    negation = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}
    def narrowed(rel):
        lo, hi = x
        if rel in ("<", "<="):
            hi = min(hi, y[1])
        elif rel in (">", ">="):
            lo = max(lo, y[0])
        elif rel == "==":
            lo, hi = max(lo, y[0]), min(hi, y[1])
        elif y[0] == y[1]:
            if lo == y[0]:
                lo += 1
            elif hi == y[0]:
                hi -= 1
        return (lo, hi) if lo <= hi else None
    return narrowed(op), narrowed(negation[op])
""", "ranges on the two sides"),
    ("09-ranges.ipynb", "branch_ranges", "x >= y from y's largest value", """
def branch_ranges(x, op, y):
    negation = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}
    def narrowed(rel):
        lo, hi = x
        if rel == "<":
            hi = min(hi, y[1] - 1)
        elif rel == "<=":
            hi = min(hi, y[1])
        elif rel == ">":
            lo = max(lo, y[1] + 1)
        elif rel == ">=":
            lo = max(lo, y[1])
        elif rel == "==":
            lo, hi = max(lo, y[0]), min(hi, y[1])
        elif y[0] == y[1]:
            if lo == y[0]:
                lo += 1
            elif hi == y[0]:
                hi -= 1
        return (lo, hi) if lo <= hi else None
    return narrowed(op), narrowed(negation[op])
""", "expected: ((0, 19), (10, 100))"),
    ("09-ranges.ipynb", "branch_ranges", "!= cuts out the middle", """
def branch_ranges(x, op, y):
    negation = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}
    def narrowed(rel):
        lo, hi = x
        if rel == "<":
            hi = min(hi, y[1] - 1)
        elif rel == "<=":
            hi = min(hi, y[1])
        elif rel == ">":
            lo = max(lo, y[0] + 1)
        elif rel == ">=":
            lo = max(lo, y[0])
        elif rel == "==":
            lo, hi = max(lo, y[0]), min(hi, y[1])
        elif lo == y[0]:
            lo = y[1] + 1
        elif hi == y[1]:
            hi = y[0] - 1
        return (lo, hi) if lo <= hi else None
    return narrowed(op), narrowed(negation[op])
""", "'!='"),
    ("09-ranges.ipynb", "check_redundant", "i <= len(a) is enough", """
def check_redundant(index, length, facts):
    lo, hi = index
    if lo < 0:
        return False
    if hi < length[0]:
        return True
    return any(lo + k >= INT_MIN and hi + k <= INT_MAX and
               ((op in ("<", "<=") and k >= 0) or (op == "==" and k >= 1)) for k, op in facts)
""", "facts in scope: i <= len(a)"),
    ("09-ranges.ipynb", "check_redundant", "forgets the lower bound", """
def check_redundant(index, length, facts):
    lo, hi = index
    if hi < length[0]:
        return True
    return any(lo + k >= INT_MIN and hi + k <= INT_MAX and
               ((op == "<" and k >= 0) or (op in ("<=", "==") and k >= 1)) for k, op in facts)
""", "verdict on the check"),
    ("09-ranges.ipynb", "check_redundant", "i + k never wraps", """
def check_redundant(index, length, facts):
    lo, hi = index
    if lo < 0:
        return False
    if hi < length[0]:
        return True
    return any((op == "<" and k >= 0) or (op in ("<=", "==") and k >= 1) for k, op in facts)
""", "(1, '<')"),
    ("09-ranges.ipynb", "check_redundant", "compares with the largest length", """
def check_redundant(index, length, facts):
    lo, hi = index
    if lo < 0:
        return False
    if hi < length[1]:
        return True
    return any(lo + k >= INT_MIN and hi + k <= INT_MAX and
               ((op == "<" and k >= 0) or (op in ("<=", "==") and k >= 1)) for k, op in facts)
""", "verdict on the check"),
    ("09-ranges.ipynb", "loop_range", 'widens from the first growth', """
def loop_range(entry, back):
    def hull(*ranges):
        known = [r for r in ranges if r is not None]
        return (min(r[0] for r in known), max(r[1] for r in known)) if known else None
    def widen(old, new):
        if old is None:
            return new
        return (old[0] if new[0] >= old[0] else INT_MIN, old[1] if new[1] <= old[1] else INT_MAX)
    def narrow(old, new):
        if new is None:
            return old
        lo, hi = max(old[0], new[0]), min(old[1], new[1])
        return old if lo > hi else (lo, hi)
    trace, current, growths = [], None, 0
    while True:
        new = hull(current, entry, back(current))
        if new == current:
            break
        growths += 1
        if growths > 0:
            new = widen(current, new)
        current = new
        trace.append(current)
    for _ in range(8):
        new = narrow(current, hull(entry, back(current)))
        if new == current:
            break
        current = new
        trace.append(current)
    return trace
""", 'ranges of the loop phi'),
    ("09-ranges.ipynb", "loop_range", 'widens after the 4th growth', """
def loop_range(entry, back):
    def hull(*ranges):
        known = [r for r in ranges if r is not None]
        return (min(r[0] for r in known), max(r[1] for r in known)) if known else None
    def widen(old, new):
        if old is None:
            return new
        return (old[0] if new[0] >= old[0] else INT_MIN, old[1] if new[1] <= old[1] else INT_MAX)
    def narrow(old, new):
        if new is None:
            return old
        lo, hi = max(old[0], new[0]), min(old[1], new[1])
        return old if lo > hi else (lo, hi)
    trace, current, growths = [], None, 0
    while True:
        new = hull(current, entry, back(current))
        if new == current:
            break
        growths += 1
        if growths > 4:
            new = widen(current, new)
        current = new
        trace.append(current)
    for _ in range(8):
        new = narrow(current, hull(entry, back(current)))
        if new == current:
            break
        current = new
        trace.append(current)
    return trace
""", 'ranges of the loop phi'),
    ("09-ranges.ipynb", "loop_range", 'never narrows', """
def loop_range(entry, back):
    def hull(*ranges):
        known = [r for r in ranges if r is not None]
        return (min(r[0] for r in known), max(r[1] for r in known)) if known else None
    def widen(old, new):
        if old is None:
            return new
        return (old[0] if new[0] >= old[0] else INT_MIN, old[1] if new[1] <= old[1] else INT_MAX)
    def narrow(old, new):
        if new is None:
            return old
        lo, hi = max(old[0], new[0]), min(old[1], new[1])
        return old if lo > hi else (lo, hi)
    trace, current, growths = [], None, 0
    while True:
        new = hull(current, entry, back(current))
        if new == current:
            break
        growths += 1
        if growths > 3:
            new = widen(current, new)
        current = new
        trace.append(current)
    for _ in range(0):
        new = narrow(current, hull(entry, back(current)))
        if new == current:
            break
        current = new
        trace.append(current)
    return trace
""", 'expected 5 items, got 4'),
    ("09-ranges.ipynb", "loop_range", 'widens to the full range', """
def loop_range(entry, back):
    def hull(*ranges):
        known = [r for r in ranges if r is not None]
        return (min(r[0] for r in known), max(r[1] for r in known)) if known else None
    def widen(old, new):
        if old is None:
            return new
        return (old[0] if new[0] >= old[0] else INT_MIN, old[1] if new[1] <= old[1] else INT_MAX)
    def narrow(old, new):
        if new is None:
            return old
        lo, hi = max(old[0], new[0]), min(old[1], new[1])
        return old if lo > hi else (lo, hi)
    trace, current, growths = [], None, 0
    while True:
        new = hull(current, entry, back(current))
        if new == current:
            break
        growths += 1
        if growths > 3:
            new = (INT_MIN, INT_MAX)
        current = new
        trace.append(current)
    for _ in range(8):
        new = narrow(current, hull(entry, back(current)))
        if new == current:
            break
        current = new
        trace.append(current)
    return trace
""", 'ranges of the loop phi'),
    ("11-codegen.ipynb", "liveness", "a def does not kill", """
def liveness(blocks, succs):
    live_in = {b: set() for b in blocks}
    live_out = {b: set() for b in blocks}
    changed = True
    while changed:
        changed = False
        for b in reversed(list(blocks)):
            out = set().union(*(live_in[s] for s in succs[b]))
            live = out | {u for i in blocks[b] for u in i.uses}
            if (out, live) != (live_out[b], live_in[b]):
                live_out[b], live_in[b], changed = out, live, True
    return live_in, live_out
""", "live sets"),
    ("11-codegen.ipynb", "liveness", "one backward pass", """
def liveness(blocks, succs):
    live_in = {b: set() for b in blocks}
    live_out = {b: set() for b in blocks}
    for b in reversed(list(blocks)):
        live_out[b] = set().union(*(live_in[s] for s in succs[b]))
        live = set(live_out[b])
        for i in reversed(blocks[b]):
            live = (live - set(i.defs)) | set(i.uses)
        live_in[b] = live
    return live_in, live_out
""", "live sets"),
    ("11-codegen.ipynb", "liveness", "uses before kills", """
def liveness(blocks, succs):
    live_in = {b: set() for b in blocks}
    live_out = {b: set() for b in blocks}
    changed = True
    while changed:
        changed = False
        for b in reversed(list(blocks)):
            out = set().union(*(live_in[s] for s in succs[b]))
            live = set(out)
            for i in reversed(blocks[b]):
                live = (live | set(i.uses)) - set(i.defs)
            if (out, live) != (live_out[b], live_in[b]):
                live_out[b], live_in[b], changed = out, live, True
    return live_in, live_out
""", "live sets"),
    ("11-codegen.ipynb", "interference", "a copy's two sides interfere", """
def interference(blocks, live_out):
    edges = set()
    for b, instrs in blocks.items():
        live = set(live_out[b])
        for i in reversed(instrs):
            for d in i.defs:
                for r in live:
                    if r != d and (is_virtual(d) or is_virtual(r)):
                        edges.add(frozenset({d, r}))
            live = (live - set(i.defs)) | set(i.uses)
    return edges
""", "interference edges"),
    ("11-codegen.ipynb", "interference", "physical registers interfere", """
def interference(blocks, live_out):
    edges = set()
    for b, instrs in blocks.items():
        live = set(live_out[b])
        for i in reversed(instrs):
            source = i.copy[1] if i.copy else None
            for d in i.defs:
                for r in live:
                    if r != d and r != source:
                        edges.add(frozenset({d, r}))
            live = (live - set(i.defs)) | set(i.uses)
    return edges
""", "interference edges"),
    ("11-codegen.ipynb", "interference", "live before, not after", """
def interference(blocks, live_out):
    edges = set()
    for b, instrs in blocks.items():
        live = set(live_out[b])
        for i in reversed(instrs):
            source = i.copy[1] if i.copy else None
            live = (live - set(i.defs)) | set(i.uses)
            for d in i.defs:
                for r in live:
                    if r != d and r != source and (is_virtual(d) or is_virtual(r)):
                        edges.add(frozenset({d, r}))
    return edges
""", "interference edges"),
    ("11-codegen.ipynb", "select", "ignores copy partners", """
def select(stack, adj, registers, partners):
    colour, spilled = {}, []
    for n in reversed(stack):
        taken = {colour.get(t) if is_virtual(t) else t for t in adj[n]}
        free = [r for r in registers if r not in taken]
        if free:
            colour[n] = free[0]
        else:
            spilled.append(n)
    return colour, spilled
""", "colouring and spills"),
    ("11-codegen.ipynb", "select", "pops from the bottom", """
def select_from(stack, adj, registers, partners):
    colour, spilled = {}, []
    def of(n):
        return colour.get(n) if is_virtual(n) else n
    for n in reversed(stack):
        taken = {of(t) for t in adj[n]}
        preferred = [of(p) for p in partners.get(n, []) if of(p) not in taken | {None}]
        free = preferred + [r for r in registers if r not in taken]
        if free:
            colour[n] = free[0]
        else:
            spilled.append(n)
    return colour, spilled
def select(stack, adj, registers, partners):
    return select_from(list(reversed(stack)), adj, registers, partners)
""", "colouring and spills"),
    ("11-codegen.ipynb", "select", "ignores physical neighbours", """
def select_from(stack, adj, registers, partners):
    colour, spilled = {}, []
    def of(n):
        return colour.get(n) if is_virtual(n) else n
    for n in reversed(stack):
        taken = {of(t) for t in adj[n]}
        preferred = [of(p) for p in partners.get(n, []) if of(p) not in taken | {None}]
        free = preferred + [r for r in registers if r not in taken]
        if free:
            colour[n] = free[0]
        else:
            spilled.append(n)
    return colour, spilled
def select(stack, adj, registers, partners):
    virtual = {n: {t for t in ts if is_virtual(t)} for n, ts in adj.items()}
    return select_from(stack, virtual, registers, partners)
""", "colouring and spills"),
    ("10-escape.ipynb", "join", "the more severe state wins", """
def join(a, b):
    order = ["◌", "✓", "↑", "*", "X"]
    return dict(a) if order.index(glyph(a)) >= order.index(glyph(b)) else dict(b)
""", "joined state"),
    ("10-escape.ipynb", "join", "sets joined, flags taken from a", """
def join(a, b):
    return {"analyzed": a["analyzed"], "returns": a["returns"] | b["returns"],
            "thrown": a["thrown"] | b["thrown"], "args": a["args"] | b["args"],
            "everywhere": a["everywhere"]}
""", "joined state"),
    ("10-escape.ipynb", "store", "the store changes nothing", """
def store(obj, value, obj_args):
    return dict(value)
""", "state of the stored value"),
    ("10-escape.ipynb", "store", "forgets the object's arguments", """
def store(obj, value, obj_args):
    if not value["analyzed"]:
        return value
    return {k: (value[k] | obj[k]) if isinstance(value[k], set) else value[k] or obj[k]
            for k in value}
""", "state of the stored value"),
    ("10-escape.ipynb", "store", "an int escapes too", """
def store(obj, value, obj_args):
    out = {k: (value[k] | obj[k]) if isinstance(value[k], set) else value[k] or obj[k]
           for k in value}
    out["args"] = out["args"] | set(obj_args)
    return out
""", "state of the stored value"),
    ("10-escape.ipynb", "glyphs", "a phi's operands kept apart", """
def glyphs(fn):
    parent = {}     # union-find over value names and content nodes
    contents = {}   # class root -> {key: the node of that key's content class}
    def find(x):
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x
    def union(a, b):
        pending = [(a, b)]
        while pending:
            x, y = pending.pop()
            x, y = find(x), find(y)
            if x == y:
                continue
            parent[y] = x
            mine = contents.setdefault(x, {})
            for key, node in contents.pop(y, {}).items():
                if key in mine:
                    pending.append((mine[key], node))
                else:
                    mine[key] = node
    def content(x, key):
        r = find(x)
        slots = contents.setdefault(r, {})
        if key not in slots:
            slots[key] = ("content of", r, key)  # a node of its own: r is a root once
        return slots[key]
    returned = set()
    for s in fn.stmts:
        if s[0] == "new":
            find(s[1])
            for field, v in s[2].items():
                union(content(s[1], field), v)
        elif s[0] == "phi":
            pass  # each operand keeps a class of its own
        elif s[0] == "load":
            union(content(s[2], s[3]), s[1])
        elif s[0] == "store":
            union(content(s[1], s[2]), s[3])
        elif s[0] == "return":
            returned.add(s[1])
    kind = {}   # class root -> set of "return" / "arg"
    for v in returned:
        kind.setdefault(find(v), set()).add("return")
    for a in fn.args:
        for node in contents.get(find(a), {}).values():
            kind.setdefault(find(node), set()).add("arg")
    work = list(kind)
    while work:
        r = find(work.pop())
        for node in contents.get(r, {}).values():
            c = find(node)
            before = set(kind.get(c, set()))
            kind.setdefault(c, set()).update(kind.get(r, set()))
            if kind[c] != before:
                work.append(c)
    out = {}
    for v in fn.allocations:
        k = kind.get(find(v), set())
        out[v] = "*" if "arg" in k else "↑" if "return" in k else "✓"
    return out
""", "allocation glyphs"),
    ("10-escape.ipynb", "glyphs", "no worklist: contents keep their own state", """
def glyphs(fn):
    parent = {}
    def find(x):
        parent.setdefault(x, x)
        while parent[x] != x:
            x = parent[x]
        return x
    def union(a, b):
        parent[find(a)] = find(b)
    slot = {}
    for s in fn.stmts:
        if s[0] == "phi":
            for v in s[2]:
                union(s[1], v)
    for s in fn.stmts:
        if s[0] == "new":
            for f, v in s[2].items():
                union(slot.setdefault((find(s[1]), f), v), v)
        elif s[0] == "load":
            union(slot.setdefault((find(s[2]), s[3]), s[1]), s[1])
        elif s[0] == "store":
            union(slot.setdefault((find(s[1]), s[2]), s[3]), s[3])
    returned = {find(s[1]) for s in fn.stmts if s[0] == "return"}
    through_arg = {find(v) for (c, f), v in slot.items() if c in {find(a) for a in fn.args}}
    return {v: "*" if find(v) in through_arg else "↑" if find(v) in returned else "✓"
            for v in fn.allocations}
""", "allocation glyphs"),
]


@pytest.mark.parametrize("name,answer,label,code,mention", WRONG,
                         ids=[f"{w[0][:2]}-{w[1]}-{w[2]}" for w in WRONG])
def test_a_common_wrong_answer_fails_the_visible_tests(name, answer, label, code, mention):
    graded = _graded_of(name, answer)
    message = outcome(name, graded, {answer: code}, released=True)
    assert message is not None, f"{label} passes the visible tests"
    assert mention in message, message
    assert outcome(name, graded, {answer: code}) is not None


@pytest.mark.parametrize("name,answer,label,code,mention", WRONG,
                         ids=[f"{w[0][:2]}-{w[1]}-{w[2]}" for w in WRONG])
def test_one_wrong_task_costs_only_that_task(name, answer, label, code, mention):
    """As autograding runs it: every cell in order; the other graded cells still pass."""
    for other_answer, graded in tasks(name):
        if other_answer != answer:
            assert outcome(name, graded, {answer: code}, earlier=True) is None, graded


# ---------------------------------------------------------------- in a real kernel


@pytest.fixture
def this_python_kernel(tmp_path, monkeypatch):
    """A ``python3`` kernelspec running this interpreter, first on ``JUPYTER_PATH``."""
    import json

    pytest.importorskip("ipykernel", reason="ipykernel is a dev dependency: make venv")
    spec = tmp_path / "jupyter-path" / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (ssa_course tests)", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter-path"))
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "jupyter-data"))


def test_in_a_kernel_the_released_notebook_refuses_a_fake_by_name(tmp_path, this_python_kernel):
    from nbclient import NotebookClient

    nb = nbformat.read(ROOT / "exercises" / "01-quads.ipynb", as_version=4)
    by_id = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in nb.cells}
    by_id["leaders"].source = ("from ssa_course.quads.cfg import find_leaders\n"
                               "def leaders(body):\n"
                               "    return find_leaders(Function('f', [], None, body))\n")
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    errors = [o for o in by_id["test_leaders"].outputs if o.get("output_type") == "error"]
    assert errors and "ssa_course's own find_leaders" in errors[0]["evalue"]


# ---------------------------------------------------------------- honest answers that print

# A learner debugging with the course's printers is not faking: these answers print what
# they get and then answer honestly; the watch lets them pass.
PRINTING = [
    ("01-quads.ipynb", "leaders", """
_solution = leaders
def leaders(body):
    print([format_instr(i) for i in body if hasattr(i, "op")])
    return _solution(body)
"""),
    ("02-peepholes.ipynb", "count_redundant", """
_solution = count_redundant
def count_redundant(block):
    print(describe_block(block))
    return _solution(block)
"""),
    ("04-julia-ir.ipynb", "uses_of", """
_solution = uses_of
def uses_of(ir):
    print(format_ir(ir))
    return _solution(ir)
"""),
    ("05-control-as-data.ipynb", "control_successors", """
_solution = control_successors
def control_successors(node):
    print(node, node.inputs, node.outputs, node.type)
    return _solution(node)
"""),
    ("07-optimistic.ipynb", "phi_type", """
_solution = phi_type
def phi_type(phi, types):
    print(phi, {k: str(t) for k, t in types.items()})
    return _solution(phi, types)
"""),
    ("09-ranges.ipynb", "add_range", """
_solution = add_range
def add_range(a, b):
    print(shown(a), written((a, b)), NumberLine(title="debug").add("a", a).add("b", b))
    return _solution(a, b)
"""),
    ("11-codegen.ipynb", "liveness", """
_solution = liveness
def liveness(blocks, succs):
    print(blocks, succs)
    for label, instrs in blocks.items():
        print(label, [(i.text, i.defs, i.uses, i._asdict()) for i in instrs])
    return _solution(blocks, succs)
"""),
    ("10-escape.ipynb", "glyphs", """
_solution = glyphs
def glyphs(fn):
    show(fn)
    print(listing(fn, {v: "?" for v in fn.allocations}))
    return _solution(fn)
"""),
]


@pytest.mark.parametrize("name,answer,code", PRINTING, ids=[f"{p[0][:2]}-{p[1]}" for p in PRINTING])
def test_printing_with_the_course_s_printers_is_allowed(name, answer, code):
    solution = dict((gid, src) for kind, gid, src in _cells("solutions", name))[answer]
    assert outcome(name, _graded_of(name, answer), {answer: solution + "\n" + code}) is None


# Honest answers written differently from the solution, using what the task allows.
HONEST = [
    ("06-types-and-peepholes.ipynb", "idealize_add", """
from ssa_course.son.data import Constant
from ssa_course.son.graph import start_of
def idealize_add(node):
    left, right = node.inputs[1], node.inputs[2]
    if right.type == int_const(0):
        return left
    if left.type == int_const(0):
        return right
    if isinstance(left, Add) and left.inputs[2].type.is_constant() and right.type.is_constant():
        total = wrap(left.inputs[2].type.lo + right.type.lo)
        c = Constant(node.graph, start_of(node), int_const(total))
        return type(node)(node.graph, None, left.inputs[1], c)
    if left.type.is_constant() and not right.type.is_constant():
        return Add(node.graph, None, right, left)
    return None
"""),
    ("08-scheduling.ipynb", "loop_depths", """
from ssa_course.ssa.dom import dominates, immediate_dominators, predecessors
def loop_depths(succs, entry):
    idom = immediate_dominators(succs, entry)
    preds = predecessors(succs)
    depth = {b: 0 for b in succs}
    for h in succs:
        tails = [t for t in preds.get(h, []) if t in idom and h in idom
                 and dominates(idom, h, t)]
        body, work = {h}, list(tails)
        while tails and work:
            b = work.pop()
            if b not in body:
                body.add(b)
                work.extend(preds.get(b, []))
        for b in body if tails else ():
            depth[b] += 1
    return depth
"""),
    ("09-ranges.ipynb", "branch_ranges", """
def branch_ranges(x, op, y):  # each relation as the interval it allows, then intersect
    allowed = {
        "<": (INT_MIN, y[1] - 1), "<=": (INT_MIN, y[1]), ">": (y[0] + 1, INT_MAX),
        ">=": (y[0], INT_MAX), "==": (y[0], y[1]), "!=": (INT_MIN, INT_MAX)}
    flip = dict(zip("< <= > >= == !=".split(), ">= > <= < != ==".split()))
    out = []
    for rel in (op, flip[op]):
        lo, hi = max(x[0], allowed[rel][0]), min(x[1], allowed[rel][1])
        if rel == "!=" and y[0] == y[1]:
            lo, hi = (lo + 1, hi) if lo == y[0] else (lo, hi - 1) if hi == y[0] else (lo, hi)
        out.append([lo, hi] if lo <= hi else None)  # lists are read as pairs too
    return out
"""),
    ("11-codegen.ipynb", "liveness", """
def liveness(blocks, succs):  # gen/kill per block, then a worklist of predecessors
    gen, kill, preds = {}, {}, {b: [] for b in blocks}
    for b, instrs in blocks.items():
        gen[b], kill[b] = set(), set()
        for i in instrs:
            gen[b] |= {u for u in i.uses if u not in kill[b]}
            kill[b] |= set(i.defs)
        for s in succs[b]:
            preds[s].append(b)
    live_in = {b: set(gen[b]) for b in blocks}
    live_out = {b: set() for b in blocks}
    work = list(blocks)
    while work:
        b = work.pop()
        live_out[b] = set().union(*(live_in[s] for s in succs[b]))
        new = gen[b] | (live_out[b] - kill[b])
        if new != live_in[b]:
            live_in[b] = new
            work.extend(preds[b])
    return live_in, live_out
"""),
    ("11-codegen.ipynb", "interference", """
def interference(blocks, live_out):  # live after each instruction first, then the edges
    edges = []
    for b, instrs in blocks.items():
        after, live = [], set(live_out[b])
        for i in reversed(instrs):
            after.append(set(live))
            live = (live - set(i.defs)) | set(i.uses)
        for i, live in zip(instrs, reversed(after)):
            keep = live - {i.copy[1]} if i.copy is not None else live
            edges += [tuple(sorted((d, r))) for d in i.defs for r in keep
                      if d != r and not (d[0] != "%" and r[0] != "%")]
    return set(edges)  # pairs as tuples: the check reads them as frozensets
"""),
    ("11-codegen.ipynb", "select", """
def select(stack, adj, registers, partners):
    colouring, spilled = {}, []
    for n in stack[::-1]:
        def reg(m):
            return m if not m.startswith("%") else colouring.get(m)
        taken = {reg(m) for m in adj[n] if reg(m) is not None}
        choices = [reg(p) for p in partners.get(n, ()) if reg(p) is not None]
        choices += list(registers)
        free = [r for r in choices if r not in taken and r in registers]
        if free:
            colouring[n] = free[0]
        else:
            spilled.append(n)
    return colouring, spilled
"""),
    ("07-optimistic.ipynb", "phi_type", """
def phi_type(phi, types):
    region = phi.inputs[0]
    t = TOP
    for i in range(1, len(phi.inputs)):
        path = region.in_(i)
        if path is None or types.get(path.id, TOP) in (TOP, XCTRL) or phi.inputs[i] is None:
            continue
        t = t.meet(types.get(phi.inputs[i].id, TOP))
    return t
"""),
    ("10-escape.ipynb", "store", """
def store(obj, value, obj_args):  # through the learner's own join
    if not value["analyzed"]:
        return value
    through = dict(obj, analyzed=True, args=set(obj["args"]) | set(obj_args))
    return join(value, through)
"""),
]


@pytest.mark.parametrize("name,answer,code", HONEST, ids=[f"{h[0][:2]}-{h[1]}" for h in HONEST])
def test_an_honest_answer_in_another_style_passes(name, answer, code):
    assert outcome(name, _graded_of(name, answer), {answer: code}) is None
