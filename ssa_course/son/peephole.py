"""The generic peephole driver: compute, constant, GVN, idealize, dead code (lesson 06).

For every node the parser makes (in topological order, so its inputs are already final):

1. compute its type; types only ever move *down* the lattice;
2. a node whose type is a constant becomes a Constant node;
3. look it up in the GVN table (opcode + inputs): an equal node already exists? use it;
4. ask the node to ``idealize()`` itself, and peephole the replacement again;
5. whatever lost its last user is deleted.

The driver knows nothing about any particular opcode.
"""

from __future__ import annotations

from ssa_course.errors import VerifyError
from ssa_course.son.nodes import Constant, Node, Start
from ssa_course.son.types import BOTTOM


class Peephole:
    def __init__(self, start: Start, enabled: bool = True):
        self.start = start
        self.enabled = enabled
        self.gvn: dict[tuple, Node] = {}
        self.constants_found = 0

    def __call__(self, node: Node) -> Node:
        """Optimize a freshly made node; returns the node to use instead (maybe itself)."""
        new_type = node.compute()
        if node.type is not None and node.type != new_type and node.type.meet(new_type) \
                != new_type and node.type.kind != "top":
            raise VerifyError("types only move down", repr(node), f"{node.type} -> {new_type}")
        node.type = new_type
        if not self.enabled:
            return node
        if new_type.is_constant() and not isinstance(node, Constant) and not node.is_control:
            self.constants_found += 1
            return self._replace(node, self(Constant(node.graph, self.start, new_type)))
        key = node.key()
        if key is not None:
            twin = self.gvn.get(key)
            if twin is not None and twin is not node:
                return self._replace(node, twin)
        better = node.idealize()
        if better is not None and better is not node:
            return self._replace(node, self(better))
        if key is not None:
            self.gvn[key] = node
        return node

    def _replace(self, old: Node, new: Node) -> Node:
        old.replace_with(new)
        self._kill_if_dead(old)
        return new

    def _kill_if_dead(self, node: Node) -> None:
        work = [node]
        while work:
            n = work.pop()
            if n.outputs or n is self.start or n.id not in n.graph.nodes:
                continue
            if n.inputs and n.inputs[0] is self.start and not isinstance(n, Constant):
                continue  # Start's projections (control, parameters) live as long as it
            key = n.key()
            if key is not None and self.gvn.get(key) is n:
                del self.gvn[key]
            inputs = [i for i in n.inputs if i is not None]
            n.kill()
            work.extend(inputs)


def type_of_bottom(node: Node) -> bool:
    return node.type == BOTTOM
