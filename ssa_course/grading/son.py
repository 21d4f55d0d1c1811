"""Helpers for the sea-of-nodes exercises (05-08): building cases, running an answer
inside the optimizer, and drawing a wrong answer next to the expected one.

No answer to a task lives here: the exercises keep their expected answers as data in the
notebooks and their references in hidden tests. The engine wrappers (``engine_compute``,
``with_types``) serve hidden tests; an answer that calls them is refused by
:mod:`ssa_course.grading.forbid`.
"""

from __future__ import annotations

from collections.abc import Callable

from ssa_course.son.control import Phi, Proj, Start
from ssa_course.son.data import Constant
from ssa_course.son.emit import BuildOptions
from ssa_course.son.graph import Graph, Node
from ssa_course.son.program import SeaOfNodes
from ssa_course.son.types import (
    BOOL_BOTTOM,
    BOOL_TOP,
    BOTTOM,
    FALSE,
    INT_BOTTOM,
    INT_MAX,
    INT_MIN,
    INT_TOP,
    TOP,
    TRUE,
    Type,
    int_const,
)

INT_SAMPLES: list[Type] = [TOP, INT_TOP, int_const(0), int_const(1), int_const(-3),
                           int_const(7), int_const(INT_MAX), int_const(INT_MIN), INT_BOTTOM,
                           BOTTOM]
BOOL_SAMPLES: list[Type] = [TOP, BOOL_TOP, TRUE, FALSE, BOOL_BOTTOM, BOTTOM]


class _Given(Node):
    """A stand-in input whose type is whatever the test says."""

    label = "given"

    def __init__(self, graph: Graph, t: Type):
        super().__init__(graph)
        self.type = t

    def compute(self) -> Type:
        return self.type


def engine_compute(cls: type, *types: Type) -> Type:
    """What the engine's ``cls.compute()`` says for inputs of these types."""
    g = Graph()
    Start(g, [])
    inputs = [_Given(g, t) for t in types]
    return cls(g, None, *inputs).compute()


def sea(source: str, optimize: bool = True, options: BuildOptions | None = None
        ) -> SeaOfNodes:
    from ssa_course import sea_of_nodes

    return sea_of_nodes(source, optimize, options)


def printed_expressions(program: SeaOfNodes) -> list[str]:
    """Each value ``main`` prints, written back as an expression over its parameters."""
    from ssa_course.son.memory import Print

    fg = program.functions["main"]
    prints = sorted((n for n in fg.nodes() if isinstance(n, Print)), key=lambda n: n.id)
    return [expression(v) for p in prints for v in p.inputs[2:] if v is not None]


def expression(node: Node) -> str:
    """A data node as text: ``(n + 3)``, ``7``, ``m`` (iterative: deep graphs are fine)."""
    out: dict[int, str] = {}
    stack = [node]
    while stack:
        n = stack[-1]
        if n.id in out:
            stack.pop()
            continue
        if isinstance(n, (Constant, Proj)):
            out[n.id] = n.label
        else:
            operands = [i for i in n.inputs[1:] if i is not None]
            todo = [i for i in operands if i.id not in out]
            if todo:
                stack.extend(todo)
                continue
            parts = [out[i.id] for i in operands]
            op = getattr(n, "op", n.label)
            out[n.id] = f"({parts[0]} {op} {parts[1]})" if len(parts) == 2 \
                else f"{op}{''.join(parts)}"
        stack.pop()
    return out[node.id]




def size_and_outputs(source: str, key: Callable[[Node], tuple | None],
                     args: list[list[object]]) -> tuple[int, list[str]]:
    """Exercise 06: build with this GVN key; (node count, what each run prints)."""
    program = sea(source, True, BuildOptions(gvn_key=key))
    return program.node_count(), [program.run(*a) for a in args]



_ADD_RULES: list[Callable[[Node], Node | None]] = []  # the rule of the build under way


def _exercise_add() -> type:
    from ssa_course.son.data import Add

    class ExerciseAdd(Add):
        """An Add whose ``idealize`` is the learner's rule (:func:`expressions_with_add`).
        A module-level class, so a regrade can send its nodes to the learner's process;
        a node the rule returns from there is taken over into this graph (:func:`adopt`)."""

        __slots__ = ()

        def idealize(self) -> Node | None:
            result = _ADD_RULES[-1](self)
            if isinstance(result, Node) and result.graph is not self.graph:
                result = adopt(self.graph, result)
            return result

    ExerciseAdd.__module__, ExerciseAdd.__qualname__ = __name__, "ExerciseAdd"
    return ExerciseAdd


ExerciseAdd = _exercise_add()


def adopt(graph: Graph, foreign: Node) -> Node:
    """``foreign`` -- a node of a copy of ``graph`` made in another process (a regrade's
    learner's process), returned by a rule -- as a node of ``graph``: the nodes the copy
    already had are ``graph``'s own (same ids), the ones the rule made are made again
    here, in the order they were made (constants and binary operations: what a rule may
    build)."""
    from ssa_course.son.data import Binary

    start = graph.next_id  # the copy's nodes below this id are ours
    new: dict[int, Node] = {}
    stack = [foreign]
    while stack:
        n = stack.pop()
        if n.id < start or n.id in new:
            continue
        new[n.id] = n
        stack.extend(i for i in n.inputs if i is not None)
    made: dict[int, Node] = {}

    def ours(n: Node | None) -> Node | None:
        if n is None:
            return None
        if n.id < start:
            found = graph.nodes.get(n.id)
            if found is None:
                raise ValueError(f"node {n.id} is not in the graph any more")
            return found
        return made[n.id]

    for n in sorted(new.values(), key=lambda n: n.id):
        inputs = [ours(i) for i in n.inputs]
        if isinstance(n, Constant):
            made[n.id] = Constant(graph, inputs[0], n.value)  # type: ignore[arg-type]
        elif isinstance(n, Binary) and len(inputs) == 3 and None not in inputs[1:]:
            left, right = inputs[1], inputs[2]
            assert left is not None and right is not None
            made[n.id] = type(n)(graph, inputs[0], left, right)
        else:
            raise ValueError(f"a {type(n).__name__} node made by the rule cannot be taken "
                             "over")
    result = ours(foreign)
    assert result is not None
    return result


def expressions_with_add(source: str, idealize: Callable[[Node], Node | None]
                         ) -> tuple[list[str], list[str]]:
    """Exercise 06: build with this Add rewrite; (printed expressions, outputs on a few
    arguments)."""
    _ADD_RULES.append(idealize)
    try:
        program = sea(source, True, BuildOptions(classes={"+": ExerciseAdd}))
    finally:
        _ADD_RULES.pop()
    runs = [program.run(*args) for args in ((0, 0), (5, -2), (-7, 3))]
    return printed_expressions(program), runs



# ---------------------------------------------------------------- exercises 07 and 08


def with_types(node: Node, types: dict[int, Type]) -> Type:
    """What the engine's ``node.compute()`` says when the graph has ``types`` (absent: TOP)."""
    touched = [node, *(i for i in node.inputs if i is not None)]
    if isinstance(node, Phi):
        touched += [c for c in node.operand(0).inputs if c is not None]
    saved = {n.id: n.type for n in touched}
    try:
        for n in touched:
            n.type = types.get(n.id, TOP)
        return node.compute()
    finally:
        for n in touched:
            n.type = saved[n.id]



def sccp_prefixes(program: SeaOfNodes, every: int = 3) -> list[dict[int, Type]]:
    """Type tables part-way through SCCP on ``main`` (every few steps, and the end)."""
    from ssa_course.son.sccp import replay, sccp

    result = sccp(program.functions["main"], trace=True)
    cuts = list(range(0, len(result.trace), every)) + [len(result.trace)]
    return [replay(result, k) for k in cuts]



# ---------------------------------------------------------------- drawings of a wrong answer


def _shown(value: object) -> str:
    return str(value) if not isinstance(value, BaseException) \
        else f"raised {type(value).__name__}"


def draw_types(fg, types: dict[int, Type], focus: int, expected: object,
               actual: object, title: str = ""):
    """A function graph with each node's type from ``types`` (absent: TOP), the node
    ``focus`` filled and showing the expected result next to the learner's."""
    from ssa_course.viz.dot import GraphEdge, GraphNode, graph_drawing

    nodes, edges = [], []
    for n in fg.nodes():
        if n.id == focus:
            lines: tuple[str, ...] = (f"expected: {_shown(expected)}",
                                      f"yours: {_shown(actual)}")
        else:
            lines = (str(types.get(n.id, TOP)),)
        nodes.append(GraphNode(str(n.id), header=f"{n.label} #{n.id}", lines=lines,
                               fill="#ffd8a8" if n.id == focus else None,
                               emphasis=n.id == focus))
        for i, inp in enumerate(n.inputs):
            if inp is not None and inp.id in fg.graph.nodes:
                edges.append(GraphEdge(str(inp.id), str(n.id),
                                       style="dashed" if i == 0 else "solid"))
    return graph_drawing(nodes, edges, title=title or None)


def draw_blocks(succs: dict[str, list[str]], entry: str, expected: dict[str, str],
                actual: dict[str, str], title: str = ""):
    """The CFG twice, side by side: blocks marked with the expected result (left) and with
    the learner's (right). ``expected``/``actual`` map a block to the text it shows; a
    block whose two texts differ is filled on the right."""
    from ssa_course.viz.dot import GraphEdge, GraphNode, graph_drawing

    nodes, edges = [], []
    for side, marks in (("expected", expected), ("yours", actual)):
        for b in succs:
            mark = marks.get(b, "")
            wrong = side == "yours" and mark != expected.get(b, "")
            nodes.append(GraphNode(f"{side}:{b}", header=b, lines=(mark,) if mark else (),
                                   shape="record", emphasis=b == entry, cluster=side,
                                   fill="#ffc9c9" if wrong else "#d3f9d8" if mark else None))
            edges += [GraphEdge(f"{side}:{b}", f"{side}:{s}") for s in succs[b] if s in succs]
    return graph_drawing(nodes, edges, title=title or None,
                         clusters={"expected": "expected", "yours": "your answer"})
