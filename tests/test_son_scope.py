"""The builder's symbol table: one Scope with an undo journal per construct.

Structural checks, not timings: a construct (if, loop, break, continue, &&, ||, try,
a call or throw inside try) must cost the slots it writes, not every variable in scope,
and replacing a node the scope holds must not scan every slot.
"""

from __future__ import annotations

import pytest

from ssa_course.compilation import compile_source
from ssa_course.lessons.l05_control import son_program
from ssa_course.son.graph import Node
from ssa_course.son.scope import Delta, Scope
from ssa_course.son.types import INT_BOTTOM


def constructs(variables: int, count: int) -> str:
    """``variables`` variables in scope, then ``count`` rounds of every construct that
    used to copy the symbol table."""
    decls = "".join(f"var u{k} = n + {k}; " for k in range(variables))
    rounds = "".join(
        f"if (n > {k}) {{ s = s + {k}; }} else {{ s = s - 1; }} "
        f"var b{k} = n > {k} && s < {k} || n == {k}; "
        f"var i{k} = 0; while (i{k} < n) {{ i{k} = i{k} + 1; "
        f"if (i{k} == 3) {{ continue; }} if (i{k} > 5) {{ break; }} s = s + 1; }} "
        f"try {{ if (b{k}) {{ throw {k}; }} s = s + f(s); }} catch (e) {{ s = s + e; }} "
        for k in range(count))
    uses = " + ".join(f"u{k}" for k in range(variables))
    return (f"fn f(x: int) -> int {{ if (x > 100) {{ throw x; }} return x + 1; }}\n"
            f"fn main(n: int) {{ var s = 0; {decls}{rounds}print(s + {uses}); }}\n")


def scope_edits(source: str, optimize: bool, monkeypatch: pytest.MonkeyPatch) -> int:
    """How many input edits the builder makes on its scaffolding (Scope and Delta)."""
    count = 0
    plain_set, plain_add = Node.set_input, Node.add_input

    def set_input(self: Node, i: int, n: Node | None) -> None:
        nonlocal count
        if isinstance(self, Scope | Delta):
            count += 1
        plain_set(self, i, n)

    def add_input(self: Node, n: Node | None) -> None:
        nonlocal count
        if isinstance(self, Scope | Delta):
            count += 1
        plain_add(self, n)

    comp = compile_source(source)
    comp.ast  # noqa: B018 - parse and check outside the count
    monkeypatch.setattr(Node, "set_input", set_input)
    monkeypatch.setattr(Node, "add_input", add_input)
    son_program(comp, optimize)
    monkeypatch.undo()
    return count


@pytest.mark.parametrize("optimize", [False, True])
def test_constructs_cost_what_they_write_not_the_whole_scope(optimize, monkeypatch):
    rounds = 12
    few = scope_edits(constructs(5, rounds), optimize, monkeypatch)
    many = scope_edits(constructs(205, rounds), optimize, monkeypatch)
    # 200 more variables: each is declared once and dropped once at the end of main;
    # copying the table at each of the ~10 constructs of a round would cost 200 each
    assert many - few <= 3 * 200, (few, many)


def test_else_if_chain_edits_grow_linearly(monkeypatch):
    def chain(n: int) -> str:
        arms = " else ".join(f"if (n == {k}) {{ y = y + {k}; }}" for k in range(n))
        return f"fn main(n: int) {{ var y = 0; {arms} else {{ y = 0 - 1; }} print(y); }}"

    short = scope_edits(chain(100), False, monkeypatch)
    long = scope_edits(chain(400), False, monkeypatch)
    assert long <= 4.5 * short, (short, long)


def test_replacing_a_node_the_scope_holds_does_not_scan_every_slot():
    fg = son_program(compile_source("fn main(n: int) { print(n); }"), False).functions["main"]
    start = fg.start
    scope = Scope(fg.graph, start, start)
    for k in range(500):
        scope.define(("v", k), start, f"v{k}", INT_BOTTOM)
    old, new = Node(fg.graph), Node(fg.graph)
    scope.define("x", old, "x", INT_BOTTOM)
    scope.define("y", old, "y", INT_BOTTOM)
    scanned = 0
    plain = scope.inputs

    class Counting(list):
        def __iter__(self):
            nonlocal scanned
            scanned += len(self)
            return super().__iter__()

    scope.inputs = Counting(plain)
    old.replace_with(new)
    assert scanned == 0
    assert scope.lookup("x") is new and scope.lookup("y") is new and not old.outputs
    assert scope.where[new] == {502, 503}


def test_the_journal_undoes_to_the_start_of_a_frame_and_keeps_the_oldest_value():
    fg = son_program(compile_source("fn main(n: int) { print(n); }"), False).functions["main"]
    g, start = fg.graph, fg.start
    a, b, c, d = (Node(g) for _ in range(4))
    scope = Scope(g, start, start)
    scope.define("x", a, "x", INT_BOTTOM)
    outer = scope.push()
    scope.update("x", b)
    inner = scope.push()
    scope.update("x", c)
    scope.define("t", d, "t", INT_BOTTOM)  # made inside the frame: nothing to undo
    scope.update("t", a)
    side = scope.changes_since(outer, 3)
    assert side.slots == [2] and side.value(2) is c
    since_inner = scope.changes_since(inner, 3)
    assert since_inner.slots == [2]
    since_inner.release()
    scope.truncate(3)
    scope.undo()
    assert scope.lookup("x") is b and scope.frames[inner][0].slots == []
    scope.update("x", c)
    scope.pop()  # the outer frame already holds x's older value (a)
    assert scope.frames[outer][0].slots == [2] and scope.frames[outer][0].value(2) is a
    scope.undo()
    scope.pop()
    assert scope.lookup("x") is a and not scope.frames
    assert [u for u in c.outputs if u is side] == [side]
    side.release()
    assert not c.outputs and not b.outputs


@pytest.mark.parametrize("source", [
    "fn main(n: int) { var b = n > 0 && false; print(b); }",
    "fn main(n: int) { var b = n > 0 || true; print(b, n); }",
    "fn main(n: int) { var x = 0; try { x = g(n); } catch (e) { x = e; } print(x); }\n"
    "fn g(n: int) -> int { if (n > 3) { throw 7; } return 7; }",
])
def test_a_merged_value_both_sides_share_stays_alive(source):
    """``n > 0 && false``: both sides give the same constant, which is the result; the
    dropped side must not delete it while the builder holds it in hand."""
    from ssa_course.registry import build

    comp = compile_source(source)
    build(comp, "son")  # verified: no input was deleted
    assert build(comp, "son-opt") is not None


def test_the_caught_value_phi_is_named_after_the_catch_variable():
    from ssa_course.registry import build, representation

    source = ("fn main(n: int) { var x = 0; try { if (n > 1) { throw 1; } "
              "if (n > 2) { throw n; } x = 5; } catch (err) { x = err; } print(x); }")
    comp = compile_source(source)
    text = representation("son-raw").text(build(comp, "son-raw"))
    phis = [line for line in text.splitlines() if "= Phi" in line and line.endswith("; err")]
    assert len(phis) == 1, text
