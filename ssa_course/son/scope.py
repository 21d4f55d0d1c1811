"""The parser's symbol table as a node (lesson 06).

While parsing, the current definition of every variable in scope -- plus the current
control and memory -- is held as the inputs of a :class:`Scope` node. Being a node keeps
those values alive (nobody deletes a node the scope still reads) and lets
:meth:`~ssa_course.son.graph.Node.replace_with` update the table when the peephole driver
swaps a node for a better one. Slot 0 is control, slot 1 memory, then one slot per
variable, innermost block last, so leaving a block is a truncation.

Scopes are scaffolding: the builder deletes them when the function is done.
"""

from __future__ import annotations

from collections.abc import Hashable

from ssa_course.son.graph import Graph, Node
from ssa_course.son.types import CTRL, MEM, Type


class Scope(Node):
    __slots__ = ("slots", "keys", "names", "types")

    label = "Scope"
    scaffolding = True

    def __init__(self, graph: Graph, ctrl: Node | None, mem: Node | None):
        super().__init__(graph, ctrl, mem)
        self.slots: dict[Hashable, int] = {}
        self.keys: list[Hashable] = ["$ctrl", "$mem"]  # slot -> key (the inverse of slots)
        self.names: list[str] = ["$ctrl", "$mem"]
        self.types: list[Type] = [CTRL, MEM]

    # control and memory --------------------------------------------------------

    @property
    def ctrl(self) -> Node | None:  # type: ignore[override]
        return self.inputs[0]

    @ctrl.setter
    def ctrl(self, node: Node | None) -> None:
        self.set_input(0, node)

    @property
    def mem(self) -> Node:
        return self.inputs[1]

    @mem.setter
    def mem(self, node: Node) -> None:
        self.set_input(1, node)

    def dead(self) -> bool:
        return self.inputs[0] is None

    # variables -----------------------------------------------------------------

    def define(self, key: Hashable, node: Node, name: str, ty: Type) -> None:
        self.slots[key] = len(self.inputs)
        self.keys.append(key)
        self.names.append(name)
        self.types.append(ty)
        self.add_input(node)

    def slot_of(self, key: Hashable) -> int | None:
        """The slot of a variable in scope, or None."""
        return self.slots.get(key)

    def lookup(self, key: Hashable) -> Node:
        return self.inputs[self.slots[key]]

    def update(self, key: Hashable, node: Node) -> None:
        self.set_input(self.slots[key], node)

    def size(self) -> int:
        return len(self.inputs)

    def truncate(self, n: int) -> None:
        """Forget every slot from ``n`` on (leaving a block drops its variables)."""
        self.truncate_inputs(n)
        for key in self.keys[n:]:  # only the dropped slots: leaving a block costs its size
            if self.slots.get(key, -1) >= n:
                del self.slots[key]
        del self.keys[n:]
        del self.names[n:]
        del self.types[n:]

    def dup(self) -> Scope:
        twin = Scope(self.graph, self.inputs[0], self.inputs[1])
        for i in range(2, len(self.inputs)):
            twin.add_input(self.inputs[i])
        twin.slots = dict(self.slots)
        twin.keys = list(self.keys)
        twin.names = list(self.names)
        twin.types = list(self.types)
        return twin

    def discard(self) -> None:
        for i in range(len(self.inputs)):
            self.set_input(i, None)
        self.graph.nodes.pop(self.id, None)

    def key(self) -> None:
        return None
