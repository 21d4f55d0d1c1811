"""Code generation cuts quads into blocks with the one block builder, quads/cfg.build_cfg.

Its rules, seen from selection: labels in a row name one block (the first), an unlabelled
block is ``b0``, ``b1``, ... (never a label of the function), blocks no path reaches are
dropped, and a block that falls through or off the end gets its explicit ``jmp``/``ret``.
Both targets select through it.
"""

from __future__ import annotations

import pytest

from ssa_course.codegen.aarch64 import verify as a64_verify
from ssa_course.codegen.aarch64.machine import AARCH64_MACHINE
from ssa_course.codegen.isel import select_function
from ssa_course.codegen.names import block_label
from ssa_course.codegen.quadcfg import function_blocks
from ssa_course.codegen.verify_shared import check_blocks
from ssa_course.codegen.x86_64 import verify
from ssa_course.codegen.x86_64.machine import X86_64_MACHINE
from ssa_course.quads.cfg import build_cfg
from ssa_course.quads.ir import Function, Instr, Label, Program
from ssa_course.tiny.types import BOOL, INT


def _function() -> Function:
    # entry without a label; "x" and "y" in a row; a dead block after a jump; "b0" taken
    # by a label already, so the entry's made-up name must be another one
    return Function("f", [("n", INT)], None, [
        Instr("const", "one", INT, value=1),
        Instr("lt", "c", BOOL, ["n", "one"]),
        Instr("br", args=["c"], labels=["y", "b0"]),
        Label("b0"), Instr("print", args=["n"]),          # falls into x/y
        Label("x"), Label("y"), Instr("print", args=["one"]), Instr("nop"),
        Instr("jmp", labels=["out"]),
        Instr("print", args=["c"]),                       # unreachable: dropped
        Label("out"),                                     # falls off the end: ret
    ])


def test_blocks_are_build_cfgs_blocks():
    f = _function()
    blocks = function_blocks(f)
    cfg = build_cfg(f)
    names = [b.label for b in blocks]
    assert names == [n for n in cfg.blocks if n in cfg.reachable()]
    entry = names[0]
    assert entry not in {"b0", "x", "y", "out"} and entry.startswith("b")
    assert names[1:] == ["b0", "x", "out"], "x and y are one block, named x"
    by = {b.label: b for b in blocks}
    assert by[entry].body[-1].labels == ["x", "b0"], "the jump to y now names x"
    assert by["b0"].body[-1].op == "jmp" and by["b0"].body[-1].labels == ["x"]
    assert [i.op for i in by["x"].body] == ["print", "jmp"], "nop dropped"
    assert [i.op for i in by["out"].body] == ["ret"]
    assert by["x"].preds == [entry, "b0"] and by[entry].succs == ["x", "b0"]
    assert f.body[2].labels == ["y", "b0"], "the function itself is unchanged"


def test_blocks_keep_the_functions_instructions():
    # escape analysis names a frame array by its newarr's identity: selection must see
    # fn's own instruction objects, not copies
    f = _function()
    own = {id(i) for i in f.body}
    kept = [i for b in function_blocks(f) for i in b.body if i.op == "print"]
    assert kept and all(id(i) in own for i in kept)


def test_empty_function_is_one_returning_block():
    (block,) = function_blocks(Function("g", [], None, []))
    assert block.label == "b0" and [i.op for i in block.body] == ["ret"]


@pytest.mark.parametrize("machine, rules", [(X86_64_MACHINE, verify.RULES),
                                            (AARCH64_MACHINE, a64_verify.RULES)],
                         ids=["x86-64", "aarch64"])
def test_both_targets_select_the_same_blocks(machine, rules):
    f = _function()
    mfn, exit_of = select_function(machine, f, Program({"f": f}), [])
    check_blocks(mfn, rules)
    labels = [b.label for b in mfn.blocks]
    names = [b.label for b in function_blocks(f)]
    # (the entry block, which only tests and branches, may be copied into the machine
    # entry by loop inversion and vanish: the others stay)
    assert labels[1:] == [block_label("f", n) for n in names[1:]]
    assert block_label("f", "y") not in labels
    assert set(exit_of) == {b.label for b in function_blocks(f)}
