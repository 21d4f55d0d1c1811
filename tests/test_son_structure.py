"""How the sea-of-nodes code is allowed to touch nodes (issue #10, section 4).

* edges change only through ``Node`` methods, which keep ``inputs`` and ``outputs`` mirror
  images: no module but ``son/graph.py`` assigns to, deletes from or mutates either list;
* nodes have no ``__dict__``: every node class declares its attributes in ``__slots__``.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import ssa_course.son
from ssa_course.son import nodes as son_nodes
from ssa_course.son.graph import Graph, Node
from ssa_course.son.scope import Scope

SON = Path(ssa_course.son.__file__).parent
EDGE_LISTS = {"inputs", "outputs"}
MUTATORS = {"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse",
            "__setitem__", "__delitem__"}


def _edge_list(node: ast.AST) -> bool:
    """``x.inputs`` / ``x.outputs``, possibly subscripted (``x.inputs[i]``, ``[a:b]``)."""
    while isinstance(node, ast.Subscript):
        node = node.value
    return isinstance(node, ast.Attribute) and node.attr in EDGE_LISTS


def list_surgery(source: str, filename: str) -> list[str]:
    """``file:line: what`` for every assignment, deletion or mutating call on an edge list."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        targets: list[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        for t in targets:
            for part in (t.elts if isinstance(t, ast.Tuple) else [t]):
                if _edge_list(part):
                    found.append(f"{filename}:{node.lineno}: {ast.unparse(node).splitlines()[0]}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in MUTATORS and _edge_list(node.func.value):
            found.append(f"{filename}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_list_surgery_on_edges_outside_graph_py():
    found = []
    for path in sorted(SON.glob("*.py")):
        if path.name == "graph.py":
            continue
        found += list_surgery(path.read_text(), f"ssa_course/son/{path.name}")
    assert found == [], "edit edges through Node methods:\n" + "\n".join(found)


def test_the_scan_finds_each_kind_of_surgery():
    bad = """
node.inputs[2] = x
del region.inputs[1:]
n.outputs.append(m)
n.outputs.clear()
a.inputs, b = [], 1
stop.inputs += [e]
"""
    found = list_surgery(bad, "bad.py")
    assert sorted(int(f.split(":")[1]) for f in found) == [2, 3, 4, 5, 6, 7], found
    assert list_surgery("n.set_input(2, x)\ny = n.inputs[2]\nk = n.outputs.count(m)\n",
                        "ok.py") == []


def _node_classes() -> list[type]:
    classes = {Scope}
    for _, value in inspect.getmembers(son_nodes, inspect.isclass):
        if issubclass(value, Node):
            classes.add(value)
    work = list(classes)
    while work:  # and every subclass the engine defines elsewhere
        for sub in work.pop().__subclasses__():
            if sub.__module__.startswith("ssa_course.son.") and sub not in classes:
                classes.add(sub)
                work.append(sub)
    return sorted(classes, key=lambda c: c.__name__)


def test_node_classes_have_no_dict():
    with_dict = [c.__name__ for c in _node_classes() if c.__dictoffset__ != 0]
    assert with_dict == [], f"declare __slots__ in {with_dict}"
    g = Graph()
    node = son_nodes.Start(g, [])
    try:
        node.anything = 1  # type: ignore[attr-defined]
    except AttributeError:
        pass
    else:
        raise AssertionError("a node accepted an attribute it does not declare")


def test_labels_per_node_and_per_class():
    g = Graph()
    start = son_nodes.Start(g, [])
    c = son_nodes.Constant(g, start, son_nodes.Constant(g, start, _int(3)).value)
    assert (start.label, c.label, son_nodes.Proj(g, start, 1, "mem").label) == \
        ("Start", "3", "mem")


def _int(v: int):
    from ssa_course.son.types import int_const

    return int_const(v)


def test_live_nodes_come_in_id_order_after_rewrites():
    from ssa_course.compilation import compile_source
    from ssa_course.lessons.l07_optimistic import optimistic_program

    src = ("fn main(n: int) { var x = 1; var i = 0; while (i < n) { x = 2 - x; i = i + 1; } "
           "if (n * x == n) { print(n + (x - 1)); } }")
    fg = optimistic_program(compile_source(src)).functions["main"]
    ids = [n.id for n in fg.nodes()]
    assert ids == sorted(ids) and len(ids) == len(fg.graph.nodes)
