"""The sea-of-nodes verifier: names the first broken invariant (lesson 06).

Checked for every node of every function graph:

* **edges mirror** -- ``b`` in ``a.inputs`` exactly as often as ``a`` in ``b.outputs``, and
  both ends are nodes of the graph (nothing points at a deleted node);
* **control inputs** -- a control node (other than Start, Region, Stop) and every pinned
  node has a control node as input 0; a Region's inputs are control;
* **phi arity** -- a Phi's input 0 is a Region and it has one value per region input;
* **projections** read a multi-valued node (Start, If, Call);
* **memory** -- loads, stores, print, calls and returns take a memory state as input 1;
* **exits** -- Stop's inputs are the Returns, Throws and Traps, and every one of those
  feeds Stop;
* **no scaffolding** -- the parser's scope nodes are gone;
* **one control successor** -- only If, Start and Call branch (through projections).

The peephole driver checks the last rule of the lesson as it runs: types only move down
the lattice.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ssa_course.errors import VerifyError
from ssa_course.runtime import paused_gc
from ssa_course.son.control import (
    Call,
    If,
    Never,
    Phi,
    Proj,
    Region,
    Return,
    Start,
    Stop,
    Throw,
    Trap,
    goes_to,
)
from ssa_course.son.graph import Node
from ssa_course.son.memory import KeepNew, Load, LoadField, Print, Store, StoreField
from ssa_course.son.program import FunctionGraph, SeaOfNodes

# Every node whose order against the effects matters: the memory input is what orders
# it (a Return takes memory so the last stores before it are kept alive).
_TAKES_MEMORY = (Load, LoadField, Store, StoreField, Print, KeepNew, Call, Return, Throw,
                 Trap)


def _where(fg: FunctionGraph, node: Node) -> str:
    return f"{fg.name}: {node!r}"


def verify_graph(fg: FunctionGraph) -> None:
    nodes = fg.graph.nodes
    # Each rule raises with its invariant's name first, so a learner's broken rewrite is
    # reported as the rule it broke, at the first node that shows it.
    uses, listed = _edge_counts(nodes)
    for node in nodes.values():
        where = _where(fg, node)
        if node.scaffolding:
            raise VerifyError("no scaffolding left", where, "the parser's scope survived")
        me = id(node)
        for i, inp in enumerate(node.inputs):
            if inp is None:
                continue
            # Identity, not the id alone: a deleted node's id is never reused, but a node from
            # another graph may carry the same number.
            if nodes.get(inp.id) is not inp:
                raise VerifyError("edges mirror", where, f"input {i} {inp!r} was deleted")
            # Counts, not membership: a node reading ``x`` at two inputs must appear twice in
            # ``x``'s users (set_input keeps one entry per edge).
            if listed.get((id(inp), me), 0) != uses[(id(inp), me)]:
                raise VerifyError("edges mirror", where,
                                  f"input {i} {inp!r} does not list it as a user")
        for user in dict.fromkeys(node.outputs):
            if nodes.get(user.id) is not user:
                raise VerifyError("edges mirror", where, f"user {user!r} was deleted")
            if uses.get((me, id(user)), 0) != listed[(me, id(user))]:
                raise VerifyError("edges mirror", where, f"user {user!r} does not read it")
        _check_node(fg, node, where)
        _check_successors(fg, node, where)
    stop = fg.stop
    if nodes.get(stop.id) is not stop or fg.start.id not in nodes:
        raise VerifyError("exits", fg.name, "Start or Stop missing")
    # An exit that does not feed Stop would be swept with everything only it reads.
    exits = Counter(n for n in stop.inputs if n is not None)
    for node in nodes.values():
        if isinstance(node, (Return, Throw, Trap, Never)) and node not in exits:
            raise VerifyError("exits", _where(fg, node), "does not feed Stop")


def _edge_counts(nodes: dict[int, Node]) -> tuple[Counter[Any], Counter[Any]]:
    """How often each edge (producer, user) is read in ``user.inputs`` and listed in
    ``producer.outputs``, keyed by object identity: counted once for the whole graph, so
    the mirror check costs the same per edge however many users a node has (Start and
    constants can have tens of thousands)."""
    uses: Counter[Any] = Counter()
    listed: Counter[Any] = Counter()
    for node in nodes.values():
        me = id(node)
        uses.update((id(inp), me) for inp in node.inputs if inp is not None)
        listed.update((me, id(user)) for user in node.outputs)
    return uses, listed


def _check_successors(fg: FunctionGraph, node: Node, where: str) -> None:
    """A control node that is not a branch (If, Start, Call: they branch through their
    projections) hands control to exactly one next node."""
    # The branching nodes choose through projections; Stop has no successor.
    if not node.is_control or isinstance(node, (If, Start, Call, Stop)):
        return
    succ = [u for u in set(node.outputs) if not isinstance(u, (Proj, Never))
            and (goes_to(node, u) or isinstance(u, Stop))]
    if len(succ) > 1:
        raise VerifyError("one control successor", where,
                          f"control goes on to {sorted(succ, key=lambda n: n.id)}")


def _check_node(fg: FunctionGraph, node: Node, where: str) -> None:
    ctrl = node.inputs[0] if node.inputs else None
    if isinstance(node, Region):
        for i, inp in enumerate(node.inputs[1:], start=1):
            if inp is not None and not inp.is_control:
                raise VerifyError("control inputs", where, f"path {i} is {inp!r}")
    elif isinstance(node, Stop):
        for inp in node.inputs:
            if not isinstance(inp, (Return, Throw, Trap, Never)):
                raise VerifyError("exits", where, f"{inp!r} is not a Return, Throw, Trap or Never")
    elif isinstance(node, Phi):
        if not isinstance(ctrl, Region):
            raise VerifyError("phi arity", where, f"input 0 is {ctrl!r}, not a Region")
        if len(node.inputs) != len(ctrl.inputs):
            raise VerifyError("phi arity", where,
                              f"{len(node.inputs) - 1} values for {len(ctrl.inputs) - 1} paths")
        for i in range(1, len(ctrl.inputs)):
            # A missing value is allowed only on a path that is itself missing (being built).
            if ctrl.inputs[i] is not None and node.inputs[i] is None:
                raise VerifyError("phi arity", where, f"no value for live path {i}")
    elif isinstance(node, Proj):
        if not isinstance(ctrl, (Start, If, Call)):
            raise VerifyError("projections", where, f"reads {ctrl!r}")
    # A pinned node without control could float above the test that guards it.
    elif ((node.is_control and not isinstance(node, Start)) or node.is_pinned()) \
            and (ctrl is None or not ctrl.is_control):
        raise VerifyError("control inputs", where, f"input 0 is {ctrl!r}")
    if isinstance(node, _TAKES_MEMORY):
        mem = node.in_(1)
        # Memory must be a memory state, not some value that happens to be in slot 1.
        if mem is None or mem.type.kind not in ("mem", "top"):  # top: never reached
            raise VerifyError("memory", where, f"input 1 is {mem!r}, not a memory state")


def verify_graphs(program: SeaOfNodes) -> None:
    # The collector would rescan the whole (live) graph many times while the edge counts
    # are built: nothing made here is garbage.
    with paused_gc():
        for fg in program.functions.values():
            verify_graph(fg)
