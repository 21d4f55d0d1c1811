"""Register allocation on machine IR: liveness, the interference graph, Chaitin-Briggs.

Hand-written functions check the lesson's examples (a loop with a swap through copies,
calls with precoloured registers, idiv, pressure that forces spills, a handler); a
hypothesis generator of random MIR functions checks properties with checkers that share
no code with the allocator: a proper colouring on independently recomputed liveness, no
virtual register left, every slot stored before it is loaded on every path, and the same
result from the simulator before and after allocation.
"""

from __future__ import annotations

import copy
import shutil
import subprocess

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mir_build import (
    RAX,
    RDI,
    RDX,
    RSI,
    Builder,
    arith,
    call,
    cmp,
    cqo,
    idiv,
    imm,
    jcc,
    jmp,
    mov,
    ret,
)
from mir_simulate import SimulationError, simulate

from ssa_course.codegen.interference import build_interference, interference_dot
from ssa_course.codegen.liveness import Liveness, liveness_text, loop_depths
from ssa_course.codegen.mir import (
    Imm,
    MFunction,
    MInstr,
    PReg,
    Slot,
    VReg,
)
from ssa_course.codegen.regalloc import (
    AllocationError,
    allocate,
    assign,
    colour,
    throw_targets,
)
from ssa_course.codegen.spill import vregs_of
from ssa_course.codegen.x86_64.registers import ALLOCATABLE, CALLEE_SAVED, CALLER_SAVED
from ssa_course.compilation import compile_source

# ---------------------------------------------------------------- independent checkers


def naive_live_out(fn: MFunction) -> dict[str, set]:
    """Round-robin liveness to a fixed point (no worklist, no gen/kill): the oracle."""
    live_in = {b.label: set() for b in fn.blocks}
    live_out = {b.label: set() for b in fn.blocks}
    changed = True
    while changed:
        changed = False
        for b in fn.blocks:
            out = set().union(*(live_in[s] for s in b.succs)) if b.succs else set()
            live = set(out)
            for instr in reversed(b.instrs):
                live = (live - set(instr.defs)) | set(instr.uses)
            if out != live_out[b.label] or live != live_in[b.label]:
                live_out[b.label], live_in[b.label] = out, live
                changed = True
    return live_out


def reg_name(r, colouring) -> str:
    return r.name if isinstance(r, PReg) else colouring[r]


def check_proper(fn: MFunction, colouring, registers) -> None:
    """Before renaming: whenever an instruction writes a register, no other value live
    after it (but a copy's source) has the same register."""
    live_out = naive_live_out(fn)
    for b in fn.blocks:
        live = set(live_out[b.label])
        for instr in reversed(b.instrs):
            source = instr.operands[1] if instr.is_copy() else None
            for d in instr.defs:
                if isinstance(d, PReg) and d.name not in registers:
                    continue
                for other in live:
                    if other is d or other is source or (
                            isinstance(other, PReg) and other.name not in registers):
                        continue
                    if isinstance(d, PReg) and isinstance(other, PReg):
                        continue
                    assert reg_name(d, colouring) != reg_name(other, colouring), (
                        f"{d} and {other} share {reg_name(d, colouring)} at "
                        f"{instr.op} in {b.label}")
            live = (live - set(instr.defs)) | set(instr.uses)


def _slot_writes(block, written: set[int], check: bool) -> set[int]:
    written = set(written)
    for instr in block.instrs:
        if check and instr.op != "lea":  # lea takes a slot's address (a frame array)
            for o in instr.operands[1:]:
                if isinstance(o, Slot):
                    assert o.index in written, f"{o} read before written in {block.label}"
        if instr.op == "mov" and isinstance(instr.operands[0], Slot):
            written.add(instr.operands[0].index)
    return written


def check_slots_stored_first(fn: MFunction) -> None:
    """On every path from the entry, each slot is written before it is read (a forward
    must-analysis: the slots written on entry to a block are those written on all paths)."""
    preds: dict[str, list[str]] = {b.label: [] for b in fn.blocks}
    for b in fn.blocks:
        for s in b.succs:
            preds[s].append(b.label)
    blocks = fn.block_map()
    reachable, work = {fn.blocks[0].label}, [fn.blocks[0].label]
    while work:
        for s in blocks[work.pop()].succs:
            if s not in reachable:
                reachable.add(s)
                work.append(s)
    written_in = {b.label: set(range(fn.slots)) for b in fn.blocks}
    written_in[fn.blocks[0].label] = set()
    changed = True
    while changed:
        changed = False
        for b in fn.blocks[1:]:
            ins = [_slot_writes(blocks[p], written_in[p], False) for p in preds[b.label]
                   if p in reachable]
            if not ins:
                continue  # unreachable: nothing runs there
            new = set.intersection(*ins)
            if new != written_in[b.label]:
                written_in[b.label], changed = new, True
    for b in fn.blocks:
        if b.label in reachable:
            _slot_writes(b, written_in[b.label], True)


def check_allocated(fn: MFunction) -> None:
    for b in fn.blocks:
        for instr in b.instrs:
            assert not vregs_of(instr), f"{instr.op} still names a virtual register"
    touched = {r.name for b in fn.blocks for i in b.instrs for r in (*i.defs, *i.uses)}
    if throw_targets(fn):  # a throw skips the callees' epilogues
        assert fn.used_callee_saved == list(CALLEE_SAVED)
    else:
        assert set(fn.used_callee_saved) == touched & set(CALLEE_SAVED)


def allocate_and_check(fn: MFunction, registers=ALLOCATABLE, args=(3, 4), fuel=200):
    """The full property check: colouring proper, no vreg left, slots stored first, same
    simulated result before and after."""
    original = copy.deepcopy(fn)
    allocation = colour(fn, registers)
    assert set(allocation.colouring.values()) <= set(registers)
    check_proper(fn, allocation.colouring, registers)
    assign(fn, allocation)
    check_allocated(fn)
    check_slots_stored_first(fn)
    before = simulate(original, args, fuel)
    after = simulate(fn, args, fuel, check_abi=True)
    assert (before.status, before.output, before.value) == (after.status, after.output,
                                                            after.value)
    return allocation


# ---------------------------------------------------------------- hand-written functions


def fib() -> MFunction:
    """a, b = b, a + b through a temporary: the swap problem in registers."""
    b = Builder("fib")
    n, a, c, t, i = b.v("n"), b.v("a"), b.v("b"), b.v("t"), b.v("i")
    b.block("entry", [mov(n, RDI), imm(a, 0), imm(c, 1), imm(i, 0), jmp("head")], ["head"])
    b.block("head", [cmp(i, n), jcc("ge", "done"), jmp("body")], ["done", "body"])
    b.block("body", [mov(t, a), arith("add", t, c), mov(a, c), mov(c, t),
                     arith("add", i, Imm(1)), jmp("head")], ["head"])
    b.block("done", [mov(RAX, a), ret()], [])
    return b.fn


def test_liveness_of_a_loop():
    fn = fib()
    live = Liveness(fn)
    names = {b: sorted(str(r) for r in live.live_in[b]) for b in live.live_in}
    assert names["head"] == ["%1.n", "%2.a", "%3.b", "%5.i"]
    assert names["done"] == ["%2.a"]
    assert names["entry"] == ["rdi"]
    after = live.live_after("body")
    assert {str(r) for r in after[0]} == {"%1.n", "%3.b", "%4.t", "%5.i"}  # a is dead here
    assert loop_depths(fn) == {"entry": 0, "head": 1, "body": 1, "done": 0}
    text = liveness_text(fn)
    assert "head:  depth 1  in {%1.n, %2.a, %3.b, %5.i}" in text
    assert text == liveness_text(fib())  # stable


def test_interference_edges_and_moves():
    fn = fib()
    g = build_interference(fn)
    # t = a is a copy: t and a do not interfere through it, but a is redefined while t lives
    assert g.interferes(fn.blocks[2].instrs[0].defs[0], fn.blocks[0].instrs[1].defs[0])
    n = fn.blocks[0].instrs[0].defs[0]
    assert not g.interferes(n, PReg("rdi"))  # the parameter copy may coalesce
    assert [(str(m.dst), str(m.src), m.weight) for m in g.moves] == [
        ("%1.n", "rdi", 1), ("%4.t", "%2.a", 10), ("%2.a", "%3.b", 10),
        ("%3.b", "%4.t", 10), ("rax", "%2.a", 1)]
    assert g.weights[n] == 1 + 10  # defined once outside the loop, used once inside
    assert g.text() == build_interference(fib()).text()
    assert "rax <- %2.a  (weight 1, done)" in g.text()


def test_fib_allocates_without_spills_and_removes_copies():
    fn = fib()
    allocation = allocate_and_check(fn, args=(10,))
    assert allocation.spilled == {} and allocation.rounds == 1
    assert allocation.copies_removed >= 2  # n <- rdi and rax <- a at least
    assert simulate(fn, [10]).value == 55
    assert fn.used_callee_saved == []  # no call: caller-saved registers suffice


def test_two_registers_force_spills_and_still_compute_fib():
    fn = fib()
    allocation = allocate_and_check(fn, registers=("rax", "rcx"), args=(12,))
    assert allocation.spilled and allocation.rounds >= 2
    assert simulate(fn, [12]).value == 144
    assert len(set(allocation.slots.values())) == fn.slots


def test_value_live_across_a_call_gets_a_callee_saved_register():
    b = Builder("g")
    x, y, r = b.v("x"), b.v("y"), b.v("r")
    b.block("entry", [mov(x, RDI), imm(y, 5), mov(RDI, y), call("tiny_h", 1), mov(r, RAX),
                      arith("add", r, x), mov(RAX, r), ret()])
    allocation = allocate_and_check(b.fn, args=(7,))
    assert allocation.colouring[x] in CALLEE_SAVED
    assert b.fn.used_callee_saved == [allocation.colouring[x]]
    # y -> rdi and r <- rax coalesce with their precoloured partners
    assert allocation.colouring[y] == "rdi" and allocation.colouring[r] == "rax"


def test_values_across_calls_without_callee_saved_registers_are_spilled():
    b = Builder("g")
    x, r = b.v("x"), b.v("r")
    b.block("entry", [mov(x, RDI), call("tiny_h", 0), mov(r, RAX), arith("add", r, x),
                      mov(RAX, r), ret()])
    allocation = allocate_and_check(b.fn, registers=CALLER_SAVED, args=(7,))
    assert x in allocation.spilled
    assert b.fn.used_callee_saved == []


def test_idiv_keeps_the_divisor_out_of_rax_and_rdx():
    b = Builder("div")
    a, d, q, m = b.v("a"), b.v("d"), b.v("q"), b.v("m")
    b.block("entry", [mov(a, RDI), mov(d, RSI), mov(RAX, a), cqo(), idiv(d), mov(q, RAX),
                      mov(m, RDX), arith("imul", q, Imm(100)), arith("add", q, m),
                      mov(RAX, q), ret()])
    allocation = allocate_and_check(b.fn, args=(-17, 5))
    assert allocation.colouring[d] not in ("rax", "rdx")
    assert simulate(b.fn, [-17, 5]).value == -3 * 100 - 2


def pressure(n: int) -> tuple[MFunction, list[VReg], list[VReg]]:
    """``n`` values made before a loop and summed after it, two more used in the loop: the
    cost rule must spill the ones outside the loop, not the loop's."""
    b = Builder("pressure")
    outer = [b.v(f"o{k}") for k in range(n)]
    i, s = b.v("i"), b.v("s")
    b.block("entry", [*(imm(v, k + 1) for k, v in enumerate(outer)), imm(i, 0), imm(s, 0),
                      jmp("loop")], ["loop"])
    b.block("loop", [arith("add", s, i), arith("add", i, Imm(1)), cmp(i, Imm(10)),
                     jcc("l", "loop"), jmp("exit")], ["loop", "exit"])
    b.block("exit", [*(arith("add", s, v) for v in outer), mov(RAX, s), ret()])
    return b.fn, outer, [i, s]


def test_more_live_values_than_registers_spill_by_cost():
    fn, outer, inner = pressure(20)
    allocation = allocate_and_check(fn)
    assert len(allocation.spilled) >= 20 + 2 - len(ALLOCATABLE)
    assert all(v in outer for v in allocation.spilled)  # the loop's values stay in registers
    assert simulate(fn, []).value == 45 + 210
    first = allocation.history[0]
    assert first.potential_spills
    for v, choice in first.potential_spills.items():
        assert choice.weight == first.graph.weights[v]  # nothing coalesced with the o's
        assert choice.cost == pytest.approx(choice.weight / choice.degree)  # the visible rule
        assert choice.degree <= len(first.graph.adj[v])
    assert allocation.rounds >= 2


def handler_function() -> tuple[MFunction, VReg]:
    b = Builder("h")
    x, y, e = b.v("x"), b.v("y"), b.v("e")
    b.block("entry", [mov(x, RDI), imm(y, 1), cmp(x, Imm(0)), jcc("l", "throw"),
                      jmp("ok")], ["throw", "ok"])
    b.block("ok", [arith("add", y, x), mov(RAX, y), ret()])
    b.block("throw", [mov(RDI, y), call("rt_throw", 1)], ["catch"])
    b.block("catch", [mov(e, RAX), arith("add", e, x), mov(RAX, e), ret()], handler=True)
    return b.fn, x


def test_values_live_into_a_handler_are_mirrored_in_slots():
    fn, x = handler_function()
    allocation = allocate_and_check(fn, args=(-5,))
    assert x in allocation.saved and x not in allocation.spilled
    assert simulate(fn, [-5]).value == 1 - 5
    assert simulate(fn, [5]).value == 6
    live = Liveness(fn)
    assert live.live_in["catch"] == {RAX}  # only the thrown value arrives in a register


def test_without_the_handler_rule_the_simulator_sees_the_clobber():
    """The checker is not vacuous: keep x in a register across the throw and it breaks."""
    fn, x = handler_function()
    fn.blocks[3].handler = False  # the allocator no longer knows a throw arrives here
    original = copy.deepcopy(fn)
    allocate(fn)
    fn.blocks[3].handler = True
    original.blocks[3].handler = True
    assert simulate(original, [-5]).value != simulate(fn, [-5]).value


def test_networkx_agrees_the_colouring_is_proper():
    fn, _, _ = pressure(18)
    allocation = colour(fn)
    graph = allocation.history[-1].graph
    g = nx.Graph()
    g.add_nodes_from(graph.adj)
    g.add_edges_from(graph.edges())
    for a, b in g.edges:
        assert reg_name(a, allocation.colouring) != reg_name(b, allocation.colouring)
    clique = max(len(c) for c in nx.find_cliques(g))
    assert clique <= len(ALLOCATABLE)


def test_coalescing_respects_briggs_and_george():
    fn = fib()
    allocation = colour(fn)
    for keep, gone in allocation.coalesced:
        assert not allocation.history[-1].graph.interferes(keep, gone)
    names = {(str(a), str(b)) for a, b in allocation.coalesced}
    assert ("rdi", "%1.n") in names  # the parameter stays in its argument register


def test_drawing():
    fn, _, _ = pressure(16)
    allocation = colour(fn)
    first = allocation.history[0]
    dot = interference_dot(first.graph, first.colouring, first.spilled)
    assert dot.startswith('graph "interference_pressure"')
    assert "spill" in dot and "style=dashed" in dot
    assert dot == interference_dot(first.graph, first.colouring, first.spilled)
    if shutil.which("dot"):
        out = subprocess.run(["dot", "-Tsvg"], input=dot, capture_output=True, text=True,
                             timeout=60, check=False)
        assert out.returncode == 0 and "<svg" in out.stdout, out.stderr


def test_a_value_defined_on_some_paths_only_is_zeroed_at_the_entry():
    b = Builder("partial")
    x, c = b.v("x"), b.v("c")
    b.block("entry", [mov(c, RDI), cmp(c, Imm(0)), jcc("e", "use"), jmp("def")],
            ["use", "def"])
    b.block("def", [imm(x, 42), jmp("use")], ["use"])
    b.block("use", [mov(RAX, x), ret()])
    allocation = allocate_and_check(b.fn, args=(1,))
    assert x in allocation.colouring
    assert simulate(b.fn, [1]).value == 42
    assert simulate(b.fn, [0]).value == 0
    assert "undefined on some path" in b.fn.blocks[0].instrs[0].comment


def test_user_mistakes_are_clear_errors():
    with pytest.raises(AllocationError, match="at least one register"):
        allocate(fib(), registers=())
    with pytest.raises(AllocationError, match="not an allocatable register: rsp"):
        allocate(fib(), registers=("rax", "rsp"))
    with pytest.raises(AllocationError, match="needs more registers at once than the 1"):
        allocate(fib(), registers=("rax",))  # `add t, b` reads two values at once
    assert allocate(MFunction("empty", [])).rounds == 1


def test_simulator_reports_what_it_cannot_run():
    b = Builder("s")
    b.block("entry", [MInstr("bsf", [RAX, RAX], [RAX], [RAX]), ret()])
    with pytest.raises(SimulationError, match="cannot run `bsf`"):
        simulate(b.fn, [])


# ---------------------------------------------------------------- random functions

KINDS = ("copy", "imm", "arith", "arith", "swap", "print", "call", "div", "pressure")
PALETTES = (ALLOCATABLE, ("rax", "rcx", "rdx", "rbx"), ("rbx", "r12", "r13", "r14"),
            ("rdi", "rsi", "rax", "rdx", "rcx"))


@st.composite
def mir_functions(draw):
    """A random function: random CFG (loops included), variables defined in the entry,
    copies, swaps, arithmetic, calls and prints (clobbers), idiv (implicit rax/rdx),
    bursts of values live at once (spills), and sometimes a handler reached by throws."""
    nb = draw(st.integers(1, 5))
    nv = draw(st.integers(1, 18))
    b = Builder("r")
    xs = [b.v(f"v{k}") for k in range(nv)]
    with_handler = nb >= 2 and draw(st.booleans())
    labels = [f"B{k}" for k in range(nb)]
    targets = labels[:-1] if with_handler else labels

    def var():
        return draw(st.sampled_from(xs))

    for k, label in enumerate(labels):
        instrs: list[MInstr] = []
        handler = with_handler and k == nb - 1
        if k == 0:
            instrs.append(mov(xs[0], RDI))
            if nv > 1:
                instrs.append(mov(xs[1], RSI))
            instrs += [imm(v, draw(st.integers(-9, 9))) for v in xs[2:]]
        if handler:
            instrs.append(mov(var(), RAX))
        for _ in range(draw(st.integers(0, 7))):
            kind = draw(st.sampled_from(KINDS))
            a, c = var(), var()
            if kind == "copy":
                instrs.append(mov(a, c))
            elif kind == "imm":
                instrs.append(imm(a, draw(st.integers(-100, 100))))
            elif kind == "arith":
                op = draw(st.sampled_from(("add", "sub", "imul", "xor")))
                src = c if draw(st.booleans()) else Imm(draw(st.integers(-5, 5)))
                instrs.append(arith(op, a, src))
            elif kind == "swap":
                t = b.v("t")
                instrs += [mov(t, a), mov(a, c), mov(c, t)]
            elif kind == "print":
                instrs += [mov(RDI, a), call("rt_print_int", 1)]
            elif kind == "call":
                instrs += [mov(RDI, a), mov(RSI, c), call("tiny_h", 2), mov(var(), RAX)]
            elif kind == "div":
                instrs += [mov(RAX, a), cqo(), idiv(c),
                           mov(var(), draw(st.sampled_from((RAX, RDX))))]
            else:
                burst = [b.v("p") for _ in range(draw(st.integers(2, 16)))]
                instrs += [imm(t, j) for j, t in enumerate(burst)]
                instrs += [arith("add", t, a) for t in burst]
                instrs += [arith("add", c, t) for t in burst]
        end = draw(st.sampled_from(("jmp", "br", "ret", "throw") if with_handler and not handler
                                   else ("jmp", "br", "ret")))
        if end == "jmp":
            target = draw(st.sampled_from(targets))
            instrs.append(jmp(target))
            succs = [target]
        elif end == "br":
            t1, t2 = draw(st.sampled_from(targets)), draw(st.sampled_from(targets))
            other = Imm(draw(st.integers(-3, 3))) if draw(st.booleans()) else var()
            cond = draw(st.sampled_from(("e", "ne", "l", "le", "g", "ge")))
            instrs += [cmp(var(), other), jcc(cond, t1), jmp(t2)]
            succs = [t1, t2]
        elif end == "ret":
            instrs += [mov(RAX, var()), ret()]
            succs = []
        else:
            instrs += [mov(RDI, var()), call("rt_throw", 1)]
            succs = [labels[-1]]
        b.block(label, instrs, succs, handler)
    args = (draw(st.integers(-50, 50)), draw(st.integers(-50, 50)))
    return b.fn, draw(st.sampled_from(PALETTES)), args


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mir_functions())
def test_random_functions_allocate_correctly(case):
    fn, registers, args = case
    allocate_and_check(fn, registers, args)


@settings(max_examples=60, deadline=None)
@given(mir_functions())
def test_liveness_matches_the_naive_fixed_point(case):
    fn, _, _ = case
    live = Liveness(fn)
    assert live.live_out == naive_live_out(fn)


# ---------------------------------------------------------------- scaling (work, not time)


def long_function(blocks: int) -> MFunction:
    """``blocks`` loops in sequence, each about 50 instructions, 12 values live throughout
    and a call in every loop (so some values spill or move to callee-saved registers)."""
    b = Builder("long")
    xs = [b.v(f"x{k}") for k in range(12)]
    b.block("entry", [imm(v, k) for k, v in enumerate(xs)] + [jmp("L0")], ["L0"])
    for k in range(blocks):
        body = []
        for j in range(10):
            t = b.v("t")
            body += [mov(t, xs[j]), arith("add", t, xs[j + 1]), mov(xs[j], t),
                     arith("imul", xs[j + 2], Imm(3))]
        body += [mov(RDI, xs[0]), call("rt_print_int", 1)]
        body += [cmp(xs[0], Imm(k)), jcc("l", f"L{k}"), jmp(f"L{k + 1}")]
        b.block(f"L{k}", body, [f"L{k}", f"L{k + 1}"])
    b.block(f"L{blocks}", [mov(RAX, xs[0]), ret()])
    return b.fn


def test_allocation_work_grows_linearly():
    small, big = long_function(23), long_function(115)
    size = sum(len(b.instrs) for b in big.blocks)
    assert size >= 5000
    work_small, work_big = allocate(small).work, allocate(big).work
    assert work_big <= 6 * work_small  # 5x the code, not 25x the work
    assert work_big <= 400 * size


def _tiny_graph(edges, moves, registers=("rax", "rcx")):
    from ssa_course.codegen.interference import InterferenceGraph, Move

    g = InterferenceGraph("t", registers)
    for a, b in edges:
        g.add_node(a)
        g.add_node(b)
        g.add_edge(a, b)
    for dst, src in moves:
        g.add_node(dst)
        g.add_node(src)
        g.moves.append(Move(dst, src, 1, "B0"))
    return g


def test_george_refuses_a_significant_neighbour_that_does_not_interfere():
    from ssa_course.codegen.colouring import Colourer

    v, t, u, w = (VReg(k, n) for k, n in enumerate("vtuw"))
    rax = PReg("rax")
    g = _tiny_graph([(v, t), (t, u), (t, w)], [(rax, v)])
    assert Colourer(g, ("rax", "rcx"), set(), True).coalesce() == []
    g = _tiny_graph([(v, t), (t, u), (t, w), (t, rax)], [(rax, v)])
    assert Colourer(g, ("rax", "rcx"), set(), True).coalesce() == [(rax, v)]


def test_briggs_refuses_a_merge_with_k_significant_neighbours():
    from ssa_course.codegen.colouring import Colourer

    a, b, x, y, x1, x2, y1, y2 = (VReg(k, n) for k, n in enumerate(
        ["a", "b", "x", "y", "x1", "x2", "y1", "y2"]))
    base = [(x, x1), (x, x2), (y, y1), (y, y2)]  # x and y have degree >= 2 = K
    g = _tiny_graph([*base, (a, x), (b, y)], [(a, b)])
    assert Colourer(g, ("rax", "rcx"), set(), True).coalesce() == []
    z = VReg(9, "z")
    g = _tiny_graph([*base, (a, x), (b, z)], [(a, b)])  # z has degree 1: one significant
    assert Colourer(g, ("rax", "rcx"), set(), True).coalesce() == [(a, b)]


# ---------------------------------------------------------------- the corpus, selected


def test_corpus_functions_allocate_with_proper_colourings():
    """Every function of every corpus program, as instruction selection makes it: the
    colouring is proper on recomputed liveness, nothing virtual is left, every slot is
    stored before it is loaded, and most copies vanish."""
    from pathlib import Path

    import ssa_course
    from ssa_course.codegen.x86_64.compile import select_program
    from ssa_course.codegen.x86_64.verify import verify_function

    moves = removed = functions = 0
    for path in sorted((Path(__file__).parent / "programs").glob("*.tiny")):
        ssa = ssa_course.build(path.read_text(encoding="utf-8"), "scheduled").ssa
        for fn in select_program(ssa).functions.values():
            allocation = colour(fn)
            check_proper(fn, allocation.colouring, ALLOCATABLE)
            assign(fn, allocation)
            check_allocated(fn)
            check_slots_stored_first(fn)
            verify_function(fn, allocated=True)  # instruction selection's own verifier
            functions += 1
            moves += len(allocation.graph.moves)
            removed += allocation.copies_removed
    assert functions > 100
    assert removed > moves // 3


def test_allocation_report_and_round_drawings():
    fn = fib()
    allocation = allocate(fn, registers=("rax", "rcx"))
    text = allocation.text()
    assert text.startswith(f"allocation @fib: {allocation.rounds} round(s), "
                           f"{len(allocation.spilled)} spilled")
    assert "potential spill %1.n: weight 11 / degree 4 = 2.75" in text
    assert text.count("\nround ") == allocation.rounds
    assert text == allocate(fib(), registers=("rax", "rcx")).text()
    first = allocation.dot(1)
    assert "round 1 of" in first and "spill" in first
    assert "spill" not in allocation.dot(allocation.rounds).split("label=")[1]
    with pytest.raises(ValueError, match="round 9 does not exist"):
        allocation.dot(9)


def _argument(text: str) -> int:
    return {"true": 1, "false": 0}[text] if text in ("true", "false") else int(text)


def test_corpus_programs_compute_the_same_before_and_after_allocation():
    """Every corpus program (Tiny and Bril text) selected, run by the simulator over
    virtual registers, then allocated and run again with the callee-saved contract
    checked at every return: the same output and ending, and the expected output."""
    from corpus import load_bril_corpus, load_corpus
    from mir_simulate import simulate_program

    import ssa_course
    from ssa_course.codegen.names import function_symbol
    from ssa_course.codegen.x86_64.compile import select_program

    compared = expected = 0
    for case in load_corpus() + load_bril_corpus():
        if case.path.suffix == ".json":
            continue
        comp = compile_source(case.source, case.path.name)
        mprog = select_program(ssa_course.build(comp, "scheduled").ssa)
        args = [_argument(a) for a in case.args]
        before = {function_symbol(n): f for n, f in copy.deepcopy(mprog.functions).items()}
        after = {}
        for name, fn in mprog.functions.items():
            allocate(fn)
            after[function_symbol(name)] = fn
        try:
            r0 = simulate_program(before, "tiny_main", args, mprog.trap_sites, 60_000,
                                  100_000)
        except SimulationError as e:  # a Bril program reading a variable it never set
            assert "read before it was written" in str(e), case.name
            continue
        r1 = simulate_program(after, "tiny_main", args, mprog.trap_sites, 60_000, 100_000,
                              check_abi=True)
        assert (r1.status, r1.text) == (r0.status, r0.text), case.name
        compared += 1
        if r1.status != "fuel":
            assert r1.text == case.stdout, case.name
            assert (r1.status == "return") == (case.exit == 0), case.name
            expected += 1
    assert compared > 120 and expected > 100


def test_a_handler_found_by_its_taken_address_across_calls():
    """main enters a try (``lea rdi, [rip + catch]; call rt_enter``) whose handler block
    is not marked (its ``catch`` was optimised away); g uses rbx and throws. x, live into
    the handler, must live in a slot, and main must save every callee-saved register
    (g's epilogue never runs)."""
    from mir_simulate import simulate_program

    from ssa_course.codegen.mir import Mem

    m = Builder("main")
    x, y = m.v("x"), m.v("y")
    m.block("entry", [mov(x, RDI), MInstr("lea", [RDI, Mem(symbol="catch")], [RDI], []),
                      call("rt_enter", 1), mov(RDI, x), call("tiny_g", 1), mov(y, RAX),
                      call("rt_leave", 0), arith("add", y, x), mov(RAX, y), ret()],
            ["catch"])
    m.block("catch", [arith("add", x, Imm(1000)), mov(RAX, x), ret()])
    g = Builder("g")
    a, k = g.v("a"), g.v("k")
    rbx = PReg("rbx")
    g.block("entry", [mov(a, RDI), imm(k, 99), mov(rbx, k), mov(RDI, a), call("rt_throw", 1)])
    g.fn.used_callee_saved = []
    before = {"tiny_main": copy.deepcopy(m.fn), "tiny_g": copy.deepcopy(g.fn)}
    assert throw_targets(m.fn) == {"catch"}
    allocation = allocate(m.fn)
    allocate(g.fn)
    assert x in allocation.saved and m.fn.used_callee_saved == list(CALLEE_SAVED)
    assert g.fn.used_callee_saved == ["rbx"]
    after = {"tiny_main": m.fn, "tiny_g": g.fn}
    r0 = simulate_program(before, "tiny_main", [5])
    r1 = simulate_program(after, "tiny_main", [5], check_abi=True)
    assert r0.value == r1.value == 1005 and r1.status == "return"


def test_generated_programs_compute_the_same_before_and_after_allocation():
    """Programs of the fuzz generator (swaps in loops, try/catch across calls, arrays,
    structs, recursion): the simulator's run before allocation, after it, and the
    reference interpreter agree."""
    from fuzzgen import generate
    from mir_simulate import simulate_program

    import ssa_course
    from ssa_course.codegen.names import function_symbol
    from ssa_course.codegen.x86_64.compile import select_program
    from ssa_course.codegen.x86_64.verify import verify_function

    for seed in range(20):
        source = generate(seed)
        header = source.splitlines()[0]
        words = header.split("ARGS:")[1].split() if "ARGS:" in header else []
        reference = ssa_course.run(source, *words)
        mprog = select_program(ssa_course.build(source, "scheduled").ssa)
        before = {function_symbol(n): f for n, f in copy.deepcopy(mprog.functions).items()}
        after = {}
        for name, fn in mprog.functions.items():
            allocate(fn)
            verify_function(fn, allocated=True)
            after[function_symbol(name)] = fn
        args = [_argument(w) for w in words]
        r0 = simulate_program(before, "tiny_main", args, mprog.trap_sites, 200_000, 100_000)
        r1 = simulate_program(after, "tiny_main", args, mprog.trap_sites, 200_000, 100_000,
                              check_abi=True)
        assert (r1.status, r1.text) == (r0.status, r0.text), seed
        assert r1.text == reference.stdout, seed


def test_choose_register_prefers_a_copy_partner_then_the_palette_order():
    from ssa_course.codegen.colouring import choose_register

    assert choose_register({"rax"}, ALLOCATABLE) == "rcx"
    assert choose_register({"rax"}, ALLOCATABLE, ["rax", "r12"]) == "r12"
    assert choose_register(set(ALLOCATABLE), ALLOCATABLE) is None
    assert choose_register(set(), ("rbx",), ["rdi"]) == "rbx"  # outside the palette


def test_a_value_mirrored_for_a_handler_spills_into_its_mirror():
    b = Builder("hm")
    xs = [b.v(f"x{k}") for k in range(5)]
    e = b.v("e")
    b.block("entry", [mov(xs[0], RDI), *(imm(v, k) for k, v in enumerate(xs[1:], 1)),
                      cmp(xs[0], Imm(0)), jcc("l", "throw"), jmp("ok")], ["throw", "ok"])
    b.block("ok", [*(arith("add", xs[0], v) for v in xs[1:]), mov(RAX, xs[0]), ret()])
    b.block("throw", [mov(RDI, xs[1]), call("rt_throw", 1)], ["catch"])
    b.block("catch", [mov(e, RAX), *(arith("imul", e, v) for v in xs), mov(RAX, e), ret()],
            handler=True)
    for args in ((-2,), (3,)):
        fn = copy.deepcopy(b.fn)
        allocation = allocate_and_check(fn, ("rax", "rcx"), args=args)
        both = set(allocation.saved) & set(allocation.spilled)
        assert both
        assert all(allocation.slots[v] == allocation.saved[v] for v in both)
    assert simulate(fn, [-2]).value == 1 * (-2) * 1 * 2 * 3 * 4


def test_spilling_inside_an_address_shared_by_two_instructions():
    """Two loads through one Mem object whose base is spilled: each gets its own reload."""
    from mir_simulate import simulate_program

    from ssa_course.codegen.mir import Mem

    b = Builder("shared")
    p, q, r, s = b.v("p"), b.v("q"), b.v("r"), b.v("s")
    address = Mem(p, disp=8)
    b.block("entry", [
        imm(RDI, 2), call("rt_new_struct", 1), mov(p, RAX),
        MInstr("mov", [Mem(p, disp=8), Imm(21)], [], [p]),
        imm(s, 1), imm(r, 2),
        MInstr("mov", [q, address], [q], [p]), arith("add", q, r), arith("add", q, s),
        MInstr("mov", [r, address], [r], [p]), arith("add", q, r), arith("add", q, s),
        mov(RAX, q), ret()])
    original = copy.deepcopy(b.fn)
    allocation = allocate(b.fn, registers=("rax", "rcx"))
    assert p in allocation.spilled
    r0 = simulate_program({"tiny_main": original}, "tiny_main")
    r1 = simulate_program({"tiny_main": b.fn}, "tiny_main", check_abi=True)
    assert r0.value == r1.value == 21 + 2 + 1 + 21 + 1


def _simplify_order(source: str) -> list[list[int]]:
    from ssa_course.codegen.colouring import Colourer
    from ssa_course.lessons.l11_codegen import machine_ir

    out = []
    for fn in machine_ir(compile_source(source)).values():
        graph = build_interference(fn)
        out.append([v.id for v in Colourer(graph, ALLOCATABLE, set(), False).simplify()[0]])
    return out


def test_simplify_order_does_not_depend_on_memory_addresses():
    # Sets of registers once iterated in address order: the same program could get another
    # simplify stack (and another listing) in a process with another allocation history.
    source = ("fn main(n: int) { var a = n + 1; var b = n * 3; var c = a - b; var d = c * a;"
              " var i = 0; while (i < n) { a = a + b; b = b + c; c = c + d; d = d + a;"
              " i = i + 1; } print(a, b, c, d); }")
    first = _simplify_order(source)
    for junk_size in (1, 7, 33, 101):
        junk = [object() for _ in range(junk_size)]  # shift where the next vregs live
        assert _simplify_order(source) == first
        del junk
