"""Leaders, basic blocks, edges, unreachable blocks, and laying a CFG out again."""

from __future__ import annotations

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st
from tiny_gen import programs

import ssa_course
from ssa_course.quads.cfg import build_cfg, find_leaders, remove_unreachable, to_networkx
from ssa_course.quads.interp import run_quads
from ssa_course.quads.ir import Function, Instr, Label, Program
from ssa_course.runtime import Limits, Output
from ssa_course.tiny.types import BOOL, INT


def fn_of(*items) -> Function:
    return Function("main", [], None, list(items))


def const(dest, v):
    return Instr("const", dest, BOOL if isinstance(v, bool) else INT, value=v)


def test_leaders_rule():
    f = fn_of(const("x", 1),                          # 0: first instruction
              Instr("br", args=["x"], labels=["a", "b"]),
              Instr("nop"),                           # 2: after a terminator
              Label("a"), Label("a2"),                # 3: first of two labels
              Instr("nop"),
              Instr("jmp", labels=["b"]),
              Label("b"),                             # 7
              Instr("ret"))
    assert find_leaders(f) == [0, 2, 3, 7]


def test_blocks_and_edges():
    f = fn_of(const("c", True),
              Instr("br", args=["c"], labels=["then", "else"]),
              Label("then"), Instr("print", args=["c"]), Instr("jmp", labels=["end"]),
              Label("else"), Instr("nop"),
              Label("end"), Instr("ret"))
    cfg = build_cfg(f)
    assert list(cfg.blocks) == ["b0", "then", "else", "end"]
    assert cfg.blocks["b0"].succs == ["then", "else"]
    assert cfg.blocks["else"].succs == ["end"]  # fall-through
    assert sorted(cfg.blocks["end"].preds) == ["else", "then"]
    assert cfg.entry == "b0"


def test_consecutive_labels_name_one_block():
    f = fn_of(Instr("jmp", labels=["y"]), Label("x"), Label("y"), Instr("ret"))
    cfg = build_cfg(f)
    assert list(cfg.blocks) == ["b0", "x"]
    assert cfg.blocks["b0"].succs == ["x"]
    assert cfg.blocks["b0"].instrs[-1].labels == ["x"]
    assert f.body[0].labels == ["y"], "building a CFG must not change the function"


def test_generated_names_do_not_collide_with_labels():
    f = fn_of(Instr("nop"), Label("b0"), Instr("ret"))
    cfg = build_cfg(f)
    assert len(cfg.blocks) == 2 and "b0" in cfg.blocks


def test_unreachable_blocks_are_removed():
    f = ssa_course.compile("fn f(x: int) -> int {\n return x;\n print(1);\n"
                           " while (true) { print(2); }\n}\nfn main() { print(f(1)); }")
    cfg = build_cfg(f.quads.functions["f"])
    removed = remove_unreachable(cfg)
    assert removed and all(name not in cfg.blocks for name in removed)
    assert all(p in cfg.blocks for b in cfg.blocks.values() for p in b.preds)


def test_handler_is_reachable_through_enter():
    comp = ssa_course.compile("fn main() { try { throw 1; } catch (e) { print(e); } }")
    cfg = build_cfg(comp.quads.functions["main"])
    removed = remove_unreachable(cfg)
    assert not any(name.startswith("catch") for name in removed)
    # (the "leave; jmp" after the throw is unreachable and goes)
    assert removed and all(b.terminator is None or b.terminator.op != "throw"
                           for b in cfg.blocks.values() if b.name in removed)
    enter_block = next(b for b in cfg.blocks.values() if b.terminator.op == "enter")
    assert any(s.startswith("catch") for s in enter_block.succs)


def test_networkx_view_matches_edges():
    comp = ssa_course.compile((__import__("pathlib").Path(__file__).parent / "programs" /
                               "nested_loops_break_continue.tiny").read_text())
    cfg = build_cfg(comp.quads.functions["main"])
    g = to_networkx(cfg)
    assert set(g.edges) == set(cfg.edges())
    assert set(nx.descendants(g, cfg.entry)) | {cfg.entry} == cfg.reachable()


def _run(program: Program) -> tuple[str, int, str]:
    out = Output()
    try:
        run_quads(program, [], out, Limits(steps=200_000))
    except ssa_course.RuntimeTrap as e:
        return out.text(), 2, e.render()
    return out.text(), 0, ""


@settings(max_examples=60, deadline=None)
@given(programs())
def test_cfg_layout_runs_like_the_original(source):
    quads = ssa_course.compile(source).quads
    rebuilt = {}
    for name, fn in quads.functions.items():
        cfg = build_cfg(fn)
        remove_unreachable(cfg)
        rebuilt[name] = cfg.to_function()
        # the rebuilt function has the same blocks and edges again
        again = build_cfg(rebuilt[name])
        assert set(again.edges()) <= set(cfg.edges()) | {
            (a, b) for a, b in again.edges() if a not in cfg.blocks}
    assert _run(Program(rebuilt, quads.structs)) == _run(quads)


def test_uncopied_blocks_share_the_functions_instructions():
    # copy=False (code generation's choice): the blocks hold fn's own instruction objects,
    # except one that names a merged label, which is relabelled as a copy.
    jump, ret, phi = (Instr("jmp", labels=["y"]), Instr("ret"),
                      Instr("phi", "p", INT, ["a"], labels=["y"]))
    f = fn_of(const("a", 1), jump, Label("x"), Label("y"), phi, ret)
    cfg = build_cfg(f, copy=False)
    assert cfg.blocks["x"].instrs[1] is ret
    assert cfg.blocks["b0"].instrs[0] is f.body[0]
    assert cfg.blocks["b0"].instrs[-1] is not jump
    assert cfg.blocks["b0"].instrs[-1].labels == ["x"]
    assert cfg.blocks["x"].instrs[0].labels == ["x"]
    assert jump.labels == ["y"] and phi.labels == ["y"], "fn must be left as it was"


@settings(max_examples=40, deadline=None)
@given(programs())
def test_copy_or_not_cuts_the_same_blocks(source):
    # The option only decides who owns the instructions: blocks, edges and the text of
    # every instruction are the same, and an uncopied block holds fn's own objects
    # wherever nothing had to be relabelled.
    for fn in ssa_course.compile(source).quads.functions.values():
        before = [str(i) for i in fn.body]
        copied, shared = build_cfg(fn), build_cfg(fn, copy=False)
        assert list(copied.blocks) == list(shared.blocks)
        assert copied.edges() == shared.edges()
        own = {id(i) for i in fn.body}
        for name, block in shared.blocks.items():
            assert [str(i) for i in block.instrs] == [str(i) for i in copied.blocks[name].instrs]
            assert block.preds == copied.blocks[name].preds
            assert all(id(i) in own for i in block.instrs if not i.labels)
            assert not any(id(i) in own for i in copied.blocks[name].instrs)
        assert [str(i) for i in fn.body] == before


_ITEMS = st.one_of(
    st.sampled_from(["x", "y", "z"]).map(Label),
    st.sampled_from(["x", "y", "z"]).map(lambda t: Instr("jmp", labels=[t])),
    st.just(None).map(lambda _: Instr("ret")),
    st.sampled_from(["x", "y"]).map(lambda t: Instr("br", args=["c"], labels=[t, "z"])),
    st.integers(0, 9).map(lambda v: const(f"v{v}", v)),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_ITEMS, max_size=30), st.booleans())
def test_blocks_are_the_runs_between_leaders(items, copy):
    # build_cfg's blocks are find_leaders' runs: each block exactly its leader's run of
    # instructions, in order, the labels of a row naming one block and code after a
    # terminator a block of its own (random bodies, unreachable code and all).
    names = iter(["x", "y", "z"] + [f"l{k}" for k in range(30)])
    f = fn_of(*(Label(next(names)) if isinstance(i, Label) else i for i in items))
    cfg = build_cfg(f, copy=copy)
    leaders = find_leaders(f) + [len(f.body)]
    runs = [[i for i in f.body[a:b] if isinstance(i, Instr)]
            for a, b in zip(leaders, leaders[1:], strict=False)]
    assert len(cfg.blocks) == max(len(runs), 1)
    for block, run in zip(cfg.blocks.values(), runs, strict=False):
        # (labels aside: a jump to the second label of a row is relabelled to the first)
        assert [(i.op, i.dest, i.args, i.value) for i in block.instrs] == \
            [(i.op, i.dest, i.args, i.value) for i in run]
        if copy:
            assert not any(i is j for i, j in zip(block.instrs, run, strict=True))
        else:
            assert all(i is j for i, j in zip(block.instrs, run, strict=True) if not i.labels)
