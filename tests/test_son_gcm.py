"""Global code motion, phase by phase (lesson 08): each phase's promise, checked on the
lesson's programs and on every corpus program."""

from __future__ import annotations

import pytest

from ssa_course.compilation import compile_source
from ssa_course.lessons.l07_optimistic import optimistic_program
from ssa_course.son.control import If, Loop, Phi, Region
from ssa_course.son.data import Mul
from ssa_course.son.gcm import (
    blocks_from_control,
    dom_tree,
    dominator_lca,
    dominators_and_loops,
    local_order,
    pick_block,
    pinned_blocks,
    schedule,
    schedule_early,
    schedule_late,
)
from ssa_course.son.memory import Len, Load, Store

LESSON = """
fn main(n: int) {
    var a = new int[n];
    var s = 0;
    for (var i = 0; i < len(a); i = i + 1) {
        a[i] = i * 3;
        s = s + a[i] + n * 2;
    }
    print(s);
}
"""
DIAMOND = "fn main(n: int) { var x = 0; if (n > 0) { x = n * 2; } else { x = 3; } print(x + 1); }"
NESTED = ("fn main(n: int) { var s = 0; for (var i = 0; i < n; i = i + 1) { "
          "for (var j = 0; j < i; j = j + 1) { if (j % 2 == 0) { s = s + n * n; } } } "
          "print(s); }")


def main_of(source: str):
    return optimistic_program(compile_source(source)).functions["main"]


def _chain_dominates(idom: dict[str, str], a: str, b: str) -> bool:
    """The definition, by walking the idom chain (what the pre/post numbers replace)."""
    while True:
        if a == b:
            return True
        if idom[b] == b:
            return False
        b = idom[b]


def test_blocks_from_control_cut_the_diamond():
    fg = main_of(DIAMOND)
    cfg = blocks_from_control(fg)
    blocks = cfg.blocks
    assert len(blocks) == 4 and list(blocks)[0] == cfg.entry
    entry = blocks[cfg.entry]
    assert isinstance(entry.end, If) and len(entry.succs) == 2 and entry.preds == []
    merge = next(b for b in blocks.values() if isinstance(b.head, Region))
    assert sorted(merge.preds) == sorted(entry.succs)
    for b in blocks.values():  # every control node heads or ends the block it is owned by
        assert cfg.owner[b.head.id] == b.name
        if b.end is not None:
            assert cfg.owner[b.end.id] == b.name
    # reverse postorder: a block comes after every predecessor that is not a back edge
    position = {name: i for i, name in enumerate(blocks)}
    assert all(position[p] < position[b.name] for b in blocks.values() for p in b.preds)


def test_dominators_and_loops_number_the_tree_once():
    fg = main_of(NESTED)
    cfg = blocks_from_control(fg)
    dom = dominators_and_loops(cfg)
    names = list(cfg.blocks)
    for a in names:
        for b in names:
            assert dom.dominates(a, b) == _chain_dominates(dom.idom, a, b), (a, b)
            assert dom.lca(a, b) == dominator_lca(a, b, dom.idom, dom.depth)
    depths = {cfg.blocks[n].depth for n in names}
    assert depths == {0, 1, 2}
    loops = [b for b in cfg.blocks.values() if isinstance(b.head, Loop)]
    assert sorted(b.depth for b in loops) == [1, 2]


def test_dom_tree_of_a_hand_made_tree():
    idom = {"e": "e", "a": "e", "b": "a", "c": "a", "d": "e"}
    dom = dom_tree(idom, "e")
    assert dom.depth == {"e": 0, "a": 1, "b": 2, "c": 2, "d": 1}
    assert dom.dominates("a", "c") and not dom.dominates("b", "c")
    assert dom.lca("b", "c") == "a" and dom.lca("b", "d") == "e" and dom.lca(None, "d") == "d"


def _phases(source: str):
    fg = main_of(source)
    cfg = blocks_from_control(fg)
    dom = dominators_and_loops(cfg)
    fixed = pinned_blocks(fg, cfg)
    early = schedule_early(fg, cfg, dom, fixed)
    return fg, cfg, dom, fixed, early


@pytest.mark.parametrize("source", [LESSON, DIAMOND, NESTED])
def test_schedule_early_is_the_deepest_input_block(source):
    fg, cfg, dom, fixed, early = _phases(source)
    placed = {**fixed, **early}
    for nid, block in early.items():
        node = fg.graph.nodes[nid]
        blocks = [placed[x.id] if x.id in placed else cfg.block_of_control(x)
                  for x in node.inputs if x is not None]
        for b in blocks:  # every input exists there...
            assert dom.dominates(b, block), (node, b, block)
        # ... and it is one of them (or the entry, for a node with no placed input)
        assert block in blocks or block == cfg.entry, (node, block, blocks)
    # pinned nodes are not scheduled early
    assert all(isinstance(fg.graph.nodes[i], (Load, Store)) is False for i in early)


@pytest.mark.parametrize("source", [LESSON, DIAMOND, NESTED])
def test_schedule_late_is_the_lca_of_the_uses(source):
    fg, cfg, dom, fixed, early = _phases(source)
    late, placed = schedule_late(fg, cfg, dom, fixed, early, lambda e, lt: lt)
    assert placed == {**fixed, **late}
    for nid, block in late.items():
        node = fg.graph.nodes[nid]
        assert dom.dominates(early[nid], block), node
        uses = []
        for u in node.outputs:
            if isinstance(u, Phi):
                uses += [cfg.block_of_control(u.inputs[0].inputs[i])
                         for i, v in enumerate(u.inputs) if v is node and i > 0]
            elif u.is_control:
                uses.append(cfg.block_of_control(u))
            else:
                uses.append(placed[u.id])
        for b in uses:
            assert dom.dominates(block, b), (node, block, b)
        lca = None
        for b in uses:
            lca = dominator_lca(lca, b, dom.idom, dom.depth)
        assert block == (lca or early[nid]), node


def test_pick_block_hoists_out_of_the_loop():
    fg, cfg, dom, fixed, early = _phases(LESSON)
    depth = {k: b.depth for k, b in cfg.blocks.items()}
    late, placed = schedule_late(fg, cfg, dom, fixed, early,
                                 lambda e, lt: pick_block(e, lt, dom.idom, depth))
    hoisted = [fg.graph.nodes[i] for i in late if placed[i] != late[i]]
    # len(a) of a fresh array is its size, n: the peepholes after SCCP saw it
    assert not any(isinstance(n, Len) for n in fg.nodes())
    n_times_2 = next(n for n in fg.nodes() if isinstance(n, Mul) and n.inputs[2].label == "2")
    assert n_times_2 in hoisted
    assert depth[late[n_times_2.id]] == 1 and depth[placed[n_times_2.id]] == 0
    for i, chosen in placed.items():
        if i in late:  # between early and late, never deeper in loops than late
            assert dom.dominates(early[i], chosen) and dom.dominates(chosen, late[i])
            assert depth[chosen] <= depth[late[i]]


def test_pick_block_ties_go_to_the_latest_block():
    idom = {"e": "e", "a": "e", "b": "a"}
    assert pick_block("e", "b", idom, {"e": 0, "a": 0, "b": 0}) == "b"
    assert pick_block("e", "b", idom, {"e": 1, "a": 1, "b": 2}) == "a"
    with pytest.raises(ValueError):
        pick_block("b", "a", idom, {"e": 1, "a": 1, "b": 1})


def test_local_order_puts_phis_first_and_inputs_before_users():
    sched = schedule(main_of(LESSON))
    for block in sched.order():
        assert local_order(block) == block.nodes
        seen: set[int] = set()
        phis_done = False
        for n in block.nodes:
            if isinstance(n, Phi):
                assert not phis_done, block.name
                continue
            phis_done = True
            for x in n.inputs:
                if x is not None and sched.block_of.get(x.id) == block.name \
                        and not isinstance(x, Phi) and not x.is_control:
                    assert x.id in seen, (block.name, n, x)
            seen.add(n.id)


def test_every_corpus_program_schedules_with_the_phases_agreeing():
    from corpus import load_corpus

    for case in load_corpus():
        program = optimistic_program(compile_source(case.source, case.name))
        for fg in program.functions.values():
            sched = schedule(fg)
            for nid, chosen in sched.block_of.items():
                if nid in sched.late:
                    assert _chain_dominates(sched.idom, sched.early[nid], chosen), case.name
                    assert _chain_dominates(sched.idom, chosen, sched.late[nid]), case.name


# Names the graph's quads make from node ids (v12, v12_r, v12_probe, v12_unused) may be a
# parameter's own name: a Bril program's, or one ``coalesce`` gave (fuzz seeds 7771, 7783:
# ``var v6 = p1`` coalesced into the parameter).
_NODE_LIKE = """@main(PARAM: int, vv9: int, v6: bool) {
  a: int = const 7;
  b: int = const 5;
  c: int = mul a PARAM;
  d: int = add c b;
  e: int = div d vv9;
  print e;
}
"""


@pytest.mark.parametrize("param", ["v2", "v9", "v8", "v5_r", "v3_probe", "v7_unused"])
def test_node_names_never_take_a_parameters_name(param):
    from ssa_course import passes
    from ssa_course.stages import run

    comp = compile_source(_NODE_LIKE.replace("PARAM", param), "p.bril")
    for names in (["parse"], ["parse-raw"], list(passes.DEFAULT_PIPELINE)):
        state = passes.run_pipeline(comp, names)  # verified (SSA: one definition a name)
        text = passes.emit(state, "bril")
        for args in (["2", "3", "true"], ["2", "0", "false"]):
            got = run(compile_source(text, "o.bril"), args, via="quads")
            want = run(comp, args, via="quads")
            assert (got.stdout, got.status, got.error) == \
                (want.stdout, want.status, want.error), (param, names, args)


def test_an_unused_parameter_keeps_its_name_out_of_the_node_names():
    """Fuzz seed 7783, shrunk: ``coalesce`` renames the parameter ``p1`` to ``v8``, the
    variable it was copied to; nothing reads it, so the graph has no node for it, and its
    name must still be kept out of the names made from node ids (node 8 is the ``==``)."""
    from ssa_course import passes
    from ssa_course.stages import run

    source = (
        'struct P { v: int; ok: bool; xs: [int]; }\n'
        'fn f1(p0: int, p1: [int]) {\n'
        '    if (false) {\n'
        '        throw 0;\n'
        '    }\n'
        '    if (p0 == 0) {\n'
        '    } else {\n'
        '        var v8 = p1;\n'
        '    }\n'
        '}\n'
        'fn main(n: int, flag: bool) {\n'
        '    var p = new P { v: 1, ok: true, xs: new int[5] };\n'
        '}\n'
    )  # (as shrunk: f1 is never called)
    state = passes.run_pipeline(compile_source(source, "u.tiny"),
                                ["coalesce", "try-merge", "closed-form", "sroa", "parse"])
    text = passes.emit(state, "bril")
    assert "@f1(p0: int, v8: [int])" in text
    got = run(compile_source(text, "o.bril"), ["4", "true"], via="quads")
    assert (got.stdout, got.status, got.error) == ("", 0, "")



def _most_live(listing: str) -> int:
    """The most ``%k`` values defined and not yet last used along a one-block listing."""
    import re

    rows = [line for line in listing.splitlines() if "%" in line]
    last_use: dict[str, int] = {}
    defined: dict[str, int] = {}
    for i, row in enumerate(rows):
        lhs, _, rhs = row.partition("=") if re.search(r"%\d+\s*=", row) else ("", "", row)
        for name in re.findall(r"%\d+", rhs):
            last_use[name] = i
        for name in re.findall(r"%\d+", lhs):
            defined[name] = i
    return max(sum(1 for v, d in defined.items() if d <= i < last_use.get(v, d))
               for i in range(len(rows)))


def test_local_order_computes_each_value_just_before_its_first_use():
    # Issue #39 item 5: reassociating `t + (x * x + 1)` makes the chain's adds anew (high
    # ids), so an order by id put every `n + k` and product at the top of main's block, all
    # 60 live until the chain reached them; computed just before its first use, a few.
    from ssa_course.lessons.l04_julia import ir_text
    from ssa_course.lessons.l08_scheduling import scheduled

    calls = "".join(f"t = t + f1(n + {k}); " for k in range(1, 61))
    comp = compile_source("fn f1(x: int) -> int { return x * x + 1; } "
                          f"fn main(n: int) {{ var t = 0; {calls}print(t); }}")
    listing = ir_text(scheduled(comp).ircode).split("main(")[1]
    assert _most_live(listing) <= 3
