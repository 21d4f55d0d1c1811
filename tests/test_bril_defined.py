"""The Bril definedness check (``quads.bril_defined``) against the plain data-flow fixpoint.

The check walks the dominator tree and searches forward only for reads it cannot settle
that way (so it stays linear on big functions); these tests hold it to the textbook
may-be-defined fixpoint on random functions, and name the same first error.
"""

from __future__ import annotations

import random

import pytest

from ssa_course.quads.bril_defined import _SHADOW, _blocks, _defines, check_defined
from ssa_course.quads.bril_problem import BrilProblem
from ssa_course.quads.ir import Function, Instr, Label
from ssa_course.tiny.types import INT


def reference(fn: Function) -> tuple[str, int] | None:
    """The first bad read as (variable or shadow, instruction id), by sets grown to a fixpoint."""
    blocks, succs, _ = _blocks(fn)
    into: list[set[str] | None] = [None] * len(blocks)
    into[0] = {name for name, _ in fn.params}
    work = [0]
    while work:
        b = work.pop()
        out = set(into[b]) | {_defines(i) for i in blocks[b] if _defines(i) is not None}
        for s in succs[b]:
            if s < len(blocks) and (into[s] is None or not out <= into[s]):
                into[s] = out | (into[s] or set())
                work.append(s)
    for b, block in enumerate(blocks):
        defined = into[b]
        if defined is None:
            continue
        for item in block:
            reads = item.args[1:] if item.op == "set" else item.args
            for var in reads:
                if var not in defined:
                    return var, id(item)
            if item.op == "get" and _SHADOW + item.dest not in defined:
                return _SHADOW + item.dest, id(item)
            if _defines(item) is not None:
                defined.add(_defines(item))
    return None


def random_function(rng: random.Random, size: int) -> Function:
    names = [f"v{i}" for i in range(6)]
    labels = [f"L{i}" for i in range((size - 1) // 4 + 1)]  # each one placed below
    body: list = []
    if rng.random() < 0.7:  # most names assigned up front: then reads are mostly fine
        body += [Instr("const", v, INT, value=0) for v in names if rng.random() < 0.8]
    for k in range(size):
        if k % 4 == 0:
            body.append(Label(labels[k // 4]))
        r = rng.random()
        if r < 0.35:
            body.append(Instr("add", rng.choice(names), INT,
                              [rng.choice(names + ["p"]), rng.choice(names + ["p"])]))
        elif r < 0.5:
            body.append(Instr("const", rng.choice(names), INT, value=1))
        elif r < 0.6:
            body.append(Instr("set", None, None, [rng.choice(names), "p"]))
        elif r < 0.7:
            body.append(Instr("get", rng.choice(names), INT))
        elif r < 0.8:
            body.append(Instr("jmp", labels=[rng.choice(labels)]))
        elif r < 0.92:
            targets = [rng.choice(labels), rng.choice(labels)]
            body.append(Instr("br", None, None, ["p"], labels=targets))
        else:
            body.append(Instr("print", None, None, [rng.choice(names)]))
    body.append(Instr("ret"))
    return Function("main", [("p", INT)], None, body)


@pytest.mark.parametrize("seed", range(400))
def test_agrees_with_the_fixpoint_on_random_functions(seed):
    rng = random.Random(seed)
    fn = random_function(rng, rng.randint(2, 40))
    expected = reference(fn)
    try:
        check_defined(fn)
    except BrilProblem as e:
        assert expected is not None, f"rejected a defined program: {e}"
        var, where = expected
        shown = var.removeprefix(_SHADOW)
        assert f"'{shown}'" in str(e) and id(e.item) == where
        return
    assert expected is None, f"accepted a read of {expected[0]!r} with no assignment before"


def test_defined_on_one_path_only_or_later_in_a_loop_is_accepted():
    # x is assigned on one arm only (may-be-defined is enough), y later in the loop body
    body = [Instr("br", None, None, ["p"], labels=["a", "b"]), Label("a"),
            Instr("const", "x", INT, value=1), Label("b"), Instr("print", None, None, ["x"]),
            Label("loop"), Instr("br", None, None, ["p"], labels=["use", "def"]),
            Label("use"), Instr("print", None, None, ["y"]), Instr("jmp", labels=["loop"]),
            Label("def"), Instr("const", "y", INT, value=2), Instr("jmp", labels=["loop"])]
    check_defined(Function("main", [("p", INT)], None, body))


def test_read_before_any_assignment_is_rejected():
    body = [Instr("print", None, None, ["x"]), Instr("const", "x", INT, value=1),
            Instr("ret")]
    with pytest.raises(BrilProblem, match="'x' is read here"):
        check_defined(Function("main", [], None, body))
