"""Helpers for the sea-of-nodes exercises (05, 06): cases, references and renderings.

The references are the engine's own node classes wherever they answer exactly the task's
question: the exercises ask learners to rewrite a piece of :mod:`ssa_course.son`, and the
checks compare with that piece.
"""

from __future__ import annotations

from collections.abc import Callable

from ssa_course.son.control import Call, If, Never, Phi, Proj, Region, Start, Stop
from ssa_course.son.data import Constant
from ssa_course.son.emit import BuildOptions, SeaOfNodes
from ssa_course.son.graph import Graph, Node
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
    from ssa_course.son import sea_of_nodes

    return sea_of_nodes(source, optimize, options)


def printed_expressions(program: SeaOfNodes) -> list[str]:
    """Each value ``main`` prints, written back as an expression over its parameters."""
    from ssa_course.son.memory import Print

    fg = program.functions["main"]
    prints = sorted((n for n in fg.nodes() if isinstance(n, Print)), key=lambda n: n.id)
    return [expression(v) for p in prints for v in p.inputs[2:]]


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


def control_successors(node: Node) -> list[int]:
    """Exercise 05: ids of the control nodes control can go to next from ``node``.

    A multi-valued node (Start, If, Call) continues in its control projections, in index
    order; any other control node in the control nodes that read it -- as their input 0,
    or, for a Region or Stop, as any input. (A Never edge is never taken.)"""
    if isinstance(node, (Start, If, Call)):
        projs = [u for u in node.outputs if isinstance(u, Proj) and u.is_control]
        return [p.id for p in sorted(projs, key=lambda p: p.index)]
    return sorted(u.id for u in set(node.outputs)
                  if u.is_control and not isinstance(u, (Proj, Never))
                  and (u.inputs[0] is node or isinstance(u, (Region, Stop))))


def split_phi(phi: Phi) -> list[tuple[int, int]]:
    """Exercise 05: the Phi as Selects -- (control id, value id) per live incoming path."""
    region = phi.inputs[0]
    return [(region.inputs[i].id, v.id) for i, v in enumerate(phi.inputs[1:], start=1)
            if v is not None and region.inputs[i] is not None]


def size_and_outputs(source: str, key: Callable[[Node], tuple | None],
                     args: list[list[object]]) -> tuple[int, list[str]]:
    """Exercise 06: build with this GVN key; (node count, what each run prints)."""
    program = sea(source, True, BuildOptions(gvn_key=key))
    return program.node_count(), [program.run(*a) for a in args]


def reference_idealize_add(node: Node) -> Node | None:
    """Exercise 06: the four rules of the task (the engine's Add has one more, x + x)."""
    from ssa_course.runtime import wrap
    from ssa_course.son.data import Add, const

    left, right = node.inputs[1], node.inputs[2]
    if right.type == int_const(0):
        return left
    if left.type == int_const(0):
        return right
    if isinstance(left, Add) and left.inputs[2].type.is_constant() \
            and right.type.is_constant():
        c = const(node, wrap(left.inputs[2].type.lo + right.type.lo))
        return type(node)(node.graph, None, left.inputs[1], c)
    if left.type.is_constant() and not right.type.is_constant():
        return type(node)(node.graph, None, right, left)
    return None


def add_class(idealize: Callable[[Node], Node | None]) -> type:
    """An Add node class whose ``idealize`` is the given function."""
    from ssa_course.son.data import Add

    class ExerciseAdd(Add):
        def idealize(self) -> Node | None:
            return idealize(self)

    return ExerciseAdd


def expressions_with_add(source: str, idealize: Callable[[Node], Node | None]
                         ) -> tuple[list[str], list[str]]:
    """Exercise 06: build with this Add rewrite; (printed expressions, outputs on a few
    arguments)."""
    program = sea(source, True, BuildOptions(classes={"+": add_class(idealize)}))
    runs = [program.run(*args) for args in ((0, 0), (5, -2), (-7, 3))]
    return printed_expressions(program), runs


def loop_carried(fg) -> dict[int, list[str]]:  # noqa: ANN001
    """Exercise 05: per Loop (by id), the sorted names of the variables its body really
    changes: Phis whose back-edge value is neither the phi itself nor its entry value."""
    from ssa_course.son.control import Loop

    result: dict[int, list[str]] = {}
    for node in fg.nodes():
        if isinstance(node, Loop):
            result[node.id] = sorted(p.var_name for p in node.phis()
                                     if p.inputs[2] is not p and p.inputs[2] is not p.inputs[1])
    return result


# ---------------------------------------------------------------- exercises 07 and 08


def with_types(node: Node, types: dict[int, Type]) -> Type:
    """What the engine's ``node.compute()`` says when the graph has ``types`` (absent: TOP)."""
    touched = [node, *(i for i in node.inputs if i is not None)]
    if isinstance(node, Phi):
        touched += [c for c in node.inputs[0].inputs if c is not None]
    saved = {n.id: n.type for n in touched}
    try:
        for n in touched:
            n.type = types.get(n.id, TOP)
        return node.compute()
    finally:
        for n in touched:
            n.type = saved[n.id]


def if_type(ctrl: Type, pred: Type) -> Type:
    """Exercise 07: the engine's If transfer function."""
    from ssa_course.son.control import If

    g = Graph()
    Start(g, [])
    return If(g, _Given(g, ctrl), _Given(g, pred)).compute()


def sccp_prefixes(program: SeaOfNodes, every: int = 3) -> list[dict[int, Type]]:
    """Type tables part-way through SCCP on ``main`` (every few steps, and the end)."""
    from ssa_course.son.sccp import replay, sccp

    result = sccp(program.functions["main"], trace=True)
    cuts = list(range(0, len(result.trace), every)) + [len(result.trace)]
    return [replay(result, k) for k in cuts]


def loop_depths(succs: dict[str, list[str]], entry: str) -> dict[str, int]:
    """Exercise 08: natural-loop nesting depth per block (the engine's rule)."""
    from ssa_course.son.gcm import Block, _loop_depths
    from ssa_course.ssa.dom import immediate_dominators

    blocks = {n: Block(n, None, succs=list(s)) for n, s in succs.items()}
    _loop_depths(blocks, immediate_dominators(succs, entry))
    return {n: b.depth for n, b in blocks.items()}
